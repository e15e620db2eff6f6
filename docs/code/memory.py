"""memory.py: how far back the plain RNN, the LSTM and the GRU learn to remember, measured.

Companion script to chapter 15 ("Long memory, measured"). Python 3.9+ and numpy.

The task: a sequence starts with one of K symbols, then lag - 1 distractors
drawn at random from D other symbols, then a query; at the query the network
must name the first symbol. The answer depends on an input `lag` steps back
and on nothing in between; a network that cannot carry it that far is left
with chance, 1/K.

The cells are d2l's (chapter 14, gru.py), with a leading model axis so that
every seed (and, for the LSTM, every forget bias) is trained side by side as
one batched computation:

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

(the notation and the GRU convention of chapter 14 and d2l.ai: Z near 1 keeps
the old state). X is the one-hot input, H_0 (and C_0) zero; the answer is read
from the last state only, Y_hat = H_T W_hq + b_q, with softmax cross-entropy.
Gradients are backpropagation through time written out by hand (--gradcheck
checks each one against finite differences).

Every cell gets the same rules, all of them PyTorch's defaults rather than
values tuned here: weights uniform(-1/sqrt(h), 1/sqrt(h)) (nn.RNN's, nn.LSTM's
and nn.GRU's rule), biases zero; Adam with learning rate 1e-3; the same budget
(STEPS steps of BATCH fresh sequences) and the same training sequences for every
cell. The LSTM's forget-gate bias b_f starts at 0, 1 or 2, the only difference
between its three rows. Why this setting and not the site's SGD with clipping
and d2l's normal(0, 0.01) weights: benchmarks/long_lag_pilot.py and chapter 15.

The gradient reaching the first input (--gradient): x_1, the one-hot first
symbol, taken as a real vector; for each test sequence, l is its cross-entropy
and g_1 = ||dl/dx_1||, the Euclidean norm of the gradient of l with respect to
x_1 (dl/dx_1 = W_x da_1, da_1 the gradient at step 1's pre-activations). The
tables give its mean over the first GRADIENT_BATCH = 64 test sequences, computed
in float64, at initialisation and after training, the median over seeds (every
seed's value is in the record). A network that has
learned has a small loss and so small gradients everywhere; the ratio
g_1 / g_T, with g_T the same norm at the query x_T, says what share of the
gradient arriving at the answer reaches back `lag` steps.

    python3 memory.py              what chapter 15 shows, in order (--task
                                   --accuracy --curves --gradient), about 2.5 minutes
    python3 memory.py --task       step 1: the task and the training setting
    python3 memory.py --accuracy   step 2: test accuracy by cell and lag, every seed
    python3 memory.py --curves     step 3: learning curves at one long lag
    python3 memory.py --gradient   step 4: the gradient reaching the first input
    python3 memory.py --row --cell lstm --forget-bias 1 --lag 50
                                   one cell at one lag, every seed (under 20 s up to
                                   lag 100);
                                   --forget-bias only with --cell lstm (default 1)
    python3 memory.py --row --cell gru --lag 50 --steps 6000
                                   the same with another budget (default 1,500 steps)
    python3 memory.py --gradcheck  every hand-written gradient against central differences

Training is float32 on one BLAS thread; the same command prints the same
table, run after run (lines starting with `time:` are measured times).
"""

import argparse
import math
import os
import sys
import textwrap
import time
from dataclasses import dataclass

if __name__ == "__main__":  # as a script: one BLAS thread (must be set before numpy loads)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")  # threads cost more than they save on 16-unit models

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
SEEDS = 4  # seeds per cell and lag, trained side by side
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


def seeds_sequences(key, seeds, n, lag, rngs=None):
    """One batch per seed, from each seed's own generator: tokens (T, S, n) time-major
    and answers (S, n). rngs: the generators to continue (training); None: fresh
    ones for key (the fixed test set)."""
    if rngs is None:
        rngs = [np.random.default_rng([key, s, lag]) for s in seeds]
    batches = [make_sequences(rng, n, lag) for rng in rngs]
    X = np.stack([x for x, _ in batches], axis=1).transpose(2, 1, 0)  # (T, S, n)
    Y = np.stack([y for _, y in batches])
    return np.ascontiguousarray(X), Y


