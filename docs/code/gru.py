"""gru.py: a character-level GRU language model, from scratch in numpy.

Works through the GRU section of "Dive into Deep Learning" (d2l.ai) with no
framework, in d2l's configuration: H. G. Wells' *The Time Machine* becomes a
stream of 28 character tokens, cut into windows of 32 + 1 characters; a GRU
cell (d2l's equations) reads 32 of them and predicts each next one; the
gradient comes from backpropagation through time written out by hand; plain
SGD, with the gradient clipped to norm 1, trains it for 50 epochs. An LSTM and
a plain tanh RNN run on the same harness.

The model is written twice. The plain path reads top to bottom like the
equations: one step forward, one step backward, per cell. The fast path is the
same model arranged for numpy (stacked gates, preallocated buffers, one product
for the output layer); the tests check that the two agree, and training uses
the fast one unless --plain.

    python3 gru.py                   # train the GRU: a row per epoch, then samples (~15 s)
    python3 gru.py --train           # the same (the report that runs when no flag is given)
    python3 gru.py --cell lstm       # the same with an LSTM (or --cell rnn)
    python3 gru.py --cell lstm --forget-bias 1   # the LSTM with forget-gate bias 1
    python3 gru.py --epochs 5 --seed 1 --lr 2    # a shorter run, another seed, another rate
    python3 gru.py --plain           # train with the plain path (slower, same model)
    python3 gru.py --corpus PATH     # another text (default: timemachine.txt next to gru.py)
    python3 gru.py --gradcheck       # every hand-written gradient against finite differences
    python3 gru.py --compare         # GRU, LSTM (forget-gate bias 0 and 1), plain RNN
    python3 gru.py --distance        # how far back the last step's gradient reaches
    python3 gru.py --inside          # the trained GRU's update gate and two units, per character
    python3 gru.py --saturation      # how often the gates sit near 0 or 1

Needs only numpy (pip install numpy). Training is float32 on one BLAS thread;
the same command prints the same output, run after run, except the lines that
start with "time:". Reports that need trained models train each once per run.
"""
import argparse
import codecs
import hashlib
import math
import os
import re
import sys
import textwrap
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Optional

if __name__ == '__main__':  # as a script: one BLAS thread (must be set before numpy loads);
    for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
        os.environ.setdefault(_var, '1')  # threads cost more than they save on 1024 x 32 matrices

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None

# ================================================================ settings

CORPUS = Path(__file__).with_name('timemachine.txt')  # the default text
VOCAB = [' ', '<unk>'] + [chr(c) for c in range(ord('a'), ord('z') + 1)]  # d2l's 28 tokens
CELLS = ('gru', 'lstm', 'rnn')                     # the three recurrent cells
MODEL_NAMES = {'gru': 'GRU', 'lstm': 'LSTM', 'rnn': 'plain RNN'}
GATES = {'gru': 'zrh',                             # update gate Z, reset gate R, candidate H~
         'lstm': 'ifoc',                           # input, forget, output gates, input node C~
         'rnn': 'h'}                               # the hidden state itself
D2L_LR = {'gru': 4.0, 'lstm': 4.0, 'rnn': 1.0}     # d2l's learning rate for each cell
LR_MAX = 100.0                                     # larger learning rates are refused
SAMPLE_EPOCHS = (1, 5, 10, 25, 50)                 # epochs after which the model writes samples
TEMPERATURES = (0.5, 1.0)                          # sampling temperatures, besides greedy


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""


class CorpusError(Refused):
    """The corpus cannot be used; the message is one line."""


class TrainingDiverged(Refused):
    """The loss grew past MAX_LOSS or the gradient stopped being a number; the message is
    one line."""


@dataclass(frozen=True)
class Config:
    """d2l's configuration for its GRU language model."""
    cell: str = 'gru'          # gru, lstm or rnn
    hidden: int = 32           # hidden units h
    num_steps: int = 32        # characters read per example, T
    batch_size: int = 1024     # examples per SGD step, B
    lr: float = None           # SGD learning rate; None: d2l's for the cell (D2L_LR)
    clip: float = 1.0          # max global L2 norm of the gradient
    epochs: int = 50           # passes over the training windows
    num_train: int = 10000     # first windows: training set
    num_val: int = 5000        # next windows: validation set
    seed: int = 0              # seeds initialisation and shuffling
    init_sigma: float = 0.01   # std of the normal initial weights
    forget_bias: float = 0.0   # initial b_f of the LSTM (d2l: 0)
    fast: bool = True          # train with the fast path (False: the plain path)
    prefix: str = 'it has'     # warm-up text for sampling
    num_preds: int = 20        # characters predicted after the prefix

    def __post_init__(self):
        if self.lr is None:
            object.__setattr__(self, 'lr', D2L_LR[self.cell])

    @property
    def num_chars_needed(self):
        """Preprocessed characters the windows use: one window per start position."""
        return self.num_train + self.num_val + self.num_steps


# ================================================================ the data

@dataclass
class Corpus:
    """What training takes from a corpus file."""
    name: str          # the file's name
    chars: str         # the text after preprocessing, the first characters only (see read_corpus)
    total_chars: int   # the length of the whole file after preprocessing
    digest: str        # sha256 of chars: the corpus's identity for memoised training


def preprocess(text):
    """d2l's preprocessing: every run of non-letters becomes one space; lower case."""
    return re.sub('[^A-Za-z]+', ' ', text).lower()


def tokenize(text):
    """d2l's tokens: the characters of the preprocessed text."""
    return list(preprocess(text))


def build_vocab(tokens):
    """d2l's Vocab with no frequency cut, sorted: ' ', '<unk>', 'a' .. 'z' for any English
    text. The script uses VOCAB, that same list, so that it need not read a whole corpus."""
    return sorted(set(['<unk>'] + list(tokens)))


CHUNK_BYTES = 1 << 16  # the first read; each further read is twice as long


def read_corpus(path, num_chars):
    """The corpus file's first num_chars characters after preprocessing (fewer if it is
    shorter), reading the file only until they are there; the rest is counted, not kept.
    CorpusError if the file is missing or its text so far is not UTF-8."""
    path = Path(path)
    try:
        with open(path, 'rb') as f:
            decoder = codecs.getincrementaldecoder('utf-8')()
            decoded, offset, size = [], 0, CHUNK_BYTES
            while True:
                chunk = f.read(size)
                try:
                    decoded.append(decoder.decode(chunk, final=not chunk))
                except UnicodeDecodeError as e:
                    start = offset - len(decoder.getstate()[0]) + e.start
                    raise CorpusError(f'cannot read corpus {path}: not UTF-8 text '
                                      f'(byte 0x{e.object[e.start]:02x} at offset {start})') from None
                offset += len(chunk)
                # preprocessing a prefix of the text gives a prefix of the preprocessed text
                chars = preprocess(''.join(decoded))
                if not chunk or len(chars) > num_chars:
                    break
                size *= 2
            f.seek(0)
            total = count_preprocessed(f)
    except OSError as e:
        raise CorpusError(f'cannot read corpus {path}: {e.strerror or e}') from None
    chars = chars[:num_chars]
    return Corpus(path.name, chars, total, hashlib.sha256(chars.encode('ascii')).hexdigest())


def count_preprocessed(f, block=1 << 22):
    """len(preprocess(text of f)), read in blocks of bytes: a letter is one of the bytes
    A-Z a-z, and in UTF-8 every other character is made of non-letter bytes, so runs of
    non-letter bytes are exactly the runs of non-letters that preprocessing turns to spaces."""
    letter = np.zeros(256, bool)
    letter[ord('A'):ord('Z') + 1] = letter[ord('a'):ord('z') + 1] = True
    total, previous_is_letter = 0, True
    for data in iter(lambda: f.read(block), b''):
        is_letter = letter[np.frombuffer(data, np.uint8)]
        run_starts = np.count_nonzero(is_letter[:-1] & ~is_letter[1:])  # letter, then not
        total += int(np.count_nonzero(is_letter)) + int(run_starts)
        total += int(previous_is_letter and not is_letter[0])  # a run starting this block
        previous_is_letter = bool(is_letter[-1])
    return total


@dataclass
class Dataset:
    num_chars: int   # preprocessed characters the windows are cut from
    X_train: object  # (num_train, num_steps) token ids
    Y_train: object  # the same windows shifted by one character
    X_val: object
    Y_val: object


def token_ids(chars):
    """The characters as token ids (positions in VOCAB)."""
    table = np.full(128, VOCAB.index('<unk>'), np.intp)
    for i, token in enumerate(VOCAB):
        if len(token) == 1:
            table[ord(token)] = i
    return table[np.frombuffer(chars.encode('ascii'), np.uint8)]


def make_dataset(chars, config=Config()):
    """Every window of num_steps + 1 characters, one per start position; the first
    num_train windows train, the next num_val validate."""
    corpus = token_ids(chars)
    n = config.num_train + config.num_val
    available = len(corpus) - config.num_steps  # one window per start position
    if available < n:
        raise CorpusError(f'it yields {max(available, 0):,} windows of {config.num_steps + 1} '
                          f'characters, {n:,} needed')
    windows = corpus[np.arange(n)[:, None] + np.arange(config.num_steps + 1)]  # corpus[i:i+33]
    X, Y = windows[:, :-1], windows[:, 1:]
    t = config.num_train
    return Dataset(len(corpus), X[:t], Y[:t], X[t:], Y[t:])


# ================================================================ parameters

def init_params(cell, vocab_size, hidden, rng, dtype='float32', sigma=0.01, forget_bias=0.0):
    """d2l's parameters and initialisation: per gate ? an input weight W_x?, a
    recurrent weight W_h? and a bias b_?, then the output layer W_hq, b_q; weights
    normal(0, sigma), biases zero (the LSTM's b_f: forget_bias)."""
    V, h = vocab_size, hidden
    params = {}
    for g in GATES[cell]:
        params['W_x' + g] = rng.normal(0.0, sigma, (V, h))
        params['W_h' + g] = rng.normal(0.0, sigma, (h, h))
        params['b_' + g] = np.full(h, forget_bias if g == 'f' else 0.0)
    params['W_hq'] = rng.normal(0.0, sigma, (h, V))
    params['b_q'] = np.zeros(V)
    return {name: p.astype(dtype) for name, p in params.items()}


