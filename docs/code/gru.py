"""gru.py: a character-level GRU language model, from scratch in numpy.

Works through the GRU section of "Dive into Deep Learning" (d2l.ai) with no
framework, in d2l's configuration: H. G. Wells' *The Time Machine* becomes a
stream of 28 character tokens, cut into windows of 32 + 1 characters; a GRU
cell (d2l's equations) reads 32 of them and predicts each next one; the
gradient comes from backpropagation through time written out by hand; plain
SGD, with the gradient clipped to norm 1, trains it for 50 epochs and prints
train and validation perplexity after each; finally the model writes 20
characters after "it has". An LSTM and a plain tanh RNN run on the same
harness, and a finite-difference check confirms every hand-written gradient.

    python3 gru.py                  # train the GRU: a table row per epoch, ~15 s
    python3 gru.py --cell lstm      # the same with an LSTM (or --cell rnn)
    python3 gru.py --epochs 5 --seed 1
    python3 gru.py --gradcheck      # analytic against numerical gradients, all
                                    # three cells (only one with --cell)

Needs only numpy (pip install numpy). The corpus, timemachine.txt, is read from
next to this file unless --corpus says otherwise. Training is float32 on one
BLAS thread; the same seed prints the same table, run after run.
"""
import argparse
import math
import os
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

if __name__ == '__main__':  # as a script: one BLAS thread (must be set before numpy loads);
    for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        os.environ.setdefault(_var, '1')  # threads cost more than they save on 1024 x 32 matrices

try:
    import numpy as np
except ImportError:  # main() says how to install it
    np = None

CORPUS = Path(__file__).with_name('timemachine.txt')
CELLS = ('gru', 'lstm', 'rnn')
GATES = {'gru': 'zrh',    # update gate Z, reset gate R, candidate H~
         'lstm': 'ifoc',  # input gate I, forget gate F, output gate O, input node C~
         'rnn': 'h'}      # the hidden state itself
D2L_LR = {'gru': 4.0, 'lstm': 4.0, 'rnn': 1.0}  # d2l's learning rate for each model


class CorpusError(Exception):
    """The corpus cannot be used; the message is one line."""


@dataclass(frozen=True)
class Config:
    """d2l's configuration for its GRU language model."""
    cell: str = 'gru'         # gru, lstm or rnn
    hidden: int = 32          # hidden units h
    num_steps: int = 32       # characters read per example
    batch_size: int = 1024    # examples per SGD step
    lr: float = None          # SGD learning rate; None: d2l's for the cell (D2L_LR)
    clip: float = 1.0         # max global L2 norm of the gradient
    epochs: int = 50          # passes over the training windows
    num_train: int = 10000    # first windows: training set
    num_val: int = 5000       # next windows: validation set
    seed: int = 0             # seeds initialisation and shuffling
    init_sigma: float = 0.01  # std of the normal initial weights
    prefix: str = 'it has'    # warm-up text for sampling
    num_preds: int = 20       # characters predicted after the prefix

    def __post_init__(self):
        if self.lr is None:
            object.__setattr__(self, 'lr', D2L_LR[self.cell])


@dataclass
class TrainResult:
    config: Config
    history: list             # (epoch, train perplexity, validation perplexity)
    sample: str               # prefix + num_preds greedy characters
    seconds: float            # wall time of all epochs (training + validation)
    tokens_per_second: float  # training tokens / seconds
    num_params: int
    vocab_size: int
    num_chars: int            # length of the preprocessed corpus

    def to_dict(self):
        d = asdict(self)
        d['history'] = [list(row) for row in self.history]
        return d

    @classmethod
    def from_dict(cls, d):
        d = dict(d)
        d['config'] = Config(**d['config'])
        d['history'] = [(int(e), float(t), float(v)) for e, t, v in d['history']]
        return cls(**d)


# ---------------------------------------------------------------- the data

def load_corpus(path):
    """The text of the corpus file; CorpusError if it is missing or not UTF-8."""
    try:
        return Path(path).read_bytes().decode('utf-8')
    except UnicodeDecodeError as e:
        raise CorpusError(f'cannot read corpus {path}: not UTF-8 text '
                          f'(byte 0x{e.object[e.start]:02x} at offset {e.start})') from None
    except OSError as e:
        raise CorpusError(f'cannot read corpus {path}: {e.strerror or e}') from None


def tokenize(text):
    """d2l's preprocessing: runs of non-letters -> one space, lower case, characters."""
    return list(re.sub('[^A-Za-z]+', ' ', text).lower())


def build_vocab(tokens):
    """d2l's Vocab with no frequency cut: ' ', '<unk>', 'a'..'z'."""
    return sorted(set(['<unk>'] + tokens))


@dataclass
class Dataset:
    vocab: list      # index -> token
    num_chars: int   # tokens in the corpus
    X_train: object  # (num_train, num_steps) token ids
    Y_train: object  # the same windows shifted by one character
    X_val: object
    Y_val: object


