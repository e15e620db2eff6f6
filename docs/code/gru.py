"""A character-level GRU language model, from scratch in numpy.

Works through the GRU section of "Dive into Deep Learning" (d2l.ai) with no
framework: H. G. Wells' *The Time Machine* becomes a stream of 28 character
tokens, cut into windows of 32 + 1 characters; a GRU cell (d2l's equations)
reads 32 of them and predicts each next one; the gradient comes from
backpropagation through time written out by hand; plain SGD with the gradient
clipped to norm 1 trains it for 50 epochs, printing train and validation
perplexity per epoch; finally it writes 20 characters after "it has". An LSTM
and a plain tanh RNN run on the same harness, and a finite-difference check
confirms every hand-written gradient.

    python3 gru.py                  # train the GRU, one table row per epoch
    python3 gru.py --cell lstm      # the same with an LSTM (or --cell rnn)
    python3 gru.py --epochs 5 --seed 1
    python3 gru.py --gradcheck      # analytic vs numerical gradients, all cells

Needs only numpy (pip install numpy). The corpus, timemachine.txt, is read from
next to this file unless --corpus says otherwise.
"""
import argparse
import math
import re
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

try:
    import numpy as np
except ImportError:  # main() says how to install it
    np = None

CORPUS = Path(__file__).with_name('timemachine.txt')
CELLS = ('gru', 'lstm', 'rnn')
GATES = {'gru': 'zrh',    # update gate Z, reset gate R, candidate H~
         'lstm': 'ifoc',  # input gate I, forget gate F, output gate O, input node C~
         'rnn': 'h'}      # the hidden state itself


class CorpusError(Exception):
    """The corpus cannot be used; the message is one line."""


@dataclass(frozen=True)
class Config:
    cell: str = 'gru'         # gru, lstm or rnn
    hidden: int = 32          # hidden units h
    num_steps: int = 32       # characters read per example
    batch_size: int = 1024    # examples per SGD step
    lr: float = 4.0           # SGD learning rate
    clip: float = 1.0         # max global L2 norm of the gradient
    epochs: int = 50          # passes over the training windows
    num_train: int = 10000    # first windows: training set
    num_val: int = 5000       # next windows: validation set
    seed: int = 0             # seeds initialisation and shuffling
    init_sigma: float = 0.01  # std of the normal initial weights
    prefix: str = 'it has'    # warm-up text for sampling
    num_preds: int = 20       # characters predicted after the prefix


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
        with open(path, encoding='utf-8') as f:
            return f.read()
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
    """Every window of num_steps + 1 characters; the first num_train train, the next num_val validate."""
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

def param_names(cell):
    """d2l's names: W_x? (input), W_h? (recurrent), b_? per gate, then the output layer."""
    names = [f'{kind}_{g}' if kind == 'b' else f'{kind}{g}'
             for g in GATES[cell] for kind in ('W_x', 'W_h', 'b')]
    return names + ['W_hq', 'b_q']


def init_params(cell, vocab_size, hidden, rng, dtype='float32', sigma=0.01):
    """Weights normal(0, sigma), biases zero, as d2l initialises its scratch models."""
    shapes = {'W_hq': (hidden, vocab_size), 'b_q': (vocab_size,),
              'W_x': (vocab_size, hidden), 'W_h': (hidden, hidden)}
    params = {}
    for name in param_names(cell):
        shape = shapes.get(name) or shapes.get(name[:3], (hidden,))
        w = np.zeros(shape) if name.startswith('b') else rng.normal(0.0, sigma, shape)
        params[name] = w.astype(dtype)
    return params


def num_params(params):
    return sum(p.size for p in params.values())


def compute_param_counts(vocab_size=28, hidden=32):
    """(cell, parameters) for each cell, output layer included."""
    rng = np.random.default_rng(0)
    return [(cell, num_params(init_params(cell, vocab_size, hidden, rng))) for cell in CELLS]