def num_params(params):
    return int(sum(p.size for p in params.values()))


def compute_param_counts(vocab_size=len(VOCAB), hidden=32):
    """{cell: number of parameters}, output layer included."""
    rng = np.random.default_rng(0)
    return {cell: num_params(init_params(cell, vocab_size, hidden, rng)) for cell in CELLS}


def zero_state(params, cell, batch_size):
    """H = 0 (and C = 0 for the LSTM) for every example."""
    H = np.zeros((batch_size, len(params['W_hq'])), params['W_hq'].dtype)
    return (H, H.copy()) if cell == 'lstm' else H


# ================================================================ the plain model
#
# One step of each cell, forward and backward, in d2l's notation: X_t is a
# minibatch of characters (token ids x, one per example), H_prev the previous
# state (B, h); W_x? is (V, h), W_h? (h, h), b_? (h,). Then the whole model over
# a window: every step, the output layer, the loss, and backpropagation through
# time, calling the steps in reverse.

def sigmoid(a):
    """sigma(a) = 1 / (1 + exp(-a)). exp(-a) overflows float32 for a < -88, so a is
    clipped to +-80 first; beyond that sigma is 0 or 1 within 2e-35 anyway."""
    return 1 / (1 + np.exp(-np.clip(a, -80, 80)))


def one_hot(x, V, dtype):
    """(B, V): row b is all zeros but a 1 in column x[b]."""
    return np.eye(V, dtype=dtype)[x]


#   Z  = sigma(X W_xz + H_prev W_hz + b_z)          update gate
#   R  = sigma(X W_xr + H_prev W_hr + b_r)          reset gate
#   H~ = tanh(X W_xh + (R * H_prev) W_hh + b_h)     candidate state
#   H  = Z * H_prev + (1 - Z) * H~                  new state

def gru_step(p, x, H_prev):
    """One GRU step: returns the new state H and what the backward step needs.
    W_xz[x] (row x[b] for example b) equals one_hot(x) @ W_xz: X is one-hot."""
    Z = sigmoid(p['W_xz'][x] + H_prev @ p['W_hz'] + p['b_z'])                # update gate
    R = sigmoid(p['W_xr'][x] + H_prev @ p['W_hr'] + p['b_r'])                # reset gate
    H_tilde = np.tanh(p['W_xh'][x] + (R * H_prev) @ p['W_hh'] + p['b_h'])    # candidate state
    H = Z * H_prev + (1 - Z) * H_tilde                                       # new state
    return H, (x, H_prev, Z, R, H_tilde)


def gru_step_backward(p, dH, cache, grads):
    """Backward through one GRU step. dH is dL/dH for the state this step made; adds
    the step's share of every parameter's gradient to grads; returns dL/dH_prev."""
    x, H_prev, Z, R, H_tilde = cache
    dZ = dH * (H_prev - H_tilde)                  # H = Z * H_prev + (1 - Z) * H~
    dH_tilde = dH * (1 - Z)
    dA_h = dH_tilde * (1 - H_tilde ** 2)          # through tanh: tanh' = 1 - tanh^2
    dRH = dA_h @ p['W_hh'].T                      # dL/d(R * H_prev)
    dA_z = dZ * Z * (1 - Z)                       # through sigma: sigma' = sigma (1 - sigma)
    dA_r = dRH * H_prev * R * (1 - R)
    X = one_hot(x, len(p['W_xz']), dH.dtype)      # X^T dA adds each example's row of dA
    for g, dA in (('z', dA_z), ('r', dA_r), ('h', dA_h)):  # to the row of its character
        grads['W_x' + g] += X.T @ dA
        grads['b_' + g] += dA.sum(axis=0)
    grads['W_hz'] += H_prev.T @ dA_z
    grads['W_hr'] += H_prev.T @ dA_r
    grads['W_hh'] += (R * H_prev).T @ dA_h
    return (dH * Z + dRH * R                      # H_prev reaches H directly and through R * H_prev,
            + dA_z @ p['W_hz'].T + dA_r @ p['W_hr'].T)  # and through the two gates


#   I = sigma(X W_xi + H_prev W_hi + b_i),  F = sigma(..f..),  O = sigma(..o..)
#   C~ = tanh(X W_xc + H_prev W_hc + b_c)
#   C = F * C_prev + I * C~,   H = O * tanh(C)

def lstm_step(p, x, H_prev, C_prev):
    """One LSTM step (d2l's LSTMScratch): returns H, C and what the backward step needs."""
    I = sigmoid(p['W_xi'][x] + H_prev @ p['W_hi'] + p['b_i'])               # input gate
    F = sigmoid(p['W_xf'][x] + H_prev @ p['W_hf'] + p['b_f'])               # forget gate
    O = sigmoid(p['W_xo'][x] + H_prev @ p['W_ho'] + p['b_o'])               # output gate
    C_tilde = np.tanh(p['W_xc'][x] + H_prev @ p['W_hc'] + p['b_c'])         # input node
    C = F * C_prev + I * C_tilde                                            # memory cell
    tanh_C = np.tanh(C)
    H = O * tanh_C                                                          # hidden state
    return H, C, (x, H_prev, C_prev, I, F, O, C_tilde, tanh_C)


def lstm_step_backward(p, dH, dC, cache, grads):
    """Backward through one LSTM step: dH, dC reach this step's H and C from later on.
    Returns dL/dH_prev, dL/dC_prev."""
    x, H_prev, C_prev, I, F, O, C_tilde, tanh_C = cache
    dO = dH * tanh_C                              # H = O * tanh(C)
    dC = dC + dH * O * (1 - tanh_C ** 2)          # C reaches the loss through H and C_next
    dA = {'i': dC * C_tilde * I * (1 - I),        # C = F * C_prev + I * C~, then through sigma
          'f': dC * C_prev * F * (1 - F),
          'o': dO * O * (1 - O),
          'c': dC * I * (1 - C_tilde ** 2)}       # .. and through tanh
    X = one_hot(x, len(p['W_xi']), dH.dtype)
    dH_prev = 0
    for g, dA_g in dA.items():
        grads['W_x' + g] += X.T @ dA_g
        grads['W_h' + g] += H_prev.T @ dA_g
        grads['b_' + g] += dA_g.sum(axis=0)
        dH_prev = dH_prev + dA_g @ p['W_h' + g].T  # H_prev feeds all four gates
    return dH_prev, dC * F                        # C_prev reaches C through F only


#   H = tanh(X W_xh + H_prev W_hh + b_h)

def rnn_step(p, x, H_prev):
    """One step of the plain RNN."""
    H = np.tanh(p['W_xh'][x] + H_prev @ p['W_hh'] + p['b_h'])
    return H, (x, H_prev, H)


def rnn_step_backward(p, dH, cache, grads):
    x, H_prev, H = cache
    dA = dH * (1 - H ** 2)                        # through tanh
    grads['W_xh'] += one_hot(x, len(p['W_xh']), dH.dtype).T @ dA
    grads['W_hh'] += H_prev.T @ dA
    grads['b_h'] += dA.sum(axis=0)
    return dA @ p['W_hh'].T


def step(p, cell, x, state):
    """One step of any cell; state is H, or (H, C) for the LSTM. Returns the new
    state, its H and the cache for step_backward."""
    if cell == 'lstm':
        H, C, cache = lstm_step(p, x, *state)
        return (H, C), H, cache
    H, cache = (gru_step if cell == 'gru' else rnn_step)(p, x, state)
    return H, H, cache


def step_backward(p, cell, dstate, cache, grads):
    """Backward through one step of any cell: dstate is dL/dH (and dL/dC for the LSTM)."""
    if cell == 'lstm':
        return lstm_step_backward(p, *dstate, cache, grads)
    return (gru_step_backward if cell == 'gru' else rnn_step_backward)(p, dstate, cache, grads)


def log_softmax(Y_hat):
    """log softmax over the last axis, shifted by each row's largest logit (no overflow)."""
    shifted = Y_hat - Y_hat.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def forward(params, cell, X, state=None):
    """X: (B, T) token ids. Returns the logits (B, T, V) and the final state."""
    X = np.asarray(X)
    if state is None:
        state = zero_state(params, cell, len(X))
    outputs = []
    for t in range(X.shape[1]):
        state, H, _ = step(params, cell, X[:, t], state)
        outputs.append(H @ params['W_hq'] + params['b_q'])  # output layer: Y_hat = H W_hq + b_q
    return np.stack(outputs, axis=1), state


def loss_and_grads(params, cell, X, Y, state=None, need_grads=True):
    """The plain path over a batch of windows X, Y (B, T): the loss, mean cross-entropy
    over all B*T characters, and by backpropagation through time its gradient for every
    parameter (a dict like params). state: the initial state (default zero)."""
    X, Y = np.asarray(X), np.asarray(Y)
    B, T = X.shape
    rows = np.arange(B)
    if state is None:
        state = zero_state(params, cell, B)
    loss, steps = 0.0, []
    for t in range(T):
        state, H, cache = step(params, cell, X[:, t], state)  # the recurrence
        Y_hat = H @ params['W_hq'] + params['b_q']            # output layer, logits
        log_P = log_softmax(Y_hat)
        loss -= float(log_P[rows, Y[:, t]].sum())             # cross-entropy against the next char
        dY_hat = np.exp(log_P)                                # dL/dY_hat = (softmax - one_hot(Y)) / (B T)
        dY_hat[rows, Y[:, t]] -= 1
        dY_hat /= B * T
        steps.append((cache, H, dY_hat))
    loss /= B * T
    if not need_grads:
        return loss, None
    grads = {name: np.zeros_like(p) for name, p in params.items()}
    dstate = zero_state(params, cell, B)                      # nothing comes from after step T
    for cache, H, dY_hat in reversed(steps):                  # backpropagation through time
        grads['W_hq'] += H.T @ dY_hat
        grads['b_q'] += dY_hat.sum(axis=0)
        dH = dY_hat @ params['W_hq'].T                        # H_t feeds the output layer ..
        dstate = (dstate[0] + dH, dstate[1]) if cell == 'lstm' else dstate + dH  # .. and step t+1
        dstate = step_backward(params, cell, dstate, cache, grads)
    return loss, grads