def make_dataset(text, config=Config()):
    """Every window of num_steps + 1 characters, one per start position; the first
    num_train windows train, the next num_val validate."""
    tokens = tokenize(text)
    vocab = build_vocab(tokens)
    index = {token: i for i, token in enumerate(vocab)}
    corpus = np.array([index[c] for c in tokens], dtype=np.intp)
    n = config.num_train + config.num_val
    available = len(corpus) - config.num_steps  # one window per start position
    if available < n:
        raise CorpusError(f'it yields {max(available, 0):,} windows of {config.num_steps + 1} '
                          f'characters, {n:,} needed')
    windows = corpus[np.arange(n)[:, None] + np.arange(config.num_steps + 1)]  # corpus[i:i+33]
    X, Y = windows[:, :-1], windows[:, 1:]
    t = config.num_train
    return Dataset(vocab, len(corpus), X[:t], Y[:t], X[t:], Y[t:])


# ---------------------------------------------------------------- parameters

def init_params(cell, vocab_size, hidden, rng, dtype='float32', sigma=0.01):
    """d2l's parameters and initialisation: per gate ? an input weight W_x?, a
    recurrent weight W_h? and a bias b_?, then the output layer W_hq, b_q; weights
    normal(0, sigma), biases zero."""
    V, h = vocab_size, hidden
    params = {}
    for g in GATES[cell]:
        params['W_x' + g] = rng.normal(0.0, sigma, (V, h))
        params['W_h' + g] = rng.normal(0.0, sigma, (h, h))
        params['b_' + g] = np.zeros(h)
    params['W_hq'] = rng.normal(0.0, sigma, (h, V))
    params['b_q'] = np.zeros(V)
    return {name: p.astype(dtype) for name, p in params.items()}


def num_params(params):
    return sum(p.size for p in params.values())


def compute_param_counts(vocab_size=28, hidden=32):
    """(cell, parameters) for each cell, output layer included."""
    rng = np.random.default_rng(0)
    return [(cell, num_params(init_params(cell, vocab_size, hidden, rng))) for cell in CELLS]


def scratch(work, name, shape, dtype):
    """np.empty(shape, dtype), but reusing the memory of work[name] from the previous
    call when work is a dict (fresh arrays of megabytes, batch after batch, cost
    more in page faults than the arithmetic done in them)."""
    if work is None:
        return np.empty(shape, dtype)
    size = math.prod(shape)
    buf = work.get(name)
    if buf is None or buf.size < size or buf.dtype != dtype:
        buf = work[name] = np.empty(size, dtype)
    return buf[:size].reshape(shape)


def stacked(params, kind, gates):
    """One parameter per gate, stacked: stacked(p, 'W_h', 'zr') == [W_hz, W_hr], (2, h, h)."""
    return np.stack([params[kind + g] for g in gates])


def sigmoid_(a):
    """sigma(a) = (1 + tanh(a/2)) / 2, in place (never overflows)."""
    a *= 0.5
    np.tanh(a, out=a)
    a += 1
    a *= 0.5
    return a


def input_table(params, cell):
    """[W_x? + b_?] stacked over the gates, (gates, V, h).

    X_t is one-hot, so X_t W_x is a row lookup, W_x[token ids], and the bias
    rides along in the table: X_t W_x + b == (W_x + b)[token ids]."""
    gates = GATES[cell]
    return stacked(params, 'W_x', gates) + stacked(params, 'b_', gates)[:, None, :]


def named_grads(cell, dW_x, dW_h):
    """Gradients by name from the per-gate stacks. b_? is added to every row of the
    lookup table W_x? + b_?, so its gradient is the sum of dW_x?'s rows."""
    grads = {}
    for g, dW, dU in zip(GATES[cell], dW_x, dW_h):
        grads['W_x' + g], grads['W_h' + g], grads['b_' + g] = dW, dU, dW.sum(axis=0)
    return grads


# ---------------------------------------------------------------- the GRU cell
#
#   R  = sigma(X W_xr + H_prev W_hr + b_r)          reset gate
#   Z  = sigma(X W_xz + H_prev W_hz + b_z)          update gate
#   H~ = tanh(X W_xh + (R * H_prev) W_hh + b_h)     candidate state
#   H  = Z * H_prev + (1 - Z) * H~
#
# Arrays are time-major: X is (T, B) token ids, a state is (B, h). Step t keeps
# its gates stacked, G[t] = [Z, R, H~], so the three input products are one
# lookup and the two products by H_prev one call.