def stacked(params, kind, gates):
    """One parameter per gate, stacked: stacked(p, 'W_h', 'zr') == [W_hz, W_hr], (2, h, h)."""
    return np.stack([params[f'b_{g}' if kind == 'b' else f'{kind}{g}'] for g in gates])


def sigmoid_(a):
    """sigma(a) = (1 + tanh(a/2)) / 2, in place (never overflows)."""
    a *= 0.5
    np.tanh(a, out=a)
    a += 1
    a *= 0.5
    return a


def input_projections(params, cell, X):
    """X_t W_x? + b_? for every gate ? and every step at once: (gates, T, B, h).

    X_t is one-hot, so X_t W_x is a row lookup, W_x[token ids], and the bias
    rides along in the table: (W_x + b)[ids]."""
    gates = GATES[cell]
    table = stacked(params, 'W_x', gates) + stacked(params, 'b', gates)[:, None, :]
    return np.take(table, X, axis=1)


def input_grads(grads, cell, X, dA, vocab_size):
    """dW_x? = X^T dA? with X the one-hot inputs; b_? is added to every row of the
    lookup table, so db_? = the sum of dW_x?'s rows."""
    gates, (k, T, B, h) = GATES[cell], dA.shape
    X1 = np.eye(vocab_size, dtype=dA.dtype)[X.ravel()]   # (T*B, V) one-hot inputs
    dW_x = np.matmul(X1.T, dA.reshape(k, T * B, h))      # (gates, V, h), one product per gate
    for g, dW in zip(gates, dW_x):
        grads[f'W_x{g}'] = dW
        grads[f'b_{g}'] = dW.sum(axis=0)


def recurrent_grad(H, dA):
    """dW = sum over steps of H_t^T dA_t, as one product over all T*B rows."""
    (T, B, h), k = H.shape, len(dA)
    return np.matmul(H.reshape(T * B, h).T, dA.reshape(k, T * B, h))


# ---------------------------------------------------------------- the GRU cell

def gru_forward(p, X, H0):
    """X: (T, B) token ids, H0: (B, h). Returns Hs (T+1, B, h) with Hs[0] = H0,
    the final state H_T and what the backward pass needs."""
    (T, B), h = X.shape, len(p['W_hh'])
    G = input_projections(p, 'gru', X)            # (3, T, B, h), becomes Z, R, H~ step by step
    Z, R, Ht = G
    W_hzr = stacked(p, 'W_h', 'zr')               # [W_hz, W_hr], (2, h, h)
    Hs = np.empty((T + 1, B, h), G.dtype)         # H_0 .. H_T
    Hs[0] = H0
    RH = np.empty((T, B, h), G.dtype)             # R_t * H_{t-1}
    zr = np.empty((2, B, h), G.dtype)             # scratch for one step
    hh = np.empty((B, h), G.dtype)
    for t in range(T):
        H_prev, H = Hs[t], Hs[t + 1]
        G[:2, t] += np.matmul(H_prev, W_hzr, out=zr)  # X W_xz + H_prev W_hz + b_z, and the same for r
        sigmoid_(G[:2, t])                        # Z = sigma(..), R = sigma(..)
        np.multiply(R[t], H_prev, out=RH[t])      # R * H_prev
        Ht[t] += np.matmul(RH[t], p['W_hh'], out=hh)  # X W_xh + (R * H_prev) W_hh + b_h
        np.tanh(Ht[t], out=Ht[t])                 # H~ = tanh(..)
        np.subtract(H_prev, Ht[t], out=H)         # H = Z * H_prev + (1 - Z) * H~
        H *= Z[t]                                 #   = H~ + Z * (H_prev - H~)
        H += Ht[t]
    return Hs, Hs[T].copy(), (X, G, RH, Hs)


