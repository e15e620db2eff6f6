"""memory.py: how far back the plain RNN, the LSTM and the GRU learn to remember, measured.

Companion script to chapter 15 ("Long memory, measured"). Python 3.9+ and numpy.

The task: a sequence starts with one of K symbols, then lag - 1 distractors
drawn at random from D other symbols, then a query; at the query the network
must name the first symbol. The answer depends on an input `lag` steps back
and on nothing in between; a network that cannot carry it that far is left
with chance, 1/K.

The cells are d2l's, in chapter 14's notation (the GRU's update gate Z near 1
keeps the old state):

    plain RNN  H = tanh(X W_xh + H_prev W_hh + b_h)
    LSTM       I = sigma(X W_xi + H_prev W_hi + b_i)      input gate
               F = sigma(X W_xf + H_prev W_hf + b_f)      forget gate
               O = sigma(X W_xo + H_prev W_ho + b_o)      output gate
               C~ = tanh(X W_xc + H_prev W_hc + b_c)      input node
               C = F * C_prev + I * C~,   H = O * tanh(C)
    GRU        Z = sigma(X W_xz + H_prev W_hz + b_z)      update gate
               R = sigma(X W_xr + H_prev W_hr + b_r)      reset gate
               H~ = tanh(X W_xh + (R * H_prev) W_hh + b_h)
               H = Z * H_prev + (1 - Z) * H~

X is the one-hot input, H_0 (and C_0) zero; the answer is read from the last
state only, Y_hat = H_T W_hq + b_q, with softmax cross-entropy. Every cell gets
the same rules, PyTorch's defaults rather than values tuned here: weights
uniform(-1/sqrt(h), 1/sqrt(h)), biases zero except the LSTM's forget bias b_f
(0, 1 or 2: the only difference between its three rows); Adam with learning
rate 1e-3; the same budget and the same training sequences for every cell. Why
this setting: chapter 15, and the pilot that chose it (served beside this file).

The file reads top to bottom: the task; the model, one network at a time (each
cell's step forward and backward, the loss, Adam, the training loop); the same
model batched, which trains the page's 100 networks side by side (--agree
trains networks both ways and compares them); what the site prints; the
command line.

    python3 memory.py              what chapter 15 shows, in order (--task
                                   --accuracy --curves --gradient), 2 to 3 minutes
    python3 memory.py --task       step 1: the task and the training setting
    python3 memory.py --accuracy   step 2: test accuracy by cell and lag, every seed
    python3 memory.py --curves     step 3: learning curves at one long lag
    python3 memory.py --gradient   step 4: the gradient reaching the first input
    python3 memory.py --row --cell lstm --forget-bias 1 --lag 50
                                   one cell at one lag, every seed (under a minute);
                                   --forget-bias only with --cell lstm (default 1)
    python3 memory.py --row --cell gru --lag 50 --steps 6000
                                   the same with another budget (default 1,500 steps)
    python3 memory.py --agree      the batched trainer against the one-network model
    python3 memory.py --gradcheck  every hand-written gradient against central differences

Training is float32 on one BLAS thread; the same command prints the same
table, run after run (lines starting with `time:` are measured times).
"""

import argparse
import math
import os
import platform
import sys
import textwrap
import time
from dataclasses import dataclass

if __name__ == "__main__":  # as a script: one BLAS thread (must be set before numpy loads)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")  # threads cost more than they save on 16-unit models
    if platform.machine() in ("x86_64", "AMD64"):  # and one BLAS kernel on every x86 CPU:
        os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")  # AVX-512's round differently

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""

# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------

K = 4  # symbols to remember: the answer is one of them, chance is 1/K
D = 4  # distractor symbols, drawn at random between the symbol and the query
QUERY = K + D  # token id of the query; symbols are 0..K-1, distractors K..K+D-1
V = K + D + 1  # vocabulary size, the length of a one-hot input x_t
LAGS = (5, 10, 20, 50, 100)  # steps from the symbol to the query
SEEDS = 4  # seeds per cell and lag
h = 16  # hidden units
BATCH = 32  # training sequences per step and seed
STEPS = 1500  # optimiser steps (the budget), the same for every cell and lag
LR = 1e-3  # Adam's learning rate (PyTorch's default)
BETAS = (0.9, 0.999)  # Adam's averaging rates for g and g^2 (PyTorch's defaults)
EPS = 1e-8  # Adam's epsilon (PyTorch's default)
INIT_BOUND = 1 / math.sqrt(h)  # initial weights uniform(-1/sqrt(h), 1/sqrt(h)), nn.LSTM's rule
FORGET_BIASES = (0.0, 1.0, 2.0)  # b_f, the LSTM forget gate's initial bias
TEST = 512  # fixed test sequences per seed and lag
CURVE_EVERY = 100  # steps between two points of a learning curve
CURVE_LAG = 50  # the long lag whose learning curves --curves shows
CURVE_SHOWN = (100, 200, 300, 500, 1000, 1500)  # checkpoints --curves prints
GRADIENT_BATCH = 64  # test sequences the gradient at x_1 is averaged over
MAX_LAG = 1000  # largest --lag accepted (a longer run would take minutes)
FLUSH_EVERY = 4  # steps between two flushes of tiny gradients (flush_tiny_)

CELLS = ("rnn", "lstm", "gru")
GATES = {"rnn": "h", "lstm": "ifoc", "gru": "zrh"}  # d2l's parameter suffixes, per gate
CELL_NAMES = {"rnn": "plain RNN", "lstm": "LSTM", "gru": "GRU"}
MODELS = (("rnn", None),) + tuple(("lstm", b) for b in FORGET_BIASES) + (("gru", None),)
INIT_KEY, DATA_KEY, TEST_KEY = 15, 16, 17  # seed-sequence prefixes: init, training, test


def model_name(cell, b_f=None):
    """'plain RNN', 'LSTM b_f=1', 'GRU'."""
    return CELL_NAMES[cell] + ("" if b_f is None else f" b_f={b_f:g}")


# ---------------------------------------------------------------------------
# The task
# ---------------------------------------------------------------------------

def make_sequences(rng, n, lag):
    """n sequences of lag + 1 tokens, (n, lag + 1), and their answers, (n,).

    x_1 is one of the K symbols (the answer), x_2 .. x_lag are distractors,
    x_{lag+1} is the query: the answer lies exactly `lag` steps back."""
    first = rng.integers(0, K, n)  # the symbol to remember
    X = np.empty((n, lag + 1), dtype=np.intp)
    X[:, 0] = first
    X[:, 1:lag] = rng.integers(K, K + D, (n, lag - 1))  # distractors
    X[:, lag] = QUERY
    return X, first


def training_stream(seed, lag):
    """The generator of seed's training sequences at lag: every cell reads the same."""
    return np.random.default_rng([DATA_KEY, seed, lag])


def test_set(seed, lag):
    """The TEST fixed test sequences of seed at lag, and their answers."""
    return make_sequences(np.random.default_rng([TEST_KEY, seed, lag]), TEST, lag)


# ---------------------------------------------------------------------------
# The model, one network at a time
# ---------------------------------------------------------------------------
#
# One step of each cell, forward and backward, in d2l's notation. The B sequences
# of a minibatch are the rows: X_t is (B,) token ids, one per sequence, H_prev the
# previous state (B, h); W_x? is (V, h), W_h? (h, h), b_? (h,). X_t W_x? is row x
# of W_x? for each sequence, because X_t is one-hot. Then the loss of a minibatch,
# Adam and the training loop. This is the model the page describes; the build
# trains the same networks with the batched code of the next section.

def init_params(cell, seed, b_f=0.0, hidden=h):
    """One network's parameters, named as in d2l: per gate ? an input weight W_x? (V, h),
    a recurrent weight W_h? (h, h) and a bias b_? (h,), then the output layer W_hq (h, K)
    and b_q (K,). The rule, the same for every cell (PyTorch's for nn.RNN, nn.LSTM, nn.GRU
    and nn.Linear(h, K)): every weight uniform(-a, a), a = 1/sqrt(h); biases zero, except
    the LSTM's forget bias b_f. A seed draws the same weights for every lag and b_f."""
    rng = np.random.default_rng([INIT_KEY, seed])
    a = 1 / math.sqrt(hidden)
    p = {}
    for g in GATES[cell]:
        p["W_x" + g] = rng.uniform(-a, a, (V, hidden))
        p["W_h" + g] = rng.uniform(-a, a, (hidden, hidden))
        p["b_" + g] = np.zeros(hidden)
    p["W_hq"] = rng.uniform(-a, a, (hidden, K))
    p["b_q"] = np.zeros(K)
    if cell == "lstm":
        p["b_f"][:] = b_f
    return p