def gru_forward(p, X, H0, work=None, keep=True):
    """X: (T, B) token ids, H0: (B, h). Returns Hs (T+1, B, h) with Hs[0] = H0, the
    final state H_T, and the activations the backward pass needs (keep=False: not
    kept, for evaluation)."""
    (T, B), h = X.shape, len(p['W_hh'])
    table = input_table(p, 'gru')                 # [W_xz + b_z, W_xr + b_r, W_xh + b_h]
    W_hzr = stacked(p, 'W_h', 'zr')               # [W_hz, W_hr], (2, h, h)
    G = scratch(work, 'G', (T if keep else 1, 3, B, h), table.dtype)  # [Z, R, H~] per step
    Hs = scratch(work, 'Hs', (T + 1, B, h), G.dtype)  # H_0 .. H_T
    Hs[0] = H0
    zr = np.empty((2, B, h), G.dtype)             # scratch for one step
    RH = np.empty((B, h), G.dtype)
    hh = np.empty((B, h), G.dtype)
    for t in range(T):
        H_prev, H = Hs[t], Hs[t + 1]
        Gt = G[t if keep else 0]
        Z, R, Ht = Gt
        np.take(table, X[t], axis=1, out=Gt, mode='clip')  # X W_x? + b_?, the three at once
        Gt[:2] += np.matmul(H_prev, W_hzr, out=zr)  # + H_prev W_hz, + H_prev W_hr in one call
        sigmoid_(Gt[:2])                          # Z = sigma(..), R = sigma(..)
        np.multiply(R, H_prev, out=RH)            # R * H_prev
        Ht += np.matmul(RH, p['W_hh'], out=hh)    # X W_xh + (R * H_prev) W_hh + b_h
        np.tanh(Ht, out=Ht)                       # H~ = tanh(..)
        np.subtract(H_prev, Ht, out=H)            # H = Z * H_prev + (1 - Z) * H~
        H *= Z                                    #   = H~ + Z * (H_prev - H~)
        H += Ht
    return Hs, Hs[T].copy(), (X, G, Hs)


def gru_backward(p, cache, dHs):
    """dHs: (T, B, h), dloss/dH_t through the output layer. Returns (grads, dloss/dH_0)."""
    X, G, Hs = cache
    (T, _, B, h), V = G.shape, p['W_hq'].shape[1]
    W_hzr_T = stacked(p, 'W_h', 'zr').transpose(0, 2, 1)  # [W_hz^T, W_hr^T]
    W_hh_T = p['W_hh'].T
    eye = np.eye(V, dtype=G.dtype)                # one-hot rows
    X1 = np.empty((B, V), G.dtype)                # this step's inputs X_t, one-hot
    dA = np.empty((3, B, h), G.dtype)             # this step's dloss/d(pre-activation), per gate
    da_z, da_r, da_h = dA                         # (first dloss/dZ etc., then times sigma', tanh')
    dW_x = np.zeros((3, V, h), G.dtype)           # [dW_xz, dW_xr, dW_xh], summed over steps
    dW_h = np.zeros((3, h, h), G.dtype)           # [dW_hz, dW_hr, dW_hh]
    dH = np.zeros((B, h), G.dtype)                # dloss/dH_t, carried back through time
    dRH = np.empty((B, h), G.dtype)               # dloss/d(R * H_prev)
    RH = np.empty((B, h), G.dtype)                # R * H_prev, recomputed
    sig = np.empty((2, B, h), G.dtype)            # sigma' = s (1 - s) of Z and R
    s = np.empty((B, h), G.dtype)                 # scratch
    zr = np.empty((2, B, h), G.dtype)
    part_x, part_h = np.empty_like(dW_x), np.empty_like(dW_h)
    for t in reversed(range(T)):
        H_prev = Hs[t]
        Z, R, Ht = G[t]
        dH += dHs[t]                              # H_t also feeds the output at step t
        np.subtract(1, G[t, :2], out=sig)         # 1 - Z, 1 - R
        # H = Z * H_prev + (1 - Z) * H~
        np.subtract(H_prev, Ht, out=da_z)
        da_z *= dH                                # dloss/dZ = dH * (H_prev - H~)
        np.multiply(dH, sig[0], out=da_h)         # dloss/dH~ = dH * (1 - Z)
        sig *= G[t, :2]                           # sigma' = Z (1 - Z), R (1 - R)
        dH *= Z                                   # dloss/dH_prev, the direct path
        # H~ = tanh(X W_xh + (R * H_prev) W_hh + b_h)
        np.multiply(Ht, Ht, out=s)
        np.subtract(1, s, out=s)
        da_h *= s                                 # da_h = dloss/dH~ * (1 - H~^2)
        np.matmul(da_h, W_hh_T, out=dRH)          # dloss/d(R * H_prev) = da_h W_hh^T
        np.multiply(dRH, H_prev, out=da_r)        # dloss/dR
        dA[:2] *= sig                             # da_z, da_r = dloss/dZ, dloss/dR times sigma'
        dRH *= R
        dH += dRH                                 # dloss/dH_prev through R * H_prev
        np.matmul(dA[:2], W_hzr_T, out=zr)        # .. and through the gates:
        dH += zr[0]                               #    da_z W_hz^T + da_r W_hr^T
        dH += zr[1]
        # this step's share of the weight gradients; X_t^T da adds each row of da to
        # the row of W_x for that example's input character (a scatter-add, as a product)
        np.take(eye, X[t], axis=0, out=X1, mode='clip')
        dW_x += np.matmul(X1.T, dA, out=part_x)   # dW_x? += X_t^T da_?, the three at once
        dW_h[:2] += np.matmul(H_prev.T, dA[:2], out=part_h[:2])  # dW_hz, dW_hr += H_prev^T da
        np.multiply(R, H_prev, out=RH)
        dW_h[2] += np.matmul(RH.T, da_h, out=part_h[2])  # dW_hh += (R * H_prev)^T da_h
    return named_grads('gru', dW_x, dW_h), dH