def gru_backward(p, cache, dHs):
    """dHs: (T, B, h), dloss/dH_t through the output layer. Returns (grads, dloss/dH_0)."""
    X, G, RH, Hs = cache
    _, T, B, h = G.shape
    Z, R, Ht = G
    W_hzr_T = stacked(p, 'W_h', 'zr').transpose(0, 2, 1)  # [W_hz^T, W_hr^T]
    W_hh_T = p['W_hh'].T
    dA = np.empty_like(G)                         # dloss/d(pre-activations): da_z, da_r, da_h
    dZ, dR, dHt = dA                              # (each filled in as dloss/dZ etc., then times sigma' or tanh')
    dH = np.zeros((B, h), G.dtype)                # dloss/dH_t, carried back through time
    dRH = np.empty((B, h), G.dtype)               # dloss/d(R * H_prev)
    s = np.empty((B, h), G.dtype)                 # scratch: a local derivative
    zr = np.empty((2, B, h), G.dtype)
    for t in reversed(range(T)):
        H_prev = Hs[t]
        dH += dHs[t]                              # H_t also feeds the output at step t
        # H = Z * H_prev + (1 - Z) * H~
        np.subtract(H_prev, Ht[t], out=dZ[t])
        dZ[t] *= dH                               # dloss/dZ = dH * (H_prev - H~)
        np.subtract(1, Z[t], out=s)
        np.multiply(dH, s, out=dHt[t])            # dloss/dH~ = dH * (1 - Z)
        s *= Z[t]
        dZ[t] *= s                                # da_z = dloss/dZ * Z (1 - Z)
        dH *= Z[t]                                # dloss/dH_prev, direct path
        # H~ = tanh(X W_xh + (R * H_prev) W_hh + b_h)
        np.multiply(Ht[t], Ht[t], out=s)
        np.subtract(1, s, out=s)
        dHt[t] *= s                               # da_h = dloss/dH~ * (1 - H~^2)
        np.matmul(dHt[t], W_hh_T, out=dRH)        # dloss/d(R * H_prev) = da_h W_hh^T
        np.multiply(dRH, H_prev, out=dR[t])       # dloss/dR
        np.subtract(1, R[t], out=s)
        s *= R[t]
        dR[t] *= s                                # da_r = dloss/dR * R (1 - R)
        dRH *= R[t]
        dH += dRH                                 # dloss/dH_prev through R * H_prev
        np.matmul(dA[:2, t], W_hzr_T, out=zr)     # .. and through both gates:
        dH += zr[0]                               #    da_z W_hz^T + da_r W_hr^T
        dH += zr[1]
    grads = {}
    input_grads(grads, 'gru', X, dA, p['W_hq'].shape[1])
    grads['W_hz'], grads['W_hr'] = recurrent_grad(Hs[:-1], dA[:2])
    grads['W_hh'], = recurrent_grad(RH, dA[2:])
    return grads, dH


# ---------------------------------------------------------------- the LSTM cell

def lstm_forward(p, X, state):
    """state = (H0, C0). Returns Hs (T+1, B, h), the final (H_T, C_T) and a cache."""
    (T, B), h = X.shape, len(p['W_hc'])
    G = input_projections(p, 'lstm', X)           # (4, T, B, h), becomes I, F, O, C~
    I, F, O, Cc = G
    W_h = stacked(p, 'W_h', 'ifoc')               # [W_hi, W_hf, W_ho, W_hc]
    Hs = np.empty((T + 1, B, h), G.dtype)
    Cs = np.empty((T + 1, B, h), G.dtype)         # memory cells C_0 .. C_T
    Hs[0], Cs[0] = state
    TC = np.empty((T, B, h), G.dtype)             # tanh(C_t)
    a = np.empty((4, B, h), G.dtype)
    ic = np.empty((B, h), G.dtype)
    for t in range(T):
        G[:, t] += np.matmul(Hs[t], W_h, out=a)   # X W_x? + H_prev W_h? + b_?, all four gates
        sigmoid_(G[:3, t])                        # I, F, O = sigma(..)
        np.tanh(Cc[t], out=Cc[t])                 # C~ = tanh(..)
        np.multiply(F[t], Cs[t], out=Cs[t + 1])   # C = F * C_prev + I * C~
        Cs[t + 1] += np.multiply(I[t], Cc[t], out=ic)
        np.tanh(Cs[t + 1], out=TC[t])             # H = O * tanh(C)
        np.multiply(O[t], TC[t], out=Hs[t + 1])
    return Hs, (Hs[T].copy(), Cs[T].copy()), (X, G, Hs, Cs, TC)


