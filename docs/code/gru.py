"""gru.py: a character-level GRU language model, from scratch in numpy.

Works through the GRU section of "Dive into Deep Learning" (d2l.ai) with no
framework, in d2l's configuration: H. G. Wells' *The Time Machine* becomes a
stream of 28 character tokens, cut into windows of 32 + 1 characters; a GRU
cell (d2l's equations) reads 32 of them and predicts each next one; the
gradient comes from backpropagation through time written out by hand; plain
SGD, with the gradient clipped to norm 1, trains it for 50 epochs. An LSTM and
a plain tanh RNN run on the same code.

    python3 gru.py                   # train the GRU: a row per epoch, then samples (~15 s)
    python3 gru.py --train           # the same (the report that runs when no flag is given)
    python3 gru.py --cell lstm       # the same with an LSTM (or --cell rnn)
    python3 gru.py --cell lstm --forget-bias 1   # the LSTM with forget-gate bias 1
    python3 gru.py --epochs 5 --seed 1 --lr 2    # a shorter run, another seed, another rate
    python3 gru.py --corpus PATH     # another text (default: timemachine.txt next to gru.py)
    python3 gru.py --updates 200 --float64 --batch-size 1   # 200 SGD updates, as the page trains
    python3 gru.py --gradcheck       # every hand-written gradient against finite differences
    python3 gru.py --compare         # the four models, three seeds, two learning rates each
    python3 gru.py --distance        # how far back the last step's gradient reaches
    python3 gru.py --inside          # the trained GRU's update gate and two units, per character
    python3 gru.py --saturation      # how often the gates sit near 0 or 1
    python3 gru.py --reach           # how far back each prediction looks, in the three models
    python3 gru.py --export          # the trained GRU's weights and its greedy sample
    python3 gru.py --init --hidden 64   # the initial weights and numpy's generator after them

The file reads top to bottom: the settings, the data, the parameters, each
cell's step forward and backward, the loss and its gradient, training and
sampling; then how a run trains each model once, what the trained models are
measured by, and the comparison that trains them over several seeds; then the
part the site prints (records, reports) and the harness (printing and the
command line, the same in every script). Needs
only numpy (pip install numpy). Training is float32 (--float64: float64, as
chapter 14's page trains) on one BLAS thread; the same command prints the same
output, run after run, except the lines that start with "time:".
"""
import argparse
import base64
import ctypes
import math
import os
import platform
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
    if platform.machine() in ('x86_64', 'AMD64'):  # and one BLAS kernel on every x86 CPU:
        os.environ.setdefault('OPENBLAS_CORETYPE', 'Haswell')  # AVX-512's round differently

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""


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
    validate: bool = True      # validation perplexity after every epoch (False: the last only)
    dtype: str = 'float32'     # of the parameters and the arithmetic (float64: the page's)
    updates: Optional[int] = None  # stop after this many SGD updates (None: after the epochs)
    prefix: str = 'it has'     # warm-up text for sampling
    num_preds: int = 20        # characters predicted after the prefix

    def __post_init__(self):
        if self.lr is None:
            object.__setattr__(self, 'lr', D2L_LR[self.cell])


# ================================================================ the data

def preprocess(text):
    """d2l's preprocessing: every run of non-letters becomes one space; lower case."""
    return re.sub('[^A-Za-z]+', ' ', text).lower()


def read_corpus(path):
    """The file's text after preprocessing (the harness's read_file refuses a file it cannot
    read, one that is not UTF-8 and one past its size bound)."""
    return preprocess(read_file(path, 'corpus'))


@dataclass
class Dataset:
    num_chars: int   # preprocessed characters the windows are cut from
    X_train: object  # (num_train, num_steps) token ids
    Y_train: object  # the same windows shifted by one character
    X_val: object
    Y_val: object


def token_ids(chars):
    """The characters as token ids (positions in VOCAB)."""
    index = {token: i for i, token in enumerate(VOCAB)}
    return np.array([index.get(c, index['<unk>']) for c in chars], np.intp)


def make_dataset(text, config=Config()):
    """Every window of num_steps + 1 characters, one per start position; the first
    num_train windows train, the next num_val validate."""
    n, T = config.num_train + config.num_val, config.num_steps
    if len(text) - T < n:
        raise Refused(f'the corpus yields {max(len(text) - T, 0):,} windows of {T + 1} '
                      f'characters, {n:,} needed')
    ids = token_ids(text[:n + T])
    windows = ids[np.arange(n)[:, None] + np.arange(T + 1)]  # row i: ids[i:i+T+1]
    X, Y = windows[:, :-1], windows[:, 1:]
    t = config.num_train
    return Dataset(num_chars=n + T, X_train=X[:t], Y_train=Y[:t], X_val=X[t:], Y_val=Y[t:])


# ================================================================ the parameters
#
# d2l keeps three matrices per gate: W_xz, W_hz, b_z for the update gate, and so
# on. Here each kind is stacked over the gates, as nanoGPT stacks q, k and v:
# W_x = [W_xz, W_xr, W_xh] (3, V, h), W_h = [W_hz, W_hr, W_hh] (3, h, h),
# b = [b_z, b_r, b_h] (3, h); the LSTM's are [i, f, o, c], the plain RNN's [h].
# One product then serves several gates, and W_x[0] is W_xz itself.

def init_params(cell, vocab_size, hidden, rng, dtype='float32', sigma=0.01, forget_bias=0.0):
    """d2l's initialisation: weights normal(0, sigma), biases zero (the LSTM's b_f:
    forget_bias); then the output layer W_hq, b_q, the same way."""
    G, V, h = len(GATES[cell]), vocab_size, hidden
    b = np.zeros((G, h))
    if cell == 'lstm':
        b[1] = forget_bias                        # the gates are i, f, o, c
    W_x, W_h = zip(*[(rng.normal(0, sigma, (V, h)), rng.normal(0, sigma, (h, h)))
                     for _ in range(G)])          # in d2l's order: W_xz, W_hz, W_xr, ...
    params = {'W_x': np.stack(W_x), 'W_h': np.stack(W_h), 'b': b,
              'W_hq': rng.normal(0, sigma, (h, V)), 'b_q': np.zeros(V)}
    return {name: p.astype(dtype) for name, p in params.items()}


def zero_state(params, cell, batch_size):
    """(H,) = 0 for every example, (H, C) for the LSTM."""
    H = np.zeros((batch_size, params['W_h'].shape[-1]), params['W_h'].dtype)
    return (H, H.copy()) if cell == 'lstm' else (H,)


# ================================================================ one step of each cell
#
# Step t of a batch of B windows. XW is the input's part of every gate, X_t W_x? + b_?,
# stacked (gates, B, h); state is (H_prev,), or (H_prev, C_prev). A step returns the
# new state and what its backward step needs. The backward step receives dL/d(new
# state), adds the step's share of dL/dW_h to grads, and returns dL/d(previous
# state) and dA, the gradient of the pre-activations, which is also that of XW.

def sigmoid(a):
    """1 / (1 + exp(-a)), computed as (1 + tanh(a / 2)) / 2, which never overflows."""
    return 0.5 * (1 + np.tanh(0.5 * a))


#   Z  = sigma(X W_xz + H_prev W_hz + b_z)          update gate
#   R  = sigma(X W_xr + H_prev W_hr + b_r)          reset gate
#   H~ = tanh(X W_xh + (R * H_prev) W_hh + b_h)     candidate state
#   H  = Z * H_prev + (1 - Z) * H~                  new state

def gru_step(p, XW, state):
    (H_prev,), W_h = state, p['W_h']
    Z, R = sigmoid(XW[:2] + H_prev @ W_h[:2])     # both gates, H_prev [W_hz, W_hr] in one call
    H_tilde = np.tanh(XW[2] + (R * H_prev) @ W_h[2])
    H = Z * H_prev + (1 - Z) * H_tilde
    return (H,), (H_prev, Z, R, H_tilde)


def gru_step_backward(p, dstate, cache, grads):
    (dH,), (H_prev, Z, R, H_tilde), W_h = dstate, cache, p['W_h']
    dA_h = dH * (1 - Z) * (1 - H_tilde ** 2)      # H = Z H_prev + (1 - Z) H~, H~ = tanh(A_h)
    dRH = dA_h @ W_h[2].T                         # dL/d(R * H_prev)
    dA_z = dH * (H_prev - H_tilde) * Z * (1 - Z)  # sigma' = sigma (1 - sigma)
    dA_r = dRH * H_prev * R * (1 - R)
    dA = np.stack([dA_z, dA_r, dA_h])
    grads['W_h'][:2] += H_prev.T @ dA[:2]         # dW_hz, dW_hr
    grads['W_h'][2] += (R * H_prev).T @ dA_h      # dW_hh
    dH_prev = (dH * Z + dRH * R                   # H_prev reaches H directly and through R H_prev,
               + dA_z @ W_h[0].T + dA_r @ W_h[1].T)  # and through the two gates
    return (dH_prev,), dA