def sigmoid(a):
    """sigma(a) = 1 / (1 + exp(-a)), computed as (1 + tanh(a/2)) / 2: the same
    function, and it never overflows."""
    return 0.5 + 0.5 * np.tanh(0.5 * a)


def one_hot(x):
    """(B, V): row b is all zeros but a 1 in column x[b]."""
    return np.eye(V)[x]


#   H = tanh(X W_xh + H_prev W_hh + b_h)

def rnn_step(p, x, H_prev):
    H = np.tanh(p["W_xh"][x] + H_prev @ p["W_hh"] + p["b_h"])
    return H, (x, H_prev, H)


def rnn_step_backward(p, dH, cache, grads):
    """Backward through one step. dH is dL/dH for the state this step made; adds the
    step's share of every parameter's gradient to grads; returns dL/dH_prev and dL/dX_t
    (B, V), the gradient reaching this step's input."""
    x, H_prev, H = cache
    dA = dH * (1 - H ** 2)                        # through tanh: tanh' = 1 - tanh^2
    grads["W_xh"] += one_hot(x).T @ dA            # X^T dA adds each sequence's row of dA
    grads["W_hh"] += H_prev.T @ dA                # to the row of its token
    grads["b_h"] += dA.sum(axis=0)
    return dA @ p["W_hh"].T, dA @ p["W_xh"].T


#   I = sigma(X W_xi + H_prev W_hi + b_i),  F = sigma(..f..),  O = sigma(..o..)
#   C~ = tanh(X W_xc + H_prev W_hc + b_c)
#   C = F * C_prev + I * C~,   H = O * tanh(C)

def lstm_step(p, x, H_prev, C_prev):
    I = sigmoid(p["W_xi"][x] + H_prev @ p["W_hi"] + p["b_i"])           # input gate
    F = sigmoid(p["W_xf"][x] + H_prev @ p["W_hf"] + p["b_f"])           # forget gate
    O = sigmoid(p["W_xo"][x] + H_prev @ p["W_ho"] + p["b_o"])           # output gate
    C_tilde = np.tanh(p["W_xc"][x] + H_prev @ p["W_hc"] + p["b_c"])     # input node
    C = F * C_prev + I * C_tilde                                        # memory cell
    tanh_C = np.tanh(C)
    H = O * tanh_C                                                      # hidden state
    return H, C, (x, H_prev, C_prev, I, F, O, C_tilde, tanh_C)


def lstm_step_backward(p, dH, dC, cache, grads):
    """dH, dC reach this step's H and C from later on. Returns dL/dH_prev, dL/dC_prev
    and dL/dX_t."""
    x, H_prev, C_prev, I, F, O, C_tilde, tanh_C = cache
    dO = dH * tanh_C                              # H = O * tanh(C)
    dC = dC + dH * O * (1 - tanh_C ** 2)          # C reaches the loss through H and C_next
    dA = {"i": dC * C_tilde * I * (1 - I),        # C = F * C_prev + I * C~, then through
          "f": dC * C_prev * F * (1 - F),         # sigma: sigma' = sigma (1 - sigma)
          "o": dO * O * (1 - O),
          "c": dC * I * (1 - C_tilde ** 2)}       # .. and through tanh
    X = one_hot(x)
    dH_prev = dX = 0
    for g, dA_g in dA.items():
        grads["W_x" + g] += X.T @ dA_g
        grads["W_h" + g] += H_prev.T @ dA_g
        grads["b_" + g] += dA_g.sum(axis=0)
        dH_prev = dH_prev + dA_g @ p["W_h" + g].T  # H_prev feeds all four gates
        dX = dX + dA_g @ p["W_x" + g].T            # and so does X_t
    return dH_prev, dC * F, dX                    # C_prev reaches C through F only


#   Z  = sigma(X W_xz + H_prev W_hz + b_z)          update gate
#   R  = sigma(X W_xr + H_prev W_hr + b_r)          reset gate
#   H~ = tanh(X W_xh + (R * H_prev) W_hh + b_h)     candidate state
#   H  = Z * H_prev + (1 - Z) * H~                  new state

def gru_step(p, x, H_prev):
    Z = sigmoid(p["W_xz"][x] + H_prev @ p["W_hz"] + p["b_z"])                # update gate
    R = sigmoid(p["W_xr"][x] + H_prev @ p["W_hr"] + p["b_r"])                # reset gate
    H_tilde = np.tanh(p["W_xh"][x] + (R * H_prev) @ p["W_hh"] + p["b_h"])    # candidate state
    H = Z * H_prev + (1 - Z) * H_tilde                                       # new state
    return H, (x, H_prev, Z, R, H_tilde)


def gru_step_backward(p, dH, cache, grads):
    x, H_prev, Z, R, H_tilde = cache
    dZ = dH * (H_prev - H_tilde)                  # H = Z * H_prev + (1 - Z) * H~
    dA_h = dH * (1 - Z) * (1 - H_tilde ** 2)      # through H~ = tanh(..)
    dRH = dA_h @ p["W_hh"].T                      # dL/d(R * H_prev)
    dA = {"z": dZ * Z * (1 - Z), "r": dRH * H_prev * R * (1 - R), "h": dA_h}
    X = one_hot(x)
    dX = 0
    for g, dA_g in dA.items():
        grads["W_x" + g] += X.T @ dA_g
        grads["b_" + g] += dA_g.sum(axis=0)
        dX = dX + dA_g @ p["W_x" + g].T
    grads["W_hz"] += H_prev.T @ dA["z"]
    grads["W_hr"] += H_prev.T @ dA["r"]
    grads["W_hh"] += (R * H_prev).T @ dA_h
    dH_prev = (dH * Z + dRH * R                   # H_prev reaches H directly and through R,
               + dA["z"] @ p["W_hz"].T + dA["r"] @ p["W_hr"].T)  # and through the two gates
    return dH_prev, dX


def step(p, cell, x, state):
    """One step of any cell; state is H, or (H, C) for the LSTM. Returns the new
    state, its H and the cache for step_backward."""
    if cell == "lstm":
        H, C, cache = lstm_step(p, x, *state)
        return (H, C), H, cache
    H, cache = (gru_step if cell == "gru" else rnn_step)(p, x, state)
    return H, H, cache


def step_backward(p, cell, dstate, cache, grads):
    """Backward through one step of any cell: dstate is dL/dH (and dL/dC for the LSTM).
    Returns dL/d(previous state) and dL/dX_t."""
    if cell == "lstm":
        dH_prev, dC_prev, dX = lstm_step_backward(p, *dstate, cache, grads)
        return (dH_prev, dC_prev), dX
    return (gru_step_backward if cell == "gru" else rnn_step_backward)(p, dstate, cache, grads)


def log_softmax(Y_hat):
    """log softmax over the last axis, shifted by each row's largest logit (no overflow)."""
    shifted = Y_hat - Y_hat.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def loss_and_grads(p, cell, X, Y, need_grads=True):
    """One network on a minibatch: X (B, T) token ids, Y (B,) the answers. The forward
    pass over every step, the logits read from the last state, the loss (the mean
    cross-entropy) and its accuracy; then, if need_grads, backpropagation through time.
    Returns loss, accuracy, grads (a dict like p) and dL/dX_1, dL/dX_T (B, V), the
    gradients reaching the first input and the query."""
    B, T = X.shape
    rows = np.arange(B)
    H = np.zeros((B, len(p["W_hq"])))
    state = (H, H) if cell == "lstm" else H
    caches = []
    for t in range(T):
        state, H, cache = step(p, cell, X[:, t], state)  # the recurrence
        caches.append(cache)
    log_P = log_softmax(H @ p["W_hq"] + p["b_q"])        # Y_hat = H_T W_hq + b_q
    loss = -log_P[rows, Y].mean()
    accuracy = (log_P.argmax(axis=1) == Y).mean()
    if not need_grads:
        return loss, accuracy, None, None
    grads = {name: np.zeros_like(w) for name, w in p.items()}
    dY_hat = np.exp(log_P)                    # dL/dY_hat = (softmax - one_hot(Y)) / B
    dY_hat[rows, Y] -= 1
    dY_hat /= B
    grads["W_hq"] += H.T @ dY_hat
    grads["b_q"] += dY_hat.sum(axis=0)
    dH = dY_hat @ p["W_hq"].T                 # only H_T feeds the output
    dstate = (dH, np.zeros_like(dH)) if cell == "lstm" else dH
    dX = []
    for cache in reversed(caches):            # backpropagation through time
        dstate, dX_t = step_backward(p, cell, dstate, cache, grads)
        dX.append(dX_t)
    return loss, accuracy, grads, (dX[-1], dX[0])