# ---------------------------------------------------------------------------
# The cells, batched over models: every array has a leading model axis M
# ---------------------------------------------------------------------------

def init_params(cell, seeds, forget_biases=(None,), dtype="float32", hidden=h):
    """Parameters for each (b_f, seed) pair, b_f-major, named as in d2l: per gate ? an
    input weight W_x? (V, h), a recurrent weight W_h? (h, h) and a bias b_? (h,), then
    the output layer W_hq (h, K), b_q (K,). The rule, the same for every cell (PyTorch's
    for nn.RNN, nn.LSTM, nn.GRU and nn.Linear(h, K)): every weight uniform(-a, a),
    a = 1/sqrt(h); biases zero, except the LSTM's b_f. A seed draws the same weights
    for every lag and every b_f."""
    a = 1 / math.sqrt(hidden)
    per_seed = []
    for s in seeds:
        rng = np.random.default_rng([INIT_KEY, s])
        p = {}
        for g in GATES[cell]:
            p["W_x" + g] = rng.uniform(-a, a, (V, hidden))
            p["W_h" + g] = rng.uniform(-a, a, (hidden, hidden))
            p["b_" + g] = np.zeros(hidden)
        p["W_hq"] = rng.uniform(-a, a, (hidden, K))
        p["b_q"] = np.zeros(K)
        per_seed.append(p)
    params = {}
    for name in per_seed[0]:
        params[name] = np.stack([p[name] for b in forget_biases for p in per_seed])
    if cell == "lstm":
        b_f = [0.0 if b is None else b for b in forget_biases]  # None: zero, as every bias
        params["b_f"][:] = np.repeat(b_f, len(seeds))[:, None]
    return {name: p.astype(dtype) for name, p in params.items()}


def stack_gates(p, cell):
    """The per-gate parameters side by side: W_x (M, V, g h), W_h (M, h, g h), b (M, g h)."""
    gates = GATES[cell]
    return (np.concatenate([p["W_x" + g] for g in gates], axis=-1),
            np.concatenate([p["W_h" + g] for g in gates], axis=-1),
            np.concatenate([p["b_" + g] for g in gates], axis=-1))


def unstack_gates(cell, dW_x, dW_h, db):
    """Inverse of stack_gates, for the gradients."""
    grads = {}
    for k, g in enumerate(GATES[cell]):
        part = slice(k * h_of(dW_h), (k + 1) * h_of(dW_h))
        grads["W_x" + g], grads["W_h" + g], grads["b_" + g] = \
            dW_x[..., part], dW_h[..., part], db[..., part]
    return grads


def h_of(W_h):
    return W_h.shape[-2]  # hidden size, read off a recurrent weight (M, h, g h)


def sigmoid_(a):
    """sigma(a) = (1 + tanh(a/2)) / 2 in place, which never overflows."""
    a *= 0.5
    np.tanh(a, out=a)
    a *= 0.5
    a += 0.5
    return a


def input_part(W_x, b, X, t=None):
    """X_t W_x + b for every model: X is one-hot, so the product is a row lookup.
    X: (T, M, B) token ids; all steps at once (T, M, B, g h), or step t only."""
    M = W_x.shape[0]
    table = W_x + b[:, None, :]  # (M, V, g h): row v is e_v W_x + b
    models = np.arange(M)[:, None]
    if t is None:
        return table[models[None], X]
    return table[models, X[t]]