def lstm_backward(p, cache, dHs):
    X, G, Hs, Cs, TC = cache
    _, T, B, h = G.shape
    I, F, O, Cc = G
    W_h_T = stacked(p, 'W_h', 'ifoc').transpose(0, 2, 1)
    dA = np.empty_like(G)                         # da_i, da_f, da_o, da_c
    dI, dF, dO, dCc = dA
    dH = np.zeros((B, h), G.dtype)                # dloss/dH_t, carried back
    dC = np.zeros((B, h), G.dtype)                # dloss/dC_t, carried back
    s = np.empty((B, h), G.dtype)
    a = np.empty((4, B, h), G.dtype)
    for t in reversed(range(T)):
        dH += dHs[t]
        # H = O * tanh(C)
        np.multiply(dH, TC[t], out=dO[t])         # dloss/dO
        np.multiply(TC[t], TC[t], out=s)
        np.subtract(1, s, out=s)
        s *= O[t]
        s *= dH
        dC += s                                   # dloss/dC = carried + dH * O * (1 - tanh(C)^2)
        # C = F * C_prev + I * C~
        np.multiply(dC, Cc[t], out=dI[t])         # dloss/dI
        np.multiply(dC, Cs[t], out=dF[t])         # dloss/dF
        np.multiply(dC, I[t], out=dCc[t])         # dloss/dC~
        dC *= F[t]                                # dloss/dC_prev
        for gate, dgate in ((I, dI), (F, dF), (O, dO)):
            np.subtract(1, gate[t], out=s)
            s *= gate[t]
            dgate[t] *= s                         # da = dloss/dgate * sigma'
        np.multiply(Cc[t], Cc[t], out=s)
        np.subtract(1, s, out=s)
        dCc[t] *= s                               # da_c = dloss/dC~ * (1 - C~^2)
        np.matmul(dA[:, t], W_h_T, out=a)         # dloss/dH_prev = sum over gates of da W_h?^T
        np.sum(a, axis=0, out=dH)
    grads = {}
    input_grads(grads, 'lstm', X, dA, p['W_hq'].shape[1])
    grads['W_hi'], grads['W_hf'], grads['W_ho'], grads['W_hc'] = recurrent_grad(Hs[:-1], dA)
    return grads, (dH, dC)


# ---------------------------------------------------------------- the plain RNN cell

def rnn_forward(p, X, H0):
    (T, B), h = X.shape, len(p['W_hh'])
    A, = input_projections(p, 'rnn', X)           # X W_xh + b_h, (T, B, h)
    Hs = np.empty((T + 1, B, h), A.dtype)
    Hs[0] = H0
    for t in range(T):
        A[t] += np.matmul(Hs[t], p['W_hh'], out=Hs[t + 1])  # + H_prev W_hh
        np.tanh(A[t], out=Hs[t + 1])              # H = tanh(..)
    return Hs, Hs[T].copy(), (X, Hs)