# ---------------------------------------------------------------- the LSTM cell
#
#   I = sigma(X W_xi + H_prev W_hi + b_i),  F = sigma(..f..),  O = sigma(..o..)
#   C~ = tanh(X W_xc + H_prev W_hc + b_c)
#   C = F * C_prev + I * C~,   H = O * tanh(C)

def lstm_forward(p, X, state, work=None, keep=True):
    """state = (H0, C0). Returns Hs (T+1, B, h), the final (H_T, C_T) and a cache."""
    (T, B), h = X.shape, len(p['W_hc'])
    table = input_table(p, 'lstm')                # [W_xi + b_i, W_xf + b_f, W_xo + b_o, W_xc + b_c]
    W_h = stacked(p, 'W_h', 'ifoc')               # [W_hi, W_hf, W_ho, W_hc]
    G = scratch(work, 'G', (T if keep else 1, 4, B, h), table.dtype)  # [I, F, O, C~] per step
    Hs = scratch(work, 'Hs', (T + 1, B, h), G.dtype)
    Cs = scratch(work, 'Cs', (T + 1, B, h), G.dtype)  # memory cells C_0 .. C_T
    Hs[0], Cs[0] = state
    TC = scratch(work, 'TC', (T if keep else 1, B, h), G.dtype)  # tanh(C_t)
    a = np.empty((4, B, h), G.dtype)
    ic = np.empty((B, h), G.dtype)
    for t in range(T):
        Gt, TCt = G[t if keep else 0], TC[t if keep else 0]
        I, F, O, Cc = Gt
        np.take(table, X[t], axis=1, out=Gt, mode='clip')  # X W_x? + b_?, the four at once
        Gt += np.matmul(Hs[t], W_h, out=a)        # + H_prev W_h?
        sigmoid_(Gt[:3])                          # I, F, O = sigma(..)
        np.tanh(Cc, out=Cc)                       # C~ = tanh(..)
        np.multiply(F, Cs[t], out=Cs[t + 1])      # C = F * C_prev + I * C~
        Cs[t + 1] += np.multiply(I, Cc, out=ic)
        np.tanh(Cs[t + 1], out=TCt)               # H = O * tanh(C)
        np.multiply(O, TCt, out=Hs[t + 1])
    return Hs, (Hs[T].copy(), Cs[T].copy()), (X, G, Hs, Cs, TC)


def lstm_backward(p, cache, dHs):
    X, G, Hs, Cs, TC = cache
    (T, _, B, h), V = G.shape, p['W_hq'].shape[1]
    W_h_T = stacked(p, 'W_h', 'ifoc').transpose(0, 2, 1)
    eye = np.eye(V, dtype=G.dtype)
    X1 = np.empty((B, V), G.dtype)                # this step's inputs X_t, one-hot
    dA = np.empty((4, B, h), G.dtype)             # this step's da_i, da_f, da_o, da_c
    da_i, da_f, da_o, da_c = dA
    dW_x = np.zeros((4, V, h), G.dtype)
    dW_h = np.zeros((4, h, h), G.dtype)
    dH = np.zeros((B, h), G.dtype)                # dloss/dH_t, carried back
    dC = np.zeros((B, h), G.dtype)                # dloss/dC_t, carried back
    sig = np.empty((3, B, h), G.dtype)            # sigma' of I, F, O
    s = np.empty((B, h), G.dtype)
    a = np.empty((4, B, h), G.dtype)
    part_x, part_h = np.empty_like(dW_x), np.empty_like(dW_h)
    for t in reversed(range(T)):
        I, F, O, Cc = G[t]
        dH += dHs[t]
        np.subtract(1, G[t, :3], out=sig)
        sig *= G[t, :3]                           # I (1 - I), F (1 - F), O (1 - O)
        # H = O * tanh(C)
        np.multiply(dH, TC[t], out=da_o)          # dloss/dO
        np.multiply(TC[t], TC[t], out=s)
        np.subtract(1, s, out=s)
        s *= O
        s *= dH
        dC += s                                   # dloss/dC = carried + dH * O * (1 - tanh(C)^2)
        # C = F * C_prev + I * C~
        np.multiply(dC, Cc, out=da_i)             # dloss/dI
        np.multiply(dC, Cs[t], out=da_f)          # dloss/dF
        np.multiply(dC, I, out=da_c)              # dloss/dC~
        dC *= F                                   # dloss/dC_prev
        dA[:3] *= sig                             # da_i, da_f, da_o
        np.multiply(Cc, Cc, out=s)
        np.subtract(1, s, out=s)
        da_c *= s                                 # da_c = dloss/dC~ * (1 - C~^2)
        np.matmul(dA, W_h_T, out=a)               # dloss/dH_prev = sum over gates of da W_h?^T
        np.sum(a, axis=0, out=dH)
        np.take(eye, X[t], axis=0, out=X1, mode='clip')
        dW_x += np.matmul(X1.T, dA, out=part_x)   # dW_x? += X_t^T da_?
        dW_h += np.matmul(Hs[t].T, dA, out=part_h)  # dW_h? += H_prev^T da_?
    return named_grads('lstm', dW_x, dW_h), (dH, dC)