#   I = sigma(X W_xi + H_prev W_hi + b_i),  F = sigma(..f..),  O = sigma(..o..)
#   C~ = tanh(X W_xc + H_prev W_hc + b_c)
#   C = F * C_prev + I * C~,   H = O * tanh(C)

def lstm_step(p, XW, state):
    H_prev, C_prev = state
    A = XW + H_prev @ p['W_h']                    # the four pre-activations in one call
    I, F, O = sigmoid(A[:3])                      # input, forget and output gates
    C_tilde = np.tanh(A[3])                       # input node
    C = F * C_prev + I * C_tilde                  # memory cell
    tanh_C = np.tanh(C)
    H = O * tanh_C
    return (H, C), (H_prev, C_prev, I, F, O, C_tilde, tanh_C)


def lstm_step_backward(p, dstate, cache, grads):
    (dH, dC), (H_prev, C_prev, I, F, O, C_tilde, tanh_C) = dstate, cache
    dC = dC + dH * O * (1 - tanh_C ** 2)          # C reaches the loss through H and through C_next
    dA = np.stack([dC * C_tilde * I * (1 - I),    # C = F C_prev + I C~, then through sigma
                   dC * C_prev * F * (1 - F),
                   dH * tanh_C * O * (1 - O),     # H = O tanh(C)
                   dC * I * (1 - C_tilde ** 2)])  # .. and through tanh
    grads['W_h'] += H_prev.T @ dA
    dH_prev = (dA @ p['W_h'].transpose(0, 2, 1)).sum(axis=0)  # H_prev feeds all four gates
    return (dH_prev, dC * F), dA                  # C_prev reaches C through F only


#   H = tanh(X W_xh + H_prev W_hh + b_h)

def rnn_step(p, XW, state):
    (H_prev,) = state
    H = np.tanh(XW[0] + H_prev @ p['W_h'][0])
    return (H,), (H_prev, H)


def rnn_step_backward(p, dstate, cache, grads):
    (dH,), (H_prev, H) = dstate, cache
    dA = dH * (1 - H ** 2)                        # through tanh
    grads['W_h'][0] += H_prev.T @ dA
    return (dA @ p['W_h'][0].T,), dA[None]


STEPS = {'gru': (gru_step, gru_step_backward), 'lstm': (lstm_step, lstm_step_backward),
         'rnn': (rnn_step, rnn_step_backward)}


# ================================================================ the loss and its gradient

def one_hot(ids, V, dtype):
    """(n, V): row k is all zeros but a 1 in column ids[k]."""
    return np.eye(V, dtype=dtype)[ids]


def forward(params, cell, X, state):
    """X: (T, B) token ids, time-major. Every step's H (T, B, h), the final state and
    the caches of the steps."""
    step, _ = STEPS[cell]
    table = params['W_x'] + params['b'][:, None]  # row v of gate ?'s table: W_x?[v] + b_?
    Hs, caches = [], []
    for x in X:
        XW = np.take(table, x, axis=1)            # X_t W_x? + b_?, X_t one-hot: a row lookup
        state, cache = step(params, XW, state)
        Hs.append(state[0])
        caches.append(cache)
    return np.stack(Hs), state, caches


def shifted(logits):
    """The logits minus a constant per row, so that exp cannot overflow (softmax is
    unchanged by it): the largest logit of all, or each row's own largest if a whole
    row could then underflow."""
    top = logits.max()
    return logits - (top if top - logits.min() < 80 else logits.max(axis=-1, keepdims=True))


def log_softmax(logits):
    S = shifted(logits)
    return S - np.log(np.exp(S).sum(axis=-1, keepdims=True))


def loss_and_grads(params, cell, X, Y, state=None, need_grads=True):
    """Windows X, Y (B, T): the loss, mean cross-entropy over all B*T characters, and by
    backpropagation through time its gradient (a dict like params). state: the initial
    state (default zero)."""
    X, Y = np.ascontiguousarray(np.transpose(X)), np.transpose(Y)  # time-major: X[t] is step t
    (T, B), (h, V) = X.shape, params['W_hq'].shape
    state = zero_state(params, cell, B) if state is None else state
    Hs, _, caches = forward(params, cell, X, state)
    H = Hs.reshape(T * B, h)                      # every step's state, one matrix
    S = shifted(H @ params['W_hq'] + params['b_q'])  # the output layer, every step at once
    P, rows, y = np.exp(S), np.arange(T * B), Y.reshape(T * B)
    sums = P.sum(axis=1)                          # softmax: P / sums, row by row
    loss = float(np.log(sums).sum(dtype=np.float64) - S[rows, y].sum(dtype=np.float64)) / (T * B)
    if not need_grads:
        return loss, None
    dlogits = P / ((T * B) * sums[:, None])       # (softmax - one_hot(y)) / (T B)
    dlogits[rows, y] -= 1 / (T * B)
    grads = {name: np.zeros_like(p) for name, p in params.items()}
    grads['W_hq'], grads['b_q'] = H.T @ dlogits, dlogits.sum(axis=0)
    dH = (dlogits @ params['W_hq'].T).reshape(T, B, h)  # what each step's output sends to its H
    _, step_backward = STEPS[cell]
    dstate = zero_state(params, cell, B)          # nothing comes back from after the last step
    for t in reversed(range(T)):                  # backpropagation through time
        dstate = (dstate[0] + dH[t],) + dstate[1:]  # H_t feeds the output and step t + 1
        dstate, dA = step_backward(params, dstate, caches[t], grads)
        grads['W_x'] += one_hot(X[t], V, H.dtype).T @ dA  # each example's row of dA, added to
    grads['b'] = grads['W_x'].sum(axis=1)         # its character's row (and all of them to b)
    return loss, grads


# ================================================================ training and sampling

def clip_gradients(grads, max_norm):
    """d2l's clip_gradients: rescale the whole gradient to L2 norm max_norm if it is
    longer. Returns the norm before clipping."""
    norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if norm > max_norm:
        for g in grads.values():
            g *= max_norm / norm
    return norm


def evaluate(params, cell, X, Y, batch_size):
    """Mean cross-entropy over every character of (X, Y), in batches."""
    total = sum(loss_and_grads(params, cell, X[i:i + batch_size], Y[i:i + batch_size],
                               need_grads=False)[0] * len(X[i:i + batch_size])
                for i in range(0, len(X), batch_size))
    return total / len(X)


MAX_LOSS = 700.0  # a larger loss is a perplexity beyond float64's range: training diverged


def perplexity(loss):
    return math.exp(min(loss, MAX_LOSS))


class TrainingDiverged(Refused):
    """The loss grew past MAX_LOSS or the gradient stopped being a number."""


def sgd_update(params, config, X, Y, where):
    """One step of SGD on the windows X, Y: the gradient, clipped, times the learning
    rate, taken from params. Returns the loss and the gradient's norm before clipping;
    TrainingDiverged (naming where) if either blows up."""
    with np.errstate(over='ignore', invalid='ignore'):  # checked just below
        loss, grads = loss_and_grads(params, config.cell, X, Y)
        norm = clip_gradients(grads, config.clip)
        for name, p in params.items():
            p -= config.lr * grads[name]
    if not (loss <= MAX_LOSS and math.isfinite(norm)):  # (NaN fails both)
        what = f'the loss is {loss:.3g}' if not loss <= MAX_LOSS else 'the gradient is not finite'
        raise TrainingDiverged(f'training diverged in {where}: {what} (learning rate '
                               f'{config.lr:g}); try a smaller --lr')
    return loss, norm


def train(text, config, on_epoch=None):
    """Train config.cell on the text as d2l does: a Trained model. on_epoch(EpochRecord)
    is called after each epoch. TrainingDiverged if the loss or the gradient blows up."""
    keep_freed_memory()
    data = make_dataset(text, config)
    rng = np.random.default_rng(config.seed)
    params = init_params(config.cell, len(VOCAB), config.hidden, rng, config.dtype,
                         config.init_sigma, config.forget_bias)
    initial = {name: p.copy() for name, p in params.items()}
    n, B = len(data.X_train), config.batch_size
    history, samples, seconds = [], [], 0.0
    sample_at = {e for e in SAMPLE_EPOCHS if e <= config.epochs} | {config.epochs}
    for epoch in range(1, config.epochs + 1):
        start = time.perf_counter()
        order = rng.permutation(n)                # reshuffled every epoch
        total, norms = 0.0, []
        for i in range(0, n, B):
            batch = order[i:i + B]
            loss, norm = sgd_update(params, config, data.X_train[batch], data.Y_train[batch],
                                    f'epoch {epoch}, step {i // B + 1}')
            total += loss * len(batch)            # measured during the epoch, as d2l does
            norms.append(norm)
        val = None
        if config.validate or epoch == config.epochs:
            val = perplexity(evaluate(params, config.cell, data.X_val, data.Y_val, B))
        seconds += time.perf_counter() - start
        history.append(EpochRecord(
            epoch=epoch, train_ppl=perplexity(total / n), val_ppl=val, max_grad_norm=max(norms),
            clipped_fraction=sum(norm > config.clip for norm in norms) / len(norms)))
        if epoch in sample_at:                    # its own seed: sampling leaves training's rng alone
            sample_rng = np.random.default_rng([config.seed, epoch])
            greedy, temp_0_5, temp_1_0 = (
                predict(params, config.cell, config.prefix, config.num_preds, temp, sample_rng)
                for temp in (None,) + TEMPERATURES)
            samples.append(SampleRecord(epoch=epoch, greedy=greedy, temp_0_5=temp_0_5,
                                        temp_1_0=temp_1_0))
        if on_epoch is not None:
            on_epoch(history[-1])
    return Trained(config=config, params=params, initial=initial, data=data,
                   text=text[:data.num_chars],
                   record=train_record(config, text, data, params, history, samples, seconds))