# ================================================================ fast path
#
# Fast path: the same model, tuned for numpy. Each numpy call costs about a
# microsecond before it does any work, and every pass over an array costs memory
# traffic, so these functions compute what loss_and_grads computes with fewer,
# larger calls and fewer passes (tests check both give the same loss and
# gradients to 1e-10 in float64). The tricks, and why:
#
#  1. Time-major arrays: X[t] holds step t of every window, so a step's inputs,
#     gates and states are each one contiguous block.
#  2. Stacked gates: one buffer per step, G[t] = [Z, R, H~] for the GRU, each gate
#     a contiguous (B, h) block, so one call applies sigma to Z and R together and
#     one matmul multiplies H_prev by W_hz and W_hr.
#  3. The input products as one lookup: a table [W_x? + b_?] stacked over the
#     gates, so one np.take per step gives X W_x? + b_? for every gate (the bias
#     rides along), and the table's gradient gives dW_x? and db_? at once.
#  4. out= buffers: results are written into preallocated arrays rather than a
#     fresh array per operation, and the large buffers are kept from batch to
#     batch (scratch): fresh megabyte arrays cost page faults. The transposed
#     weights of the backward pass are contiguous copies, which BLAS multiplies
#     by faster than by transposed views.
#  5. The output layer for all steps at once: one matmul for the logits of every
#     step, one softmax over all T * B rows, one product each for the gradients.
#  6. Cache blocking: a batch is processed in chunks of FAST_CHUNK windows and the
#     chunks' gradients are summed. A chunk's buffers (every step's gates, the
#     logits) are half the size and stay closer to the CPU: a batch of 1,024 trains
#     about 1.1x faster in two chunks of 512 (benchmarks/gru_profile.py --chunk).

FAST_CHUNK = 512  # windows per chunk of a batch (trick 6)


def scratch(work, name, shape, dtype):
    """np.empty(shape, dtype), reusing the memory of work[name] from the previous call
    when work is a dict (trick 4)."""
    if work is None:
        return np.empty(shape, dtype)
    size = math.prod(shape)
    buf = work.get(name)
    if buf is None or buf.size < size or buf.dtype != dtype:
        buf = work[name] = np.empty(size, dtype)
    return buf[:size].reshape(shape)


def sigmoid_(a):
    """sigma(a) = (1 + tanh(a/2)) / 2, in place: one transcendental call that never overflows."""
    a *= 0.5
    np.tanh(a, out=a)
    a += 1
    a *= 0.5
    return a


def stacked(params, kind, gates):
    """One parameter per gate, stacked: stacked(p, 'W_h', 'zr') == [W_hz, W_hr], (2, h, h)."""
    return np.stack([params[kind + g] for g in gates])


def transposed(W):
    """W^T (of each matrix in a stack), as a contiguous copy: products by it run faster
    than by the transposed view (trick 4)."""
    return np.ascontiguousarray(np.swapaxes(W, -1, -2))


def input_table(params, cell):
    """[W_x? + b_?] stacked over the gates, (gates, V, h) (trick 3):
    X W_x? + b_? == (W_x? + b_?)[x], X being one-hot."""
    gates = GATES[cell]
    return stacked(params, 'W_x', gates) + stacked(params, 'b_', gates)[:, None, :]


def table_grads(cell, dW_x, dW_h):
    """Gradients by name from the per-gate stacks. b_? is in every row of the table
    W_x? + b_?, so its gradient is the sum of the rows of the table's gradient."""
    grads = {}
    for g, dW, dU in zip(GATES[cell], dW_x, dW_h):
        grads['W_x' + g], grads['W_h' + g], grads['b_' + g] = dW, dU, dW.sum(axis=0)
    return grads


def fast_gru_forward(p, X, H0, work=None, keep=True):
    """X: (T, B) token ids, H0: (B, h). Returns Hs (T+1, B, h) with Hs[0] = H0, and
    what fast_gru_backward needs (keep=False: not kept, for evaluation)."""
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
        Z, R, H_tilde = Gt
        np.take(table, X[t], axis=1, out=Gt, mode='clip')  # X W_x? + b_?, the three at once
        Gt[:2] += np.matmul(H_prev, W_hzr, out=zr)  # + H_prev W_hz, + H_prev W_hr in one call
        sigmoid_(Gt[:2])                          # Z = sigma(..), R = sigma(..)
        np.multiply(R, H_prev, out=RH)            # R * H_prev
        H_tilde += np.matmul(RH, p['W_hh'], out=hh)  # X W_xh + (R * H_prev) W_hh + b_h
        np.tanh(H_tilde, out=H_tilde)             # H~ = tanh(..)
        np.subtract(H_prev, H_tilde, out=H)       # H = Z * H_prev + (1 - Z) * H~
        H *= Z                                    #   = H~ + Z * (H_prev - H~)
        H += H_tilde
    return Hs, (X, G, Hs)


def fast_gru_backward(p, cache, dHs):
    """dHs: (T, B, h), dL/dH_t from the output layer. Returns (grads, dL/dH_0)."""
    X, G, Hs = cache
    (T, _, B, h), V = G.shape, p['W_hq'].shape[1]
    W_hzr_T = transposed(stacked(p, 'W_h', 'zr'))  # [W_hz^T, W_hr^T]
    W_hh_T = transposed(p['W_hh'])
    eye = np.eye(V, dtype=G.dtype)                # one-hot rows
    X1 = np.empty((B, V), G.dtype)                # this step's inputs X_t, one-hot
    dA = np.empty((3, B, h), G.dtype)             # this step's dL/d(pre-activation), per gate
    dA_z, dA_r, dA_h = dA                         # (first dL/dZ etc., then times sigma', tanh')
    dW_x = np.zeros((3, V, h), G.dtype)           # [dW_xz, dW_xr, dW_xh], summed over steps
    dW_h = np.zeros((3, h, h), G.dtype)           # [dW_hz, dW_hr, dW_hh]
    dH = np.zeros((B, h), G.dtype)                # dL/dH_t, carried back through time
    dRH = np.empty((B, h), G.dtype)               # dL/d(R * H_prev)
    RH = np.empty((B, h), G.dtype)                # R * H_prev, recomputed
    sig = np.empty((2, B, h), G.dtype)            # sigma' = s (1 - s) of Z and R
    s = np.empty((B, h), G.dtype)                 # scratch
    zr = np.empty((2, B, h), G.dtype)
    part_x, part_h = np.empty_like(dW_x), np.empty_like(dW_h)
    for t in reversed(range(T)):
        H_prev = Hs[t]
        Z, R, H_tilde = G[t]
        dH += dHs[t]                              # H_t also feeds the output at step t
        np.subtract(1, G[t, :2], out=sig)         # 1 - Z, 1 - R
        np.subtract(H_prev, H_tilde, out=dA_z)    # H = Z * H_prev + (1 - Z) * H~:
        dA_z *= dH                                #   dL/dZ = dH * (H_prev - H~)
        np.multiply(dH, sig[0], out=dA_h)         #   dL/dH~ = dH * (1 - Z)
        sig *= G[t, :2]                           # sigma' = Z (1 - Z), R (1 - R)
        dH *= Z                                   # dL/dH_prev, the direct path
        np.multiply(H_tilde, H_tilde, out=s)
        np.subtract(1, s, out=s)
        dA_h *= s                                 # dA_h = dL/dH~ * (1 - H~^2)
        np.matmul(dA_h, W_hh_T, out=dRH)          # dL/d(R * H_prev) = dA_h W_hh^T
        np.multiply(dRH, H_prev, out=dA_r)        # dL/dR
        dA[:2] *= sig                             # dA_z, dA_r = dL/dZ, dL/dR times sigma'
        dRH *= R
        dH += dRH                                 # dL/dH_prev through R * H_prev
        np.matmul(dA[:2], W_hzr_T, out=zr)        # .. and through the gates:
        dH += zr[0]                               #    dA_z W_hz^T + dA_r W_hr^T
        dH += zr[1]
        np.take(eye, X[t], axis=0, out=X1, mode='clip')
        dW_x += np.matmul(X1.T, dA, out=part_x)   # dW_x? += X_t^T dA_?, the three at once
        dW_h[:2] += np.matmul(H_prev.T, dA[:2], out=part_h[:2])  # dW_hz, dW_hr += H_prev^T dA
        np.multiply(R, H_prev, out=RH)
        dW_h[2] += np.matmul(RH.T, dA_h, out=part_h[2])  # dW_hh += (R * H_prev)^T dA_h
    return table_grads('gru', dW_x, dW_h), dH


def fast_lstm_forward(p, X, state, work=None, keep=True):
    """state = (H0, C0). Returns Hs (T+1, B, h) and what fast_lstm_backward needs."""
    (T, B), h = X.shape, len(p['W_hc'])
    table = input_table(p, 'lstm')                # [W_xi + b_i, W_xf + b_f, W_xo + b_o, W_xc + b_c]
    W_h = stacked(p, 'W_h', 'ifoc')               # [W_hi, W_hf, W_ho, W_hc]
    G = scratch(work, 'G', (T if keep else 1, 4, B, h), table.dtype)  # [I, F, O, C~] per step
    Hs = scratch(work, 'Hs', (T + 1, B, h), G.dtype)
    Cs = scratch(work, 'Cs', (T + 1, B, h), G.dtype)  # memory cells C_0 .. C_T
    TC = scratch(work, 'TC', (T if keep else 1, B, h), G.dtype)  # tanh(C_t)
    Hs[0], Cs[0] = state
    a = np.empty((4, B, h), G.dtype)
    ic = np.empty((B, h), G.dtype)
    for t in range(T):
        Gt, TCt = G[t if keep else 0], TC[t if keep else 0]
        I, F, O, C_tilde = Gt
        np.take(table, X[t], axis=1, out=Gt, mode='clip')  # X W_x? + b_?, the four at once
        Gt += np.matmul(Hs[t], W_h, out=a)        # + H_prev W_h?
        sigmoid_(Gt[:3])                          # I, F, O = sigma(..)
        np.tanh(C_tilde, out=C_tilde)             # C~ = tanh(..)
        np.multiply(F, Cs[t], out=Cs[t + 1])      # C = F * C_prev + I * C~
        Cs[t + 1] += np.multiply(I, C_tilde, out=ic)
        np.tanh(Cs[t + 1], out=TCt)               # H = O * tanh(C)
        np.multiply(O, TCt, out=Hs[t + 1])
    return Hs, (X, G, Hs, Cs, TC)