def input_gradients(p, cell, X, Y):
    """g_1 and g_T: the mean over the sequences of ||dl/dx_1|| and of ||dl/dx_T||, l one
    sequence's cross-entropy and x_t its one-hot input taken as a real vector. The
    minibatch loss L is the mean of the B sequences' l, so dl/dx_t = B dL/dX_t (row b)."""
    B = len(Y)
    _, _, _, (dX_1, dX_T) = loss_and_grads(p, cell, X, Y)
    return (float(np.linalg.norm(B * dX_1, axis=1).mean()),
            float(np.linalg.norm(B * dX_T, axis=1).mean()))


class Adam:
    """Adam (Kingma and Ba, 2015) with PyTorch's defaults: per parameter entry,
    m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, step lr m^ / (sqrt(v^) + eps),
    m^ and v^ corrected for their start at zero. Every entry is its own: that is
    what lets the batched trainer below keep many networks in one array."""

    def __init__(self, p, lr=LR, b1=BETAS[0], b2=BETAS[1], eps=EPS):
        self.lr, self.b1, self.b2, self.eps, self.t = lr, b1, b2, eps, 0
        self.m = {name: np.zeros_like(w) for name, w in p.items()}
        self.v = {name: np.zeros_like(w) for name, w in p.items()}

    def step(self, p, grads):
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t  # bias corrections
        for name, w in p.items():
            g, m, v = grads[name], self.m[name], self.v[name]
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            w -= (self.lr / c1) * m / (np.sqrt(v / c2) + self.eps)


@dataclass
class Run:
    """One network (cell, b_f, seed) trained at one lag."""
    cell: str
    b_f: float  # LSTM forget bias (0 for the other cells)
    seed: int
    lag: int
    accuracy: float  # on the TEST fixed test sequences of this seed and lag, after training
    loss: float  # mean test cross-entropy, after training
    curve_steps: list  # steps at which the curve was measured
    curve_accuracy: list  # test accuracy at those steps
    curve_loss: list  # test cross-entropy at those steps
    g1_init: float  # g_1, the mean norm of dl/dx_1, at initialisation (float64)
    gT_init: float  # g_T, the same at the query x_T
    g1_trained: float
    gT_trained: float


def train(cell, lag, seed, b_f=0.0, steps=STEPS):
    """One network trained the plain way, in float64: the training loop of the page."""
    p = init_params(cell, seed, b_f)
    data = training_stream(seed, lag)
    X_test, Y_test = test_set(seed, lag)
    X_g, Y_g = X_test[:GRADIENT_BATCH], Y_test[:GRADIENT_BATCH]
    g1_init, gT_init = input_gradients(p, cell, X_g, Y_g)
    adam = Adam(p)
    curve = []  # (step, test accuracy, test loss)
    for n in range(1, steps + 1):
        X, Y = make_sequences(data, BATCH, lag)  # BATCH fresh sequences
        _, _, grads, _ = loss_and_grads(p, cell, X, Y)
        adam.step(p, grads)
        if n % CURVE_EVERY == 0 or n == steps:
            loss, accuracy, _, _ = loss_and_grads(p, cell, X_test, Y_test, need_grads=False)
            curve.append((n, float(accuracy), float(loss)))
    g1, gT = input_gradients(p, cell, X_g, Y_g)
    steps_at, accuracy, loss = (list(c) for c in zip(*curve))
    return Run(cell, float(b_f), seed, lag, accuracy[-1], loss[-1], steps_at, accuracy, loss,
               g1_init, gT_init, g1, gT)


# ---------------------------------------------------------------------------
# The same model, batched: how the build trains 100 networks at once
# ---------------------------------------------------------------------------
#
# train() above trains one network. The page needs 100 (5 models, 5 lags, 4 seeds),
# and a 16-unit network is too small to keep numpy busy: a step on 32 sequences is a
# few microseconds of arithmetic, about what each numpy call costs before it starts.
# So the code below trains every network of one cell side by side, the arithmetic of
# each network the same as train()'s (--agree checks it), in four moves:
#
#  1. A model axis: network m's parameters are W_x[:, m], W_h[:, m], ...; one
#     product of H_prev (M, B, h) by W_h gives every network's in one call.
#  2. A gate axis in front: W_x is (g, M, V, h), W_h (g, M, h, h), b (g, M, h), so
#     that one product gives every gate, and each gate of every network (I, F, O,
#     C~, Z, R, H~) is one contiguous block (M, B, h): numpy's fast case.
#  3. Every lag in one stack: the sequences end together, at the query, and the
#     networks with the longest lag come first on the model axis. At step t only
#     the first active[t] networks have started (a state is zero until its x_1
#     arrives), and only they are computed: five lags cost one pass of the longest.
#  4. Fewer, in-place passes: the gates overwrite their pre-activations in arrays
#     made once per stack, sigmoid_ and flush_tiny_ change their argument, and all
#     parameters are one flat vector (so are their gradients), which Adam updates
#     in eight calls a step.
# Arrays are time-major: A[t] is step t of every network, (g, M, B, h).

@dataclass
class Stack:
    """Networks of one cell trained side by side: models[m] = (b_f, seed, lag), the
    longest lag first; network m reads the steps start[m] .. T - 1 of the stack."""
    cell: str
    models: list
    T: int  # steps of the longest sequence (its lag + 1): every sequence ends at T - 1
    start: list  # the step of network m's first input x_1, T - (lag + 1)
    active: list  # active[t]: the networks 0 .. active[t] - 1 have started by step t
    groups: list  # (m0, m1, start): the networks m0 .. m1 - 1 share one lag
    hidden: int = h
    arrays: dict = None  # the arrays the passes reuse, made once (see array())


def make_stack(cell, models, hidden=h):
    models = sorted(models, key=lambda m: -m[2])  # stable: (b_f, seed) order kept within a lag
    T = models[0][2] + 1
    start = [T - (lag + 1) for _, _, lag in models]
    groups = []
    for m, s in enumerate(start):
        if groups and groups[-1][2] == s:
            groups[-1][1] = m + 1
        else:
            groups.append([m, m + 1, s])
    return Stack(cell, models, T, start, [sum(s <= t for s in start) for t in range(T)],
                 [tuple(g) for g in groups], hidden, {})


def array(S, name, shape, dtype):
    """S's array `name`, made (zero) the first time and reused by every minibatch after:
    a new array of 50 MB each step would cost as much time again in page faults. Zero
    entries that no step writes stay zero: the states before each network's start."""
    key = (name, shape, np.dtype(dtype).str)
    if key not in S.arrays:
        S.arrays[key] = np.zeros(shape, dtype)
    return S.arrays[key]


def stack_params(S, dtype="float32", theta=None):
    """The networks' parameters as named views of one flat vector: W_x (g, M, V, h),
    W_h (g, M, h, h), b (g, M, h), W_hq (M, h, K), b_q (M, K). Without theta, a new
    vector holding every network's init_params; with it, views of theta."""
    M, G, hh = len(S.models), len(GATES[S.cell]), S.hidden
    shapes = {"W_x": (G, M, V, hh), "W_h": (G, M, hh, hh), "b": (G, M, hh),
              "W_hq": (M, hh, K), "b_q": (M, K)}
    if theta is None:
        theta = np.empty(sum(math.prod(s) for s in shapes.values()), dtype)
        P = stack_params(S, dtype, theta)[1]
        for m, (b_f, seed, _) in enumerate(S.models):
            p = init_params(S.cell, seed, 0.0 if b_f is None else b_f, hh)
            for k, g in enumerate(GATES[S.cell]):
                P["W_x"][k, m], P["W_h"][k, m], P["b"][k, m] = (p["W_x" + g], p["W_h" + g],
                                                                 p["b_" + g])
            P["W_hq"][m], P["b_q"][m] = p["W_hq"], p["b_q"]
        return theta, P
    P, offset = {}, 0
    for name, shape in shapes.items():
        P[name] = theta[offset:offset + math.prod(shape)].reshape(shape)
        offset += math.prod(shape)
    return theta, P