# ---------------------------------------------------------------- the plain RNN cell
#
#   H = tanh(X W_xh + H_prev W_hh + b_h)

def rnn_forward(p, X, H0, work=None, keep=True):
    (T, B), h = X.shape, len(p['W_hh'])
    table = input_table(p, 'rnn')                 # [W_xh + b_h]
    Hs = scratch(work, 'Hs', (T + 1, B, h), table.dtype)
    Hs[0] = H0
    a = np.empty((1, B, h), table.dtype)
    for t in range(T):
        np.take(table, X[t], axis=1, out=a, mode='clip')  # X W_xh + b_h
        a[0] += np.matmul(Hs[t], p['W_hh'], out=Hs[t + 1])  # + H_prev W_hh
        np.tanh(a[0], out=Hs[t + 1])              # H = tanh(..)
    return Hs, Hs[T].copy(), (X, Hs)


def rnn_backward(p, cache, dHs):
    X, Hs = cache
    (T, B, h), V = dHs.shape, p['W_hq'].shape[1]
    eye = np.eye(V, dtype=dHs.dtype)
    X1 = np.empty((B, V), dHs.dtype)              # this step's inputs X_t, one-hot
    dA = np.empty((1, B, h), dHs.dtype)           # this step's da_h
    dW_x = np.zeros((1, V, h), dHs.dtype)
    dW_h = np.zeros((1, h, h), dHs.dtype)
    dH = np.zeros((B, h), dHs.dtype)
    s = np.empty((B, h), dHs.dtype)
    part_x, part_h = np.empty_like(dW_x), np.empty_like(dW_h)
    for t in reversed(range(T)):
        dH += dHs[t]
        np.multiply(Hs[t + 1], Hs[t + 1], out=s)
        np.subtract(1, s, out=s)
        np.multiply(dH, s, out=dA[0])             # da_h = dH * (1 - H^2)
        np.take(eye, X[t], axis=0, out=X1, mode='clip')
        dW_x += np.matmul(X1.T, dA, out=part_x)   # dW_xh += X_t^T da_h
        dW_h += np.matmul(Hs[t].T, dA, out=part_h)  # dW_hh += H_prev^T da_h
        np.matmul(dA[0], p['W_hh'].T, out=dH)     # dH_prev = da_h W_hh^T
    return named_grads('rnn', dW_x, dW_h), dH


CELL_FORWARD = {'gru': gru_forward, 'lstm': lstm_forward, 'rnn': rnn_forward}
CELL_BACKWARD = {'gru': gru_backward, 'lstm': lstm_backward, 'rnn': rnn_backward}


def zero_state(params, cell, batch_size):
    h = params['W_hq'].shape[0]
    H = np.zeros((batch_size, h), params['W_hq'].dtype)
    return (H, H.copy()) if cell == 'lstm' else H


# ---------------------------------------------------------------- the language model

def forward(params, cell, X_ids, state=None):
    """X_ids: (B, T) token ids. Returns logits (B, T, V) and the final state."""
    X = np.asarray(X_ids).T                       # time-major, (T, B)
    if state is None:
        state = zero_state(params, cell, X.shape[1])
    Hs, state, _ = CELL_FORWARD[cell](params, X, state, keep=False)
    logits = Hs[1:] @ params['W_hq'] + params['b_q']  # Y_hat = H W_hq + b_q, every step
    return logits.swapaxes(0, 1), state


def softmax_cross_entropy(logits, Y, need_grad=True):
    """Mean of -log softmax(logits)[Y] over the rows, and its gradient
    (softmax - onehot(Y)) / N. Overwrites logits."""
    N, V = logits.shape
    target = np.arange(N) * V + Y                 # each row's true next character, in logits.ravel()
    top, bottom = logits.max(), logits.min()
    # softmax is unchanged by subtracting a constant per row; subtracting the
    # largest logit of all avoids overflow, and is enough unless a whole row
    # could then underflow
    logits -= top if top - bottom < 80 else logits.max(axis=1, keepdims=True)
    picked = logits.ravel()[target]
    P = np.exp(logits, out=logits)
    total = P @ np.ones(V, P.dtype)               # row sums (a product: fast for short rows)
    loss = float(np.mean(np.log(total) - picked))
    if not need_grad:
        return loss, None
    P *= (1 / (N * total))[:, None]               # softmax / N
    P.ravel()[target] -= 1 / N                    # minus onehot(Y) / N
    return loss, P