def fast_lstm_backward(p, cache, dHs):
    X, G, Hs, Cs, TC = cache
    (T, _, B, h), V = G.shape, p['W_hq'].shape[1]
    W_h_T = transposed(stacked(p, 'W_h', 'ifoc'))  # [W_hi^T, W_hf^T, W_ho^T, W_hc^T]
    eye = np.eye(V, dtype=G.dtype)
    X1 = np.empty((B, V), G.dtype)                # this step's inputs X_t, one-hot
    dA = np.empty((4, B, h), G.dtype)             # this step's dA_i, dA_f, dA_o, dA_c
    dA_i, dA_f, dA_o, dA_c = dA
    dW_x = np.zeros((4, V, h), G.dtype)
    dW_h = np.zeros((4, h, h), G.dtype)
    dH = np.zeros((B, h), G.dtype)                # dL/dH_t, carried back
    dC = np.zeros((B, h), G.dtype)                # dL/dC_t, carried back
    sig = np.empty((3, B, h), G.dtype)            # sigma' of I, F, O
    s = np.empty((B, h), G.dtype)
    a = np.empty((4, B, h), G.dtype)
    part_x, part_h = np.empty_like(dW_x), np.empty_like(dW_h)
    for t in reversed(range(T)):
        I, F, O, C_tilde = G[t]
        dH += dHs[t]
        np.subtract(1, G[t, :3], out=sig)
        sig *= G[t, :3]                           # I (1 - I), F (1 - F), O (1 - O)
        np.multiply(dH, TC[t], out=dA_o)          # H = O * tanh(C): dL/dO
        np.multiply(TC[t], TC[t], out=s)
        np.subtract(1, s, out=s)
        s *= O
        s *= dH
        dC += s                                   # dL/dC = carried + dH * O * (1 - tanh(C)^2)
        np.multiply(dC, C_tilde, out=dA_i)        # C = F * C_prev + I * C~: dL/dI
        np.multiply(dC, Cs[t], out=dA_f)          # dL/dF
        np.multiply(dC, I, out=dA_c)              # dL/dC~
        dC *= F                                   # dL/dC_prev
        dA[:3] *= sig                             # dA_i, dA_f, dA_o
        np.multiply(C_tilde, C_tilde, out=s)
        np.subtract(1, s, out=s)
        dA_c *= s                                 # dA_c = dL/dC~ * (1 - C~^2)
        np.matmul(dA, W_h_T, out=a)               # dL/dH_prev = sum over gates of dA W_h?^T
        np.sum(a, axis=0, out=dH)
        np.take(eye, X[t], axis=0, out=X1, mode='clip')
        dW_x += np.matmul(X1.T, dA, out=part_x)   # dW_x? += X_t^T dA_?
        dW_h += np.matmul(Hs[t].T, dA, out=part_h)  # dW_h? += H_prev^T dA_?
    return table_grads('lstm', dW_x, dW_h), (dH, dC)


def fast_rnn_forward(p, X, H0, work=None, keep=True):
    (T, B), h = X.shape, len(p['W_hh'])
    table = input_table(p, 'rnn')                 # [W_xh + b_h]
    Hs = scratch(work, 'Hs', (T + 1, B, h), table.dtype)
    Hs[0] = H0
    a = np.empty((1, B, h), table.dtype)
    for t in range(T):
        np.take(table, X[t], axis=1, out=a, mode='clip')  # X W_xh + b_h
        a[0] += np.matmul(Hs[t], p['W_hh'], out=Hs[t + 1])  # + H_prev W_hh
        np.tanh(a[0], out=Hs[t + 1])              # H = tanh(..)
    return Hs, (X, Hs)


def fast_rnn_backward(p, cache, dHs):
    X, Hs = cache
    (T, B, h), V = dHs.shape, p['W_hq'].shape[1]
    eye = np.eye(V, dtype=dHs.dtype)
    X1 = np.empty((B, V), dHs.dtype)              # this step's inputs X_t, one-hot
    dA = np.empty((1, B, h), dHs.dtype)           # this step's dA_h
    dW_x = np.zeros((1, V, h), dHs.dtype)
    dW_h = np.zeros((1, h, h), dHs.dtype)
    dH = np.zeros((B, h), dHs.dtype)
    s = np.empty((B, h), dHs.dtype)
    W_hh_T = transposed(p['W_hh'])
    part_x, part_h = np.empty_like(dW_x), np.empty_like(dW_h)
    for t in reversed(range(T)):
        dH += dHs[t]
        np.multiply(Hs[t + 1], Hs[t + 1], out=s)
        np.subtract(1, s, out=s)
        np.multiply(dH, s, out=dA[0])             # dA_h = dH * (1 - H^2)
        np.take(eye, X[t], axis=0, out=X1, mode='clip')
        dW_x += np.matmul(X1.T, dA, out=part_x)   # dW_xh += X_t^T dA_h
        dW_h += np.matmul(Hs[t].T, dA, out=part_h)  # dW_hh += H_prev^T dA_h
        np.matmul(dA[0], W_hh_T, out=dH)          # dH_prev = dA_h W_hh^T
    return table_grads('rnn', dW_x, dW_h), dH


FAST_FORWARD = {'gru': fast_gru_forward, 'lstm': fast_lstm_forward, 'rnn': fast_rnn_forward}
FAST_BACKWARD = {'gru': fast_gru_backward, 'lstm': fast_lstm_backward, 'rnn': fast_rnn_backward}


def fast_softmax_cross_entropy(logits, Y, N, need_grad=True):
    """The sum of -log softmax(logits)[Y] over the rows, and the gradient of that sum
    divided by N, (softmax - one_hot(Y)) / N. Overwrites logits."""
    rows, V = logits.shape
    target = np.arange(rows) * V + Y              # each row's true next character, in logits.ravel()
    top, bottom = logits.max(), logits.min()
    # softmax is unchanged by subtracting a constant per row; subtracting the
    # largest logit of all avoids overflow, and is enough unless a whole row
    # could then underflow
    logits -= top if top - bottom < 80 else logits.max(axis=1, keepdims=True)
    picked = logits.ravel()[target]
    P = np.exp(logits, out=logits)
    total = P @ np.ones(V, P.dtype)               # row sums (a product: fast for short rows)
    loss_sum = float(np.log(total).sum(dtype=np.float64) - picked.sum(dtype=np.float64))
    if not need_grad:
        return loss_sum, None
    P *= (1 / (N * total))[:, None]               # softmax / N
    P.ravel()[target] -= 1 / N                    # minus one_hot(Y) / N
    return loss_sum, P


def fast_chunk_loss_and_grads(params, cell, X, Y, state, N, need_grads, work):
    """X, Y: (T, B) time-major. The sum of the B*T characters' losses divided by N, and
    its gradient (None unless need_grads)."""
    T, B = X.shape
    h = len(params['W_hq'])
    Hs, cache = FAST_FORWARD[cell](params, X, state, work, keep=need_grads)
    H = Hs[1:].reshape(T * B, h)                  # every step's hidden state, one matrix
    logits = scratch(work, 'logits', (T * B, len(params['b_q'])), H.dtype)
    np.matmul(H, params['W_hq'], out=logits)      # the output layer for all steps in one product
    logits += params['b_q']
    loss_sum, dlogits = fast_softmax_cross_entropy(logits, Y.ravel(), N, need_grads)
    if not need_grads:
        return loss_sum / N, None
    dHs = np.matmul(dlogits, params['W_hq'].T, out=scratch(work, 'dHs', (T * B, h), H.dtype))
    grads, _ = FAST_BACKWARD[cell](params, cache, dHs.reshape(T, B, h))
    grads['W_hq'] = (dlogits.T @ H).T             # H^T dlogits (this order runs faster)
    grads['b_q'] = np.ones(T * B, H.dtype) @ dlogits  # column sums (as a product: fast)
    return loss_sum / N, grads


def fast_loss_and_grads(params, cell, X_ids, Y_ids, state=None, need_grads=True, work=None):
    """What loss_and_grads computes, the fast way. work: a dict of buffers to reuse
    from call to call (see scratch)."""
    X = np.ascontiguousarray(np.asarray(X_ids).T)  # time-major, (T, B) (trick 1)
    Y = np.ascontiguousarray(np.asarray(Y_ids).T)
    T, B = X.shape
    if state is None:
        state = zero_state(params, cell, B)
    loss, grads = 0.0, None
    for i in range(0, B, FAST_CHUNK):             # trick 6
        part = slice(i, i + FAST_CHUNK)
        chunk_state = (state[0][part], state[1][part]) if cell == 'lstm' else state[part]
        chunk_loss, chunk_grads = fast_chunk_loss_and_grads(
            params, cell, X[:, part], Y[:, part], chunk_state, T * B, need_grads, work)
        loss += chunk_loss
        if grads is None:
            grads = chunk_grads                   # (None if not need_grads)
        else:
            for name, g in grads.items():
                g += chunk_grads[name]
    if grads is not None:
        grads = {name: grads[name] for name in params}  # in the order of params
    return loss, grads


def fast_forward(params, cell, X_ids, state=None):
    """What forward computes, the fast way: logits (B, T, V) and the final state."""
    X = np.ascontiguousarray(np.asarray(X_ids).T)
    if state is None:
        state = zero_state(params, cell, X.shape[1])
    Hs, cache = FAST_FORWARD[cell](params, X, state, keep=True)
    logits = Hs[1:] @ params['W_hq'] + params['b_q']  # Y_hat = H W_hq + b_q, every step
    final = (Hs[-1].copy(), cache[3][-1].copy()) if cell == 'lstm' else Hs[-1].copy()
    return logits.swapaxes(0, 1), final