def cell_forward(cell, p, X, keep=True):
    """Run the cell over X (T, M, B) token ids from a zero state. Returns the last
    state H_T (M, B, h) and, if keep, what the backward pass needs."""
    W_x, W_h, b = stack_gates(p, cell)
    T, M, B = X.shape
    hh = h_of(W_h)
    A = input_part(W_x, b, X) if keep else None  # pre-activations, then gates, per step
    H = np.zeros((M, B, hh), W_h.dtype)
    C = np.zeros_like(H)  # LSTM memory cell
    Hs, Cs, TCs, RHs = [H], [C], [], []  # H_0 .. H_T, C_0 .. C_T, tanh(C_t), R * H_prev
    for t in range(T):
        a = A[t] if keep else input_part(W_x, b, X, t)  # X_t W_x + b
        if cell == "rnn":
            a += H @ W_h  # + H_prev W_hh
            H = np.tanh(a, out=a)  # H = tanh(..)
        elif cell == "lstm":
            a += H @ W_h  # + H_prev W_h?, the four gates in one product
            IFO, Cc = a[..., :3 * hh], a[..., 3 * hh:]
            sigmoid_(IFO)  # I, F, O
            np.tanh(Cc, out=Cc)  # C~
            I, F, O = IFO[..., :hh], IFO[..., hh:2 * hh], IFO[..., 2 * hh:]
            C = F * C + I * Cc  # C = F * C_prev + I * C~
            TC = np.tanh(C)
            H = O * TC  # H = O * tanh(C)
            Cs.append(C)
            TCs.append(TC)
        else:  # gru
            ZR, Ht = a[..., :2 * hh], a[..., 2 * hh:]
            ZR += H @ W_h[..., :2 * hh]  # + H_prev W_hz, + H_prev W_hr
            sigmoid_(ZR)  # Z, R
            Z, R = ZR[..., :hh], ZR[..., hh:]
            RH = R * H  # R * H_prev
            Ht += RH @ W_h[..., 2 * hh:]  # + (R * H_prev) W_hh
            np.tanh(Ht, out=Ht)  # H~
            H = Ht + Z * (H - Ht)  # H = Z * H_prev + (1 - Z) * H~
            RHs.append(RH)
        Hs.append(H)
    return H, (cell, X, A, Hs, Cs, TCs, RHs, W_x, W_h)


def flush_tiny_(x):
    """Set to zero, in place, the entries below tiny / eps of x's type (1e-31 in float32,
    1e-292 in float64). A gradient carried back a few hundred steps can shrink that far,
    and one more product takes it below the smallest normal number (1.2e-38 in float32),
    where arithmetic is many times slower. Training cannot tell such entries from zero;
    g_1 is measured in float64, where the threshold is out of reach."""
    info = np.finfo(x.dtype)
    np.putmask(x, np.abs(x) < info.tiny / info.eps, 0)