@dataclass
class Trained:
    """A trained model: its record, and the arrays the measurements read."""
    config: Config
    record: object           # its TrainRecord
    params: dict             # the parameters after the last epoch
    initial: dict            # the parameters before the first
    data: Dataset
    text: str                # the preprocessed characters the windows are cut from


def train_record(config, text, data, params, history, samples, seconds):
    """The TrainRecord of a run: its epochs and samples, and what the page quotes of them."""
    seconds = max(seconds, 1e-9)
    measured = [row.val_ppl for row in history if row.val_ppl is not None]
    return TrainRecord(
        config=asdict(config), history=history, samples=samples, sample=samples[-1].greedy,
        seconds=seconds,
        tokens_per_second=config.epochs * len(data.X_train) * config.num_steps / seconds,
        num_params=num_params(params), vocab_size=len(VOCAB), num_chars=len(text),
        chars_used=data.num_chars, train_chars=config.num_train + config.num_steps,
        train_ppl=history[-1].train_ppl, val_ppl=history[-1].val_ppl,
        best_val=min(measured), worst_val=max(measured),
        clipped_share=sum(row.clipped_fraction for row in history) / len(history))


UPDATES_EVERY = 50  # training by updates (--updates): a row and samples every 50 updates


def batches(rng, n, B):
    """The training batches, epoch after epoch, as train() takes them: each epoch a new
    permutation of the n windows by rng, cut into batches of B (the last one shorter).
    Yields (epoch, the batch's window indices)."""
    epoch = 0
    while True:
        epoch += 1
        order = rng.permutation(n)
        for i in range(0, n, B):
            yield epoch, order[i:i + B]


def train_updates(text, config, on_row=None):
    """Train as train() does, but stop after config.updates SGD updates, the unit a page
    trains in. Every UPDATES_EVERY updates and after the last: the validation perplexity
    and samples, an UpdateRow passed to on_row. Returns the parameters and an UpdatesRun."""
    data = make_dataset(text, config)
    rng = np.random.default_rng(config.seed)
    params = init_params(config.cell, len(VOCAB), config.hidden, rng, config.dtype,
                         config.init_sigma, config.forget_bias)
    losses, norms, rows, start = [], [], [], time.perf_counter()
    order = batches(rng, len(data.X_train), config.batch_size)
    for u in range(1, config.updates + 1):
        epoch, batch = next(order)
        loss, norm = sgd_update(params, config, data.X_train[batch], data.Y_train[batch],
                                f'update {u}')
        losses.append(loss)
        norms.append(norm)
        if u % UPDATES_EVERY == 0 or u == config.updates:
            rows.append(update_row(params, config, data, u, epoch, losses, norms))
            if on_row is not None:
                on_row(rows[-1])
    return params, UpdatesRun(
        config=asdict(config), num_train=len(data.X_train), num_val=len(data.X_val),
        every=UPDATES_EVERY, temperatures=list(TEMPERATURES), losses=losses, grad_norms=norms,
        rows=rows, seconds=time.perf_counter() - start)


def update_row(params, config, data, u, epoch, losses, norms):
    """The row of update u: the training perplexity of the updates since the last row,
    the validation perplexity now, and what the model writes now (drawn with its own
    seed, [seed, u], as train() draws with [seed, epoch])."""
    k = (u - 1) % UPDATES_EVERY + 1               # the updates since the last row
    sample_rng = np.random.default_rng([config.seed, u])
    greedy, temp_0_5, temp_1_0 = (predict(params, config.cell, config.prefix, config.num_preds,
                                          temp, sample_rng) for temp in (None,) + TEMPERATURES)
    val = evaluate(params, config.cell, data.X_val, data.Y_val, config.batch_size)
    return UpdateRow(update=u, epoch=epoch, train_ppl=perplexity(sum(losses[-k:]) / k),
                     val_ppl=perplexity(val), max_grad_norm=max(norms[-k:]), greedy=greedy,
                     temp_0_5=temp_0_5, temp_1_0=temp_1_0)


def predict(params, cell, prefix, num_preds, temperature=None, rng=None):
    """Warm up on the prefix, then num_preds characters: the most likely one each time
    (greedy) if temperature is None, else drawn from softmax(logits / temperature) by
    rng (at temperature 1, the model's own distribution). The unknown token, which the
    training text never contains, is never drawn."""
    step, _ = STEPS[cell]
    ids, unk = list(token_ids(prefix)), VOCAB.index('<unk>')
    state = zero_state(params, cell, 1)
    table = params['W_x'] + params['b'][:, None]  # as in forward()
    for i in ids[:-1]:
        state, _ = step(params, table[:, [i]], state)
    for _ in range(num_preds):
        state, _ = step(params, table[:, [ids[-1]]], state)
        logits = (state[0] @ params['W_hq'] + params['b_q'])[0].astype(np.float64)
        if temperature is None:
            ids.append(int(logits.argmax()))
            continue
        P = np.exp((logits - logits.max()) / temperature)
        P[unk] = 0
        cumulative = np.cumsum(P)
        u = rng.random() * cumulative[-1]         # inverse of the distribution function
        ids.append(int(min(np.searchsorted(cumulative, u, side='right'), len(P) - 1)))
    return ''.join(VOCAB[i] for i in ids)


# ================================================================ each model trained once
#
# Not part of the model: what lets one run of the script train each model once,
# and train it faster.

# One process printing several reports (`--compare --distance`) trains each model
# once: trained models are kept here, by configuration and text.
_TRAINED = {}


def train_model(text, config=Config(), on_epoch=None):
    """Train config.cell on the text as d2l does, or return the model this process
    trained already with the same configuration on the same text (a model validated
    every epoch serves for one validated only at the end). on_epoch(EpochRecord) is
    called after each epoch (for a model trained before: once per epoch, at once)."""
    key, validated = (config, text), (replace(config, validate=True), text)
    if key not in _TRAINED and validated in _TRAINED:
        key = validated
    if key not in _TRAINED:
        _TRAINED[key] = train(text, config, on_epoch)
    elif on_epoch is not None:
        for row in _TRAINED[key].record.history:
            on_epoch(row)
    return _TRAINED[key]


def keep_freed_memory():
    """Ask the C library to keep freed memory for the next batch instead of handing it
    back to the system (glibc, on Linux; elsewhere this does nothing). Each batch makes
    some 50 MB of new arrays, and memory new from the system costs a page fault per
    4 KB: a third of the training time here (benchmarks/gru_speed.py --allocator)."""
    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(-1, 1 << 30)                 # M_TRIM_THRESHOLD: keep up to 1 GB
        libc.mallopt(-3, 1 << 25)                 # M_MMAP_THRESHOLD: big arrays from it too
    except (OSError, AttributeError, TypeError):
        pass


# ================================================================ measurements of the models
#
# What the chapter measures besides the perplexity: the gradient against finite
# differences, how far back a trained model's gradient reaches, what its units and
# gates do on the validation text. Each reads the steps above; none trains.

def named(params, cell):
    """The equations' parameters by name, {'W_xz': (V, h), 'W_hz': (h, h), 'b_z': (h,),
    ...}: views of the stacked ones."""
    views = {}
    for k, g in enumerate(GATES[cell]):
        views.update({'W_x' + g: params['W_x'][k], 'W_h' + g: params['W_h'][k],
                      'b_' + g: params['b'][k]})
    return {**views, 'W_hq': params['W_hq'], 'b_q': params['b_q']}


def num_params(params):
    return int(sum(p.size for p in params.values()))


GRADCHECK = dict(vocab_size=6, batch_size=3, num_steps=5, hidden=4, scale=0.5, eps=1e-5)


def random_problem(cell, seed, V, B, T, h, scale):
    """Random float64 weights, windows and initial state: a small problem to check on."""
    rng = np.random.default_rng(seed)
    params = {name: scale * rng.standard_normal(p.shape)
              for name, p in init_params(cell, V, h, rng, 'float64').items()}
    X, Y = rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))
    H = rng.standard_normal((2, B, h)) * scale
    return params, X, Y, ((H[0], H[1]) if cell == 'lstm' else (H[0],))