def rnn_backward(p, cache, dHs):
    X, Hs = cache
    T, B, h = dHs.shape
    dA = np.empty((1, T, B, h), dHs.dtype)        # dloss/da_h
    dH = np.zeros((B, h), dHs.dtype)
    s = np.empty((B, h), dHs.dtype)
    for t in reversed(range(T)):
        dH += dHs[t]
        np.multiply(Hs[t + 1], Hs[t + 1], out=s)
        np.subtract(1, s, out=s)
        np.multiply(dH, s, out=dA[0, t])          # da_h = dH * (1 - H^2)
        np.matmul(dA[0, t], p['W_hh'].T, out=dH)  # dH_prev = da_h W_hh^T
    grads = {}
    input_grads(grads, 'rnn', X, dA, p['W_hq'].shape[1])
    grads['W_hh'], = recurrent_grad(Hs[:-1], dA)
    return grads, dH


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
    Hs, state, _ = CELL_FORWARD[cell](params, X, state)
    logits = Hs[1:] @ params['W_hq'] + params['b_q']  # Y_hat = H W_hq + b_q, every step
    return logits.swapaxes(0, 1), state


def softmax_cross_entropy(logits, Y):
    """Mean of -log softmax(logits)[Y] over the rows, and its gradient
    (softmax - onehot(Y)) / N. Overwrites logits."""
    N, V = logits.shape
    target = np.arange(N) * V + Y                 # where each row's true next character sits in logits.ravel()
    top, bottom = logits.max(), logits.min()
    # softmax is unchanged by subtracting a constant per row; subtracting the
    # largest logit of all avoids overflow, and is enough unless a whole row
    # could then underflow
    logits -= top if top - bottom < 80 else logits.max(axis=1, keepdims=True)
    picked = logits.ravel()[target]
    P = np.exp(logits, out=logits)
    total = P @ np.ones(V, P.dtype)               # row sums (a product: fast for short rows)
    loss = float(np.mean(np.log(total) - picked))
    P *= (1 / (N * total))[:, None]               # softmax / N
    P.ravel()[target] -= 1 / N                    # minus onehot(Y) / N
    return loss, P


def loss_and_grads(params, cell, X_ids, Y_ids, state=None, need_grads=True):
    """Mean cross-entropy over all B*T tokens and its gradient for every parameter."""
    X, Y = np.asarray(X_ids).T, np.asarray(Y_ids).T   # time-major, (T, B)
    T, B = X.shape
    h = params['W_hq'].shape[0]
    if state is None:
        state = zero_state(params, cell, B)
    Hs, _, cache = CELL_FORWARD[cell](params, X, state)
    H = Hs[1:].reshape(T * B, h)                  # every step's hidden state, one matrix
    logits = H @ params['W_hq']                   # the output layer for all steps in one product
    logits += params['b_q']
    loss, dlogits = softmax_cross_entropy(logits, Y.ravel())
    if not need_grads:
        return loss, None
    dHs = (dlogits @ params['W_hq'].T).reshape(T, B, h)
    grads, _ = CELL_BACKWARD[cell](params, cache, dHs)
    grads['W_hq'] = H.T @ dlogits
    grads['b_q'] = dlogits.sum(axis=0)
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


def evaluate(params, cell, X, Y, batch_size):
    """Mean cross-entropy over every token of (X, Y), in batches, no shuffling."""
    total = 0.0
    for i in range(0, len(X), batch_size):
        loss, _ = loss_and_grads(params, cell, X[i:i + batch_size], Y[i:i + batch_size],
                                 need_grads=False)
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
    """Train config.cell on the text as d2l does; on_epoch(epoch, train_ppl, val_ppl) after each epoch."""
    data = make_dataset(text, config)
    rng = np.random.default_rng(config.seed)
    params = init_params(config.cell, len(data.vocab), config.hidden, rng,
                         'float32', config.init_sigma)
    n, B = len(data.X_train), config.batch_size
    history = []
    start = time.perf_counter()
    for epoch in range(1, config.epochs + 1):
        order = rng.permutation(n)                # reshuffled every epoch
        total = 0.0
        for i in range(0, n, B):
            batch = order[i:i + B]
            loss, grads = loss_and_grads(params, config.cell,
                                         data.X_train[batch], data.Y_train[batch])
            clip_gradients(grads, config.clip)
            sgd(params, grads, config.lr)
            total += loss * len(batch)            # measured during the epoch, as d2l does
        val = evaluate(params, config.cell, data.X_val, data.Y_val, B)
        row = (epoch, perplexity(total / n), perplexity(val))
        history.append(row)
        if on_epoch is not None:
            on_epoch(*row)
    seconds = time.perf_counter() - start
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
    return format_table(HISTORY_HEADER, [history_row(*r) for r in result.history], 'rrr',
                        history_widths(result.config))