def cell_backward(cache, dH_T):
    """dH_T: dloss/dH_T (M, B, h). Returns the gradients of the cell's parameters by
    name and dA (T, M, B, g h), dloss/d(pre-activations) at every step (for dloss/dx_t,
    the gradient reaching input t, which is dA[t] W_x^T)."""
    cell, X, A, Hs, Cs, TCs, RHs, W_x, W_h = cache
    T, M, B = X.shape
    hh = h_of(W_h)
    dA = np.empty_like(A)
    dH = dH_T  # dloss/dH_t, carried back through time (a new array each step)
    dC = np.zeros_like(dH)  # dloss/dC_t (LSTM)
    W_h_T = W_h.transpose(0, 2, 1)
    s = np.empty_like(dH)  # scratch
    for t in reversed(range(T)):
        G, da, H_prev = A[t], dA[t], Hs[t]
        if cell == "rnn":
            da[:] = dH * (1 - G * G)  # da_h = dH * (1 - H^2); G holds H_t
            dH = da @ W_h_T  # dloss/dH_prev = da_h W_hh^T
        elif cell == "lstm":
            I, F, O, Cc = (G[..., k * hh:(k + 1) * hh] for k in range(4))
            TC = TCs[t]  # tanh(C_t)
            np.multiply(TC, TC, out=s)
            np.subtract(1, s, out=s)
            s *= O
            s *= dH
            dC += s  # dloss/dC: carried back, plus through H = O * tanh(C)
            np.multiply(dC, Cc, out=da[..., 0:hh])  # dloss/dI = dC * C~
            np.multiply(dC, Cs[t], out=da[..., hh:2 * hh])  # dloss/dF = dC * C_prev
            np.multiply(dH, TC, out=da[..., 2 * hh:3 * hh])  # dloss/dO = dH * tanh(C)
            IFO = G[..., :3 * hh]
            da[..., :3 * hh] *= IFO * (1 - IFO)  # da_i, da_f, da_o: times sigma' = s (1 - s)
            np.multiply(Cc, Cc, out=s)
            np.subtract(1, s, out=s)
            s *= I
            s *= dC
            da[..., 3 * hh:] = s  # da_c = dloss/dC~ * tanh', dloss/dC~ = dC * I
            dC *= F  # dloss/dC_prev
            dH = da @ W_h_T  # dloss/dH_prev, through all four gates
        else:  # gru
            Z, R, Ht = (G[..., k * hh:(k + 1) * hh] for k in range(3))
            dZ = dH * (H_prev - Ht)  # H = Z * H_prev + (1 - Z) * H~
            da_h = dH * (1 - Z) * (1 - Ht * Ht)  # through H~ = tanh(..)
            dRH = da_h @ W_h_T[:, 2 * hh:]  # dloss/d(R * H_prev) = da_h W_hh^T
            da[..., 0:hh] = dZ * Z * (1 - Z)  # da_z
            da[..., hh:2 * hh] = dRH * H_prev * R * (1 - R)  # da_r
            da[..., 2 * hh:] = da_h
            dH = dH * Z + dRH * R + da[..., :2 * hh] @ W_h_T[:, :2 * hh]  # dloss/dH_prev
        flush_tiny_(dH)
        if cell == "lstm":
            flush_tiny_(dC)
    # weight gradients summed over steps and sequences, each as one product
    TB = T * B
    onehot = (X.transpose(1, 0, 2).reshape(M, 1, TB) == np.arange(V)[:, None]).astype(dA.dtype)
    dA_flat = dA.transpose(1, 0, 2, 3).reshape(M, TB, -1)  # (M, T B, g h)
    dW_x = onehot @ dA_flat  # sum over steps of X_t^T da_t
    H_prev = np.stack(Hs[:-1], axis=1).reshape(M, TB, hh)  # H_0 .. H_{T-1}
    dW_h = H_prev.transpose(0, 2, 1) @ dA_flat  # sum over steps of H_prev^T da_t
    if cell == "gru":  # H~ reads R * H_prev, not H_prev
        RH = np.stack(RHs, axis=1).reshape(M, TB, hh)
        dW_h[..., 2 * hh:] = RH.transpose(0, 2, 1) @ dA_flat[..., 2 * hh:]
    db = dA_flat.sum(axis=1)
    return unstack_gates(cell, dW_x, dW_h, db), dA


def loss_and_grads(cell, p, X, Y, need_grads=True):
    """Softmax cross-entropy of the answer read at the last step, per model: loss (M,)
    is the mean over each model's B sequences; the gradients are those of the sum of
    the models' losses, so each model gets the gradient of its own loss."""
    H_T, cache = cell_forward(cell, p, X, keep=need_grads)
    logits = H_T @ p["W_hq"] + p["b_q"][:, None, :]  # Y_hat = H_T W_hq + b_q, (M, B, K)
    logits = logits - logits.max(axis=-1, keepdims=True)  # softmax is unchanged by a shift
    P = np.exp(logits)
    P /= P.sum(axis=-1, keepdims=True)
    M, B = Y.shape
    picked = P[np.arange(M)[:, None], np.arange(B), Y]  # the probability of the answer
    losses = -np.log(np.maximum(picked, 1e-300)).mean(axis=1)
    correct = (P.argmax(axis=-1) == Y).mean(axis=1)  # accuracy per model
    if not need_grads:
        return losses, correct, None
    dlogits = P
    dlogits[np.arange(M)[:, None], np.arange(B), Y] -= 1
    dlogits /= B  # d(mean cross-entropy)/dlogits = (softmax - onehot) / B
    grads, _ = cell_backward(cache, dlogits @ p["W_hq"].transpose(0, 2, 1))
    grads["W_hq"] = H_T.transpose(0, 2, 1) @ dlogits
    grads["b_q"] = dlogits.sum(axis=1)
    return losses, correct, {name: grads[name] for name in p}