def compute_gradcheck(cells=CELLS, seed=0):
    """Every analytic gradient against central differences of the loss, float64, on a
    small random problem with a random initial state, parameter by parameter of the
    equations (W_xz, W_hz, b_z, ...)."""
    c = GRADCHECK
    rows = []
    for cell in cells:
        params, X, Y, state = random_problem(cell, seed, c['vocab_size'], c['batch_size'],
                                             c['num_steps'], c['hidden'], c['scale'])
        _, grads = loss_and_grads(params, cell, X, Y, state)
        numeric = {name: np.empty_like(p) for name, p in params.items()}
        for name, p in params.items():
            for i in np.ndindex(p.shape):
                old = p[i]
                p[i] = old + c['eps']
                plus, _ = loss_and_grads(params, cell, X, Y, state, need_grads=False)
                p[i] = old - c['eps']
                minus, _ = loss_and_grads(params, cell, X, Y, state, need_grads=False)
                p[i] = old
                numeric[name][i] = (plus - minus) / (2 * c['eps'])
        analytic, numeric = named(grads, cell), named(numeric, cell)
        for name, a in analytic.items():
            n = numeric[name]
            err = np.abs(a - n).max() / max((np.abs(a) + np.abs(n)).max(), 1e-300)
            rows.append(GradcheckRow(cell=cell, parameter=name, shape=list(a.shape),
                                     rel_error=float(err)))
    worst = max(r.rel_error for r in rows)
    return GradcheckRecord(eps=c['eps'], batch_size=c['batch_size'], num_steps=c['num_steps'],
                           hidden=c['hidden'], vocab_size=c['vocab_size'], rows=rows,
                           worst=worst, passed=bool(worst < 1e-6))


def as_float64(params):
    return {name: p.astype(np.float64) for name, p in params.items()}


def compute_gradient_distance(params, cell, X, Y, batch_size=1024):
    """How the gradient of the last step's loss reaches back: for k = 0 .. T-1, the mean
    over the windows X, Y (B, T) of ||dL_T / dH_{T-k}||, L_T being the window's own
    cross-entropy at its last step; float64. Returns (for H, for C): the second is None
    except for the LSTM."""
    params = as_float64(params)
    _, step_backward = STEPS[cell]
    B, T = X.shape
    sums = np.zeros((2, T))
    for i in range(0, B, batch_size):
        x, y = X[i:i + batch_size].T, Y[i:i + batch_size].T  # time-major
        Hs, _, caches = forward(params, cell, x, zero_state(params, cell, x.shape[1]))
        dlogits = np.exp(log_softmax(Hs[-1] @ params['W_hq'] + params['b_q']))
        dlogits[np.arange(x.shape[1]), y[-1]] -= 1  # L_T's gradient, window by window
        dstate = (dlogits @ params['W_hq'].T,) + ((np.zeros_like(Hs[-1]),) if cell == 'lstm' else ())
        ignored = {'W_h': np.zeros_like(params['W_h'])}  # the parameters' gradients
        for k in range(T):
            for j, d in enumerate(dstate):
                sums[j, k] += np.linalg.norm(d, axis=1).sum()  # dL_T / dH_{T-k} (and C)
            dstate, _ = step_backward(params, dstate, caches[T - 1 - k], ignored)
    return (sums[0] / B).tolist(), (sums[1] / B).tolist() if cell == 'lstm' else None


DISTANCE_KS = (0, 1, 2, 4, 8, 16, 31)


def compute_distance(models):
    """models: {name: Trained}. The gradient-distance curves of each, trained and at
    initialisation, over its validation windows."""
    curves = []
    for name, m in models.items():
        X, Y = m.data.X_val, m.data.Y_val
        trained_H, trained_C = compute_gradient_distance(m.params, m.config.cell, X, Y)
        init_H, init_C = compute_gradient_distance(m.initial, m.config.cell, X, Y)
        curves.append(DistanceCurve(model=name, cell=m.config.cell, trained=trained_H,
                                    init=init_H, trained_C=trained_C, init_C=init_C))
    first = next(iter(models.values()))
    T = first.config.num_steps
    return DistanceRecord(num_windows=len(first.data.X_val), num_steps=T,
                          ks=[k for k in DISTANCE_KS if k < T], curves=curves)


GATE_PLACES = {'gru': (('Z', 1), ('R', 2)),        # each gate's place in a step's cache
               'lstm': (('I', 2), ('F', 3), ('O', 4)),
               'rnn': ()}


def run_sequence(params, cell, ids):
    """Read one long sequence from a zero state: every step's state H (n, h), every
    step's gates {name: (n, h)}, and the caches of the steps."""
    Hs, _, caches = forward(params, cell, np.asarray(ids)[:, None], zero_state(params, cell, 1))
    gates = {name: np.array([c[place][0] for c in caches]) for name, place in GATE_PLACES[cell]}
    return Hs[:, 0], gates, caches


INSIDE_PASSAGE = 256      # characters shown (four lines of 64)
INSIDE_FEATURES = (       # (name, indicator of the current character c and the next one n)
    ('inside a word', lambda c, n: c.isalpha() and n.isalpha()),
    ('a space', lambda c, n: c == ' '),
)


def validation_text(m):
    """The characters of m's validation windows from the first whole word (the split
    from the training text falls mid-word): what --inside and --reach read."""
    text = m.text[m.config.num_train:]
    return text[text.find(' ') + 1:]


def passage_length(text):
    """The passage: the first INSIDE_PASSAGE characters of text or fewer, up to the end
    of a word (where the next character is a space)."""
    n = text.rfind(' ', 0, INSIDE_PASSAGE + 1)
    return n if n > 0 else min(INSIDE_PASSAGE, len(text))


def pearson(a, b):
    a, b = a - a.mean(), b - b.mean()
    denominator = math.sqrt(float(a @ a) * float(b @ b))
    return float(a @ b) / denominator if denominator else 0.0


def compute_inside(m):
    """The trained GRU m reading the validation text from a zero state: the units whose
    state correlates most with each feature over the whole text (a unit found for one
    feature is not searched again for the next), and the mean update gate and those
    units' values along its first whole words (passage_length)."""
    text = validation_text(m)
    Hs, gates, _ = run_sequence(as_float64(m.params), 'gru', token_ids(text))
    units, taken = [], set()
    for name, indicator in INSIDE_FEATURES:
        f = np.array([indicator(c, n) for c, n in zip(text, text[1:])], np.float64)
        r = np.abs([pearson(Hs[:-1, j], f) for j in range(Hs.shape[1])])
        best = int(np.argmax(np.where([j in taken for j in range(len(r))], -1, r)))
        taken.add(best)
        units.append(UnitRecord(feature=name, unit=best,
                                correlation=round(pearson(Hs[:-1, best], f), 4),
                                runner_up=best != int(np.argmax(r)), values=[]))
    n = passage_length(text)                      # the passage: the same run's first n steps
    for u in units:
        u.values = [round(float(v), 4) for v in Hs[:n, u.unit]]
    z_mean = [round(float(v), 4) for v in gates['Z'][:n].mean(axis=1)]
    return InsideRecord(passage=text[:n], passage_chars=n, z_mean=z_mean, units=units,
                        stretch_chars=len(text))


SATURATION_LOW, SATURATION_HIGH = 0.1, 0.9


def compute_saturation(models):
    """models: {name: Trained}, gated cells. The fraction of gate values near 0 and near 1
    on the validation windows, each read from a zero state, as Karpathy, Johnson and
    Fei-Fei (2015) count them."""
    gates = []
    for name, m in models.items():
        cell, X = m.config.cell, m.data.X_val
        values = {gate: [] for gate, _ in GATE_PLACES[cell]}
        for i in range(0, len(X), 1024):
            x = X[i:i + 1024].T
            _, _, caches = forward(m.params, cell, x, zero_state(m.params, cell, x.shape[1]))
            for gate, place in GATE_PLACES[cell]:
                values[gate] += [c[place] for c in caches]
        for gate, v in values.items():
            v = np.concatenate(v)                 # (windows * steps, h)
            left, right = v < SATURATION_LOW, v > SATURATION_HIGH
            gates.append(GateSaturation(
                model=name, gate=gate, left=float(left.mean()), right=float(right.mean()),
                unit_left=[round(float(x), 4) for x in left.mean(axis=0)],
                unit_right=[round(float(x), 4) for x in right.mean(axis=0)]))
    return SaturationRecord(low=SATURATION_LOW, high=SATURATION_HIGH, num_windows=len(X),
                            gates=gates)


REACH_BACK = 64  # connectivity: how many inputs back from each prediction