def stack_sequences(S, n, streams=None):
    """One minibatch per network: tokens X (T, M, n), network m's at steps start[m] on
    (0 before, never read), and answers Y (M, n). streams: {(seed, lag): generator} for
    training (continued); None: the fixed test sets. Networks of one seed and lag (the
    three LSTM forget biases) read the same sequences."""
    X = np.zeros((S.T, len(S.models), n), dtype=np.intp)
    Y = np.empty((len(S.models), n), dtype=np.intp)
    drawn = {}
    for m, (_, seed, lag) in enumerate(S.models):
        if (seed, lag) not in drawn:
            drawn[seed, lag] = (test_set(seed, lag) if streams is None
                                else make_sequences(streams[seed, lag], n, lag))
        x, Y[m] = drawn[seed, lag]
        X[S.start[m]:, m] = x[:n].T
    return X, Y


def sigmoid_(a):
    """sigma(a) = (1 + tanh(a/2)) / 2 in place: sigmoid()'s arithmetic, without copies."""
    a *= 0.5
    np.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


def flush_tiny_(x):
    """Set to zero, in place, the entries below tiny / eps of x's type (1e-31 in float32,
    1e-292 in float64). A gradient carried back a few hundred steps can shrink that far,
    and one more product takes it below the smallest normal number (1.2e-38 in float32),
    where arithmetic is many times slower; the backward pass flushes every FLUSH_EVERY
    steps, before a gradient can fall that far. Training cannot tell such entries from
    zero; g_1 is measured in float64, where the threshold is out of reach."""
    info = np.finfo(x.dtype)
    np.putmask(x, np.abs(x) < info.tiny / info.eps, 0)


def input_table(P):
    """X_t W_x + b is a row lookup, X_t being one-hot: every network's rows e_v W_x + b,
    (g, M V, h), and the offset of network m's first row, (M, 1)."""
    G, M, V_, hh = P["W_x"].shape
    table = (P["W_x"] + P["b"][:, :, None, :]).reshape(G, M * V_, hh)
    return table, V_ * np.arange(M)[:, None]


def per_step(S, name, make):
    """The views of S's arrays that each step t reads and writes, made once per stack and
    reused by every minibatch: a view costs about as much as a numpy operation on these
    small arrays, and a step makes some twenty. make(t, n) gives step t's views."""
    if name not in S.arrays:
        S.arrays[name] = [make(t, n) for t, n in enumerate(S.active)]
    return S.arrays[name]


def stack_step(cell, a, gates, W_h, H_prev, C_prev, H, C, TC, RH, tmp):
    """One step of the networks 0 .. n - 1: a (g, n, B, h) holds X_t W_x + b on entry and
    the gates on return, gates = tuple(a); the new state goes to H (and C), tanh(C) to TC
    (LSTM) and R * H_prev to RH (GRU). H may be H_prev and C may be C_prev (updated in
    place); tmp (g, n, B, h) is scratch."""
    if cell == "rnn":
        a += np.matmul(H_prev, W_h, out=tmp)  # + H_prev W_hh
        np.tanh(gates[0], out=H)  # H = tanh(..)
    elif cell == "lstm":
        I, F, O, C_tilde = gates
        a += np.matmul(H_prev, W_h, out=tmp)  # + H_prev W_h?, the four gates in one product
        IFO = a[:3]
        IFO *= 0.5  # I, F, O = sigma(..) = (1 + tanh(../2)) / 2, C~ = tanh(..):
        np.tanh(a, out=a)  # one tanh for the four gates
        IFO *= 0.5
        IFO += 0.5
        IC = np.multiply(I, C_tilde, out=tmp[0])
        np.multiply(F, C_prev, out=C)  # C = F * C_prev + I * C~
        C += IC
        np.tanh(C, out=TC)
        np.multiply(O, TC, out=H)  # H = O * tanh(C)
    else:  # gru
        Z, R, H_tilde = gates
        ZR = a[:2]
        ZR += np.matmul(H_prev, W_h[:2], out=tmp[:2])  # + H_prev W_hz, + H_prev W_hr
        sigmoid_(ZR)  # Z, R
        np.multiply(R, H_prev, out=RH)  # R * H_prev
        H_tilde += np.matmul(RH, W_h[2], out=tmp[2])  # + (R * H_prev) W_hh
        np.tanh(H_tilde, out=H_tilde)  # H~
        np.subtract(H_prev, H_tilde, out=H)  # H = Z * H_prev + (1 - Z) * H~
        H *= Z  # = H~ + Z * (H_prev - H~)
        H += H_tilde


def stack_forward(S, P, X):
    """Every network over its sequences, X (T, M, B): the last states H_T (M, B, h) and
    what stack_backward needs: each step's gates, the states H_0 .. H_T (and C, tanh(C)
    for the LSTM, R * H_prev for the GRU), network m's from step start[m] on. The states
    are model-major, (M, T + 1, B, h): each network's are one block for stack_backward."""
    T, M, B = X.shape
    G, hh, dtype = len(GATES[S.cell]), S.hidden, P["W_h"].dtype
    table, rows = input_table(P)
    A = array(S, "A", (T, G, M, B, hh), dtype)  # X_t W_x + b, then the gates
    Hs = array(S, "H", (M, T + 1, B, hh), dtype)  # zero until a network starts
    Cs = array(S, "C", (T + 1, M, B, hh), dtype)  # (C, tanh(C) and R * H_prev stay
    TCs = array(S, "tanh C", (T, M, B, hh), dtype)  # untouched zeros, which take no
    RHs = array(S, "R H", (M, T, B, hh), dtype)  # memory, in the cells without them)
    tmp = array(S, "scratch", (G, M, B, hh), dtype)
    steps = per_step(S, ("forward", B, dtype.str, id(P["W_h"])), lambda t, n: (
        A[t, :, :n], tuple(A[t, :, :n]), P["W_h"][:, :n], Hs[:n, t], Cs[t, :n], Hs[:n, t + 1],
        Cs[t + 1, :n], TCs[t, :n], RHs[:n, t], tmp[:, :n], rows[:n]))
    for t, (a, gates, W_h, H_prev, C_prev, H, C, TC, RH, tmp_n, rows_n) in enumerate(steps):
        np.take(table, X[t, :len(rows_n)] + rows_n, axis=1, out=a, mode="clip")  # X_t W_x + b
        stack_step(S.cell, a, gates, W_h, H_prev, C_prev, H, C, TC, RH, tmp_n)
    return Hs[:, T], (X, A, Hs, Cs, TCs, RHs)


def stack_last_state(S, P, X):
    """The last states H_T (M, B, h) only, keeping nothing (for the test sequences)."""
    T, M, B = X.shape
    table, rows = input_table(P)
    G, hh, dtype = len(table), S.hidden, table.dtype
    a, tmp = array(S, "a", (G, M, B, hh), dtype), array(S, "tmp", (G, M, B, hh), dtype)
    H, C = array(S, "H_t", (M, B, hh), dtype), array(S, "C_t", (M, B, hh), dtype)
    TC, RH = array(S, "TC_t", (M, B, hh), dtype), array(S, "RH_t", (M, B, hh), dtype)
    H[...], C[...] = 0, 0  # updated in place
    steps = per_step(S, ("last state", B, dtype.str, id(P["W_h"])), lambda t, n: (
        a[:, :n], tuple(a[:, :n]), P["W_h"][:, :n], H[:n], C[:n], TC[:n], RH[:n], tmp[:, :n],
        rows[:n]))
    for t, (a_n, gates, W_h, H_n, C_n, TC_n, RH_n, tmp_n, rows_n) in enumerate(steps):
        np.take(table, X[t, :len(rows_n)] + rows_n, axis=1, out=a_n, mode="clip")
        stack_step(S.cell, a_n, gates, W_h, H_n, C_n, H_n, C_n, TC_n, RH_n, tmp_n)
    return H.copy()