def input_gradients(cell, p, X, Y):
    """The gradient reaching the first and the last input: per model, the mean over
    the B sequences of ||dl/dx_1|| and of ||dl/dx_T||, l a sequence's own
    cross-entropy and x_t its one-hot input taken as a real vector (M,) each."""
    B = Y.shape[1]
    H_T, cache = cell_forward(cell, p, X)
    logits = H_T @ p["W_hq"] + p["b_q"][:, None, :]
    logits = logits - logits.max(axis=-1, keepdims=True)
    dlogits = np.exp(logits)
    dlogits /= dlogits.sum(axis=-1, keepdims=True)
    M = Y.shape[0]
    dlogits[np.arange(M)[:, None], np.arange(B), Y] -= 1  # dl/dlogits, one sequence each
    _, dA = cell_backward(cache, dlogits @ p["W_hq"].transpose(0, 2, 1))
    W_x_T = cache[-2].transpose(0, 2, 1)  # (M, g h, V)
    g_1 = np.linalg.norm(dA[0] @ W_x_T, axis=-1).mean(axis=1)  # dl/dx_1 = da_1 W_x^T
    g_T = np.linalg.norm(dA[-1] @ W_x_T, axis=-1).mean(axis=1)
    return g_1, g_T


# ---------------------------------------------------------------------------
# Training: Adam, all models side by side
# ---------------------------------------------------------------------------

class Adam:
    """Adam (Kingma and Ba, 2015) with PyTorch's defaults: per parameter entry,
    m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, step lr m^ / (sqrt(v^) + eps),
    m^ and v^ corrected for their start at zero. Every entry is its own, so the
    models side by side stay independent."""

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
    """One model (cell, b_f, seed) trained at one lag."""
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


_RUNS = {}  # (cell, b_f, seed, lag, steps) -> Run: each training run is done once per process


def evaluate(cell, p, X, Y, chunk=128):
    """Mean test loss and accuracy per model, in chunks of sequences."""
    n = Y.shape[1]
    loss, acc = np.zeros(len(Y)), np.zeros(len(Y))
    for i in range(0, n, chunk):
        part_loss, part_acc, _ = loss_and_grads(cell, p, X[:, :, i:i + chunk],
                                                Y[:, i:i + chunk], need_grads=False)
        loss += part_loss * len(Y[0, i:i + chunk])
        acc += part_acc * len(Y[0, i:i + chunk])
    return loss / n, acc / n


def gradients_at_x1(cell, p, X, Y):
    """input_gradients in float64 on the first GRADIENT_BATCH test sequences."""
    p64 = {name: w.astype(np.float64) for name, w in p.items()}
    g_1, g_T = input_gradients(cell, p64, X[:, :, :GRADIENT_BATCH], Y[:, :GRADIENT_BATCH])
    return g_1, g_T


def compute_training(cell, lag, seeds=tuple(range(SEEDS)), forget_biases=None, steps=STEPS):
    """Train cell at lag for every (b_f, seed), side by side; returns the Runs,
    b_f-major (memoised: a run is trained once per process)."""
    if forget_biases is None:
        forget_biases = FORGET_BIASES if cell == "lstm" else (None,)
    wanted = [(b, s) for b in forget_biases for s in seeds]

    def key(b, s):
        return (cell, b, s, lag, steps)

    todo = [(b, s) for b, s in wanted if key(b, s) not in _RUNS]
    if todo:
        todo_b = tuple(dict.fromkeys(b for b, _ in todo))
        todo_s = tuple(dict.fromkeys(s for _, s in todo))
        for run in train_models(cell, lag, todo_s, todo_b, steps):
            _RUNS[key(None if cell != "lstm" else run.b_f, run.seed)] = run
    return [_RUNS[key(b, s)] for b, s in wanted]