def loss_and_grads(params, cell, X_ids, Y_ids, state=None, need_grads=True, work=None):
    """Mean cross-entropy over all B*T tokens and its gradient for every parameter.
    work: a dict of buffers to reuse from call to call (see scratch)."""
    X = np.ascontiguousarray(np.asarray(X_ids).T)  # time-major, (T, B)
    Y = np.asarray(Y_ids).T
    T, B = X.shape
    h = params['W_hq'].shape[0]
    if state is None:
        state = zero_state(params, cell, B)
    Hs, _, cache = CELL_FORWARD[cell](params, X, state, work, keep=need_grads)
    H = Hs[1:].reshape(T * B, h)                  # every step's hidden state, one matrix
    logits = scratch(work, 'logits', (T * B, len(params['b_q'])), H.dtype)
    np.matmul(H, params['W_hq'], out=logits)      # the output layer for all steps in one product
    logits += params['b_q']
    loss, dlogits = softmax_cross_entropy(logits, Y.ravel(), need_grads)
    if not need_grads:
        return loss, None
    dHs = np.matmul(dlogits, params['W_hq'].T, out=scratch(work, 'dHs', (T * B, h), H.dtype))
    grads, _ = CELL_BACKWARD[cell](params, cache, dHs.reshape(T, B, h))
    grads['W_hq'] = (dlogits.T @ H).T             # H^T dlogits (this order runs faster)
    grads['b_q'] = np.ones(T * B, H.dtype) @ dlogits  # column sums (as a product: fast)
    return loss, {name: grads[name] for name in params}


def clip_gradients(grads, max_norm):
    """d2l's clip_gradients: rescale the whole gradient to L2 norm max_norm if it is longer."""
    norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if norm > max_norm:
        for g in grads.values():
            g *= max_norm / norm
    return norm


def sgd(params, grads, lr):
    for name, p in params.items():
        p -= lr * grads[name]


def evaluate(params, cell, X, Y, batch_size, work=None):
    """Mean cross-entropy over every token of (X, Y), in batches, no shuffling."""
    total = 0.0
    for i in range(0, len(X), batch_size):
        loss, _ = loss_and_grads(params, cell, X[i:i + batch_size], Y[i:i + batch_size],
                                 need_grads=False, work=work)
        total += loss * len(X[i:i + batch_size])
    return total / len(X)


def predict(params, cell, prefix, num_preds, vocab):
    """Warm up on the prefix, then num_preds greedy (argmax) characters."""
    index = {token: i for i, token in enumerate(vocab)}
    ids = [index.get(c, index['<unk>']) for c in prefix]
    logits, state = forward(params, cell, np.array([ids]))
    for _ in range(num_preds):
        ids.append(int(logits[0, -1].argmax()))
        logits, state = forward(params, cell, np.array([[ids[-1]]]), state)
    return ''.join(vocab[i] for i in ids)


def perplexity(loss):
    return math.exp(min(loss, 700.0))


def compute_training(text, config=Config(), on_epoch=None):
    """Train config.cell on the text as d2l does; on_epoch(epoch, train_ppl, val_ppl)
    is called after each epoch."""
    data = make_dataset(text, config)
    rng = np.random.default_rng(config.seed)
    params = init_params(config.cell, len(data.vocab), config.hidden, rng,
                         'float32', config.init_sigma)
    n, B = len(data.X_train), config.batch_size
    history = []
    work = {}                                     # buffers reused from batch to batch
    start = time.perf_counter()
    for epoch in range(1, config.epochs + 1):
        order = rng.permutation(n)                # reshuffled every epoch
        total = 0.0
        for i in range(0, n, B):
            batch = order[i:i + B]
            loss, grads = loss_and_grads(params, config.cell,
                                         data.X_train[batch], data.Y_train[batch], work=work)
            clip_gradients(grads, config.clip)
            sgd(params, grads, config.lr)
            total += loss * len(batch)            # measured during the epoch, as d2l does
        val = evaluate(params, config.cell, data.X_val, data.Y_val, B, work)
        row = (epoch, perplexity(total / n), perplexity(val))
        history.append(row)
        if on_epoch is not None:
            on_epoch(*row)
    seconds = max(time.perf_counter() - start, 1e-9)
    sample = predict(params, config.cell, config.prefix, config.num_preds, data.vocab)
    return TrainResult(config, history, sample, seconds,
                       config.epochs * n * config.num_steps / seconds,
                       num_params(params), len(data.vocab), data.num_chars)


# ---------------------------------------------------------------- gradient check

GRADCHECK = dict(vocab_size=6, batch_size=3, num_steps=5, hidden=4, scale=0.5, eps=1e-5)