def format_header(config, data):
    return (f'{config.cell.upper()} language model on The Time Machine, numpy, from scratch\n'
            f'corpus: {data.num_chars:,} characters, vocabulary {len(data.vocab)}; '
            f'{len(data.X_train):,} training and {len(data.X_val):,} validation windows '
            f'of {config.num_steps} + 1\n'
            f'model: hidden {config.hidden}, weights normal(0, {config.init_sigma:g}); '
            f'SGD lr {config.lr:g}, clip {config.clip:g}, batch {config.batch_size:,}, '
            f'{config.epochs} epochs, seed {config.seed}')


def format_sample(result):
    c = result.config
    return (f'sample (prefix "{c.prefix}", then {c.num_preds} greedy characters): '
            f'"{result.sample}"')


def format_timing(result):
    return (f'time: {result.seconds:.1f} s for {result.config.epochs} epochs, '
            f'{result.tokens_per_second:,.0f} training tokens/s, {result.num_params:,} parameters')


def format_gradcheck_table(rows):
    c = GRADCHECK
    caption = (f'relative error max|a - n| / max(|a| + |n|), both maxima over all entries of '
               f'the parameter; a analytic, n central difference (f(p + e) - f(p - e)) / 2e, '
               f'e = {c["eps"]:g}; float64, batch '
               f'{c["batch_size"]}, {c["num_steps"]} steps, hidden {c["hidden"]}, '
               f'vocabulary {c["vocab_size"]}')
    body = [(cell, name, ' x '.join(map(str, shape)), f'{err:.1e}')
            for cell, name, shape, err in rows]
    return caption + '\n\n' + format_table(('cell', 'parameter', 'shape', 'rel err'),
                                           body, 'llrr')


# ---------------------------------------------------------------- command line

def positive_int(s):
    n = int(s)
    if n < 1:
        raise argparse.ArgumentTypeError(f'must be at least 1, got {n}')
    return n


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
    ap.add_argument('--seed', type=nonnegative_int, default=Config.seed, metavar='S',
                    help='seed for initialisation and shuffling (default %(default)s)')
    ap.add_argument('--corpus', type=Path, default=CORPUS, metavar='PATH',
                    help='the text to train on (default: timemachine.txt next to gru.py)')
    ap.add_argument('--gradcheck', action='store_true',
                    help='instead of training, compare every analytic gradient with central '
                         'finite differences in float64, for all three cells (or only --cell)')
    return ap.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if np is None:
        print('gru.py: needs numpy: pip install numpy', file=sys.stderr)
        return 1
    if args.gradcheck:
        rows = compute_gradcheck((args.cell,) if args.cell else CELLS, args.seed)
        print(format_gradcheck_table(rows))
        worst = max(err for *_, err in rows)
        print(f'\nworst: {worst:.1e} ({"well under" if worst < 1e-6 else "NOT under"} 1e-6)')
        return 0 if worst < 1e-6 else 1
    config = Config(cell=args.cell or 'gru', epochs=args.epochs, seed=args.seed)
    try:
        text = load_corpus(args.corpus)
        data = make_dataset(text, config)
    except CorpusError as e:
        msg = str(e)
        if not msg.startswith('cannot read corpus'):
            msg = f'cannot read corpus {args.corpus}: {msg}'
        print(f'gru.py: {msg}', file=sys.stderr)
        return 1
    print(format_header(config, data) + '\n', flush=True)
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