# ================================================================ training

def clip_gradients(grads, max_norm):
    """d2l's clip_gradients: rescale the whole gradient to L2 norm max_norm if it is
    longer. Returns the norm before clipping."""
    norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if norm > max_norm:
        for g in grads.values():
            g *= max_norm / norm
    return norm


def sgd(params, grads, lr):
    for name, p in params.items():
        p -= lr * grads[name]


def evaluate(params, cell, X, Y, batch_size, fast=True, work=None):
    """Mean cross-entropy over every character of (X, Y), in batches, no shuffling."""
    total = 0.0
    for i in range(0, len(X), batch_size):
        Xb, Yb = X[i:i + batch_size], Y[i:i + batch_size]
        if fast:
            loss, _ = fast_loss_and_grads(params, cell, Xb, Yb, need_grads=False, work=work)
        else:
            loss, _ = loss_and_grads(params, cell, Xb, Yb, need_grads=False)
        total += loss * len(Xb)
    return total / len(X)


def predict(params, cell, prefix, num_preds, temperature=None, rng=None):
    """Warm up on the prefix, then num_preds characters: the most likely one each time
    (greedy) if temperature is None, else drawn from softmax(logits / temperature) by
    rng. The unknown token, which the training text never contains, is never drawn."""
    unk = VOCAB.index('<unk>')
    ids = [VOCAB.index(c) if c in VOCAB else unk for c in prefix]
    state = zero_state(params, cell, 1)
    for i in ids[:-1]:
        state, _, _ = step(params, cell, np.array([i]), state)
    for _ in range(num_preds):
        state, H, _ = step(params, cell, np.array([ids[-1]]), state)
        logits = (H @ params['W_hq'] + params['b_q'])[0].astype(np.float64)
        if temperature is None:
            ids.append(int(logits.argmax()))
            continue
        P = np.exp((logits - logits.max()) / temperature)
        P[unk] = 0
        cumulative = np.cumsum(P)
        u = rng.random() * cumulative[-1]         # inverse of the distribution function
        ids.append(int(min(np.searchsorted(cumulative, u, side='right'), len(P) - 1)))
    return ''.join(VOCAB[i] for i in ids)


MAX_LOSS = 700.0  # a larger loss is a perplexity beyond float64's range: training diverged


def perplexity(loss):
    return math.exp(min(loss, MAX_LOSS))


@dataclass
class EpochRecord:
    """One epoch of training."""
    epoch: int
    train_ppl: float         # perplexity on the training batches, measured during the epoch
    val_ppl: float           # perplexity on the validation windows, after the epoch
    max_grad_norm: float     # largest gradient norm of the epoch's steps, before clipping
    clipped_fraction: float  # fraction of the epoch's steps whose gradient was clipped


@dataclass
class SampleRecord:
    """What the model writes after the prefix, after one epoch."""
    epoch: int
    greedy: str              # the most likely character each time
    temp_0_5: str            # drawn at temperature 0.5
    temp_1_0: str            # drawn at temperature 1


@dataclass
class TrainRecord:
    """A training run: everything `python3 gru.py` prints, as values."""
    config: dict             # the Config, as a dict
    history: list            # an EpochRecord per epoch
    samples: list            # a SampleRecord per sampled epoch (SAMPLE_EPOCHS and the last)
    sample: str              # the greedy sample after the last epoch
    seconds: float           # wall time of all epochs (training and validation)
    tokens_per_second: float  # training tokens / seconds
    num_params: int
    vocab_size: int
    corpus: str              # the corpus file's name
    num_chars: int           # length of the whole corpus after preprocessing
    chars_used: int          # the first characters of it, which the windows are cut from
    train_ppl: float = 0.0   # the last epoch's training perplexity
    val_ppl: float = 0.0     # .. and validation perplexity
    best_val: float = 0.0    # the lowest and highest validation perplexity of any epoch
    worst_val: float = 0.0
    clipped_share: float = 0.0  # fraction of all training steps whose gradient was clipped

    @classmethod
    def from_dict(cls, d):
        """The record back from asdict(record) (after a JSON round trip, say)."""
        d = dict(d)
        d['history'] = [EpochRecord(**row) for row in d['history']]
        d['samples'] = [SampleRecord(**row) for row in d['samples']]
        return cls(**d)


@dataclass
class Trained:
    """A trained model: its record, and the arrays the diagnostics read (not a record)."""
    config: Config
    record: TrainRecord
    params: dict             # the parameters after the last epoch
    initial: dict            # the parameters before the first
    data: Dataset
    text: str                # the preprocessed characters the windows are cut from


# One process printing several reports (`--compare --distance`) trains each model
# once: trained models are kept here, by configuration and corpus.
_TRAINED = {}


def train_model(corpus, config=Config(), on_epoch=None):
    """Train config.cell on the corpus as d2l does, or return the model this process
    trained already with the same configuration on the same text. on_epoch(EpochRecord)
    is called after each epoch (for a model trained before: once per epoch, at once).
    TrainingDiverged if the loss or the gradient stops being finite."""
    key = (config, corpus.digest)
    if key not in _TRAINED:
        _TRAINED[key] = _train(corpus, config, on_epoch)
    elif on_epoch is not None:
        for row in _TRAINED[key].record.history:
            on_epoch(row)
    return _TRAINED[key]


def sgd_step(params, config, X, Y, work):
    """One step of minibatch SGD with clipping; returns the loss and the gradient's norm
    before clipping. Overflows are not warned about: the caller checks the two numbers."""
    with np.errstate(over='ignore', invalid='ignore'):
        if config.fast:
            loss, grads = fast_loss_and_grads(params, config.cell, X, Y, work=work)
        else:
            loss, grads = loss_and_grads(params, config.cell, X, Y)
        norm = clip_gradients(grads, config.clip)
        sgd(params, grads, config.lr)
    return loss, norm


def _train(corpus, config, on_epoch):
    data = make_dataset(corpus.chars, config)
    rng = np.random.default_rng(config.seed)
    params = init_params(config.cell, len(VOCAB), config.hidden, rng, 'float32',
                         config.init_sigma, config.forget_bias)
    initial = {name: p.copy() for name, p in params.items()}
    n, B = len(data.X_train), config.batch_size
    history, samples = [], []
    work = {}                                     # the fast path's buffers, kept between batches
    sample_at = {e for e in SAMPLE_EPOCHS if e <= config.epochs} | {config.epochs}
    seconds = 0.0
    for epoch in range(1, config.epochs + 1):
        start = time.perf_counter()
        order = rng.permutation(n)                # reshuffled every epoch
        total, norms = 0.0, []
        for i in range(0, n, B):
            batch = order[i:i + B]
            loss, norm = sgd_step(params, config, data.X_train[batch], data.Y_train[batch], work)
            if not (loss <= MAX_LOSS and math.isfinite(norm)):  # (NaN fails both)
                what = (f'the loss is {loss:.3g}' if not loss <= MAX_LOSS
                        else 'the gradient is not finite')
                raise TrainingDiverged(f'training diverged in epoch {epoch}, step {i // B + 1}: '
                                       f'{what} (learning rate {config.lr:g}); try a smaller --lr')
            total += loss * len(batch)            # measured during the epoch, as d2l does
            norms.append(norm)
        val = evaluate(params, config.cell, data.X_val, data.Y_val, B, config.fast, work)
        seconds += time.perf_counter() - start
        row = EpochRecord(epoch, perplexity(total / n), perplexity(val), max(norms),
                          sum(norm > config.clip for norm in norms) / len(norms))
        history.append(row)
        if epoch in sample_at:                    # its own seed: sampling leaves training's rng alone
            sample_rng = np.random.default_rng([config.seed, epoch])
            samples.append(SampleRecord(epoch, *(
                predict(params, config.cell, config.prefix, config.num_preds, temp, sample_rng)
                for temp in (None,) + TEMPERATURES)))
        if on_epoch is not None:
            on_epoch(row)
    seconds = max(seconds, 1e-9)
    record = TrainRecord(
        config=asdict(config), history=history, samples=samples, sample=samples[-1].greedy,
        seconds=seconds, tokens_per_second=config.epochs * n * config.num_steps / seconds,
        num_params=num_params(params), vocab_size=len(VOCAB), corpus=corpus.name,
        num_chars=corpus.total_chars, chars_used=data.num_chars,
        train_ppl=history[-1].train_ppl, val_ppl=history[-1].val_ppl,
        best_val=min(row.val_ppl for row in history),
        worst_val=max(row.val_ppl for row in history),
        clipped_share=sum(row.clipped_fraction for row in history) / len(history))
    return Trained(config, record, params, initial, data, corpus.chars[:data.num_chars])


def compute_training(corpus, config=Config(), on_epoch=None):
    """The TrainRecord of training config.cell on the corpus (see train_model)."""
    return train_model(corpus, config, on_epoch).record


# ================================================================ diagnostics

GRADCHECK = dict(vocab_size=6, batch_size=3, num_steps=5, hidden=4, scale=0.5, eps=1e-5)


@dataclass
class GradcheckRow:
    cell: str
    parameter: str
    shape: list              # the parameter's shape
    rel_error: float         # max |a - n| / max(|a| + |n|), a analytic (plain path), n numerical
    fast_vs_plain: float     # max |fast - plain| / max |plain|, the fast path's gradient


@dataclass
class GradcheckRecord:
    eps: float               # the central differences' step
    batch_size: int
    num_steps: int
    hidden: int
    vocab_size: int
    rows: list               # a GradcheckRow per parameter of each cell
    worst: float             # the largest rel_error
    worst_fast_vs_plain: float
    passed: bool             # worst < 1e-6 and worst_fast_vs_plain < 1e-10


def random_problem(cell, seed, V, B, T, h, scale):
    """Random float64 weights, windows and initial state: a small problem to check on."""
    rng = np.random.default_rng(seed)
    params = {name: scale * rng.standard_normal(p.shape)
              for name, p in init_params(cell, V, h, rng, 'float64').items()}
    X = rng.integers(0, V, (B, T))
    Y = rng.integers(0, V, (B, T))
    H = rng.standard_normal((2, B, h)) * scale
    state = (H[0], H[1]) if cell == 'lstm' else H[0]
    return params, X, Y, state