def compute_reach(params, cell, text):
    """Distill's connectivity, by the cell's own backward steps: for each character t of
    the text read from a zero state, the norm of the gradient of log P(next character)
    with respect to each earlier one-hot input x_(t-k), k = 0 .. REACH_BACK - 1.
    All predictions at once: row t of a batch carries prediction t's gradient back."""
    params, (_, step_backward) = as_float64(params), STEPS[cell]
    ids, n = token_ids(text), len(text) - 1       # the last character has no next one
    Hs, _, caches = run_sequence(params, cell, ids[:n])
    dlogits = -np.exp(log_softmax(Hs @ params['W_hq'] + params['b_q']))
    dlogits[np.arange(n), ids[1:]] += 1           # d log P(y_t) / d logits_t, row t
    dH_out = dlogits @ params['W_hq'].T           # (n, h): what prediction t sends to H_t
    dstate = zero_state(params, cell, n)          # row t: d log P(y_t) / d(state), carried back
    ignored = {'W_h': np.zeros_like(params['W_h'])}
    reach = np.zeros((n, REACH_BACK))
    for s in reversed(range(n)):
        dstate[0][s] += dH_out[s]                 # prediction s starts at its own step
        cache = [np.broadcast_to(c, (n, c.shape[1])) for c in caches[s]]
        dstate, dA = step_backward(params, dstate, cache, ignored)
        dx = np.linalg.norm(sum(dA[g] @ params['W_x'][g].T for g in range(len(dA))), axis=1)
        t = np.arange(s, min(n, s + REACH_BACK))  # the predictions s reaches, k = t - s back
        reach[t, t - s] = dx[t]
    return [[float(f'{v:.3g}') for v in row[:min(t + 1, REACH_BACK)]]
            for t, row in enumerate(reach)]


def mean_reach(reach):
    """reach[.][k] averaged over the predictions that have an input k back, 3 digits."""
    return [float(f'{np.mean([row[k] for row in reach if len(row) > k]):.3g}')
            for k in range(max(map(len, reach)))]


def compute_reach_cells(models):
    """models: {name: Trained}. The connectivity of each over the passage of --inside,
    read from a zero state, and its mean over the passage (compute_reach)."""
    text = validation_text(next(iter(models.values())))
    passage = text[:passage_length(text) + 1]     # + 1: the last shaded character's next one
    curves = []
    for name, m in models.items():
        reach = compute_reach(m.params, m.config.cell, passage)
        curves.append(ReachCurve(model=name, cell=m.config.cell, reach=reach,
                                 mean_reach=mean_reach(reach)))
    return ReachRecord(passage=passage[:-1], next_char=passage[-1], reach_back=REACH_BACK,
                       models=curves)


def compute_export(m):
    """The weights of the trained GRU m by the equations' names (float32 values, shortest
    form) and its greedy sample from them in float64."""
    weights = {name: np.vectorize(lambda v: float(str(v)))(p).tolist()
               for name, p in named(m.params, 'gru').items()}
    return ExportRecord(
        config=asdict(m.config), vocab=list(VOCAB),
        preprocessing="re.sub('[^A-Za-z]+', ' ', text).lower(); characters outside the "
                      "vocabulary are '<unk>'",
        weights=weights, prefix=m.config.prefix,
        greedy=predict(as_float64(m.params), 'gru', m.config.prefix, m.config.num_preds))


def compute_init(config):
    """What train() and train_updates() start from, for a page to start there too: the
    initial parameters in float64 (W_x, W_h, b, W_hq, b_q, each flattened in C order, as
    little-endian bytes in base64) and the generator's state after drawing them, from
    which the permutations of the windows follow."""
    rng = np.random.default_rng(config.seed)
    params = init_params(config.cell, len(VOCAB), config.hidden, rng, 'float64',
                         config.init_sigma, config.forget_bias)
    flat = np.concatenate([p.ravel() for p in params.values()]).astype('<f8')
    state = rng.bit_generator.state
    return InitRecord(cell=config.cell, hidden=config.hidden, seed=config.seed, vocab=list(VOCAB),
                      shapes={name: list(p.shape) for name, p in params.items()},
                      float64=base64.b64encode(flat.tobytes()).decode('ascii'),
                      state=str(state['state']['state']), inc=str(state['state']['inc']),
                      has_uint32=state['has_uint32'], uinteger=state['uinteger'])


# ================================================================ the comparison
#
# The comparison of 14.5, the one measurement that trains: each cell at d2l's learning
# rate and at the best of a pilot (benchmarks/gru_lr_pilot.md: one seed at 1, 2, 4 and
# 8; 0.5 to 4 for the plain RNN), over several seeds where the budget of the site's
# build allows.

COMPARE = (  # (model, cell, forget-gate bias, learning rate, seeds)
    ('GRU', 'gru', 0.0, 4.0, 3),                   # d2l's rate, and the pilot's best
    ('LSTM', 'lstm', 0.0, 4.0, 1),                 # d2l's rate
    ('LSTM', 'lstm', 0.0, 8.0, 3),                 # the pilot's best
    ('plain RNN', 'rnn', 0.0, 1.0, 1),             # d2l's rate
    ('plain RNN', 'rnn', 0.0, 2.0, 3),             # the pilot's best
)


def compare_configs(base, cell, forget_bias, lr, seeds):
    """The runs of one line of COMPARE: the first seed validated every epoch (its curve is
    plotted, and its run is the one `gru.py --cell CELL --lr LR` prints), the others at
    the last epoch only."""
    return [replace(base, cell=cell, forget_bias=forget_bias, lr=lr, seed=base.seed + k,
                    validate=k == 0) for k in range(seeds)]


def compute_compare(base, text):
    """Each line of COMPARE trained over its seeds in base's configuration: where each ends
    after the last epoch, and each cell at d2l's learning rate and at its best."""
    models = []
    for name, cell, forget_bias, lr, seeds in COMPARE:
        trained = [train_model(text, c) for c in compare_configs(base, cell, forget_bias, lr, seeds)]
        val, train = [m.record.val_ppl for m in trained], [m.record.train_ppl for m in trained]
        models.append(ComparedModel(
            model=name, cell=cell, forget_bias=forget_bias, lr=lr, d2l_lr=lr == D2L_LR[cell],
            num_params=trained[0].record.num_params, seeds=[m.config.seed for m in trained],
            val_ppl=val, train_ppl=train, val_mean=sum(val) / len(val), val_low=min(val),
            val_high=max(val), train_mean=sum(train) / len(train),
            seconds=sum(m.record.seconds for m in trained), history=trained[0].record.history))
    d2l = {m.cell: m for m in models if m.d2l_lr}
    best = {m.cell: min((n for n in models if n.cell == m.cell), key=lambda n: n.val_mean)
            for m in models}
    gated = [best[cell].val_high for cell in ('gru', 'lstm') if cell in best]
    return CompareRecord(epochs=base.epochs, models=models, gru=d2l.get('gru'),
                         lstm=d2l.get('lstm'), rnn=d2l.get('rnn'), gru_best=best.get('gru'),
                         lstm_best=best.get('lstm'), rnn_best=best.get('rnn'),
                         gated_worst=max(gated, default=None))


# ===========================================================================
# What the site prints: the records the steps above return, the reports (each calls
# its step, report_gradcheck compute_gradcheck, and prints the record it gets back),
# the command line. Everything above computes; everything below only formats.
# ===========================================================================

@dataclass
class EpochRecord:
    """One epoch of training."""
    epoch: int
    train_ppl: float         # perplexity on the training batches, measured during the epoch
    val_ppl: Optional[float]  # on the validation windows, after the epoch (None: not measured)
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
    num_chars: int           # length of the whole corpus after preprocessing
    chars_used: int          # the first characters of it, which the windows are cut from
    train_chars: int         # the first characters of those, which the training windows cover
    train_ppl: float         # the last epoch's training perplexity
    val_ppl: float           # .. and validation perplexity
    best_val: float          # the lowest and highest validation perplexity measured
    worst_val: float
    clipped_share: float     # fraction of all training steps whose gradient was clipped


@dataclass
class UpdateRow:
    """Training by updates: every UPDATES_EVERY updates, and after the last."""
    update: int
    epoch: int               # the pass over the training windows the update belongs to
    train_ppl: float         # perplexity of the training batches since the previous row
    val_ppl: float           # on the validation windows, after the update
    max_grad_norm: float     # largest gradient norm since the previous row, before clipping
    greedy: str              # what the model writes after the prefix, greedy
    temp_0_5: str            # drawn at temperature 0.5, by default_rng([seed, update])
    temp_1_0: str            # drawn at temperature 1, by the same generator after it


@dataclass
class UpdatesRun:
    """`python3 gru.py --updates N`: every update's loss, and the rows."""
    config: dict
    num_train: int           # training windows
    num_val: int             # validation windows
    every: int               # UPDATES_EVERY
    temperatures: list       # the samples' (TEMPERATURES)
    losses: list             # the loss of every update's batch, before the update
    grad_norms: list         # the norm of every update's gradient, before clipping
    rows: list               # an UpdateRow every UPDATES_EVERY updates and after the last
    seconds: float           # wall time of the updates, validation and samples included


@dataclass
class InitRecord:
    """The initial parameters of a run and the random generator's state after them."""
    cell: str
    hidden: int
    seed: int
    vocab: list
    shapes: dict             # W_x (gates, V, h), W_h (gates, h, h), b, W_hq, b_q
    float64: str             # their values, in that order, C order, little-endian, base64
    state: str               # numpy's PCG64 after drawing them: its 128-bit state
    inc: str                 # .. and increment, as decimal text
    has_uint32: int          # .. and its buffered half of a 64-bit output
    uinteger: int