def compute_gradcheck(cells=CELLS, seed=0):
    """(cell, parameter, shape, max relative error) of the analytic gradient against
    central differences, float64, on a small random problem with a random initial state."""
    c = GRADCHECK
    rows = []
    for cell in cells:
        rng = np.random.default_rng(seed)
        params = {name: c['scale'] * rng.standard_normal(p.shape)
                  for name, p in init_params(cell, c['vocab_size'], c['hidden'], rng,
                                             'float64').items()}
        X = rng.integers(0, c['vocab_size'], (c['batch_size'], c['num_steps']))
        Y = rng.integers(0, c['vocab_size'], (c['batch_size'], c['num_steps']))
        H = rng.standard_normal((2, c['batch_size'], c['hidden'])) * c['scale']
        state = (H[0], H[1]) if cell == 'lstm' else H[0]
        _, grads = loss_and_grads(params, cell, X, Y, state)
        for name, p in params.items():
            numeric = np.empty_like(p)
            for i in np.ndindex(p.shape):
                old = p[i]
                p[i] = old + c['eps']
                plus, _ = loss_and_grads(params, cell, X, Y, state, need_grads=False)
                p[i] = old - c['eps']
                minus, _ = loss_and_grads(params, cell, X, Y, state, need_grads=False)
                p[i] = old
                numeric[i] = (plus - minus) / (2 * c['eps'])
            a = grads[name]
            err = np.abs(a - numeric).max() / max((np.abs(a) + np.abs(numeric)).max(), 1e-300)
            rows.append((cell, name, p.shape, float(err)))
    return rows


# ---------------------------------------------------------------- printing

def format_table(header, rows, align, min_widths=None):
    """A markdown pipe table; align is a string of 'l'/'r', one per column."""
    cells = [[str(x) for x in row] for row in [header] + list(rows)]
    widths = [max([len(r[k]) for r in cells] + [3, (min_widths or [0] * len(header))[k]])
              for k in range(len(header))]
    rule = ['-' * (w - 1) + ':' if a == 'r' else '-' * w for w, a in zip(widths, align)]

    def line(r):
        return '| ' + ' | '.join(x.rjust(w) if a == 'r' else x.ljust(w)
                                 for x, w, a in zip(r, widths, align)) + ' |'
    return '\n'.join([line(cells[0]), line(rule)] + [line(r) for r in cells[1:]])


def format_ppl(x):
    return f'{x:.2f}' if x < 1e6 else f'{x:.2e}'   # at most 9 characters either way


HISTORY_HEADER = ('epoch', 'train ppl', 'val ppl')


def history_widths(config):
    """Fixed column widths, so the table can be printed one row at a time."""
    return [max(5, len(str(config.epochs))), 9, 9]


def history_row(epoch, train_ppl, val_ppl):
    return (str(epoch), format_ppl(train_ppl), format_ppl(val_ppl))


def format_history_table(result):
    """The per-epoch table, exactly as main() prints it row by row while training."""
    return format_table(HISTORY_HEADER, [history_row(*r) for r in result.history], 'rrr',
                        history_widths(result.config))


MODEL_NAMES = {'gru': 'GRU', 'lstm': 'LSTM', 'rnn': 'plain RNN'}


def format_config_table(config, data):
    """The data and the configuration, as `python3 gru.py` prints them first."""
    n = num_params(init_params(config.cell, len(data.vocab), config.hidden,
                               np.random.default_rng(0)))
    T = config.num_steps
    shown = ['unknown' if t == '<unk>' else repr(t) for t in data.vocab]  # no <tag> in markdown
    rows = [
        ('corpus', f'{data.num_chars:,} characters after preprocessing'),
        ('vocabulary', f"{len(data.vocab)} tokens: {', '.join(shown[:3])} .. {shown[-1]}"),
        ('examples', f'{len(data.X_train):,} training and {len(data.X_val):,} validation '
                     f'windows of {T} + 1 characters'),
        ('batch', f'{config.batch_size:,} windows, reshuffled every epoch'),
        ('model', f'{MODEL_NAMES[config.cell]}, hidden size {config.hidden}, {n:,} parameters'),
        ('initialisation', f'weights normal(0, {config.init_sigma:g}), biases zero'),
        ('optimiser', f'SGD, learning rate {config.lr:g}, gradient clipped to norm '
                      f'{config.clip:g}'),
        ('training', f"{config.epochs} epoch{'s' if config.epochs > 1 else ''}, "
                     f'seed {config.seed}, float32'),
    ]
    return format_table(('item', 'value'), rows, 'll')


def format_comparison_table(results):
    """One row per trained model: what `python3 gru.py --compare` prints."""
    epochs = {r.config.epochs for r in results}
    at = f'epoch {epochs.pop()}' if len(epochs) == 1 else 'last epoch'
    rows = [(MODEL_NAMES[r.config.cell], f'{r.num_params:,}', f'{r.config.lr:g}',
             format_ppl(r.history[-1][1]), format_ppl(r.history[-1][2]), f'"{r.sample}"')
            for r in results]
    return format_table(('model', 'parameters', 'learning rate', f'train ppl, {at}',
                         f'val ppl, {at}', 'sample'), rows, 'lrrrrl')


def format_sample(result):
    c = result.config
    return (f'sample (prefix "{c.prefix}", then {c.num_preds} greedy characters): '
            f'"{result.sample}"')


def format_timing(result):
    return (f'time: {result.seconds:.1f} s for {result.config.epochs} epochs '
            f'(training and validation), {result.tokens_per_second:,.0f} training tokens/s')