def stack_backward(S, P, cache, dH_T, grads=None):
    """Backpropagation through time for every network: dH_T = dL/dH_T (M, B, h). With
    grads (named views like P), writes every parameter's gradient into it. Returns dA
    (g, M, T, B, h), dL/d(pre-activations) at every step of every network: model-major,
    so that each network's steps are one block for the weight gradients' products."""
    X, A, Hs, Cs, TCs, RHs = cache
    T, M, B = X.shape
    G, hh, dtype = A.shape[1], A.shape[-1], A.dtype
    dA = array(S, "dA", (G, M, T, B, hh), dtype)
    dHs = array(S, "dH", (2, M, B, hh), dtype)  # dL/dH_t and dL/dH_{t-1}, by turns
    dHs[T % 2] = dH_T  # dL/dH_T
    dC = array(S, "dC", (M, B, hh), dtype)  # dL/dC_t (LSTM)
    dC[...] = 0
    W_h_T = P["W_h"].transpose(0, 1, 3, 2)
    tmp, one = array(S, "scratch", (G, M, B, hh), dtype), array(S, "s", (M, B, hh), dtype)
    steps = per_step(S, ("backward", B, dtype.str, id(P["W_h"])), lambda t, n: (
        A[t, :, :n], tuple(A[t, :, :n]), dA[:, :n, t], tuple(dA[:, :n, t]), dHs[(t + 1) % 2, :n],
        dHs[t % 2, :n], W_h_T[:, :n], tmp[:, :n], one[:n], Hs[:n, t], Hs[:n, t + 1],
        Cs[t, :n], TCs[t, :n], dC[:n]))
    for t in reversed(range(T)):
        g, gates, da, das, dh, dH_prev, w, sc, s, H_prev, H_t, C_prev, TC, dc = steps[t]
        if S.cell == "rnn":
            np.multiply(H_t, H_t, out=s)
            np.subtract(1, s, out=s)
            np.multiply(dh, s, out=das[0])  # da_h = dH * (1 - H^2)
            np.matmul(das[0], w[0], out=dH_prev)  # dL/dH_prev = da_h W_hh^T
        elif S.cell == "lstm":
            I, F, O, C_tilde = gates
            np.multiply(TC, TC, out=s)  # TC = tanh(C_t)
            np.subtract(1, s, out=s)
            s *= O
            s *= dh
            dc += s  # dL/dC: carried back, plus through H = O * tanh(C)
            np.multiply(dc, C_tilde, out=das[0])  # dL/dI = dC * C~
            np.multiply(dc, C_prev, out=das[1])  # dL/dF = dC * C_prev
            np.multiply(dh, TC, out=das[2])  # dL/dO = dH * tanh(C)
            IFO, sig = g[:3], sc[:3]
            np.subtract(1, IFO, out=sig)
            sig *= IFO
            da[:3] *= sig  # da_i, da_f, da_o: times sigma' = sigma (1 - sigma)
            np.multiply(C_tilde, C_tilde, out=s)
            np.subtract(1, s, out=s)
            s *= I
            np.multiply(s, dc, out=das[3])  # da_c = dL/dC~ * tanh', dL/dC~ = dC * I
            dc *= F  # dL/dC_prev
            np.sum(np.matmul(da, w, out=sc), axis=0, out=dH_prev)  # through all four gates
            if t % FLUSH_EVERY == 0:
                flush_tiny_(dc)
        else:  # gru
            Z, R, H_tilde = gates
            da_z, da_r, da_h = das
            np.subtract(1, Z, out=s)
            s *= dh
            np.multiply(H_tilde, H_tilde, out=da_h)
            np.subtract(1, da_h, out=da_h)
            da_h *= s  # da_h = dH * (1 - Z) * (1 - H~^2), through H~ = tanh(..)
            dRH = np.matmul(da_h, w[2], out=sc[2])  # dL/d(R * H_prev) = da_h W_hh^T
            np.subtract(H_prev, H_tilde, out=s)
            s *= dh  # dL/dZ, from H = Z * H_prev + (1 - Z) * H~
            np.subtract(1, Z, out=da_z)
            da_z *= Z
            da_z *= s  # da_z
            np.subtract(1, R, out=da_r)
            da_r *= R
            da_r *= H_prev
            da_r *= dRH  # da_r = dL/d(R * H_prev) * H_prev * sigma'
            dRH *= R
            np.multiply(dh, Z, out=dH_prev)  # dL/dH_prev: directly, through R * H_prev,
            dH_prev += dRH
            dH_prev += np.sum(np.matmul(da[:2], w[:2], out=sc[:2]), axis=0, out=s)  # gates
        if t % FLUSH_EVERY == 0:
            flush_tiny_(dH_prev)
    if grads is not None:  # weight gradients: sums over steps and sequences, one product each
        for m0, m1, s0 in S.groups:  # per lag, over the steps its networks ran
            n, TB = m1 - m0, (T - s0) * B
            dA_g = dA[:, m0:m1, s0:].reshape(G, n, TB, hh)  # (g, n, T B, h)
            onehot = (X[s0:, m0:m1].transpose(1, 0, 2).reshape(n, 1, TB)
                      == np.arange(V)[:, None]).astype(dtype)
            grads["W_x"][:, m0:m1] = onehot @ dA_g  # sum over steps of X_t^T da_t
            grads["b"][:, m0:m1] = grads["W_x"][:, m0:m1].sum(axis=2)  # each X_t has one 1
            H_prev = Hs[m0:m1, s0:T].reshape(n, TB, hh).transpose(0, 2, 1)  # H_0 .. H_{T-1}
            if S.cell == "gru":  # H~ reads R * H_prev, not H_prev
                grads["W_h"][:2, m0:m1] = H_prev @ dA_g[:2]
                RH = RHs[m0:m1, s0:].reshape(n, TB, hh).transpose(0, 2, 1)
                grads["W_h"][2, m0:m1] = RH @ dA_g[2]
            else:
                grads["W_h"][:, m0:m1] = H_prev @ dA_g  # sum over steps of H_prev^T da_t
    return dA


def stack_probabilities(P, H_T):
    """softmax(Y_hat), Y_hat = H_T W_hq + b_q (M, B, K), each row shifted by its largest
    logit first (softmax is unchanged by a shift)."""
    logits = H_T @ P["W_hq"] + P["b_q"][:, None, :]
    logits -= logits.max(axis=-1, keepdims=True)
    probs = np.exp(logits, out=logits)
    probs /= probs.sum(axis=-1, keepdims=True)
    return probs


def stack_loss_and_grads(S, P, X, Y, grads=None):
    """Every network's mean cross-entropy and accuracy on its minibatch, (M,) each; with
    grads (views like P), each network's gradient of its own loss written into it."""
    M, B = Y.shape
    models, rows = np.arange(M)[:, None], np.arange(B)
    if grads is None:
        H_T = stack_last_state(S, P, X)
    else:
        H_T, cache = stack_forward(S, P, X)
    probs = stack_probabilities(P, H_T)
    losses = -np.log(np.maximum(probs[models, rows, Y], 1e-300)).mean(axis=1)
    correct = (probs.argmax(axis=-1) == Y).mean(axis=1)  # accuracy per network
    if grads is not None:
        dlogits = probs
        dlogits[models, rows, Y] -= 1
        dlogits /= B  # d(mean cross-entropy)/dlogits = (softmax - onehot) / B
        stack_backward(S, P, cache, dlogits @ P["W_hq"].transpose(0, 2, 1), grads)
        grads["W_hq"][...] = H_T.transpose(0, 2, 1) @ dlogits
        grads["b_q"][...] = dlogits.sum(axis=1)
    return losses, correct


def stack_evaluate(S, P, X, Y, chunk=256):
    """Mean test loss and accuracy per network, in chunks of sequences."""
    n = Y.shape[1]
    loss, acc = np.zeros(len(Y)), np.zeros(len(Y))
    for i in range(0, n, chunk):
        part_loss, part_acc = stack_loss_and_grads(S, P, X[..., i:i + chunk], Y[:, i:i + chunk])
        loss += part_loss * len(Y[0, i:i + chunk])
        acc += part_acc * len(Y[0, i:i + chunk])
    return loss / n, acc / n


def stack_input_gradients(S, P, X, Y):
    """input_gradients() for every network: g_1 and g_T (M,) each, l one sequence's own
    cross-entropy (dl/dlogits is softmax - onehot, not divided by B); dl/dx_t is the sum
    over the gates of da_t W_x^T."""
    M, B = Y.shape
    H_T, cache = stack_forward(S, P, X)
    dlogits = stack_probabilities(P, H_T)
    dlogits[np.arange(M)[:, None], np.arange(B), Y] -= 1
    dA = stack_backward(S, P, cache, dlogits @ P["W_hq"].transpose(0, 2, 1))
    W_x_T = P["W_x"].transpose(0, 1, 3, 2)  # (g, M, h, V)
    first = np.concatenate([dA[:, m0:m1, s] for m0, m1, s in S.groups], axis=1)  # at each x_1
    g_1 = np.linalg.norm((first @ W_x_T).sum(axis=0), axis=-1).mean(axis=1)
    g_T = np.linalg.norm((dA[:, :, -1] @ W_x_T).sum(axis=0), axis=-1).mean(axis=1)
    return g_1, g_T