@dataclass
class GradcheckRow:
    cell: str
    parameter: str
    shape: list              # the parameter's shape
    rel_error: float         # max |a - n| / max(|a| + |n|), a analytic, n numerical


@dataclass
class GradcheckRecord:
    eps: float               # the central differences' step
    batch_size: int
    num_steps: int
    hidden: int
    vocab_size: int
    rows: list               # a GradcheckRow per parameter of each cell
    worst: float             # the largest rel_error
    passed: bool             # worst < 1e-6


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


@dataclass
class UnitRecord:
    feature: str             # what the unit was searched for
    unit: int                # the unit of H, 0 .. h-1
    correlation: float       # Pearson r of H[unit] with the feature over the stretch
    runner_up: bool          # the best unit for the feature was found for an earlier one
    values: list             # H[unit] after each character of the passage


@dataclass
class InsideRecord:
    passage: str             # the first whole words of the validation text
    passage_chars: int       # .. how many
    z_mean: list             # mean of the update gate Z over the units, per character
    units: list              # a UnitRecord per feature
    stretch_chars: int       # the length of validation text the correlations are over


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


@dataclass
class ExportRecord:
    """The trained GRU of d2l's configuration, for a reader (or a page) to run elsewhere."""
    config: dict             # its Config
    vocab: list              # token i of the inputs and outputs
    preprocessing: str       # what is done to a text before it is read
    weights: dict            # the equations' parameters: {'W_xz': rows of numbers, ...}
    prefix: str
    greedy: str              # the prefix and its greedy continuation, from these weights


@dataclass
class ReachCurve:
    model: str               # 'GRU', 'LSTM', 'plain RNN'
    cell: str
    reach: list              # reach[t][k]: ||d log P(passage[t+1]) / d x_(t-k)||
    mean_reach: list         # reach[.][k] averaged over the characters that have k


@dataclass
class ReachRecord:
    """How far back each prediction over the passage of --inside reaches, in each model."""
    passage: str             # the validation passage of --inside
    next_char: str           # the character after it, the last prediction's target
    reach_back: int          # k = 0 .. reach_back - 1 (fewer at the start)
    models: list             # a ReachCurve per trained model


@dataclass
class ComparedModel:
    model: str               # GRU, LSTM, plain RNN
    cell: str
    forget_bias: float
    lr: float
    d2l_lr: bool             # lr is d2l's learning rate for the cell
    num_params: int
    seeds: list              # the seeds trained
    val_ppl: list            # validation perplexity at the last epoch, one per seed
    train_ppl: list          # training perplexity of the last epoch, one per seed
    val_mean: float          # the mean of val_ppl, and its range
    val_low: float
    val_high: float
    train_mean: float
    seconds: float           # training time, all seeds
    history: list            # the first seed's EpochRecords (validated every epoch)


@dataclass
class CompareRecord:
    epochs: int
    models: list             # a ComparedModel per line of COMPARE, in its order
    gru: Optional[ComparedModel]  # the same by name: each cell at d2l's learning rate ..
    lstm: Optional[ComparedModel]
    rnn: Optional[ComparedModel]
    gru_best: Optional[ComparedModel]  # .. and at the rate it ended lowest at (the pilot's
    lstm_best: Optional[ComparedModel]  # best, if the seeds agree with it)
    rnn_best: Optional[ComparedModel]
    gated_worst: Optional[float]  # the highest val_ppl of any seed of the gated cells' bests


def format_ppl(x):
    if x is None:
        return '-'                                 # not measured
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


def format_history_row(row, config):
    cells = (str(row.epoch), format_ppl(row.train_ppl), format_ppl(row.val_ppl),
             format_norm(row.max_grad_norm), f'{100 * row.clipped_fraction:.0f}%')
    return format_table(HISTORY_HEADER, [cells], 'rrrrr', history_widths(config)).splitlines()[-1]


UPDATES_HEADER = ('update', 'epoch', 'train ppl', 'val ppl', 'max grad norm')


def updates_widths(config):
    return [max(6, len(str(config.updates))), 5, 9, 9, 13]


def format_update_row(row, config):
    cells = (str(row.update), str(row.epoch), format_ppl(row.train_ppl), format_ppl(row.val_ppl),
             format_norm(row.max_grad_norm))
    return format_table(UPDATES_HEADER, [cells], 'rrrrr', updates_widths(config)).splitlines()[-1]


def format_samples_table(samples, unit='epoch'):
    """What the model writes after the prefix as it learns: a row per sampled epoch (or
    update)."""
    header = (unit, 'greedy') + tuple(f'temperature {t:g}' for t in TEMPERATURES)
    rows = [(getattr(s, unit), quoted(s.greedy), quoted(s.temp_0_5), quoted(s.temp_1_0))
            for s in samples]
    return format_table(header, rows, 'rlll')


def format_config_table(config, text, data):
    """The data and the configuration, as `python3 gru.py` prints them first."""
    n = num_params(init_params(config.cell, len(VOCAB), config.hidden, np.random.default_rng(0)))
    shown = ['unknown' if t == '<unk>' else repr(t) for t in VOCAB]  # no <tag> in markdown
    init = f'weights normal(0, {config.init_sigma:g}), biases zero'
    length = plural(config.updates, 'update') if config.updates else plural(config.epochs, 'epoch')
    if config.cell == 'lstm':
        init += (f', forget-gate bias b_f = {config.forget_bias:g}' if config.forget_bias
                 else ' (forget-gate bias b_f too)')
    rows = [
        ('corpus', f'{len(text):,} characters after preprocessing, of which the windows use '
                   f'the first {data.num_chars:,}'),
        ('vocabulary', f"{len(VOCAB)} tokens: {', '.join(shown[:3])} .. {shown[-1]}"),
        ('examples', f'{len(data.X_train):,} training and {len(data.X_val):,} validation '
                     f'windows of {config.num_steps} + 1 characters'),
        ('batch', f"{config.batch_size:,} window{'s' * (config.batch_size != 1)}, "
                  f'reshuffled every epoch'),
        ('model', f'{MODEL_NAMES[config.cell]}, hidden size {config.hidden}, {n:,} parameters'),
        ('initialisation', init),
        ('optimiser', f'SGD, learning rate {config.lr:g}, gradient clipped to norm '
                      f'{config.clip:g}'),
        ('training', f'{length}, seed {config.seed}, {config.dtype}'),
    ]
    return format_table(('item', 'value'), rows, 'll')


REACH_KS = (0, 1, 2, 4, 8, 16, 32, 63)  # the distances --reach prints


def quantised(values, low, high):
    """Each value as a digit 0-9: which tenth of [low, high] it falls in."""
    return ''.join(str(min(9, max(0, int((v - low) / (high - low) * 10)))) for v in values)


INSIDE_WIDTH = 64  # characters per line of the passage


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


# ---------------------------------------------------------------- the reports

SETTINGS = ('epochs', 'seed', 'hidden', 'batch_size', 'clip', 'num_train', 'num_val', 'updates')


def base_config(args, config=None):
    """d2l's configuration (or config: tests pass small ones) with the command line's
    settings (--epochs, --seed, --hidden, ...; --float64)."""
    config = config or Config()
    if args.updates is not None and args.epochs is not None:
        raise Refused('--updates and --epochs both say how long to train: give one')
    config = replace(config, **{name: getattr(args, name) for name in SETTINGS
                                if getattr(args, name) is not None})
    return replace(config, dtype='float64') if args.float64 else config


def corpus_for(args):
    """The preprocessed text of --corpus, or of the default corpus."""
    return read_corpus(args.corpus or CORPUS)


def model_config(args, base, cell, forget_bias=0.0, lr=None):
    """base for one cell, at lr, or --lr, or d2l's learning rate for the cell."""
    lr = lr if lr is not None else args.lr if args.lr is not None else D2L_LR[cell]
    return replace(base, cell=cell, lr=lr, forget_bias=forget_bias)


def d2l_models(args, base, cells=CELLS):
    """The language models of the chapter in base's configuration (d2l's): {name: Trained}."""
    text = corpus_for(args)
    return {MODEL_NAMES[cell]: train_model(text, model_config(args, base, cell))
            for cell in cells}


def report_train(args, out, config=None):
    """Train one model: the configuration, a row per epoch, samples as it learns, the time."""
    if args.forget_bias is not None and args.cell != 'lstm':
        raise Refused("--forget-bias is the LSTM's forget-gate bias: add --cell lstm")
    cell = args.cell or 'gru'
    config = model_config(args, base_config(args, config), cell, args.forget_bias or 0.0)
    text = corpus_for(args)
    data = make_dataset(text, config)             # (refused here if the text is too short)
    out.text(f'{MODEL_NAMES[cell]} language model, numpy, from scratch')
    out.table('config', format_config_table(config, text, data))
    if config.updates:
        return print_updates(out, config, text)
    out.table('history', format_table(HISTORY_HEADER, [], 'rrrrr', history_widths(config)))
    m = train_model(text, config, lambda row: out.row('history', format_history_row(row, config)))
    out.text(f'samples: what the model writes after "{config.prefix}" ({config.num_preds} '
             f'characters) as it learns, greedy and drawn at two temperatures')
    out.table('samples', format_samples_table(m.record.samples))
    out.text(f"time: {m.record.seconds:.1f} s for {plural(config.epochs, 'epoch')}, "
             f'{m.record.tokens_per_second:,.0f} training tokens/s')
    return m.record