def compute_gradcheck(cells=CELLS, seed=0):
    """The plain path's analytic gradient against central differences of its loss, float64,
    on a small random problem with a random initial state; and the fast path's gradient
    against the plain path's."""
    c = GRADCHECK
    rows = []
    for cell in cells:
        params, X, Y, state = random_problem(cell, seed, c['vocab_size'], c['batch_size'],
                                             c['num_steps'], c['hidden'], c['scale'])
        _, grads = loss_and_grads(params, cell, X, Y, state)
        _, fast = fast_loss_and_grads(params, cell, X, Y, state)
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
            diff = np.abs(fast[name] - a).max() / max(np.abs(a).max(), 1e-300)
            rows.append(GradcheckRow(cell, name, list(p.shape), float(err), float(diff)))
    worst = max(r.rel_error for r in rows)
    worst_fast = max(r.fast_vs_plain for r in rows)
    return GradcheckRecord(c['eps'], c['batch_size'], c['num_steps'], c['hidden'],
                           c['vocab_size'], rows, worst, worst_fast,
                           bool(worst < 1e-6 and worst_fast < 1e-10))


def as_float64(params):
    return {name: p.astype(np.float64) for name, p in params.items()}


def compute_gradient_distance(params, cell, X, Y, batch_size=1024):
    """How the gradient of the last step's loss reaches back: for k = 0 .. T-1, the mean
    over the windows X, Y (B, T) of ||dL_T / dH_{T-k}||, L_T being the window's own
    cross-entropy at its last step. The plain path's backward steps, in float64.
    Returns (for H, for C): the second is None except for the LSTM."""
    params = as_float64(params)
    B, T = X.shape
    sums_H, sums_C = np.zeros(T), np.zeros(T)
    for i in range(0, B, batch_size):
        x, y = X[i:i + batch_size], Y[i:i + batch_size]
        rows = np.arange(len(x))
        state = zero_state(params, cell, len(x))
        caches = []
        for t in range(T):
            state, H, cache = step(params, cell, x[:, t], state)
            caches.append(cache)
        dY_hat = np.exp(log_softmax(H @ params['W_hq'] + params['b_q']))  # L_T's gradient
        dY_hat[rows, y[:, -1]] -= 1               # for each window: no mean over the batch
        dH = dY_hat @ params['W_hq'].T            # dL_T / dH_T
        dstate = (dH, np.zeros_like(dH)) if cell == 'lstm' else dH
        ignored = {name: np.zeros_like(p) for name, p in params.items()}  # parameter gradients
        for k in range(T):
            dH = dstate[0] if cell == 'lstm' else dstate
            sums_H[k] += np.linalg.norm(dH, axis=1).sum()  # dL_T / dH_{T-k}
            if cell == 'lstm':
                sums_C[k] += np.linalg.norm(dstate[1], axis=1).sum()
            dstate = step_backward(params, cell, dstate, caches[T - 1 - k], ignored)
    return ((sums_H / B).tolist(), (sums_C / B).tolist() if cell == 'lstm' else None)


@dataclass
class DistanceCurve:
    model: str               # the model's name
    cell: str
    trained: list            # mean ||dL_T / dH_{T-k}|| for k = 0 .. T-1, after training
    init: list               # the same at initialisation (the same run's initial weights)
    trained_C: Optional[list] = None  # the LSTM only: mean ||dL_T / dC_{T-k}||, trained
    init_C: Optional[list] = None     # .. and at initialisation


@dataclass
class DistanceRecord:
    num_windows: int         # validation windows averaged over
    num_steps: int
    ks: list                 # the distances k the table shows
    curves: list             # a DistanceCurve per model


DISTANCE_KS = (0, 1, 2, 4, 8, 16, 31)


def compute_distance(models):
    """models: {name: Trained}. The gradient-distance curves of each, trained and at
    initialisation, over its validation windows."""
    curves = []
    for name, m in models.items():
        X, Y = m.data.X_val, m.data.Y_val
        trained_H, trained_C = compute_gradient_distance(m.params, m.config.cell, X, Y)
        init_H, init_C = compute_gradient_distance(m.initial, m.config.cell, X, Y)
        curves.append(DistanceCurve(name, m.config.cell, trained_H, init_H, trained_C, init_C))
    first = next(iter(models.values()))
    T = first.config.num_steps
    return DistanceRecord(len(first.data.X_val), T, [k for k in DISTANCE_KS if k < T], curves)


GATE_PLACES = {'gru': (('Z', 2), ('R', 3)),        # each gate's place in a step's cache
               'lstm': (('I', 3), ('F', 4), ('O', 5)),
               'rnn': ()}


def run_sequence(params, cell, ids):
    """Read one long sequence from a zero state with the plain steps: every step's state
    H (n, h) and every step's gates {name: (n, h)}."""
    state = zero_state(params, cell, 1)
    Hs, gates = [], {name: [] for name, _ in GATE_PLACES[cell]}
    for i in ids:
        state, H, cache = step(params, cell, np.array([i]), state)
        Hs.append(H[0])
        for name, place in GATE_PLACES[cell]:
            gates[name].append(cache[place][0])
    return np.array(Hs), {name: np.array(v) for name, v in gates.items()}


@dataclass
class UnitRecord:
    feature: str             # what the unit was searched for
    unit: int                # the unit of H, 0 .. h-1
    correlation: float       # Pearson r of H[unit] with the feature over the stretch
    runner_up: bool          # the best unit for the feature was found for an earlier one
    values: list             # H[unit] after each character of the passage


@dataclass
class InsideRecord:
    passage: str             # the first characters of the validation text
    passage_chars: int       # .. how many
    z_mean: list             # mean of the update gate Z over the units, per character
    units: list              # a UnitRecord per feature
    stretch_chars: int       # the length of validation text the correlations are over


INSIDE_PASSAGE = 256      # characters shown (four lines of 64)
INSIDE_FEATURES = (       # (name, indicator of the current character c and the next one n)
    ('inside a word', lambda c, n: c.isalpha() and n.isalpha()),
    ('a space', lambda c, n: c == ' '),
)


def pearson(a, b):
    a, b = a - a.mean(), b - b.mean()
    denominator = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / denominator if denominator else 0.0


def compute_inside(m):
    """The trained GRU m reading the validation text from a zero state: the units whose
    state correlates most with each feature over the whole text (a unit found for one
    feature is not searched again for the next), and the mean update gate and those
    units' values along the first INSIDE_PASSAGE characters."""
    config = m.config
    text = m.text[config.num_train:]              # the validation windows' characters
    Hs, gates = run_sequence(as_float64(m.params), 'gru', token_ids(text))
    units, taken = [], set()
    for name, indicator in INSIDE_FEATURES:
        f = np.array([indicator(c, n) for c, n in zip(text, text[1:])], np.float64)
        r = np.abs([pearson(Hs[:-1, j], f) for j in range(Hs.shape[1])])
        best = int(np.argmax(np.where([j in taken for j in range(len(r))], -1, r)))
        taken.add(best)
        units.append(UnitRecord(name, best, round(pearson(Hs[:-1, best], f), 4),
                                best != int(np.argmax(r)), []))
    n = min(INSIDE_PASSAGE, len(text))            # the passage: the same run's first n steps
    for u in units:
        u.values = [round(float(v), 4) for v in Hs[:n, u.unit]]
    z_mean = [round(float(v), 4) for v in gates['Z'][:n].mean(axis=1)]
    return InsideRecord(text[:n], n, z_mean, units, len(text))


@dataclass
class GateSaturation:
    model: str
    gate: str                # Z, R (GRU); I, F, O (LSTM)
    left: float              # fraction of (unit, step) values below SATURATION_LOW
    right: float             # fraction above SATURATION_HIGH
    unit_left: list          # per unit: the fraction of its steps below SATURATION_LOW
    unit_right: list         # per unit: the fraction above SATURATION_HIGH


@dataclass
class SaturationRecord:
    low: float
    high: float
    num_windows: int
    gates: list              # a GateSaturation per gate of each model


SATURATION_LOW, SATURATION_HIGH = 0.1, 0.9


def gate_values(params, cell, X, batch_size=1024):
    """Every gate's value at every step of every window of X (B, T), each window from a
    zero state: {gate: (B * T, h)}."""
    values = {name: [] for name, _ in GATE_PLACES[cell]}
    for i in range(0, len(X), batch_size):
        x = X[i:i + batch_size]
        state = zero_state(params, cell, len(x))
        for t in range(x.shape[1]):
            state, _, cache = step(params, cell, x[:, t], state)
            for name, place in GATE_PLACES[cell]:
                values[name].append(cache[place])
    return {name: np.concatenate(v) for name, v in values.items()}


def compute_saturation(models):
    """models: {name: Trained}, gated cells. The fraction of gate values near 0 and near 1
    on the validation windows, as Karpathy, Johnson and Fei-Fei (2015) count them."""
    gates = []
    num_windows = 0
    for name, m in models.items():
        num_windows = len(m.data.X_val)
        for gate, v in gate_values(m.params, m.config.cell, m.data.X_val).items():
            left, right = v < SATURATION_LOW, v > SATURATION_HIGH
            gates.append(GateSaturation(
                name, gate, float(left.mean()), float(right.mean()),
                [round(float(x), 4) for x in left.mean(axis=0)],
                [round(float(x), 4) for x in right.mean(axis=0)]))
    return SaturationRecord(SATURATION_LOW, SATURATION_HIGH, num_windows, gates)


# ================================================================ formatting

def format_ppl(x):
    return f'{x:.2f}' if x < 1e6 else f'{x:.2e}'   # at most 9 characters either way


def format_norm(x):
    return f'{x:.3f}' if x < 1e5 else f'{x:.2e}'   # at most 9 characters either way


def quoted(text):
    """A sample between quote marks, so that a space at either end shows."""
    return f'"{text}"'


def plural(n, word):
    return f'{n} {word}' + ('' if n == 1 else 's')


HISTORY_HEADER = ('epoch', 'train ppl', 'val ppl', 'max grad norm', 'clipped')