def format_gradcheck_table(rows):
    """What --gradcheck prints: a caption line, then the table."""
    c = GRADCHECK
    caption = (f'relative error max abs(a - n) / max(abs(a) + abs(n)) over each parameter\'s '
               f'entries, a analytic, n central difference with step {c["eps"]:g}; float64, batch '
               f'{c["batch_size"]}, {c["num_steps"]} steps, hidden {c["hidden"]}, '
               f'vocabulary {c["vocab_size"]}')
    body = [(cell, name, ' x '.join(map(str, shape)), f'{err:.1e}')
            for cell, name, shape, err in rows]
    return caption + '\n\n' + format_table(('cell', 'parameter', 'shape', 'relative error'),
                                           body, 'llrr')


# ---------------------------------------------------------------- command line

def positive_int(s):
    n = int(s)
    if n < 1:
        raise argparse.ArgumentTypeError(f'must be at least 1, got {n}')
    return n


def positive_float(s):
    x = float(s)
    if not x > 0:
        raise argparse.ArgumentTypeError(f'must be positive, got {s}')
    return x


def nonnegative_int(s):
    n = int(s)
    if n < 0:
        raise argparse.ArgumentTypeError(f'must be at least 0, got {n}')
    return n


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog='gru.py',
        description='Train a character-level GRU language model on The Time Machine, '
                    'from scratch in numpy (d2l.ai\'s configuration).')
    ap.add_argument('--cell', choices=CELLS,
                    help='recurrent cell to train: gru (default), lstm or rnn; '
                         'with --gradcheck, check only this cell')
    ap.add_argument('--epochs', type=positive_int, default=Config.epochs, metavar='N',
                    help='training epochs, at least 1 (default %(default)s)')
    ap.add_argument('--lr', type=positive_float, metavar='LR',
                    help="SGD learning rate (default: d2l's, 4 for gru and lstm, 1 for rnn)")
    ap.add_argument('--seed', type=nonnegative_int, default=Config.seed, metavar='S',
                    help='seed for initialisation and shuffling, and for the --gradcheck '
                         'problem (default %(default)s)')
    ap.add_argument('--corpus', type=Path, default=CORPUS, metavar='PATH',
                    help='the text to train on (default: timemachine.txt next to gru.py)')
    ap.add_argument('--compare', action='store_true',
                    help='train the GRU, the LSTM and the plain RNN (each with d2l\'s '
                         'learning rate unless --lr) and print one row per model')
    ap.add_argument('--gradcheck', action='store_true',
                    help='instead of training, compare every analytic gradient with central '
                         'finite differences in float64, for all three cells (or only --cell)')
    return ap.parse_args(argv)


def compare(text, args):
    """--compare: the three cells on the same harness, one after the other."""
    results = []
    for cell in CELLS:
        config = Config(cell=cell, epochs=args.epochs, seed=args.seed, lr=args.lr)
        print(f'training the {MODEL_NAMES[cell]}: {config.epochs} epochs, '
              f'learning rate {config.lr:g} ...', flush=True)
        results.append(compute_training(text, config))
    print('\n' + format_comparison_table(results) + '\n')
    print('time: ' + ', '.join(f'{MODEL_NAMES[r.config.cell]} {r.seconds:.1f} s '
                               f'({r.tokens_per_second:,.0f} training tokens/s)'
                               for r in results))
    return 0


def main(argv=None):
    args = parse_args(argv)
    if np is None:
        print('gru.py needs numpy: pip install numpy', file=sys.stderr)
        return 1
    try:
        return run(args)
    except BrokenPipeError:  # piped into `head`, which stopped reading: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def run(args):
    """What main() does once the arguments are parsed and numpy is there."""
    if args.gradcheck:
        rows = compute_gradcheck((args.cell,) if args.cell else CELLS, args.seed)
        print(format_gradcheck_table(rows))
        worst = max(err for *_, err in rows)
        print(f'\nworst: {worst:.1e} ({"well under" if worst < 1e-6 else "NOT under"} 1e-6)')
        return 0 if worst < 1e-6 else 1
    config = Config(cell=args.cell or 'gru', epochs=args.epochs, seed=args.seed, lr=args.lr)
    try:
        text = load_corpus(args.corpus)
        data = make_dataset(text, config)
    except CorpusError as e:
        msg = str(e)
        if not msg.startswith('cannot read corpus'):
            msg = f'cannot read corpus {args.corpus}: {msg}'
        print(f'gru.py: {msg}', file=sys.stderr)
        return 1
    if args.compare:
        return compare(text, args)
    print(f'{MODEL_NAMES[config.cell]} language model on The Time Machine, '
          f'numpy, from scratch\n', flush=True)
    print(format_config_table(config, data) + '\n', flush=True)
    widths = history_widths(config)
    print(format_table(HISTORY_HEADER, [], 'rrr', widths), flush=True)

    def on_epoch(*row):
        print(format_table(HISTORY_HEADER, [history_row(*row)], 'rrr', widths)
              .splitlines()[-1], flush=True)

    result = compute_training(text, config, on_epoch)
    print('\n' + format_sample(result))
    print(format_timing(result))
    return 0


if __name__ == '__main__':
    sys.exit(main())