def print_updates(out, config, text):
    """Train for config.updates updates, as the page does: a row every UPDATES_EVERY."""
    out.table('updates', format_table(UPDATES_HEADER, [], 'rrrrr', updates_widths(config)))
    _, run = train_updates(text, config,
                           lambda row: out.row('updates', format_update_row(row, config)))
    out.text(f'samples: what the model writes after "{config.prefix}" ({config.num_preds} '
             f'characters) every {UPDATES_EVERY} updates and after the last, greedy and '
             f'drawn at two temperatures')
    out.table('samples', format_samples_table(run.rows, 'update'))
    out.text(f'time: {run.seconds:.1f} s for {plural(config.updates, "update")}, validation '
             f'and samples included')
    return run


def report_init(args, out, config=None):
    """The initial parameters of a run and the generator's state after them."""
    config = base_config(args, config)
    record = compute_init(config)
    n = sum(math.prod(shape) for shape in record.shapes.values())
    out.text(f'the initial parameters of the {MODEL_NAMES[config.cell]} of hidden size '
             f'{config.hidden}, seed {config.seed}: {n:,} float64 numbers, '
             f'{len(record.float64):,} characters of base64')
    out.text(f"numpy's PCG64 after drawing them: state {record.state}, increment "
             f'{record.inc}, buffered half {record.uinteger if record.has_uint32 else "none"}')
    return record


def report_gradcheck(args, out):
    """Every analytic gradient against central finite differences, float64."""
    record = compute_gradcheck((args.cell,) if args.cell else CELLS,
                               args.seed if args.seed is not None else 0)
    out.text(f"relative error max abs(a - n) / max(abs(a) + abs(n)) over each parameter's "
             f"entries, a the analytic gradient (backpropagation through time), n the central "
             f"difference with step {record.eps:g}; float64, batch {record.batch_size}, "
             f"{record.num_steps} steps, hidden {record.hidden}, vocabulary "
             f"{record.vocab_size}, random initial state")
    rows = [(r.cell, r.parameter, ' x '.join(map(str, r.shape)), f'{r.rel_error:.1e}')
            for r in record.rows]
    out.table('gradcheck', format_table(('cell', 'parameter', 'shape', 'relative error'), rows,
                                        'llrr'))
    out.text(f'worst: {record.worst:.1e} ({"well under" if record.passed else "NOT under"} 1e-6)')
    return record


def report_distance(args, out, config=None):
    """How far back the last step's gradient reaches, trained and at initialisation."""
    record = compute_distance(d2l_models(args, base_config(args, config)))
    out.text(f'mean over {record.num_windows:,} validation windows of the norm of dL_T / '
             f'dH_(T-k): how strongly the loss at the last of the {record.num_steps} steps '
             f'reaches the state k steps earlier; trained (after the last epoch) and at '
             f'initialisation')
    header = ['k'] + [f'{c.model} {when}' for c in record.curves for when in ('trained', 'init')]
    rows = [[str(k)] + [f'{getattr(c, when)[k]:.2e}' for c in record.curves
                        for when in ('trained', 'init')] for k in record.ks]
    out.table('distance', format_table(header, rows, 'r' * len(header)))
    return record


def report_inside(args, out, config=None):
    """The trained GRU's update gate and two of its units, character by character."""
    models = d2l_models(args, base_config(args, config), ('gru',))
    record = compute_inside(models[MODEL_NAMES['gru']])
    out.text(f'the trained GRU reading the first {len(record.passage)} characters of the '
             f'validation text (from its first whole word) from a zero state; under each '
             f'character (spaces shown as _), one digit per signal: Z, the update gate '
             f'averaged over the units, in tenths of [0, 1] (9: Z above 0.9, the state is '
             f'kept); unit j, the state H[j], in tenths of [-1, 1]')
    out.text(format_inside_passage(record))
    rows = [(f'unit {u.unit}', f'the current character is {u.feature}'
             + (' (a letter before a letter)' if u.feature == 'inside a word' else '')
             + (' (the best unit for it is shown above)' if u.runner_up else ''),
             f'{u.correlation:+.2f}') for u in record.units]
    out.table('inside', format_table(
        ('unit', f'tracks (Pearson r over {record.stretch_chars:,} characters)', 'r'), rows, 'llr'))
    return record


def report_saturation(args, out, config=None):
    """How often each gate of the trained GRU and LSTM is near 0 or near 1."""
    record = compute_saturation(d2l_models(args, base_config(args, config), ('gru', 'lstm')))
    out.text(f'fraction of gate values, over every unit at every step of the '
             f'{record.num_windows:,} validation windows (each read from a zero state), '
             f'below {record.low:g} (left-saturated) and above {record.high:g} '
             f'(right-saturated)')
    rows = [(g.model, g.gate, f'{100 * g.left:.1f}%', f'{100 * g.right:.1f}%',
             f'{100 * (1 - g.left - g.right):.1f}%') for g in record.gates]
    out.table('saturation', format_table(('model', 'gate', f'below {record.low:g}',
                                          f'above {record.high:g}', 'in between'), rows, 'llrrr'))
    return record


def report_compare(args, out, config=None):
    """The GRU, the LSTM and the plain RNN, each at d2l's learning rate and at the pilot's
    best, over several seeds: where each ends after the last epoch."""
    base, text = base_config(args, config), corpus_for(args)  # (refused before printing)
    runs = sum(seeds for *_, seeds in COMPARE)
    out.text(f"training {runs} models for {plural(base.epochs, 'epoch')} each: "
             + '; '.join(f'{name} at learning rate {lr:g}, {plural(seeds, "seed")}'
                         for name, _, _, lr, seeds in COMPARE))
    record = compute_compare(base, text)
    at = f'epoch {record.epochs}'
    rows = [(m.model, f'{m.num_params:,}', f"{m.lr:g}" + (" (d2l's)" if m.d2l_lr else ''),
             str(len(m.seeds)), mean_and_range(m.val_mean, m.val_low, m.val_high, len(m.seeds)),
             mean_and_range(m.train_mean, min(m.train_ppl), max(m.train_ppl), len(m.seeds)))
            for m in record.models]
    out.table('compare', format_table(('model', 'parameters', 'learning rate', 'seeds',
                                       f'val ppl, {at}', f'train ppl, {at}'), rows, 'lrrrrr'))
    out.text('time: ' + ', '.join(f'{m.model} at {m.lr:g} {m.seconds:.1f} s'
                                  for m in record.models))
    return record


def mean_and_range(mean, low, high, n):
    return format_ppl(mean) if n == 1 else f'{format_ppl(mean)} ({format_ppl(low)}-{format_ppl(high)})'


def report_export(args, out, config=None):
    """The trained GRU's weights by name, its vocabulary, and its greedy sample."""
    m = d2l_models(args, base_config(args, config), ('gru',))[MODEL_NAMES['gru']]
    record = compute_export(m)
    sizes = ', '.join(f"{name} {' x '.join(map(str, np.shape(w)))}"
                      for name, w in record.weights.items())
    out.text(f'the GRU of `python3 gru.py` (seed {m.config.seed}, epoch {m.config.epochs}): '
             f'{num_params(m.params):,} parameters, float32: {sizes}')
    out.text(f'greedy, from these weights in float64: {quoted(record.greedy)}')
    return record


def report_reach(args, out, config=None):
    """How far back each prediction reaches in the three trained models, on average."""
    record = compute_reach_cells(d2l_models(args, base_config(args, config)))
    out.text(f'the norm of the gradient of log P(next character) with respect to the input '
             f'k characters back, mean over the {len(record.passage)} predictions over the '
             f'passage of --inside (those that have an input k back), each model reading '
             f'from a zero state')
    header = ['k'] + [c.model for c in record.models]
    rows = [[str(k)] + [f'{c.mean_reach[k]:.2e}' for c in record.models]
            for k in REACH_KS if k < record.reach_back]
    out.table('reach', format_table(header, rows, 'r' * len(header)))
    return record