def stack_gradients_at_x1(S, theta, X, Y):
    """stack_input_gradients in float64 on the first GRADIENT_BATCH test sequences, one
    lag at a time (every lag at once in float64 would take 200 MB)."""
    P64 = stack_params(S, theta=theta.astype(np.float64))[1]
    g_1, g_T = np.empty(len(S.models)), np.empty(len(S.models))
    for m0, m1, s in S.groups:
        one_lag = make_stack(S.cell, S.models[m0:m1], S.hidden)
        part = {name: w[:, m0:m1] if name in ("W_x", "W_h", "b") else w[m0:m1]
                for name, w in P64.items()}
        g_1[m0:m1], g_T[m0:m1] = stack_input_gradients(
            one_lag, part, X[s:, m0:m1, :GRADIENT_BATCH], Y[m0:m1, :GRADIENT_BATCH])
    return g_1, g_T


def train_stack(cell, models, steps=STEPS, dtype="float32"):
    """train() for every network of `models` ((b_f, seed, lag) each, b_f None but for the
    LSTM) of one cell, side by side. Returns their Runs, in the order of `models`."""
    S = make_stack(cell, models)
    theta, P = stack_params(S, dtype)
    dtheta, grads = stack_params(S, theta=np.empty_like(theta))  # gradients, named views
    streams = {(seed, lag): training_stream(seed, lag) for _, seed, lag in S.models}
    X_test, Y_test = stack_sequences(S, TEST)
    g1_init, gT_init = stack_gradients_at_x1(S, theta, X_test, Y_test)
    adam = Adam({"theta": theta})
    curve_steps, curve_loss, curve_acc = [], [], []
    for n in range(1, steps + 1):
        X, Y = stack_sequences(S, BATCH, streams)
        stack_loss_and_grads(S, P, X, Y, grads)
        adam.step({"theta": theta}, {"theta": dtheta})
        if n % CURVE_EVERY == 0 or n == steps:
            loss, acc = stack_evaluate(S, P, X_test, Y_test)
            curve_steps.append(n)
            curve_loss.append(loss)
            curve_acc.append(acc)
    g1, gT = stack_gradients_at_x1(S, theta, X_test, Y_test)
    runs = {}
    for m, (b_f, seed, lag) in enumerate(S.models):
        runs[b_f, seed, lag] = Run(
            cell, 0.0 if b_f is None else float(b_f), int(seed), lag, float(curve_acc[-1][m]),
            float(curve_loss[-1][m]), list(curve_steps), [float(a[m]) for a in curve_acc],
            [float(x[m]) for x in curve_loss], float(g1_init[m]), float(gT_init[m]),
            float(g1[m]), float(gT[m]))
    return [runs[m] for m in models]


_RUNS = {}  # (cell, b_f, seed, lag, steps) -> Run: each network is trained once per process


def compute_training(cell, lags, forget_biases=None, seeds=tuple(range(SEEDS)), steps=STEPS):
    """Every (b_f, seed) network of cell at each lag, trained side by side (memoised).
    Returns {lag: [Run, ...]}, b_f-major, seeds in order within a b_f."""
    if forget_biases is None:
        forget_biases = FORGET_BIASES if cell == "lstm" else (None,)
    wanted = [(b, s, lag) for lag in lags for b in forget_biases for s in seeds]
    todo = [m for m in wanted if (cell, *m, steps) not in _RUNS]
    if todo:
        for m, run in zip(todo, train_stack(cell, todo, steps)):
            _RUNS[(cell, *m, steps)] = run
    return {lag: [_RUNS[(cell, *m, steps)] for m in wanted if m[2] == lag] for lag in lags}


def compute_all(lags=LAGS):
    """Every model of MODELS at every lag (memoised): {lag: [Run, ...]}, the runs in
    MODELS order and by seed within a model."""
    by_cell = {cell: compute_training(cell, lags) for cell in CELLS}
    return {lag: [run for cell in CELLS for run in by_cell[cell][lag]] for lag in lags}


def runs_of(runs, cell, b_f):
    """The runs of one model (cell, b_f), in seed order."""
    return [r for r in runs if r.cell == cell and (b_f is None or r.b_f == b_f)]


# ---------------------------------------------------------------------------
# Checks: every gradient against finite differences; the two trainers against each other
# ---------------------------------------------------------------------------

GRADCHECK = dict(lags=(4, 2), batch=3, hidden=4, scale=0.5, eps=1e-5)  # small, float64
AGREE = dict(lags=(5, 10), seed=0, steps=100)  # networks trained both ways by --agree


@dataclass
class GradcheckRow:
    cell: str
    parameter: str
    shape: list  # one network's
    plain_error: float  # max |a - n| / max(|a| + |n|), a from loss_and_grads, n numeric
    batched_error: float  # the same for stack_loss_and_grads, two networks of two lags


def numeric_gradient(loss, w, eps):
    """Central differences of loss() for every entry of the array w (changed and put back)."""
    grad = np.empty_like(w)
    for i in np.ndindex(w.shape):
        old = w[i]
        w[i] = old + eps
        plus = loss()
        w[i] = old - eps
        minus = loss()
        w[i] = old
        grad[i] = (plus - minus) / (2 * eps)
    return grad


def relative_error(a, n):
    return float(np.abs(a - n).max() / max((np.abs(a) + np.abs(n)).max(), 1e-300))


def compute_gradcheck(cells=CELLS, seed=0):
    """Every analytic gradient against central differences, in float64 with random
    weights of size `scale` and tokens anywhere: one network's (the plain code), and two
    networks' of two lags side by side (the batched code, which starts the shorter one
    later), each stacked parameter compared by gate under its d2l name."""
    c = GRADCHECK
    rows = []
    for cell in cells:
        rng = np.random.default_rng([seed, CELLS.index(cell)])
        p = {name: c["scale"] * rng.standard_normal(w.shape)
             for name, w in init_params(cell, 0, hidden=c["hidden"]).items()}
        X = rng.integers(0, V, (c["batch"], c["lags"][0] + 1))
        Y = rng.integers(0, K, c["batch"])
        _, _, grads, _ = loss_and_grads(p, cell, X, Y)
        plain = {name: relative_error(grads[name], numeric_gradient(
            lambda: loss_and_grads(p, cell, X, Y, need_grads=False)[0], w, c["eps"]))
            for name, w in p.items()}
        b_f = (0.0, 1.0) if cell == "lstm" else (None, None)
        S = make_stack(cell, [(b_f[0], 0, c["lags"][0]), (b_f[1], 1, c["lags"][1])], c["hidden"])
        theta, P = stack_params(S, "float64")
        theta[:] = c["scale"] * rng.standard_normal(theta.shape)
        X = rng.integers(0, V, (S.T, 2, c["batch"]))
        Y = rng.integers(0, K, (2, c["batch"]))
        dtheta, G = stack_params(S, theta=np.empty_like(theta))
        stack_loss_and_grads(S, P, X, Y, G)
        numeric = numeric_gradient(lambda: stack_loss_and_grads(S, P, X, Y)[0].sum(), theta,
                                   c["eps"])
        N = stack_params(S, theta=numeric)[1]
        for name, w in p.items():
            stacked, g = (name, None) if name in ("W_hq", "b_q") else (
                "b" if name[0] == "b" else name[:3], GATES[cell].index(name[-1]))
            part = (slice(None),) if g is None else (g,)
            rows.append(GradcheckRow(cell, name, list(w.shape), plain[name],
                                     relative_error(G[stacked][part], N[stacked][part])))
    return rows


@dataclass
class AgreeRow:
    model: str
    lag: int
    accuracy: float  # test accuracy of the network trained by train(), float64
    loss: float  # its test loss
    g1_trained: float  # its g_1 after training
    batched64: float  # largest relative difference, train_stack in float64 against train()
    batched32: float  # the same, train_stack in float32 (as the build trains)