def train_models(cell, lag, seeds, forget_biases, steps):
    """The training loop proper: every (b_f, seed) model of one cell at one lag."""
    p = init_params(cell, seeds, forget_biases)
    M, S = len(forget_biases) * len(seeds), len(seeds)
    of_seed = np.tile(np.arange(S), len(forget_biases))  # model m reads seed of_seed[m]'s data
    data = [np.random.default_rng([DATA_KEY, s, lag]) for s in seeds]  # every cell: same data
    X_test, Y_test = seeds_sequences(TEST_KEY, seeds, TEST, lag)
    X_test, Y_test = X_test[:, of_seed], Y_test[of_seed]
    g1_init, gT_init = gradients_at_x1(cell, p, X_test, Y_test)
    curve_steps, curve_loss, curve_acc = [], [], []
    adam = Adam(p)
    for step in range(1, steps + 1):
        X, Y = seeds_sequences(DATA_KEY, seeds, BATCH, lag, rngs=data)
        _, _, grads = loss_and_grads(cell, p, X[:, of_seed], Y[of_seed])
        adam.step(p, grads)
        if step % CURVE_EVERY == 0 or step == steps:
            loss, acc = evaluate(cell, p, X_test, Y_test)
            curve_steps.append(step)
            curve_loss.append(loss)
            curve_acc.append(acc)
    g1, gT = gradients_at_x1(cell, p, X_test, Y_test)
    runs = []
    for m in range(M):
        b_f = forget_biases[m // S]
        runs.append(Run(cell, 0.0 if b_f is None else float(b_f), int(seeds[m % S]), lag,
                        float(curve_acc[-1][m]), float(curve_loss[-1][m]), list(curve_steps),
                        [float(a[m]) for a in curve_acc], [float(x[m]) for x in curve_loss],
                        float(g1_init[m]), float(gT_init[m]), float(g1[m]), float(gT[m])))
    return runs


def compute_all(lags=LAGS, on_lag=None):
    """Every model of MODELS at every lag (memoised); on_lag(lag, runs) after each lag.
    Returns {lag: [Run, ...]}, the runs in MODELS order and by seed within a model."""
    table = {}
    for lag in lags:
        runs = []
        for cell in CELLS:
            runs += compute_training(cell, lag)
        table[lag] = runs
        if on_lag is not None:
            on_lag(lag, runs)
    return table


def runs_of(runs, cell, b_f):
    """The runs of one model (cell, b_f), in seed order."""
    return [r for r in runs if r.cell == cell and (b_f is None or r.b_f == b_f)]


# ---------------------------------------------------------------------------
# Gradient check
# ---------------------------------------------------------------------------

GRADCHECK = dict(lag=4, batch=3, hidden=4, scale=0.5, eps=1e-5)  # a small float64 problem


@dataclass
class GradcheckRow:
    cell: str
    parameter: str
    shape: list
    relative_error: float  # max |a - n| / max(|a| + |n|) over the entries


def compute_gradcheck(cells=CELLS, seed=0):
    """Every analytic gradient against central differences, float64, two models side by
    side (for the LSTM with two forget biases), random weights of size `scale`."""
    c = GRADCHECK
    rows = []
    for cell in cells:
        rng = np.random.default_rng([seed, CELLS.index(cell)])
        biases = (0.0, 1.0) if cell == "lstm" else (None,)
        p = init_params(cell, (0, 1) if cell != "lstm" else (0,), biases, "float64", c["hidden"])
        p = {name: c["scale"] * rng.standard_normal(w.shape) for name, w in p.items()}
        M = len(p["b_q"])
        X = np.empty((c["lag"] + 1, M, c["batch"]), dtype=np.intp)
        Y = np.empty((M, c["batch"]), dtype=np.intp)
        for m in range(M):
            x, Y[m] = make_sequences(rng, c["batch"], c["lag"])
            X[:, m] = x.T
        X[1:-1] = rng.integers(0, V, X[1:-1].shape)  # any token anywhere: every row of W_x used
        _, _, grads = loss_and_grads(cell, p, X, Y)
        for name, w in p.items():
            numeric = np.empty_like(w)
            for i in np.ndindex(w.shape):
                old = w[i]
                w[i] = old + c["eps"]
                plus = loss_and_grads(cell, p, X, Y, False)[0].sum()
                w[i] = old - c["eps"]
                minus = loss_and_grads(cell, p, X, Y, False)[0].sum()
                w[i] = old
                numeric[i] = (plus - minus) / (2 * c["eps"])
            a = grads[name]
            err = np.abs(a - numeric).max() / max((np.abs(a) + np.abs(numeric)).max(), 1e-300)
            rows.append(GradcheckRow(cell, name, list(w.shape), float(err)))
    return rows


# ---------------------------------------------------------------------------
# Formatting
# ---------------------------------------------------------------------------

SHOWN = "ABCD"[:K] + "wxyz"[:D] + "?"  # how a token is printed: symbols, distractors, query


def spread(values):
    """'0.74 (0.26-1.00)': mean, then lowest and highest, over seeds."""
    return f"{sum(values) / len(values):.2f} ({min(values):.2f}-{max(values):.2f})"


SPREAD_WIDTH = len(spread([0.5]))  # every spread() has this width


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


def accuracy_header():
    return ("lag",) + tuple(model_name(c, b) for c, b in MODELS)


def accuracy_widths():
    return [3] + [max(SPREAD_WIDTH, len(name)) for name in accuracy_header()[1:]]


def accuracy_row(lag, runs):
    return (str(lag),) + tuple(spread([r.accuracy for r in runs_of(runs, c, b)])
                               for c, b in MODELS)


def format_curve_table(steps, curves):
    """curves: {model name: [[accuracy at each step] per seed]}."""
    rows = []
    for k, step in enumerate(steps):
        rows.append((f"{step:,}",) + tuple(spread([c[k] for c in per_seed])
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


def format_gradcheck_table(rows):
    body = [(r.cell, r.parameter, " x ".join(map(str, r.shape)), f"{r.relative_error:.1e}")
            for r in rows]
    return format_table(("cell", "parameter", "shape", "relative error"), body, "llrr")


# ---------------------------------------------------------------------------
# The reports, one per flag
# ---------------------------------------------------------------------------

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
    seconds: float  # training time of this report (0 if already trained)


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
class GradcheckRecord:
    rows: list  # GradcheckRow records
    worst: float
    passed: bool  # worst < 1e-6


def report_task(args, out):
    rng = np.random.default_rng([DATA_KEY, 0, 5])
    X, Y = make_sequences(rng, 3, 5)
    out.text(f"The task: remember the first of {K} symbols ({SHOWN[:K]}) across lag - 1 "
             f"distractors ({SHOWN[K:K + D]}) until the query (?). The first three training "
             f"sequences of seed 0 at lag 5:")
    out.table("examples", format_examples_table(X, Y))
    out.table("setting", format_setting_table())
    return TaskRecord(K, D, list(LAGS), SEEDS, h, BATCH, STEPS, LR, list(BETAS), INIT_BOUND,
                      list(FORGET_BIASES), 1 / K, math.log(K), 5,
                      [[" ".join(SHOWN[t] for t in x), SHOWN[y]] for x, y in zip(X, Y)])


def report_accuracy(args, out):
    out.text(f"Test accuracy after {STEPS:,} steps: mean over {SEEDS} seeds (lowest-highest). "
             f"Chance is {1 / K:.2f}.")
    widths = accuracy_widths()
    out.table("accuracy", format_table(accuracy_header(), [], "r" * len(widths), widths))
    start = time.perf_counter()

    def on_lag(lag, runs):
        line = format_table(accuracy_header(), [accuracy_row(lag, runs)], "r" * len(widths),
                            widths)
        out.row("accuracy", line.splitlines()[-1])

    table = compute_all(on_lag=on_lag)
    seconds = time.perf_counter() - start
    out.text(f"time: {seconds:.1f} s")
    names = [model_name(c, b) for c, b in MODELS]
    acc = {model_name(c, b): [[r.accuracy for r in runs_of(table[lag], c, b)] for lag in LAGS]
           for c, b in MODELS}
    loss = {model_name(c, b): [[r.loss for r in runs_of(table[lag], c, b)] for lag in LAGS]
            for c, b in MODELS}
    mean = {name: [float(np.mean(a)) for a in per_lag] for name, per_lag in acc.items()}
    return AccuracyRecord(list(LAGS), names, 1 / K, math.log(K), acc, loss, mean, seconds)


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
    names = [model_name(c, b) for c, b in MODELS]

    def per(field_name):
        return {model_name(c, b): [[getattr(r, field_name) for r in runs_of(table[lag], c, b)]
                                   for lag in LAGS] for c, b in MODELS}

    g1_init, g1_trained = per("g1_init"), per("g1_trained")
    gT_init, gT_trained = per("gT_init"), per("gT_trained")

    def median(per_lag):
        return [float(np.median(seeds)) for seeds in per_lag]

    median_init = {n: median(v) for n, v in g1_init.items()}
    median_trained = {n: median(v) for n, v in g1_trained.items()}
    share = {n: median([[a / b if b > 0 else 0.0 for a, b in zip(s1, sT)]
                        for s1, sT in zip(g1_trained[n], gT_trained[n])]) for n in names}
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
    return GradientRecord(list(LAGS), names, g1_init, g1_trained, gT_init, gT_trained,
                          median_init, median_trained, share)


def report_row(args, out):
    if args.cell is None or args.lag is None:
        raise Refused("--row needs --cell and --lag, e.g. --row --cell gru --lag 50")
    if args.forget_bias is not None and args.cell != "lstm":
        raise Refused(f"--forget-bias has no effect with --cell {args.cell}")
    args.steps = STEPS if args.steps is None else args.steps
    b_f = (1.0 if args.forget_bias is None else args.forget_bias) if args.cell == "lstm" else None
    start = time.perf_counter()
    runs = compute_training(args.cell, args.lag, forget_biases=(b_f,), steps=args.steps)
    seconds = time.perf_counter() - start
    out.text(f"{model_name(args.cell, b_f)} at lag {args.lag}, {args.steps:,} steps, "
             f"{SEEDS} seeds (chance {1 / K:.2f}):")
    out.table("row", format_row_table(runs))
    mean = float(np.mean([r.accuracy for r in runs]))
    out.text(f"mean test accuracy {mean:.2f}\ntime: {seconds:.1f} s")
    return RowRecord(args.cell, 0.0 if b_f is None else float(b_f), args.lag, args.steps,
                     1 / K, runs, mean, seconds)


def report_gradcheck(args, out):
    c = GRADCHECK
    rows = compute_gradcheck()
    worst = max(r.relative_error for r in rows)
    out.text(f"Relative error max |a - n| / max(|a| + |n|) over each parameter's entries, "
             f"a analytic, n central difference with step {c['eps']:g}; float64, lag "
             f"{c['lag']}, batch {c['batch']}, hidden {c['hidden']}, two models side by side.")
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
    "gradcheck": ("every hand-written gradient against central differences", report_gradcheck),
}
DEFAULT = ("task", "accuracy", "curves", "gradient")  # what chapter 15 shows; --row and
# --gradcheck are extra commands of their own
EXAMPLES = {"row": ("--row", "--cell", "gru", "--lag", "20")}  # a report that needs options,
# as the code page and the notebook run it


OPTIONS = {option: ("row",) for option in ("cell", "forget_bias", "lag", "steps")}


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


if __name__ == "__main__":
    sys.exit(main())