REPORTS = {  # flag -> (what it prints, the function), in the order of the chapter
    'train': ("train one model in d2l's configuration: a row per epoch, then samples", report_train),
    'gradcheck': ('every hand-written gradient against central finite differences, float64',
                  report_gradcheck),
    'compare': ("the GRU, the LSTM and the plain RNN, at d2l's and the pilot's best learning "
                "rate, over seeds", report_compare),
    'distance': ("how far back the last step's gradient reaches, trained and at initialisation",
                 report_distance),
    'inside': ("the trained GRU's update gate and two units it found, character by character",
               report_inside),
    'saturation': ('how often the gates of the trained GRU and LSTM sit near 0 or near 1',
                   report_saturation),
    'reach': ("how far back each prediction over the passage of --inside reaches, in the "
              "three trained models", report_reach),
    'export': ("the trained GRU's weights by name and its greedy sample", report_export),
    'init': ("the initial parameters of a run in float64 and numpy's generator after them, "
             "for a page to start from", report_init),
}
DEFAULT = ('train',)  # what runs with no flag

TRAINING_REPORTS = ('train', 'compare', 'distance', 'inside', 'saturation', 'reach',
                    'export')
OPTIONS = {  # option -> the reports it changes; with none of them, it is refused
    'cell': ('train', 'gradcheck'),
    'epochs': TRAINING_REPORTS,
    'lr': ('train',),
    'seed': TRAINING_REPORTS + ('gradcheck', 'init'),
    'forget_bias': ('train',),
    'corpus': TRAINING_REPORTS,
    'hidden': ('train', 'init'),
    **{option: ('train',) for option in ('batch_size', 'clip', 'num_train', 'num_val',
                                          'updates', 'float64')},
}


SECONDS_PER_EPOCH = {'gru': 0.45, 'lstm': 0.5, 'rnn': 0.25}  # one model on one core, measured
MODELS_OF = {'distance': CELLS, 'inside': ('gru',), 'saturation': ('gru', 'lstm'),
             'reach': CELLS, 'export': ('gru',)}  # the models a report trains (d2l_models'), besides its own


def estimate_seconds(args):
    """About how long the chosen reports train for, each model once (the harness refuses a
    command past an hour)."""
    cells = {args.cell or 'gru'} if 'train' in args.chosen else set()
    cells.update(*(MODELS_OF[flag] for flag in args.chosen if flag in MODELS_OF))
    models = [(cell, 1) for cell in cells]
    if 'compare' in args.chosen:
        models += [(cell, seeds) for _, cell, _, _, seeds in COMPARE]
    per_epoch = sum(SECONDS_PER_EPOCH[cell] * seeds for cell, seeds in models)
    return per_epoch * (args.epochs or Config.epochs)


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
                    help='seed for initialisation, shuffling and sampling (--compare: the '
                         'first of its seeds), and for the --gradcheck problem (default 0)')
    ap.add_argument('--forget-bias', type=number(float, -10.0, 10.0), metavar='B',
                    help="the LSTM's initial forget-gate bias b_f, -10 to 10, with --cell lstm "
                         "(default 0, d2l's)")
    ap.add_argument('--corpus', type=Path, metavar='PATH',
                    help=f'the text to train on, at most {MAX_FILE_BYTES:,} bytes of UTF-8 '
                         f'(default: timemachine.txt next to gru.py)')
    ap.add_argument('--updates', type=number(int, 1, 10 ** 7), metavar='N',
                    help='train for N SGD updates instead of --epochs, with a row every '
                         f'{UPDATES_EVERY} (as the page trains)')
    ap.add_argument('--float64', action='store_true',
                    help='train in float64 (default float32), as the page does')
    ap.add_argument('--hidden', type=number(int, 1, 1024), metavar='H',
                    help=f'hidden units, 1 to 1024 (default {Config.hidden})')
    ap.add_argument('--batch-size', type=number(int, 1, 10 ** 5), metavar='B',
                    help=f'windows per SGD update (default {Config.batch_size})')
    ap.add_argument('--clip', type=number(float, 1e-6, 1e6), metavar='C',
                    help=f'clip the gradient to this norm (default {Config.clip:g})')
    ap.add_argument('--num-train', type=number(int, 1, 10 ** 7), metavar='N',
                    help=f'training windows: the first N (default {Config.num_train:,})')
    ap.add_argument('--num-val', type=number(int, 1, 10 ** 7), metavar='N',
                    help=f'validation windows: the next N (default {Config.num_val:,})')



# ---------------------------------------------------------------------------
# The harness: the same in every script of the site, checked when it is built.
# Printing, the command line, main(). Above it: this script's own code.
# ---------------------------------------------------------------------------

NAME = os.path.basename(__file__)  # rnn.py, as the command line names it
MAX_FILE_BYTES = 10_000_000  # a file named on the command line: a larger one is refused
LONGEST_HOURS = 1  # a command estimate_seconds(args) puts past this is refused


class Printer:
    """Prints paragraphs and tables, a blank line between; keeps each table by name."""

    def __init__(self, stream=None):
        self.stream, self.tables, self.gap = stream or sys.stdout, {}, ""

    def text(self, paragraph):  # lines over 78 characters wrapped, but not a `time:` line
        self.block("\n".join(textwrap.fill(line, 78, break_on_hyphens=False)
                             if len(line) > 78 and not line.startswith("time:") else line
                             for line in paragraph.split("\n")))

    def table(self, name, table):  # the table can grow: row(name, line) prints one more row
        assert name not in self.tables, f"table {name!r} printed twice"
        self.tables[name] = table
        self.block(table)

    def row(self, name, line):
        self.tables[name] += "\n" + line
        print(line, file=self.stream, flush=True)

    def block(self, text):  # a blank line before every block but the first
        print(self.gap + text, file=self.stream, flush=True)
        self.gap = "\n"


def format_table(header, rows, align, min_widths=None):
    """A markdown table; align: 'l' or 'r' per column; min_widths: to print row by row."""
    cells = [[str(c) for c in row] for row in (header, *rows)]
    widths = [max(3, (min_widths or [0] * len(header))[j], *(len(row[j]) for row in cells))
              for j in range(len(header))]
    lines = ["| " + " | ".join(c.rjust(w) if a == "r" else c.ljust(w)
                               for c, w, a in zip(row, widths, align)) + " |" for row in cells]
    rule = "|" + "|".join("-" * (w + 1) + ":-"[a != "r"] for w, a in zip(widths, align)) + "|"
    return "\n".join([lines[0], rule, *lines[1:]])


def number(kind, low, high):  # an argparse type: a number of kind (int or float), low to high
    def check(text):  # not a number: kind raises ValueError, "invalid int value: 'x'"
        if not low <= kind(text) <= high:  # (nan fails it too)
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {text}")
        return kind(text) + 0  # -0.0 becomes 0.0 (numpy refuses a scale of -0.0)
    check.__name__ = kind.__name__
    return check


def read_file(path, what):
    """The text of a file named on the command line (what: "the corpus"), or Refused in one
    line. At most MAX_FILE_BYTES + 1 bytes are read, so /dev/zero stops there."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) <= MAX_FILE_BYTES:
            return data.decode("utf-8")
        why = f"larger than {MAX_FILE_BYTES:,} bytes (cut the file down)"
    except OSError as exc:
        why = exc.strerror or exc
    except UnicodeDecodeError as exc:
        why = f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    raise Refused(f"cannot read {what} {path}: {why}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n")[0])
    for flag, (help_text, _) in REPORTS.items():
        parser.add_argument(f"--{flag}", action="store_true", help=help_text)
    add_options(parser)
    args = parser.parse_args(argv)
    args.chosen = [flag for flag in REPORTS if getattr(args, flag)] or list(DEFAULT)
    for option, users in OPTIONS.items():  # an option no chosen report uses is an error
        if getattr(args, option) not in (None, False) and not set(users) & set(args.chosen):
            parser.error(f"--{option.replace('_', '-')} has no effect without --"
                         + " or --".join(users))
    return args


def run(args, out):
    """Prints the chosen reports to out (a Printer), two blank lines apart; {flag: record}.
    Refuses first, with its estimate, a command estimate_seconds puts past LONGEST_HOURS."""
    hours = estimate_seconds(args) / 3600
    if hours > LONGEST_HOURS:
        raise Refused(f"this command would run for about {hours:.1f} hours (an estimate; over "
                      f"{LONGEST_HOURS:g} h is refused): ask for fewer steps, epochs or lags")
    records = {}
    for flag in args.chosen:
        out.gap = "\n\n" if records else ""
        records[flag] = REPORTS[flag][1](args, out)
    return records


def main(argv=None):
    try:
        args = parse_args(argv)
        if np is None:
            raise Refused("needs numpy: pip install numpy")
        records = run(args, Printer())
    except KeyboardInterrupt:  # Ctrl-C: one line, and the status a shell expects (128 + 2)
        print(f"{NAME}: interrupted", file=sys.stderr)
        return 130
    except (Refused, OSError) as exc:  # bad input; stdout closed early (`| head`) or full
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # drop what is left
        if isinstance(exc, BrokenPipeError):
            return 0  # the reader stopped reading: not an error
        why = exc if isinstance(exc, Refused) else f"cannot write the output: {exc.strerror}"
        print(f"{NAME}: {why}", file=sys.stderr)
        return 1
    return 1 if any(getattr(r, "passed", True) is False for r in records.values()) else 0

# ------------------------------------------------------------- end of the harness


if __name__ == '__main__':
    sys.exit(main())