def compute_agreement():
    """The networks of seed AGREE['seed'] at AGREE['lags'], every model, trained for
    AGREE['steps'] steps three ways: one at a time by train() (float64), and side by side
    by train_stack() in float64 and in float32. Compared: every point of the test loss
    and accuracy curves, and g_1 and g_T before and after training."""
    a = AGREE
    rows = []
    for cell, b_f in MODELS:
        models = [(b_f, a["seed"], lag) for lag in a["lags"]]
        both = zip(models, train_stack(cell, models, a["steps"], "float64"),
                   train_stack(cell, models, a["steps"], "float32"))
        for (_, seed, lag), r64, r32 in both:
            one = train(cell, lag, seed, 0.0 if b_f is None else b_f, a["steps"])

            def numbers(r):
                return r.curve_loss + r.curve_accuracy + [r.g1_init, r.gT_init, r.g1_trained,
                                                          r.gT_trained]

            def difference(r):
                return max(abs(x - y) / max(abs(x), abs(y), 1e-300)
                           for x, y in zip(numbers(one), numbers(r)))

            rows.append(AgreeRow(model_name(cell, b_f), lag, one.accuracy, one.loss,
                                 one.g1_trained, difference(r64), difference(r32)))
    return rows


# ---------------------------------------------------------------------------
# What the site prints: the tables, the records, one report per flag
# ---------------------------------------------------------------------------

SHOWN = "ABCD"[:K] + "wxyz"[:D] + "?"  # how a token is printed: symbols, distractors, query


def spread(values):
    """'0.74 (0.26-1.00)': mean, then lowest and highest, over seeds."""
    return f"{sum(values) / len(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def sci(x):
    return f"{x:.1e}" if x > 0 else "0"


def format_setting_table():
    rows = [
        ("task", f"1 of {K} symbols, lag - 1 distractors from {D} others, a query; "
                 f"answer at the query"),
        ("lags", ", ".join(map(str, LAGS))),
        ("models", ", ".join(model_name(c, b) for c, b in MODELS) + f"; hidden size {h}"),
        ("initialisation", f"weights uniform(-1/sqrt({h}), 1/sqrt({h})), biases zero, "
                           f"except the LSTM's b_f"),
        ("optimiser", f"Adam, learning rate {LR:g}, betas {BETAS[0]:g} and {BETAS[1]:g}, "
                      f"epsilon {EPS:g} (PyTorch's defaults)"),
        ("budget", f"{STEPS:,} steps of {BATCH} fresh sequences, for every model and lag"),
        ("seeds", f"{SEEDS} per model and lag (the same {SEEDS} training streams for "
                  f"every model)"),
        ("test", f"{TEST} fixed sequences per seed and lag"),
        ("chance", f"accuracy 1/{K} = {1 / K:.2f}, cross-entropy ln {K} = {math.log(K):.3f}"),
    ]
    return format_table(("item", "value"), rows, "ll")


def format_examples_table(X, Y):
    rows = [(" ".join(SHOWN[t] for t in x), SHOWN[y]) for x, y in zip(X, Y)]
    return format_table(("sequence x_1 .. x_T", "answer"), rows, "ll")


def format_accuracy_table(table):
    """table: {lag: [Run, ...]}: a row per lag, a column per model."""
    rows = [(str(lag),) + tuple(spread([r.accuracy for r in runs_of(runs, c, b)])
                                for c, b in MODELS) for lag, runs in table.items()]
    return format_table(("lag",) + tuple(model_name(c, b) for c, b in MODELS), rows,
                        "r" * (len(MODELS) + 1))


def format_curve_table(steps, curves):
    """curves: {model name: [[accuracy at each step] per seed]}."""
    rows = []
    for k, step_ in enumerate(steps):
        rows.append((f"{step_:,}",) + tuple(spread([c[k] for c in per_seed])
                                            for per_seed in curves.values()))
    return format_table(("step",) + tuple(curves), rows, "r" * (len(curves) + 1))


def format_gradient_table(by_lag, lags):
    """by_lag: {model name: [median over seeds, per lag]}."""
    rows = [(name,) + tuple(sci(x) for x in values) for name, values in by_lag.items()]
    return format_table(("model",) + tuple(f"lag {lag}" for lag in lags), rows,
                        "l" + "r" * len(lags))


def format_row_table(runs):
    rows = [(r.seed, f"{r.accuracy:.3f}", f"{r.loss:.3f}", sci(r.g1_init), sci(r.g1_trained))
            for r in runs]
    return format_table(("seed", "test accuracy", "test loss", "g_1 at init", "g_1 trained"),
                        rows, "rrrrr")


def format_agree_table(rows):
    body = [(r.model, r.lag, f"{r.accuracy:.3f}", f"{r.loss:.4f}", sci(r.g1_trained),
             f"{r.batched64:.1e}", f"{r.batched32:.1e}") for r in rows]
    return format_table(("model", "lag", "test accuracy", "test loss", "g_1 trained",
                         "batched, float64", "batched, float32"), body, "lrrrrrr")


def format_gradcheck_table(rows):
    body = [(r.cell, r.parameter, " x ".join(map(str, r.shape)), f"{r.plain_error:.1e}",
             f"{r.batched_error:.1e}") for r in rows]
    return format_table(("cell", "parameter", "shape", "one network", "batched"), body, "llrrr")


@dataclass
class TaskRecord:
    symbols: int  # K
    distractors: int  # D
    lags: list
    seeds: int
    hidden: int
    batch: int
    steps: int
    lr: float
    betas: list
    init_bound: float  # weights uniform(-init_bound, init_bound)
    forget_biases: list
    test: int  # fixed test sequences per seed and lag
    chance_accuracy: float
    chance_loss: float
    example_lag: int
    examples: list  # [sequence as text, answer]


@dataclass
class AccuracyRecord:
    lags: list
    models: list  # model names, in the table's column order
    chance_accuracy: float
    chance_loss: float
    accuracy: dict  # model name -> per lag, per seed test accuracy
    loss: dict  # model name -> per lag, per seed test cross-entropy
    mean_accuracy: dict  # model name -> per lag, mean over seeds
    curve_steps: list  # the steps at which every learning curve was measured
    curves: dict  # model name -> per lag, per seed, test accuracy at each of curve_steps
    seconds: float  # training time of this report (0 if already trained)
    cpu_seconds: float  # the same in CPU time of this process


@dataclass
class CurvesRecord:
    lag: int
    steps: list  # the steps at which every curve was measured
    chance_accuracy: float
    accuracy: dict  # model name -> per seed, test accuracy at each step
    loss: dict  # model name -> per seed, test cross-entropy at each step
    shown_steps: list  # the rows of the printed table


@dataclass
class GradientRecord:
    lags: list
    models: list
    g1_init: dict  # model name -> per lag, per seed mean ||dl/dx_1|| at initialisation
    g1_trained: dict  # the same after training
    gT_init: dict  # model name -> per lag, per seed mean ||dl/dx_T|| (at the query)
    gT_trained: dict
    g1_init_median: dict  # model name -> per lag, median over seeds (the printed tables)
    g1_trained_median: dict
    share_trained_median: dict  # model name -> per lag, median over seeds of g_1 / g_T


@dataclass
class RowRecord:
    cell: str
    b_f: float
    lag: int
    steps: int
    chance_accuracy: float
    runs: list  # Run records, one per seed
    mean_accuracy: float
    seconds: float


@dataclass
class AgreeRecord:
    lags: list
    seed: int
    steps: int
    rows: list  # AgreeRow records
    worst64: float  # the largest relative difference in float64
    worst32: float  # and in float32
    passed: bool  # worst64 < 1e-9


@dataclass
class GradcheckRecord:
    rows: list  # GradcheckRow records
    worst: float
    passed: bool  # worst < 1e-6


def report_task(args, out):
    rng = training_stream(0, 5)
    X, Y = make_sequences(rng, 3, 5)
    out.text(f"The task: remember the first of {K} symbols ({SHOWN[:K]}) across lag - 1 "
             f"distractors ({SHOWN[K:K + D]}) until the query (?). The first three training "
             f"sequences of seed 0 at lag 5:")
    out.table("examples", format_examples_table(X, Y))
    out.table("setting", format_setting_table())
    return TaskRecord(K, D, list(LAGS), SEEDS, h, BATCH, STEPS, LR, list(BETAS), INIT_BOUND,
                      list(FORGET_BIASES), TEST, 1 / K, math.log(K), 5,
                      [[" ".join(SHOWN[t] for t in x), SHOWN[y]] for x, y in zip(X, Y)])


def per_model(table, field):
    """{model name: [[field of each seed's run] per lag]} of compute_all's table."""
    return {model_name(c, b): [[getattr(r, field) for r in runs_of(runs, c, b)]
                               for runs in table.values()] for c, b in MODELS}