def history_widths(config):
    """Fixed column widths, so the table can be printed one row at a time."""
    return [max(5, len(str(config.epochs))), 9, 9, 13, 7]


def history_row(row):
    return (str(row.epoch), format_ppl(row.train_ppl), format_ppl(row.val_ppl),
            format_norm(row.max_grad_norm), f'{100 * row.clipped_fraction:.0f}%')


def format_history_table(record):
    """The per-epoch table, exactly as report_train prints it row by row while training."""
    config = Config(**record.config)
    return format_table(HISTORY_HEADER, [history_row(r) for r in record.history], 'rrrrr',
                        history_widths(config))


def format_samples_table(record):
    """What the model writes after the prefix as it learns: a row per sampled epoch."""
    header = ('epoch', 'greedy') + tuple(f'temperature {t:g}' for t in TEMPERATURES)
    rows = [(s.epoch, quoted(s.greedy), quoted(s.temp_0_5), quoted(s.temp_1_0))
            for s in record.samples]
    return format_table(header, rows, 'rlll')


def format_config_table(config, corpus, data):
    """The data and the configuration, as `python3 gru.py` prints them first."""
    n = num_params(init_params(config.cell, len(VOCAB), config.hidden, np.random.default_rng(0)))
    T = config.num_steps
    shown = ['unknown' if t == '<unk>' else repr(t) for t in VOCAB]  # no <tag> in markdown
    init = f'weights normal(0, {config.init_sigma:g}), biases zero'
    if config.cell == 'lstm':
        init += (f', forget-gate bias b_f = {config.forget_bias:g}' if config.forget_bias
                 else ' (forget-gate bias b_f too)')
    rows = [
        ('corpus', f'{corpus.name}: {corpus.total_chars:,} characters after preprocessing, '
                   f'of which the windows use the first {data.num_chars:,}'),
        ('vocabulary', f"{len(VOCAB)} tokens: {', '.join(shown[:3])} .. {shown[-1]}"),
        ('examples', f'{len(data.X_train):,} training and {len(data.X_val):,} validation '
                     f'windows of {T} + 1 characters'),
        ('batch', f'{config.batch_size:,} windows, reshuffled every epoch'),
        ('model', f'{MODEL_NAMES[config.cell]}, hidden size {config.hidden}, {n:,} parameters'),
        ('initialisation', init),
        ('optimiser', f'SGD, learning rate {config.lr:g}, gradient clipped to norm '
                      f'{config.clip:g}'),
        ('training', f"{plural(config.epochs, 'epoch')}, seed {config.seed}, float32, "
                     f"{'fast' if config.fast else 'plain'} path"),
    ]
    return format_table(('item', 'value'), rows, 'll')


def format_timing(record):
    return (f"time: {record.seconds:.1f} s for {plural(record.config['epochs'], 'epoch')}, "
            f'{record.tokens_per_second:,.0f} training tokens/s')


def format_gradcheck_caption(record):
    return (f'relative error max abs(a - n) / max(abs(a) + abs(n)) over each parameter\'s '
            f'entries, a the plain path\'s analytic gradient, n the central difference with '
            f'step {record.eps:g}; fast path: max abs(f - a) / max abs(a), f the fast path\'s '
            f'gradient. float64, batch {record.batch_size}, {record.num_steps} steps, hidden '
            f'{record.hidden}, vocabulary {record.vocab_size}, random initial state')


def format_gradcheck_table(record):
    body = [(r.cell, r.parameter, ' x '.join(map(str, r.shape)), f'{r.rel_error:.1e}',
             f'{r.fast_vs_plain:.1e}') for r in record.rows]
    return format_table(('cell', 'parameter', 'shape', 'relative error', 'fast path'),
                        body, 'llrrr')


def format_gradcheck_worst(record):
    return (f'worst: {record.worst:.1e} ({"well under" if record.worst < 1e-6 else "NOT under"}'
            f' 1e-6); fast path against plain: {record.worst_fast_vs_plain:.1e} '
            f'({"under" if record.worst_fast_vs_plain < 1e-10 else "NOT under"} 1e-10)')


def format_compare_table(record):
    """One row per trained model: what `python3 gru.py --compare` prints."""
    at = f'epoch {record.epochs}'
    rows = [(m.model, f'{m.num_params:,}', f'{m.lr:g}', format_ppl(m.train_ppl),
             format_ppl(m.val_ppl), quoted(m.sample)) for m in record.models]
    return format_table(('model', 'parameters', 'learning rate', f'train ppl, {at}',
                         f'val ppl, {at}', 'sample (greedy)'), rows, 'lrrrrl')


def format_compare_timing(record):
    return 'time: ' + ', '.join(f'{m.model} {m.seconds:.1f} s' for m in record.models)


def format_distance_caption(record):
    return (f'mean over {record.num_windows:,} validation windows of the norm of dL_T / '
            f'dH_(T-k): how strongly the loss at the last of the {record.num_steps} steps '
            f'reaches the state k steps earlier; trained (after the last epoch) and at '
            f'initialisation')


def format_distance_table(record):
    header = ['k'] + [f'{c.model} {when}' for c in record.curves for when in ('trained', 'init')]
    rows = [[str(k)] + [f'{getattr(c, when)[k]:.2e}' for c in record.curves
                        for when in ('trained', 'init')] for k in record.ks]
    return format_table(header, rows, 'r' * len(header))


def quantised(values, low, high):
    """Each value as a digit 0-9: which tenth of [low, high] it falls in."""
    return ''.join(str(min(9, max(0, int((v - low) / (high - low) * 10)))) for v in values)


INSIDE_WIDTH = 64  # characters per line of the passage


def format_inside_caption(record):
    return (f'the trained GRU reading the first {len(record.passage)} characters of the '
            f'validation text from a zero state; under each character (spaces shown as _), '
            f'one digit per signal: Z, the update gate averaged over the units, in tenths of '
            f'[0, 1] (9: Z above 0.9, the state is kept); unit j, the state H[j], in tenths '
            f'of [-1, 1]')


def format_inside_passage(record):
    labels = ['text', 'Z'] + [f'unit {u.unit}' for u in record.units]
    lines = [record.passage.replace(' ', '_'), quantised(record.z_mean, 0.0, 1.0)]
    lines += [quantised(u.values, -1.0, 1.0) for u in record.units]
    width = max(len(label) for label in labels)
    blocks = []
    for i in range(0, len(record.passage), INSIDE_WIDTH):
        blocks.append('\n'.join(f'{label.ljust(width)}  {line[i:i + INSIDE_WIDTH]}'.rstrip()
                                for label, line in zip(labels, lines)))
    return '\n\n'.join(blocks)


def format_inside_table(record):
    rows = [(f'unit {u.unit}', f'the current character is {u.feature}'
             + (' (a letter before a letter)' if u.feature == 'inside a word' else '')
             + (' (the best unit for it is shown above)' if u.runner_up else ''),
             f'{u.correlation:+.2f}') for u in record.units]
    return format_table(('unit', f'tracks (Pearson r over {record.stretch_chars:,} characters)',
                         'r'), rows, 'llr')


def format_saturation_caption(record):
    return (f'fraction of gate values, over every unit at every step of the '
            f'{record.num_windows:,} validation windows (each read from a zero state), '
            f'below {record.low:g} (left-saturated) and above {record.high:g} '
            f'(right-saturated)')


def format_saturation_table(record):
    rows = [(g.model, g.gate, f'{100 * g.left:.1f}%', f'{100 * g.right:.1f}%',
             f'{100 * (1 - g.left - g.right):.1f}%') for g in record.gates]
    return format_table(('model', 'gate', f'below {record.low:g}', f'above {record.high:g}',
                         'in between'), rows, 'llrrr')


# ================================================================ reports

_CORPORA = {}  # (path, characters needed) -> Corpus: each report reads the file once


def corpus_for(args, config):
    """The corpus the command line names, read as far as config needs; CorpusError if it
    cannot be read or is too short."""
    path = Path(args.corpus or CORPUS)
    key = (str(path.resolve()), config.num_chars_needed)
    if key not in _CORPORA:
        corpus = read_corpus(path, config.num_chars_needed)
        try:
            make_dataset(corpus.chars, config)
        except CorpusError as e:
            raise CorpusError(f'cannot read corpus {path}: {e}') from None
        _CORPORA[key] = corpus
    return _CORPORA[key]


def base_config(args, config=None):
    """d2l's configuration (or config: tests pass small ones) with the command line's
    --epochs, --seed and --plain."""
    config = config or Config()
    if args.epochs is not None:
        config = replace(config, epochs=args.epochs)
    if args.seed is not None:
        config = replace(config, seed=args.seed)
    if args.plain:
        config = replace(config, fast=False)
    return config


def model_config(args, base, cell, forget_bias=0.0):
    """base for one cell, at --lr or d2l's learning rate for the cell."""
    lr = args.lr if args.lr is not None else D2L_LR[cell]
    return replace(base, cell=cell, lr=lr, forget_bias=forget_bias)


def d2l_models(args, base):
    """The three language models of the chapter, trained in base's configuration (d2l's):
    {name: Trained}."""
    corpus = corpus_for(args, base)
    return {MODEL_NAMES[cell]: train_model(corpus, model_config(args, base, cell))
            for cell in CELLS}


def report_train(args, out, config=None):
    """Train one model: the configuration, a row per epoch, samples as it learns, the time."""
    if args.forget_bias is not None and args.cell != 'lstm':
        raise Refused("--forget-bias is the LSTM's forget-gate bias: add --cell lstm "
                      "(or use it with --compare)")
    base = base_config(args, config)
    cell = args.cell or 'gru'
    forget_bias = args.forget_bias if args.forget_bias is not None else 0.0
    config = model_config(args, base, cell, forget_bias)
    corpus = corpus_for(args, config)
    data = make_dataset(corpus.chars, config)
    out.text(f'{MODEL_NAMES[cell]} language model, numpy, from scratch')
    out.table('config', format_config_table(config, corpus, data))
    widths = history_widths(config)
    out.table('history', format_table(HISTORY_HEADER, [], 'rrrrr', widths))

    def on_epoch(row):
        out.row('history', format_table(HISTORY_HEADER, [history_row(row)], 'rrrrr', widths)
                .splitlines()[-1])

    record = compute_training(corpus, config, on_epoch)
    out.text(f'samples: what the model writes after "{config.prefix}" ({config.num_preds} '
             f'characters) as it learns, greedy and drawn at two temperatures')
    out.table('samples', format_samples_table(record))
    out.text(format_timing(record))
    return record