def report_accuracy(args, out):
    start, cpu = time.perf_counter(), time.process_time()
    table = compute_all()
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu
    out.text(f"Test accuracy after {STEPS:,} steps: mean over {SEEDS} seeds (lowest-highest). "
             f"Chance is {1 / K:.2f}.")
    out.table("accuracy", format_accuracy_table(table))
    out.text(f"time: {seconds:.1f} s")
    acc = per_model(table, "accuracy")
    mean = {name: [float(np.mean(a)) for a in per_lag] for name, per_lag in acc.items()}
    return AccuracyRecord(list(LAGS), list(acc), 1 / K, math.log(K), acc,
                          per_model(table, "loss"), mean, table[LAGS[0]][0].curve_steps,
                          per_model(table, "curve_accuracy"), seconds, cpu_seconds)


def report_curves(args, out):
    table = compute_all(lags=(CURVE_LAG,))[CURVE_LAG]
    steps = runs_of(table, "rnn", None)[0].curve_steps
    acc = {model_name(c, b): [r.curve_accuracy for r in runs_of(table, c, b)] for c, b in MODELS}
    loss = {model_name(c, b): [r.curve_loss for r in runs_of(table, c, b)] for c, b in MODELS}
    shown = [s for s in CURVE_SHOWN if s in steps]
    rows = [steps.index(s) for s in shown]
    out.text(f"Learning curves at lag {CURVE_LAG}: test accuracy, mean over {SEEDS} seeds "
             f"(lowest-highest), measured every {CURVE_EVERY} steps; a few shown. "
             f"Chance is {1 / K:.2f}.")
    out.table("curves", format_curve_table(shown, {name: [[c[k] for k in rows] for c in per_seed]
                                                   for name, per_seed in acc.items()}))
    return CurvesRecord(CURVE_LAG, steps, 1 / K, acc, loss, shown)


def report_gradient(args, out):
    table = compute_all()
    g1_init, g1_trained = per_model(table, "g1_init"), per_model(table, "g1_trained")
    gT_init, gT_trained = per_model(table, "gT_init"), per_model(table, "gT_trained")

    def median(per_lag):
        return [float(np.median(seeds)) for seeds in per_lag]

    median_init = {n: median(v) for n, v in g1_init.items()}
    median_trained = {n: median(v) for n, v in g1_trained.items()}
    share = {n: median([[a / b if b > 0 else 0.0 for a, b in zip(s1, sT)]
                        for s1, sT in zip(g1_trained[n], gT_trained[n])]) for n in g1_init}
    out.text(f"The gradient reaching the first input: g_1, the mean over {GRADIENT_BATCH} test "
             f"sequences of the norm of dl/dx_1 (l a sequence's cross-entropy, x_1 its one-hot "
             f"first symbol), median over {SEEDS} seeds. At initialisation:")
    out.table("gradient_init", format_gradient_table(median_init, LAGS))
    out.text(f"After {STEPS:,} steps of training:")
    out.table("gradient_trained", format_gradient_table(median_trained, LAGS))
    out.text("A network that has learned has a small loss, so small gradients everywhere. "
             "The share that reaches back, g_1 / g_T (g_T the same norm at the query x_T, "
             "lag steps later), after training:")
    out.table("gradient_share", format_gradient_table(share, LAGS))
    return GradientRecord(list(LAGS), list(g1_init), g1_init, g1_trained, gT_init, gT_trained,
                          median_init, median_trained, share)


def report_row(args, out):
    if args.cell is None or args.lag is None:
        raise Refused("--row needs --cell and --lag, e.g. --row --cell gru --lag 50")
    if args.forget_bias is not None and args.cell != "lstm":
        raise Refused(f"--forget-bias has no effect with --cell {args.cell}")
    steps = STEPS if args.steps is None else args.steps
    b_f = (1.0 if args.forget_bias is None else args.forget_bias) if args.cell == "lstm" else None
    start = time.perf_counter()
    runs = compute_training(args.cell, (args.lag,), forget_biases=(b_f,), steps=steps)[args.lag]
    seconds = time.perf_counter() - start
    out.text(f"{model_name(args.cell, b_f)} at lag {args.lag}, {steps:,} steps, "
             f"{SEEDS} seeds (chance {1 / K:.2f}):")
    out.table("row", format_row_table(runs))
    mean = float(np.mean([r.accuracy for r in runs]))
    out.text(f"mean test accuracy {mean:.2f}\ntime: {seconds:.1f} s")
    return RowRecord(args.cell, 0.0 if b_f is None else float(b_f), args.lag, steps,
                     1 / K, runs, mean, seconds)


def report_agree(args, out):
    a = AGREE
    rows = compute_agreement()
    worst64, worst32 = max(r.batched64 for r in rows), max(r.batched32 for r in rows)
    out.text(f"Seed {a['seed']} of every model at lags {' and '.join(map(str, a['lags']))}, "
             f"trained for {a['steps']} steps three ways: one network at a time by train() "
             f"(float64), and side by side by train_stack(), in float64 and in float32 (as the "
             f"build trains). The last two columns: the largest relative difference from "
             f"train() over the test loss and accuracy every {CURVE_EVERY} steps, and g_1 and "
             f"g_T before and after training.")
    out.table("agree", format_agree_table(rows))
    out.text(f"float64: {worst64:.1e} ({'under' if worst64 < 1e-9 else 'NOT under'} 1e-9): "
             f"the same networks, up to the order of floating-point sums.")
    return AgreeRecord(list(a["lags"]), a["seed"], a["steps"], rows, worst64, worst32,
                       worst64 < 1e-9)


def report_gradcheck(args, out):
    c = GRADCHECK
    rows = compute_gradcheck()
    worst = max(max(r.plain_error, r.batched_error) for r in rows)
    out.text(f"Relative error max |a - n| / max(|a| + |n|) over each parameter's entries, "
             f"a analytic, n central difference with step {c['eps']:g}; float64, batch "
             f"{c['batch']}, hidden {c['hidden']}. One network: loss_and_grads at lag "
             f"{c['lags'][0]}; batched: stack_loss_and_grads, two networks side by side at lags "
             f"{c['lags'][0]} and {c['lags'][1]}.")
    out.table("gradcheck", format_gradcheck_table(rows))
    out.text(f"worst: {worst:.1e} ({'under' if worst < 1e-6 else 'NOT under'} 1e-6)")
    return GradcheckRecord(rows, worst, worst < 1e-6)


REPORTS = {  # flag -> (what it prints, the function), in the order of the chapter
    "task": ("step 1: the task and the training setting", report_task),
    "accuracy": ("step 2: test accuracy by cell and lag, every seed", report_accuracy),
    "curves": (f"step 3: learning curves at lag {CURVE_LAG}", report_curves),
    "gradient": ("step 4: the gradient reaching the first input, at initialisation and "
                 "after training", report_gradient),
    "row": ("one cell at one lag, every seed (with --cell and --lag)", report_row),
    "agree": ("the batched trainer against the one-network model: the same networks trained "
              "both ways", report_agree),
    "gradcheck": ("every hand-written gradient against central differences", report_gradcheck),
}
DEFAULT = ("task", "accuracy", "curves", "gradient")  # what chapter 15 shows; --row, --agree
# and --gradcheck are extra commands of their own
EXAMPLES = {"row": ("--row", "--cell", "gru", "--lag", "20")}  # a report that needs options,
# as the code page and the notebook run it

OPTIONS = {option: ("row",) for option in ("cell", "forget_bias", "lag", "steps")}


SECONDS_PER_STEP = {"rnn": 5e-5, "lstm": 2.2e-4, "gru": 1.8e-4}  # --row: one step of all
# the seeds, per step of the sequence (lag + 5), on one core: measured at lag 1,000


def estimate_seconds(args):
    """About how long --row trains (the harness refuses a command past an hour); the other
    reports have no options and take minutes."""
    if "row" not in args.chosen or args.cell is None or args.lag is None:
        return 0.0
    return SECONDS_PER_STEP[args.cell] * (args.lag + 5) * (args.steps or STEPS)


def add_options(parser):
    parser.add_argument("--cell", choices=CELLS, help="with --row: the cell to train")
    parser.add_argument("--forget-bias", type=number(float, -10, 10), metavar="B",
                        help="with --row --cell lstm: the initial forget bias b_f (default 1)")
    parser.add_argument("--lag", type=number(int, 1, MAX_LAG), metavar="L",
                        help=f"with --row: steps from the symbol to the query, 1 to {MAX_LAG:,}")
    parser.add_argument("--steps", type=number(int, 1, 100_000), metavar="N",
                        help=f"with --row: training steps (default {STEPS:,})")


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


if __name__ == "__main__":
    sys.exit(main())