@dataclass
class ComparedModel:
    model: str               # GRU, LSTM (b_f 0), LSTM (b_f 1), plain RNN
    cell: str
    forget_bias: float
    lr: float
    num_params: int
    train_ppl: float         # at the last epoch
    val_ppl: float           # at the last epoch
    sample: str              # greedy, after the last epoch
    seconds: float
    tokens_per_second: float
    history: list            # an EpochRecord per epoch


@dataclass
class CompareRecord:
    epochs: int
    models: list             # a ComparedModel per model, in the table's order
    gru: ComparedModel       # the same four, by name
    lstm: ComparedModel      # forget-gate bias 0
    lstm_biased: ComparedModel  # forget-gate bias 1 (or --forget-bias)
    rnn: ComparedModel


def report_compare(args, out, config=None):
    """The GRU, the LSTM with forget-gate bias 0 and 1 and the plain RNN on one harness."""
    base = base_config(args, config)
    second = args.forget_bias if args.forget_bias is not None else 1.0
    runs = [('GRU', 'gru', 0.0), ('LSTM (b_f 0)', 'lstm', 0.0),
            (f'LSTM (b_f {second:g})', 'lstm', second), ('plain RNN', 'rnn', 0.0)]
    corpus = corpus_for(args, base)
    rate = "d2l's learning rate" if args.lr is None else f'learning rate {args.lr:g}'
    out.text(f"training {len(runs)} models for {plural(base.epochs, 'epoch')} each at {rate}: "
             + ', '.join(name for name, _, _ in runs))
    models = []
    for name, cell, forget_bias in runs:
        config = model_config(args, base, cell, forget_bias)
        r = compute_training(corpus, config)
        models.append(ComparedModel(name, cell, forget_bias, config.lr, r.num_params,
                                    r.history[-1].train_ppl, r.history[-1].val_ppl, r.sample,
                                    r.seconds, r.tokens_per_second, r.history))
    record = CompareRecord(base.epochs, models, *models)
    out.table('compare', format_compare_table(record))
    out.text(format_compare_timing(record))
    return record


def report_gradcheck(args, out):
    """Every analytic gradient against central finite differences, float64."""
    record = compute_gradcheck((args.cell,) if args.cell else CELLS,
                               args.seed if args.seed is not None else 0)
    out.text(format_gradcheck_caption(record))
    out.table('gradcheck', format_gradcheck_table(record))
    out.text(format_gradcheck_worst(record))
    return record


def report_distance(args, out, config=None):
    """How far back the last step's gradient reaches, trained and at initialisation."""
    record = compute_distance(d2l_models(args, base_config(args, config)))
    out.text(format_distance_caption(record))
    out.table('distance', format_distance_table(record))
    return record


def report_inside(args, out, config=None):
    """The trained GRU's update gate and two of its units, character by character."""
    models = d2l_models(args, base_config(args, config))
    record = compute_inside(models[MODEL_NAMES['gru']])
    out.text(format_inside_caption(record))
    out.text(format_inside_passage(record))
    out.table('inside', format_inside_table(record))
    return record


def report_saturation(args, out, config=None):
    """How often each gate of the trained GRU and LSTM is near 0 or near 1."""
    models = d2l_models(args, base_config(args, config))
    record = compute_saturation({name: m for name, m in models.items() if m.config.cell != 'rnn'})
    out.text(format_saturation_caption(record))
    out.table('saturation', format_saturation_table(record))
    return record


REPORTS = {  # flag -> (what it prints, the function), in the order of the chapter
    'train': ("train one model in d2l's configuration: a row per epoch, then samples", report_train),
    'gradcheck': ('every hand-written gradient against central finite differences, float64',
                  report_gradcheck),
    'compare': ('the GRU, the LSTM (forget-gate bias 0 and 1) and the plain RNN on one harness',
                report_compare),
    'distance': ("how far back the last step's gradient reaches, trained and at initialisation",
                 report_distance),
    'inside': ("the trained GRU's update gate and two units it found, character by character",
               report_inside),
    'saturation': ('how often the gates of the trained GRU and LSTM sit near 0 or near 1',
                   report_saturation),
}
DEFAULT = ('train',)  # what runs with no flag


# ================================================================ command line

TRAINING_REPORTS = ('train', 'compare', 'distance', 'inside', 'saturation')
OPTIONS = {  # option -> the reports it changes; with none of them, it is refused
    'cell': ('train', 'gradcheck'),
    'epochs': TRAINING_REPORTS,
    'lr': ('train', 'compare'),
    'seed': TRAINING_REPORTS + ('gradcheck',),
    'forget_bias': ('train', 'compare'),
    'plain': TRAINING_REPORTS,
    'corpus': TRAINING_REPORTS,
}


def add_options(ap):
    ap.add_argument('--cell', choices=CELLS,
                    help='the cell to train: gru (default), lstm or rnn; with --gradcheck, '
                         'check only this cell')
    ap.add_argument('--epochs', type=number(int, 1, 10000), metavar='N',
                    help=f'training epochs, 1 to 10000 (default {Config.epochs})')
    ap.add_argument('--lr', type=number(float, 1e-6, LR_MAX), metavar='LR',
                    help=f"SGD learning rate, 1e-6 to {LR_MAX:g} (default: d2l's, "
                         f"4 for gru and lstm, 1 for rnn)")
    ap.add_argument('--seed', type=number(int, 0, 2 ** 32 - 1), metavar='S',
                    help='seed for initialisation, shuffling and sampling, and for the '
                         '--gradcheck problem (default 0)')
    ap.add_argument('--forget-bias', type=number(float, -10.0, 10.0), metavar='B',
                    help="the LSTM's initial forget-gate bias b_f, -10 to 10: with --cell lstm "
                         "(default 0, d2l's), or the second LSTM of --compare (default 1)")
    ap.add_argument('--plain', action='store_true',
                    help='train with the plain path, step by step (slower; the same model)')
    ap.add_argument('--corpus', type=Path, metavar='PATH',
                    help='the text to train on (default: timemachine.txt next to gru.py)')


# ---------------------------------------------------------------------------
# The harness: the same in every script of the site, checked when it is built.
# Printing, the command line, main(). Above it: this script's own code.
# ---------------------------------------------------------------------------

NAME = os.path.basename(__file__)  # rnn.py, as the command line names it
WRAP = 78  # the width of the paragraphs the reports print


class Printer:
    """Prints paragraphs and tables, a blank line between; keeps each table by name."""

    def __init__(self, stream=None):
        self.stream, self.tables, self.blocks = stream or sys.stdout, {}, 0

    def text(self, paragraph):  # long lines wrapped at WRAP; a `time:` line is kept whole
        self.block("\n".join(line if len(line) <= WRAP or line.startswith("time:")
                             else textwrap.fill(line, WRAP, break_on_hyphens=False)
                             for line in paragraph.split("\n")))

    def table(self, name, table):
        assert name not in self.tables, f"table {name!r} printed twice"
        self.tables[name] = table
        self.block(table)

    def row(self, name, line):  # one more row of a table that is printed as it grows
        self.tables[name] += "\n" + line
        self.write(line + "\n")

    def block(self, text):
        self.write("\n" * (self.blocks > 0) + text + "\n")
        self.blocks += 1

    def write(self, text):
        self.stream.write(text)
        self.stream.flush()


def format_table(header, rows, align, min_widths=None):
    """A markdown table; align: 'l' or 'r' per column; min_widths: to print row by row."""
    cells = [[str(c) for c in row] for row in (header, *rows)]
    widths = [max(3, (min_widths or [0] * len(header))[j], *(len(row[j]) for row in cells))
              for j in range(len(header))]
    pad = [str.rjust if a == "r" else str.ljust for a in align]
    lines = ["| " + " | ".join(p(c, w) for p, c, w in zip(pad, row, widths)) + " |"
             for row in cells]
    rule = "|" + "|".join("-" * (w + 1) + ":-"[a != "r"] for w, a in zip(widths, align)) + "|"
    return "\n".join([lines[0], rule, *lines[1:]])


def number(kind, low, high):
    """An argparse type: a number of kind (int or float) from low to high."""
    def check(text):
        try:
            x = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
        if not low <= x <= high:  # (nan fails it too)
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {text}")
        return x
    return check


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n")[0])
    for flag, (help_text, _) in REPORTS.items():
        parser.add_argument(f"--{flag}", action="store_true", help=help_text)
    add_options(parser)
    args = parser.parse_args(argv)
    args.chosen = [flag for flag in REPORTS if getattr(args, flag)] or list(DEFAULT)
    for option, users in OPTIONS.items():  # an option no chosen report uses is an error
        if getattr(args, option) not in (None, False) and not set(users) & set(args.chosen):
            parser.error(f"--{option.replace('_', '-')} has no effect without "
                         + " or ".join(f"--{user}" for user in users))
    return args


def run(args, out):
    """Print the chosen reports to out (a Printer), a blank line between; {flag: record}."""
    records = {}
    for n, flag in enumerate(args.chosen):
        out.write("\n" * (n > 0))
        records[flag] = REPORTS[flag][1](args, out)
    return records


def main(argv=None):
    args = parse_args(argv)
    try:
        if np is None:
            raise Refused("needs numpy: pip install numpy")
        records = run(args, Printer())
    except (Refused, OSError) as exc:  # bad input; stdout closed early (`| head`) or full
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # drop what is left
        if isinstance(exc, BrokenPipeError):
            return 0
        why = f"cannot write the output: {exc.strerror}" if isinstance(exc, OSError) else exc
        print(f"{NAME}: {why}", file=sys.stderr)
        return 1
    return 1 if any(getattr(r, "passed", True) is False for r in records.values()) else 0

# ------------------------------------------------------------- end of the harness


if __name__ == '__main__':
    sys.exit(main())
