"""training.py: training recurrent networks, from backpropagation through time to the adding problem.

Companion script to chapter 16 ("Training recurrent networks"). Python 3.9+ and numpy.

    python3 training.py               every report below, in order (about a minute)
    python3 training.py --gradcheck   each equation of the LSTM's backward pass, and every
                                      gradient of the three cells, against finite differences
    python3 training.py --jacobian    dC_t/dC_(t-1) in full: the LSTM's second way back
    python3 training.py --clip        clipping against an exploding and a vanishing gradient
    python3 training.py --truncation  chapter 15's recall task with the gradient cut at k steps
    python3 training.py --text        The Time Machine: truncation, state carried or reset
    python3 training.py --init        the plain RNN started at U = I (ReLU) or orthogonal U
    python3 training.py --adding      the adding problem at T = 100, against the 1997 paper

    options: --seed S (--jacobian), --threshold X (--clip), --lag L (--truncation),
             --updates N (--text), --steps N and --lags L,L (--init), --length T,
             --sequences N, --cell lstm|gru and --input-bias B (--adding)

How the file reads, top to bottom:

    the model        chapter 15's recall task and its weights; the four cells, one
                     step forward and one step backward each (the LSTM's spelled
                     out); backpropagation through time, full or truncated; the
                     loss, clipping, Adam; the training loop
    then             the gradient the loop measures at the inputs, two speed-ups
    the experiments  16.1 to 16.6, a section each, its own settings first: every
                     compute_* returns a record of plain numbers, prints nothing
    what the site prints   one format_* per table, one report_* per flag
    the harness      printing and the command line, the same in every script

Every array carries a leading axis of models, M: the seeds (and the settings being
compared) train side by side as one computation, as in chapter 15 (memory.py).
A step's arrays are (M, B, n) for B sequences of n units. Training is float32 on
one BLAS thread; the same command prints the same output, run after run, except
the lines that start with "time:".
"""

import argparse
import math
import os
import platform
import re
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from typing import List

if __name__ == "__main__":  # as a script: one BLAS thread (must be set before numpy loads)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")  # on matrices this small threads cost more than they save
    if platform.machine() in ("x86_64", "AMD64"):  # and one BLAS kernel on every x86 CPU:
        os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")  # AVX-512's round differently

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""


# ===========================================================================
# The model: chapter 15's recall task, the parameters, the cells, backpropagation
# through time, the loss, clipping and Adam, the training loop
# ===========================================================================

# Chapter 15's recall task (memory.py), generated seed for seed as memory.py does
K, D = 4, 4  # symbols to remember, distractor symbols
QUERY = K + D  # token id of the query; symbols 0..K-1, distractors K..K+D-1
V = K + D + 1  # the recall task's vocabulary
RECALL_HIDDEN, RECALL_BATCH, RECALL_STEPS, RECALL_TEST = 16, 32, 1500, 512
SEEDS = (0, 1, 2, 3)  # chapter 15's four seeds
INIT_KEY, DATA_KEY, TEST_KEY = 15, 16, 17  # memory.py's seed-sequence prefixes
ADAM_LR = 1e-3  # Adam's learning rate, betas and epsilon: PyTorch's defaults, as in chapter 15
ADAM_BETAS, ADAM_EPS = (0.9, 0.999), 1e-8


def make_sequences(rng, n, lag):
    """Chapter 15's recall task, drawn exactly as memory.py draws it: n sequences of
    lag + 1 tokens (n, lag + 1), a symbol, lag - 1 distractors, the query; and the
    answers (n,), the first symbol."""
    first = rng.integers(0, K, n)
    X = np.empty((n, lag + 1), dtype=np.intp)
    X[:, 0] = first
    X[:, 1:lag] = rng.integers(K, K + D, (n, lag - 1))
    X[:, lag] = QUERY
    return X, first


def recall_batch(rngs, n, lag):
    """One batch per generator, side by side: tokens (T, S, n), time first, answers (S, n)."""
    batches = [make_sequences(rng, n, lag) for rng in rngs]
    X = np.stack([x for x, _ in batches], axis=1).transpose(2, 1, 0)
    return np.ascontiguousarray(X), np.stack([y for _, y in batches])


def recall_init(cell, seeds, bias=0.0, hidden=RECALL_HIDDEN, vocab=V, classes=K):
    """Chapter 15's initial weights, drawn as memory.py draws them for each seed: every
    weight uniform(-1/sqrt(n), 1/sqrt(n)), gate by gate in d2l's order (LSTM i, f, o, c;
    GRU z, r, h), then the output layer; biases zero, except `bias` on the LSTM's forget
    gate or the GRU's update gate."""
    a = 1 / math.sqrt(hidden)
    G = CELLS[cell][2]
    models = []
    for s in seeds:
        rng = np.random.default_rng([INIT_KEY, s])
        W_x, W_h = [], []
        for _ in range(G):
            W_x.append(rng.uniform(-a, a, (vocab, hidden)))
            W_h.append(rng.uniform(-a, a, (hidden, hidden)))
        models.append({"W_x": np.concatenate(W_x, axis=1), "W_h": np.concatenate(W_h, axis=1),
                       "b": np.zeros(G * hidden), "W_y": rng.uniform(-a, a, (hidden, classes)),
                       "b_y": np.zeros(classes)})
    p = {name: np.stack([m[name] for m in models]) for name in models[0]}
    gate = {"lstm": 1, "gru": 0}.get(cell)  # F is the LSTM's second gate, Z the GRU's first
    if gate is not None:
        p["b"][:, gate * hidden:(gate + 1) * hidden] = bias
    return p


# -------------------------------------------------- the cells: one step forward, one step backward

# Notation of chapters 14 and 15 (d2l's): a batch of sequences is rows, X_t W_x.
# Every cell computes its pre-activations A = a_x + H_prev W_h, where a_x = X_t W_x + b
# is computed for all steps before the loop; the gates' weights sit side by side in
# W_x (V, G n) and W_h (n, G n), G the number of gates.

def sigmoid(a):
    return 0.5 * (1.0 + np.tanh(0.5 * a))  # = 1 / (1 + e^-a), and never overflows


def lstm_step(a_x, state, W_h):
    """One LSTM step: the gates I, F, O, the input node C~, the cell C and the output H."""
    H_prev, C_prev = state
    n = H_prev.shape[-1]
    A = a_x + H_prev @ W_h  # the four pre-activations side by side: I, F, O, C~
    IFO = sigmoid(A[..., :3 * n])  # the three gates in one call
    I, F, O = IFO[..., :n], IFO[..., n:2 * n], IFO[..., 2 * n:]
    C_tilde = np.tanh(A[..., 3 * n:])  # what could be written
    C = F * C_prev + I * C_tilde  # the past, scaled by F, plus the new
    tanh_C = np.tanh(C)
    H = O * tanh_C  # what the cell shows
    return (H, C), (H_prev, C_prev, IFO, C_tilde, tanh_C)


def lstm_step_back(d_state, cache, W_h):
    """The LSTM step backwards. d_state = (dH, dC): all of dL/dH_t and dL/dC_t that has
    arrived, from the output and from step t + 1. Returns dA, dL/d(the four
    pre-activations), and what this step sends back to step t - 1: (dH_prev, dC_prev)."""
    dH, dC = d_state
    H_prev, C_prev, IFO, C_tilde, tanh_C = cache
    n = dH.shape[-1]
    I, F, O = IFO[..., :n], IFO[..., n:2 * n], IFO[..., 2 * n:]
    dC = dC + dH * O * (1 - tanh_C ** 2)  # H = O tanh(C): the second way into C_t
    dIFO = np.concatenate([dC * C_tilde,  # C = F C_prev + I C~ gives dI,
                           dC * C_prev,  # and dF;
                           dH * tanh_C], axis=-1)  # H = O tanh(C) gives dO
    dA = np.concatenate([dIFO * IFO * (1 - IFO),  # through sigma' = sigma (1 - sigma)
                         dC * I * (1 - C_tilde ** 2)], axis=-1)  # dC~ = dC I, through tanh'
    dC_prev = dC * F  # the cell path: one factor per unit, no matrix
    dH_prev = dA @ W_h.swapaxes(-1, -2)  # the other path: back through all four gates
    return dA, (dH_prev, dC_prev)


def gru_step(a_x, state, W_h):
    """One GRU step in d2l's convention (chapter 14): Z near 1 keeps the old state."""
    (H_prev,) = state
    n = H_prev.shape[-1]
    ZR = sigmoid(a_x[..., :2 * n] + H_prev @ W_h[..., :2 * n])  # update and reset gates
    Z, R = ZR[..., :n], ZR[..., n:]
    RH = R * H_prev  # what the candidate may see of the past
    H_tilde = np.tanh(a_x[..., 2 * n:] + RH @ W_h[..., 2 * n:])
    H = Z * H_prev + (1 - Z) * H_tilde
    return (H,), (H_prev, ZR, RH, H_tilde)


def gru_step_back(d_state, cache, W_h):
    (dH,) = d_state
    H_prev, ZR, RH, H_tilde = cache
    n = dH.shape[-1]
    Z, R = ZR[..., :n], ZR[..., n:]
    W_hT = W_h.swapaxes(-1, -2)
    dA_h = dH * (1 - Z) * (1 - H_tilde ** 2)  # into the candidate, through tanh'
    dRH = dA_h @ W_hT[..., 2 * n:, :]  # dL/d(R H_prev)
    dZR = np.concatenate([dH * (H_prev - H_tilde), dRH * H_prev], axis=-1)  # dZ, dR
    dA = np.concatenate([dZR * ZR * (1 - ZR), dA_h], axis=-1)
    dH_prev = dH * Z + dRH * R + dA[..., :2 * n] @ W_hT[..., :2 * n, :]
    return dA, (dH_prev,)


def tanh_step(a_x, state, W_h):
    """The plain RNN of chapters 12 and 15: H = tanh(X W_xh + H_prev W_hh + b_h)."""
    H = np.tanh(a_x + state[0] @ W_h)
    return (H,), (state[0], H)


def tanh_step_back(d_state, cache, W_h):
    dA = d_state[0] * (1 - cache[1] ** 2)  # through tanh' = 1 - H^2
    return dA, (dA @ W_h.swapaxes(-1, -2),)


def relu_step(a_x, state, W_h):
    """The same with ReLU, as Le, Jaitly and Hinton (2015) start it: U = I."""
    H = np.maximum(a_x + state[0] @ W_h, 0)
    return (H,), (state[0], H)


def relu_step_back(d_state, cache, W_h):
    dA = d_state[0] * (cache[1] > 0)  # ReLU' is 1 where the unit is on, 0 where off
    return dA, (dA @ W_h.swapaxes(-1, -2),)


CELLS = {  # name -> (step, step backwards, gates per unit G, state arrays)
    "lstm": (lstm_step, lstm_step_back, 4, 2),
    "gru": (gru_step, gru_step_back, 3, 1),
    "tanh": (tanh_step, tanh_step_back, 1, 1),
    "relu": (relu_step, relu_step_back, 1, 1),
}


# ------------------------------------------------- backpropagation through time, full or truncated

def zero_state(cell, M, B, n, dtype):
    return tuple(np.zeros((M, B, n), dtype) for _ in range(CELLS[cell][3]))


def input_part(p, x):
    """x W_x + b, the input's part of every gate, (M, B, G n). x: one step's token ids
    (M, B), a one-hot input whose product is a row lookup, or real inputs (M, B, d)."""
    if x.dtype.kind in "iu":
        table = p["W_x"] + p["b"][:, None, :]  # row v: e_v W_x + b
        return table[np.arange(len(table))[:, None], x]
    return x @ p["W_x"] + p["b"][:, None, :]


def forward(cell, p, X, state):
    """The cell over every step of X (T, M, B) or (T, M, B, d) from state: the output
    state H_t of every step (a list), the last state, the caches the backward pass reads."""
    step = CELLS[cell][0]
    Hs, caches = [], []
    for x in X:
        state, cache = step(input_part(p, x), state, p["W_h"])
        Hs.append(state[0])
        caches.append(cache)
    return Hs, state, caches


def backward(cell, p, X, caches, dH, keep=None):
    """Backpropagation through time over the steps of one forward pass.

    dH: per step, what the loss sends to H_t directly through the output layer, (M, B, n)
    or None. keep (T, M, B, 1), or None for all ones: a factor on what step t sends back
    to step t - 1. Ones everywhere is full BPTT; a 0 at step t cuts the gradient there,
    as truncation does (the state that enters step t is then a constant); 0 or 1/pi at
    random is randomized truncation. Returns the gradients of the cell's parameters,
    dA, the gradient at every step's pre-activations (a list), and what reaches the
    initial state."""
    step_back = CELLS[cell][1]
    d_state = zero_state(cell, *caches[0][0].shape, p["W_h"].dtype)  # nothing after the last step
    dA = [None] * len(caches)
    for t in reversed(range(len(caches))):
        if dH[t] is not None:  # from the output; d_state brings what step t + 1 sent
            d_state = (d_state[0] + dH[t],) + d_state[1:]
        dA[t], d_state = step_back(d_state, caches[t], p["W_h"])
        if keep is not None:
            d_state = tuple(d * keep[t] for d in d_state)
        if t % FLUSH_EVERY == 0:
            d_state = tuple(flush_tiny(d) for d in d_state)
    return weight_gradients(cell, p, X, caches, dA), dA, d_state


def weight_gradients(cell, p, X, caches, dA):
    """Each weight's gradient, summed over steps and sequences as one product per weight:
    dW_h = the sum over t of H_{t-1}^T dA_t, dW_x = the sum of X_t^T dA_t (for token
    ids: dA_t's rows added to the rows they looked up), db = the column sums of dA_t."""
    def rows(arrays):  # per step (M, B, k) -> (M, T B, k): every step's rows, per model
        a = np.stack(arrays, axis=1)
        return a.reshape(a.shape[0], -1, a.shape[-1])

    dA_all = rows(dA)
    M, TB, G = dA_all.shape
    H_prev = rows([c[0] for c in caches])
    dW_h = H_prev.swapaxes(1, 2) @ dA_all
    if cell == "gru":  # the candidate reads R * H_prev, not H_prev
        n = H_prev.shape[-1]
        dW_h[..., 2 * n:] = rows([c[2] for c in caches]).swapaxes(1, 2) @ dA_all[..., 2 * n:]
    if X.dtype.kind in "iu":  # one-hot rows (M, V, T B): a product adds each row back
        ids = X.transpose(1, 0, 2).reshape(M, 1, TB)
        dW_x = (ids == np.arange(p["W_x"].shape[1])[:, None]).astype(dA_all.dtype) @ dA_all
    else:
        dW_x = rows(list(X)).swapaxes(1, 2) @ dA_all
    return {"W_x": dW_x, "W_h": dW_h, "b": dA_all.sum(axis=1)}


# ------------------------------------------------------------------------ the loss, clipping, Adam

def softmax_xent(logits, Y):
    """Mean cross-entropy per model and its gradient by the logits; logits (..., M, B, c)
    and Y the right class (..., M, B). Also the accuracy per model."""
    z = logits - logits.max(axis=-1, keepdims=True)  # softmax is unchanged by a shift
    P = np.exp(z)
    P /= P.sum(axis=-1, keepdims=True)
    picked = np.take_along_axis(P, Y[..., None], axis=-1)[..., 0]
    axes = tuple(a for a in range(Y.ndim) if a != Y.ndim - 2)  # all but the model axis
    count = math.prod(Y.shape[a] for a in axes)
    loss = -np.log(np.maximum(picked, 1e-30)).sum(axis=axes) / count
    accuracy = (P.argmax(axis=-1) == Y).sum(axis=axes) / count
    np.put_along_axis(P, Y[..., None], picked[..., None] - 1, axis=-1)
    return loss, accuracy, P / count  # d(mean cross-entropy)/dlogits = (P - onehot) / count


def last_step_loss(cell, p, X, Y, keep=None, grads=True, state=None):
    """A task answered at the last step: softmax cross-entropy over the classes (Y: ids,
    (M, B)) or, for real targets (Y: floats), the squared error of one linear output.
    Returns the loss per model (M,), the accuracy or the absolute errors, the gradients."""
    T, M, B = X.shape[:3]
    state = state or zero_state(cell, M, B, p["W_h"].shape[1], p["W_h"].dtype)
    H, _, caches = forward(cell, p, X, state)
    out = H[-1] @ p["W_y"] + p["b_y"][:, None, :]  # (M, B, classes) or (M, B, 1)
    if Y.dtype.kind in "iu":
        loss, score, d_out = softmax_xent(out, Y)
    else:
        error = out[..., 0] - Y
        loss, score = (error ** 2).mean(axis=1), np.abs(error)
        d_out = (2 * error / B)[..., None]  # d(mean squared error)/d output
    if not grads:
        return loss, score, None
    dH = [None] * (T - 1) + [d_out @ p["W_y"].swapaxes(1, 2)]  # only the last step's
    g, dA, _ = backward(cell, p, X, caches, dH, keep)
    g["W_y"] = H[-1].swapaxes(1, 2) @ d_out
    g["b_y"] = d_out.sum(axis=1)
    return loss, score, g


def gradient_norms(g):
    """The global L2 norm of each model's gradient, (M,)."""
    return np.sqrt(sum((w.reshape(len(w), -1).astype(np.float64) ** 2).sum(axis=1)
                       for w in g.values()))


def clip(g, threshold):
    """Rescale each model's gradient to norm threshold where it is longer (chapter 12);
    returns the norms before."""
    norms = gradient_norms(g)
    scale = np.minimum(1.0, threshold / np.maximum(norms, 1e-300))
    for name, w in g.items():
        w *= scale.reshape((-1,) + (1,) * (w.ndim - 1)).astype(w.dtype)
    return norms


class Adam:
    """Adam (Kingma and Ba, 2015) with PyTorch's defaults, every entry its own, so the
    models side by side stay independent."""

    def __init__(self, p, lr=ADAM_LR):
        self.lr, self.t = lr, 0
        self.m = {name: np.zeros_like(w) for name, w in p.items()}  # mean of g
        self.v = {name: np.zeros_like(w) for name, w in p.items()}  # mean of g^2

    def step(self, p, g):
        (b1, b2), self.t = ADAM_BETAS, self.t + 1
        for name, w in p.items():
            self.m[name] = b1 * self.m[name] + (1 - b1) * g[name]
            self.v[name] = b2 * self.v[name] + (1 - b2) * g[name] ** 2
            m_hat = self.m[name] / (1 - b1 ** self.t)  # corrected for the start at zero
            v_hat = self.v[name] / (1 - b2 ** self.t)
            w -= self.lr * m_hat / (np.sqrt(v_hat) + ADAM_EPS)


# ------------------------------------------- training on the recall task, every model side by side

@dataclass
class RecallRun:
    """What training gave, one entry per model (lists of length M)."""
    accuracy: list  # on the fixed test sequences of the model's seed, after training
    loss: list  # mean test cross-entropy, after training
    g1_init: list  # mean ||dl/dx_1|| over GRADIENT_BATCH test sequences, at initialisation
    gT_init: list  # the same at the query x_T
    g1_trained: list
    gT_trained: list
    norms: list  # [step][model]: the raw gradient norm of each step (when asked for)
    losses: list  # [step][model]: the training batch's loss at each step (when asked for)


def train_recall(cell, p, lag, seeds, steps, keep=None, sgd=None, clip_at=None,
                 norms=False, losses=False):
    """Train the M models of p on the recall task at `lag` for `steps` steps of
    RECALL_BATCH sequences; model m reads the training stream and the test set of
    seeds[m], drawn as memory.py draws them. Adam (chapter 15's) unless sgd is a
    learning rate; clip_at: clip each model's gradient to that norm; norms, losses: keep
    each step's raw gradient norms, training losses. Returns a RecallRun."""
    keep_freed_memory()
    distinct = tuple(dict.fromkeys(seeds))
    of_seed = [distinct.index(s) for s in seeds]  # model m reads stream of_seed[m]
    streams = [np.random.default_rng([DATA_KEY, s, lag]) for s in distinct]
    tests = [np.random.default_rng([TEST_KEY, s, lag]) for s in distinct]
    X_test, Y_test = recall_batch(tests, RECALL_TEST, lag)
    X_test, Y_test = X_test[:, of_seed], Y_test[of_seed]
    probe = X_test[:, :, :GRADIENT_BATCH], Y_test[:, :GRADIENT_BATCH]
    g1_init, gT_init = input_gradients(cell, p, *probe)
    adam = Adam(p) if sgd is None else None
    history, seen = [], []
    for _ in range(steps):
        X, Y = recall_batch(streams, RECALL_BATCH, lag)
        loss, _, g = last_step_loss(cell, p, X[:, of_seed], Y[of_seed], keep)
        raw = clip(g, clip_at) if clip_at is not None else gradient_norms(g) if norms else None
        if norms:
            history.append([float(x) for x in raw])
        if losses:
            seen.append([float(x) for x in loss])
        if adam is not None:
            adam.step(p, g)
        else:
            for name, w in p.items():
                w -= sgd * g[name]
    with np.errstate(all="ignore"):  # a model that diverged has inf and nan: it scores 0
        loss, acc = evaluate_recall(cell, p, X_test, Y_test)
        g1, gT = input_gradients(cell, p, *probe)
    return RecallRun([float(a) for a in acc], [float(x) for x in loss], list(map(float, g1_init)),
                     list(map(float, gT_init)), list(map(float, g1)), list(map(float, gT)),
                     history, seen)


def evaluate_recall(cell, p, X, Y, chunk=128):
    """Mean test loss and accuracy per model, in chunks of sequences."""
    loss, acc = np.zeros(len(Y)), np.zeros(len(Y))
    for i in range(0, Y.shape[1], chunk):
        l, a, _ = last_step_loss(cell, p, X[:, :, i:i + chunk], Y[:, i:i + chunk], grads=False)
        loss += l * Y[:, i:i + chunk].shape[1]
        acc += a * Y[:, i:i + chunk].shape[1]
    return loss / Y.shape[1], acc / Y.shape[1]


# ---------------------------------------------- what the training loops measure, and two speed-ups

GRADIENT_BATCH = 64  # test sequences the gradient at x_1 is averaged over (as in memory.py)


def input_gradients(cell, p, X, Y):
    """The gradient reaching the first and the last input, per model: the mean over the
    sequences of ||dl/dx_1|| and ||dl/dx_T||, l a sequence's own cross-entropy and x_t
    its one-hot input taken as a real vector; dl/dx_t = dA_t W_x^T. In float64."""
    p = {name: w.astype(np.float64) for name, w in p.items()}
    B = Y.shape[1]
    H, _, caches = forward(cell, p, X, zero_state(cell, len(Y), B, p["W_h"].shape[1], "float64"))
    _, _, d_out = softmax_xent(H[-1] @ p["W_y"] + p["b_y"][:, None, :], Y)
    dH = [None] * (len(H) - 1) + [(d_out * B) @ p["W_y"].swapaxes(1, 2)]  # each its own loss
    _, dA, _ = backward(cell, p, X, caches, dH)
    W_xT = p["W_x"].swapaxes(1, 2)
    return (np.linalg.norm(dA[0] @ W_xT, axis=-1).mean(axis=1),
            np.linalg.norm(dA[-1] @ W_xT, axis=-1).mean(axis=1))


TINY = 1e-30  # gradient entries below this are set to zero (see flush_tiny) ...
FLUSH_EVERY = 8  # ... every 8 steps: a factor of 1e-8 in 8 steps takes it no further than 1e-38


def flush_tiny(d):
    """Entries below TINY set to zero, in place. A gradient carried back a hundred steps
    can shrink below float32's smallest normal number (1.2e-38), where arithmetic is
    many times slower on some processors; training cannot tell such entries from zero."""
    d[np.abs(d) < TINY] = 0
    return d


def keep_freed_memory():
    """Ask the C library (glibc, on Linux) to keep 64 MB free at the top of the heap
    instead of handing it back to the system: every training step frees its caches, and
    taking the pages back from the system at the next step cost as much as a fifth of the
    adding problem's time here. Elsewhere (macOS, Windows) this does nothing."""
    try:
        import ctypes
        ctypes.CDLL("libc.so.6").mallopt(-2, 64 << 20)  # -2: M_TOP_PAD
    except (OSError, AttributeError):
        pass


# ===========================================================================
# The experiments, one section of the chapter each, with its own settings. Every
# compute_* returns a record of plain numbers and prints nothing.
# ===========================================================================

# ------------------------------------ 16.1: every hand-written gradient against finite differences

GRADCHECK = dict(hidden=3, vocab=5, inputs=2, steps=6, batch=2, models=2, eps=1e-6,
                 scale=0.5, cut=3)  # a small float64 problem; the truncated check cuts at 3


@dataclass
class GradcheckRow:
    part: str  # which computation
    what: str  # the derivative checked, as the page writes it
    entries: int  # how many numbers were compared
    relative_error: float  # max |a - n| / max(|a| + |n|) over the entries


def relative_error(analytic, numeric):
    a, n = np.asarray(analytic, float), np.asarray(numeric, float)
    return float(np.abs(a - n).max() / max((np.abs(a) + np.abs(n)).max(), 1e-300))


def numeric_gradient(f, x, eps):
    """Central differences of the scalar f() by every entry of the array x (changed in
    place and restored)."""
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        old = x[i]
        x[i] = old + eps
        plus = f()
        x[i] = old - eps
        minus = f()
        x[i] = old
        out[i] = (plus - minus) / (2 * eps)
    return out


def random_params(cell, rng, c, vocab, classes):
    G, n, M = CELLS[cell][2], c["hidden"], c["models"]
    shapes = {"W_x": (M, vocab, G * n), "W_h": (M, n, G * n), "b": (M, G * n),
              "W_y": (M, n, classes), "b_y": (M, classes)}
    return {name: c["scale"] * rng.standard_normal(s) for name, s in shapes.items()}


def check_one_lstm_step(rng, c):
    """Each equation of lstm_step_back, on L = sum(u * H_t) + sum(w * C_t) for random u,
    w: then dL/dH_t = u and dL/dC_t = w, and every other derivative is the step's."""
    n, M, B, eps = c["hidden"], c["models"], c["batch"], c["eps"]
    W_h = c["scale"] * rng.standard_normal((M, n, 4 * n))
    a_x, H_prev, C_prev, u, w = (rng.standard_normal(s) for s in
                                 [(M, B, 4 * n)] + [(M, B, n)] * 4)

    def L():
        (H, C), _ = lstm_step(a_x, (H_prev, C_prev), W_h)
        return float((u * H).sum() + (w * C).sum())

    _, cache = lstm_step(a_x, (H_prev, C_prev), W_h)
    dA, (dH_prev, dC_prev) = lstm_step_back((u, w), cache, W_h)
    dA_numeric = numeric_gradient(L, a_x, eps)  # a_x moves the pre-activations one for one
    rows = []
    for g, what in enumerate(["dL/dA^i = dC_t * C~_t * I_t (1 - I_t)",
                              "dL/dA^f = dC_t * C_{t-1} * F_t (1 - F_t)",
                              "dL/dA^o = dH_t * tanh(C_t) * O_t (1 - O_t)",
                              "dL/dA^c = dC_t * I_t * (1 - C~_t^2)"]):
        part = slice(g * n, (g + 1) * n)
        rows.append(GradcheckRow("one LSTM step", what, dA[..., part].size,
                                 relative_error(dA[..., part], dA_numeric[..., part])))
    rows.append(GradcheckRow("one LSTM step", "dL/dC_{t-1} = dC_t * F_t (the cell path)",
                             dC_prev.size, relative_error(dC_prev,
                                                          numeric_gradient(L, C_prev, eps))))
    rows.append(GradcheckRow("one LSTM step", "dL/dH_{t-1} = dA_t W_h^T (every gate)",
                             dH_prev.size, relative_error(dH_prev,
                                                          numeric_gradient(L, H_prev, eps))))
    return rows


def check_lstm_jacobian(rng, c):
    """The blocks of lstm_step_jacobian, and the full dC_t/dC_{t-1} through H_{t-1},
    against central differences of one step, column by column."""
    n, eps = c["hidden"], c["eps"]
    W_h = c["scale"] * rng.standard_normal((n, 4 * n))
    a_x, a_prev = rng.standard_normal((2, 4 * n))  # this step's and the last one's a_x
    H_2, C_2 = rng.standard_normal((2, n))  # the state two steps back

    def step(H_prev, C_prev):
        (H, C), cache = lstm_step(a_x, (H_prev, C_prev), W_h)
        return H, C, cache

    (H_prev, C_prev), last = lstm_step(a_prev, (H_2, C_2), W_h)
    O_prev = last[2][2 * n:]  # the last step's output gate, held fixed
    blocks = lstm_step_jacobian(step(H_prev, C_prev)[2], W_h)
    numeric = [np.zeros((n, n)) for _ in range(4)]
    full = np.zeros((n, n))
    for k in range(n):
        e = np.zeros(n)
        e[k] = eps
        for sign in (1, -1):
            H_c, C_c, _ = step(H_prev, C_prev + sign * e)
            H_h, C_h, _ = step(H_prev + sign * e, C_prev)
            C_f = step(O_prev * np.tanh(C_prev + sign * e), C_prev + sign * e)[1]
            for block, value in zip(numeric, (C_c, C_h, H_c, H_h)):
                block[:, k] += sign * value / (2 * eps)
            full[:, k] += sign * C_f / (2 * eps)
    names = ["dC_t/dC_{t-1} = diag(F_t), the cell path",
             "dC_t/dH_{t-1}: through F_t, I_t and C~_t",
             "dH_t/dC_{t-1} = diag(O_t (1 - tanh^2 C_t)) diag(F_t)",
             "dH_t/dH_{t-1}: through O_t and through C_t"]
    rows = [GradcheckRow("one LSTM step's Jacobian", name, n * n, relative_error(a, b))
            for name, a, b in zip(names, blocks, numeric)]
    route = blocks[1] * (O_prev * (1 - np.tanh(C_prev) ** 2))[None, :]  # H_{t-1} from C_{t-1}
    rows.append(GradcheckRow("one LSTM step's Jacobian",
                             "dC_t/dC_{t-1} in full = diag(F_t) + R_t, R_t through H_{t-1}",
                             n * n, relative_error(blocks[0] + route, full)))
    return rows


def check_sequence(cell, rng, c, task, cut=None):
    """Every parameter's gradient through backpropagation through time over a sequence,
    against central differences of the loss: `task` "text" (softmax at every step),
    "recall" (softmax at the last step) or "adding" (squared error at the last step,
    real inputs). cut: truncate at that step, checked against the loss whose state
    entering step `cut` is held fixed (what truncation computes the gradient of)."""
    T, M, B, n, eps = c["steps"], c["models"], c["batch"], c["hidden"], c["eps"]
    vocab = c["inputs"] if task == "adding" else c["vocab"]
    p = random_params(cell, rng, c, vocab, 1 if task == "adding" else c["vocab"])
    if task == "adding":
        X, Y = rng.standard_normal((T, M, B, vocab)), rng.standard_normal((M, B))
    else:
        X = rng.integers(0, vocab, (T, M, B))
        Y = rng.integers(0, vocab, (T, M, B) if task == "text" else (M, B))
    state0 = tuple(0.5 * rng.standard_normal((M, B, n)) for _ in range(CELLS[cell][3]))
    keep = None
    if cut is not None:
        keep = np.ones((T, M, B, 1))
        keep[cut] = 0

    def loss_of(steps, state):  # the loss of the steps `steps` (a slice), from state
        if task == "text":  # its share of the mean over all T steps
            part = every_step_loss(cell, p, X[steps], Y[steps], state, grads=False)[0]
            return part * len(range(T)[steps]) / T
        return last_step_loss(cell, p, X[steps], Y, grads=False, state=state)[0]

    if task == "text":
        _, _, g = every_step_loss(cell, p, X, Y, state0, keep)
    else:
        _, _, g = last_step_loss(cell, p, X, Y, keep, state=state0)
    if cut is None:
        def L():
            return float(loss_of(slice(None), state0).sum())
    else:
        held = forward(cell, p, X[:cut], state0)[1]  # the state entering step `cut`, fixed

        def L():  # the steps before the cut as they are; after it, from the held state
            before = loss_of(slice(0, cut), state0) if task == "text" else 0
            return float((before + loss_of(slice(cut, None), held)).sum())
    worst = max(relative_error(g[name], numeric_gradient(L, p[name], eps)) for name in p)
    size = sum(w.size for w in p.values())
    return worst, size


def compute_gradcheck(seed=0):
    """Every row of the gradient check: one LSTM step equation by equation, its Jacobian,
    then backpropagation through time over whole sequences for every cell and loss."""
    c = GRADCHECK
    rng = np.random.default_rng(seed)
    rows = check_one_lstm_step(rng, c) + check_lstm_jacobian(rng, c)
    cases = [("lstm", "text", None, "LSTM, softmax at every step (--text)"),
             ("lstm", "text", c["cut"], f"LSTM, the same truncated at step {c['cut']} "
                                        "(--truncation, --text)"),
             ("lstm", "recall", None, "LSTM, softmax at the last step (--truncation)"),
             ("lstm", "adding", None, "LSTM, squared error, real inputs (--adding)"),
             ("gru", "recall", None, "GRU, softmax at the last step"),
             ("gru", "adding", None, "GRU, squared error, real inputs (--adding)"),
             ("tanh", "recall", None, "plain RNN, tanh (--clip, --init)"),
             ("relu", "recall", None, "plain RNN, ReLU (--init)")]
    for cell, task, cut, what in cases:
        worst, size = check_sequence(cell, rng, c, task, cut)
        rows.append(GradcheckRow("through time, every parameter", what, size, worst))
    return rows


# --------------------------------------- 16.2: dC_t/dC_{t-1} in full, on chapter 13's random LSTMs

# The random LSTMs of chapter 13, as gated.py --measure draws them
JACOBIAN_HIDDEN, JACOBIAN_INPUT, JACOBIAN_STEPS = 32, 16, 100  # H, d, T
JACOBIAN_BIASES = (0.0, 1.0, 2.0)  # b_f
JACOBIAN_DISTANCE = 47  # the step chapter 13 reads its table at
JACOBIAN_SEED = 0
ROUTE_KEY = 161  # this script's own: the random rotations of the route's control


def lstm_step_jacobian(cache, W_h):
    """The four blocks of one LSTM step's Jacobian, for one sequence (n units):
    dC_t/dC_{t-1}, dC_t/dH_{t-1}, dH_t/dC_{t-1} and dH_t/dH_{t-1}, entry [j, k] the
    derivative of unit j of the step's output by unit k of its input."""
    H_prev, C_prev, IFO, C_tilde, tanh_C = (c.reshape(-1) for c in cache)
    n = len(H_prev)
    I, F, O = IFO[:n], IFO[n:2 * n], IFO[2 * n:]
    W_hi, W_hf, W_ho, W_hc = (W_h.reshape(n, 4 * n)[:, g * n:(g + 1) * n].T for g in range(4))
    dC_dC = np.diag(F)  # the cell path
    dC_dH = ((C_prev * F * (1 - F))[:, None] * W_hf  # through the forget gate,
             + (C_tilde * I * (1 - I))[:, None] * W_hi  # the input gate,
             + (I * (1 - C_tilde ** 2))[:, None] * W_hc)  # and the input node
    out = O * (1 - tanh_C ** 2)  # dH_t/dC_t, unit by unit
    dH_dC = out[:, None] * dC_dC
    dH_dH = (tanh_C * O * (1 - O))[:, None] * W_ho + out[:, None] * dC_dH
    return dC_dC, dC_dH, dH_dC, dH_dH


@dataclass
class JacobianRow:
    b_f: float
    forget: float  # mean F_t over units and steps: the cell path's factor per step
    route: float  # mean spectral radius of R_t, the route through H_{t-1}
    predicted: float  # forget + route: the full factor per step, if diag(F_t) were f I
    factor_path: float  # measured per step over the second half: cell path, median unit
    factor_mean: float  # the same for the product of mean(F_t) I + R_t: the spread left out
    factor_full: float  # the same for the whole Jacobian dC_t/dC_0
    path_best: float  # at JACOBIAN_DISTANCE: the cell path's best unit (chapter 13's)
    one_step: float  # the product of the full one-step dC_t/dC_{t-1}, spectral norm
    full: float  # the whole Jacobian dC_t/dC_0, spectral norm (chapter 13's "full norm")
    eig_path: list  # the eigenvalues of diag(F_t) at JACOBIAN_DISTANCE: F_t itself
    eig_step: list  # [re, im] of the eigenvalues of diag(F_t) + R_t there
    output_memory: float  # full / one_step - 1: what the rest of the (C, H) system adds
    route_cosine: float  # mean cosine between consecutive R_t (as vectors): how alike they are
    factor_frozen: float  # factor per step of mean(F_t) I + R, R held at step T/2's
    factor_independent: float  # ... of mean(F_t) I + Q_t R_t Q_t^T, Q_t random orthogonal
    pythagoras: float  # sqrt(forget^2 + route^2)


def measure_lstm(b_f, H=JACOBIAN_HIDDEN, d=JACOBIAN_INPUT, T=JACOBIAN_STEPS, seed=JACOBIAN_SEED):
    """Chapter 13's LSTM (gated.py --measure): weights uniform(-1/sqrt(H), 1/sqrt(H)) drawn
    in its order (W_f, W_i, W_C, W_o, each acting on [h, x]), inputs normal, biases zero
    but b_f; here in this script's layout. Returns the parameters and the inputs."""
    rng = np.random.default_rng(seed)
    k = 1 / math.sqrt(H)
    W = {g: rng.uniform(-k, k, (H, H + d)) for g in "fico"}
    X = rng.normal(0, 1, (T, 1, 1, d))  # one sequence of one model
    p = {"W_h": np.concatenate([W[g][:, :H].T for g in "ifoc"], axis=1)[None],
         "W_x": np.concatenate([W[g][:, H:].T for g in "ifoc"], axis=1)[None],
         "b": np.zeros((1, 4 * H))}
    p["b"][0, H:2 * H] = b_f
    return p, X


def compute_jacobian(b_f, seed=JACOBIAN_SEED, distance=JACOBIAN_DISTANCE):
    """dC_t/dC_0 three ways, t = 1..T: the cell path alone (the product of forget gates,
    unit by unit); the product of the full one-step dC_t/dC_{t-1} = diag(F_t) + R_t,
    R_t = dC_t/dH_{t-1} diag(O_{t-1} (1 - tanh^2 C_{t-1})), the route back through
    H_{t-1} and the gates with O_{t-1} held; and the whole (C, H) system's Jacobian."""
    p, X = measure_lstm(b_f, seed=seed)
    n = p["W_h"].shape[1]
    _, _, caches = forward("lstm", p, X, zero_state("lstm", 1, 1, n, "float64"))
    path = np.ones(n)
    product, mean_product = np.eye(n), np.eye(n)
    system = np.vstack([np.eye(n), np.zeros((n, n))])  # d(C_t, H_t)/dC_0, from (I, 0)
    paths, products, means, fulls, forgets, routes = [], [], [], [], [], []
    Rs = []  # R_t of every step but the first
    eig_path = eig_step = None
    for t, cache in enumerate(caches, start=1):
        dC_dC, dC_dH, dH_dC, dH_dH = lstm_step_jacobian(cache, p["W_h"])
        F = np.diag(dC_dC)
        R = np.zeros((n, n))
        if t > 1:  # H_0 is given, not made from C_0: the first step has the cell path only
            O_prev, tanh_prev = caches[t - 2][2].reshape(-1)[2 * n:], caches[t - 2][4].reshape(-1)
            R = dC_dH * (O_prev * (1 - tanh_prev ** 2))[None, :]
            routes.append(np.abs(np.linalg.eigvals(R)).max())
            Rs.append(R)
        step = dC_dC + R
        if t == distance:
            eig_path = sorted(F.tolist())
            eig_step = sorted([float(z.real), float(z.imag)] for z in np.linalg.eigvals(step))
        forgets.append(F.mean())
        path *= F
        product = step @ product
        mean_product = (F.mean() * np.eye(n) + R) @ mean_product
        system = np.block([[dC_dC, dC_dH], [dH_dC, dH_dH]]) @ system
        paths.append(float(np.median(path)))
        products.append(float(np.linalg.norm(product, 2)))
        means.append(float(np.linalg.norm(mean_product, 2)))
        fulls.append(float(np.linalg.norm(system[:n], 2)))
    half = len(caches) // 2

    def per_step(values):  # the factor per step over the second half, a geometric mean
        return float((values[-1] / values[half - 1]) ** (1 / (len(values) - half)))

    best = float(np.prod([np.diag(lstm_step_jacobian(c, p["W_h"])[0])
                          for c in caches[:distance]], axis=0).max())
    forget, route = float(np.mean(forgets)), float(np.mean(routes))
    frozen, independent = route_controls(forgets, Rs, seed)
    cosine = float(np.mean([np.sum(a * b) / np.linalg.norm(a) / np.linalg.norm(b)
                            for a, b in zip(Rs[:-1], Rs[1:])]))
    return JacobianRow(b_f, forget, route, forget + route, per_step(paths), per_step(means),
                       per_step(fulls), best, products[distance - 1], fulls[distance - 1],
                       eig_path, eig_step, fulls[distance - 1] / products[distance - 1] - 1,
                       cosine, per_step(frozen), per_step(independent),
                       math.hypot(forget, route))


def route_controls(forgets, Rs, seed):
    """Two controls for the product of mean(F_t) I + R_t, spectral norm after each step:
    R_t frozen at one step's (T/2), and R_t replaced by Q_t R_t Q_t^T, the same
    eigenvalues turned by a random orthogonal Q_t drawn afresh at every step, so that
    consecutive steps no longer share their directions."""
    n = len(Rs[0])
    rng = np.random.default_rng([ROUTE_KEY, seed])
    held = Rs[len(Rs) // 2]
    frozen, independent = np.eye(n), np.eye(n)
    frozen_norms, independent_norms = [], []
    for t, f in enumerate(forgets):
        R = Rs[t - 1] if t else np.zeros((n, n))  # the first step has the cell path only
        Q = orthogonal(rng, n)
        frozen = (f * np.eye(n) + (held if t else 0 * held)) @ frozen
        independent = (f * np.eye(n) + Q @ R @ Q.T) @ independent
        frozen_norms.append(float(np.linalg.norm(frozen, 2)))
        independent_norms.append(float(np.linalg.norm(independent, 2)))
    return frozen_norms, independent_norms


# ------------------------------------ 16.3: clipping against an exploding and a vanishing gradient

# The recall task at one lag, plain SGD
CLIP_LAG, CLIP_STEPS, CLIP_LR, CLIP_THRESHOLD = 20, 300, 0.1, 1.0
CLIP_RADII = (0.5, 2.0)  # spectral radius of U at the start: vanishing, exploding
LEARNED = 0.95  # a seed whose test accuracy is at least this has learned the lag
ORTHOGONAL_KEY = 160  # this script's own: the orthogonal U of --init


@dataclass
class ClipRow:
    radius: float  # spectral radius of the starting U (a scaled orthogonal matrix)
    clipped: bool  # trained with clipping at CLIP_THRESHOLD
    share_init: float  # g_1 / g_T at the start, median over seeds: the gradient at x_1
    first_norm: float  # the raw gradient norm at the first step, median over seeds
    largest_norm: float  # the largest raw norm in training, any seed
    over: float  # the share of steps whose raw norm was above the threshold
    accuracy: list  # test accuracy per seed
    loss: list  # test loss per seed
    norms: list  # [step][seed]: the raw gradient norm at every step
    mean_accuracy: float
    learned: int  # seeds at LEARNED or above


def learned(accuracies):
    """How many seeds learned: test accuracy at least LEARNED."""
    return sum(a >= LEARNED for a in accuracies)


def orthogonal(rng, n):
    """A random orthogonal matrix: Q of the QR decomposition of a Gaussian, signs fixed so
    that it is uniform over the orthogonal group."""
    Q, R = np.linalg.qr(rng.standard_normal((n, n)))
    return Q * np.sign(np.diag(R))


def plain_rnn_init(seeds, U_kind, radius=1.0):
    """Chapter 15's plain RNN for each seed (memory.py's draws), with its recurrent
    weights W_hh replaced: "random" keeps them, "identity" sets I, "orthogonal" a random
    orthogonal matrix (drawn from this script's own key); then scaled to `radius`."""
    p = recall_init("tanh", seeds)
    for m, s in enumerate(seeds):
        if U_kind == "identity":
            p["W_h"][m] = np.eye(RECALL_HIDDEN)
        elif U_kind == "orthogonal":
            p["W_h"][m] = orthogonal(np.random.default_rng([ORTHOGONAL_KEY, s]), RECALL_HIDDEN)
        if U_kind != "random":
            p["W_h"][m] *= radius
    return p


def compute_clip(radii=CLIP_RADII, lag=CLIP_LAG, steps=CLIP_STEPS, lr=CLIP_LR,
                 threshold=CLIP_THRESHOLD, seeds=SEEDS):
    """The plain tanh RNN from an orthogonal U scaled to each radius, plain SGD, with and
    without clipping: every (radius, clipping, seed) model side by side."""
    settings = [(r, c) for r in radii for c in (False, True)]
    parts = [plain_rnn_init(seeds, "orthogonal", r) for r, _ in settings]
    p = {name: np.concatenate([q[name] for q in parts]).astype(np.float32) for name in parts[0]}
    clip_at = np.repeat([threshold if c else np.inf for _, c in settings], len(seeds))
    run = train_recall("tanh", p, lag, list(seeds) * len(settings), steps, sgd=lr,
                       clip_at=clip_at, norms=True)
    norms = np.array(run.norms)  # (steps, M)
    rows = []
    for j, (r, c) in enumerate(settings):
        m = slice(j * len(seeds), (j + 1) * len(seeds))
        share = [a / b for a, b in zip(run.g1_init[m], run.gT_init[m])]
        rows.append(ClipRow(r, c, float(np.median(share)), float(np.median(norms[0, m])),
                            float(np.nanmax(norms[:, m])), float((norms[:, m] > threshold).mean()),
                            run.accuracy[m], run.loss[m], norms[:, m].tolist(),
                            float(np.mean(run.accuracy[m])), learned(run.accuracy[m])))
    return rows


# ------------------------------------------------------------- 16.4: truncation on the recall task

TRUNCATION_LAG = 10
TRUNCATION_STEPS = 1000  # chapter 15 trains 1,500; these models have learned by 1,000
TRUNCATION_MODELS = (("lstm", 2.0), ("gru", 0.0))  # (cell, initial forget / update bias)
TRUNCATION_EVERY = 20  # the training-loss curves: the mean over each block of 20 steps


def truncation_keep(ks, T, seeds):
    """keep for models k-major: the backward pass of model (k, seed) visits the last k of
    the T steps, cut where step T - k would send its gradient to step T - k - 1."""
    keep = np.ones((T, len(ks) * len(seeds), 1, 1), np.float32)
    for j, k in enumerate(ks):
        if k < T:
            keep[T - k, j * len(seeds):(j + 1) * len(seeds)] = 0
    return keep


def truncation_ks(lag):
    """The truncations tried at a lag: k = 1, 2, 4, ..., the powers of two below the
    lag + 1 steps, then all lag + 1 of them (the gradient untruncated)."""
    T = lag + 1
    return tuple(2 ** j for j in range(T.bit_length()) if 2 ** j < T) + (T,)


def compute_truncation(lag=TRUNCATION_LAG, ks=None, models=TRUNCATION_MODELS,
                       steps=TRUNCATION_STEPS, seeds=SEEDS, every=TRUNCATION_EVERY):
    """Each cell trained at `lag` with the gradient truncated at each k, every (k, seed)
    side by side. Three dicts {model name: [per k]}: the test accuracy per seed, the test
    loss per seed, and the training-loss curve, [block][seed], the mean over each block
    of `every` steps."""
    ks = truncation_ks(lag) if ks is None else ks
    accuracy, loss, curves = {}, {}, {}
    for cell, bias in models:
        p = recall_init(cell, seeds, bias)
        p = {name: np.concatenate([w] * len(ks)).astype(np.float32) for name, w in p.items()}
        keep = truncation_keep(ks, lag + 1, seeds)
        run = train_recall(cell, p, lag, list(seeds) * len(ks), steps, keep=keep, losses=True)
        blocks = np.array(run.losses)[:steps // every * every].reshape(steps // every, every, -1)
        curve = blocks.mean(axis=1)  # (blocks, M)
        name, S = recall_name(cell, bias), len(seeds)
        accuracy[name] = [run.accuracy[j * S:(j + 1) * S] for j in range(len(ks))]
        loss[name] = [run.loss[j * S:(j + 1) * S] for j in range(len(ks))]
        curves[name] = [curve[:, j * S:(j + 1) * S].tolist() for j in range(len(ks))]
    return accuracy, loss, curves


CELL_NAMES = {"lstm": "LSTM", "gru": "GRU", "tanh": "plain RNN", "relu": "plain RNN, ReLU"}


def recall_name(cell, bias):
    """'LSTM b_f=2', 'GRU' (chapter 15's names), 'GRU b_z=1'."""
    if cell == "lstm":
        return f"LSTM b_f={bias:g}"
    return CELL_NAMES[cell] + (f" b_z={bias:g}" if cell == "gru" and bias else "")


# --------------------------------------------- 16.4: The Time Machine, truncated, carried or reset

CORPUS = Path(__file__).with_name("timemachine.txt")
TEXT_VOCAB = [" ", "<unk>"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]  # d2l's 28
TEXT_HIDDEN, TEXT_BATCH, TEXT_WINDOW = 32, 16, 64  # n, sequences per update, steps per window
TEXT_TRAIN, TEXT_VAL = 150_000, 20_000  # characters: the first train, the next validate
TEXT_UPDATES, TEXT_LR, TEXT_CLIP = 150, 1e-2, 1.0  # Adam steps, its rate, clipping norm
TEXT_CHECKPOINTS = 3  # validation after a third, two thirds and all of the updates
TEXT_SEEDS = (0, 1, 2)
TEXT_SETTINGS = (  # (partitioning, truncation): k steps, "random" for randomized truncation
    ("sequential", 64), ("sequential", 32), ("sequential", 8), ("sequential", 2),
    ("random", 64), ("sequential", "random"))
RANDOM_MEAN = 8  # randomized truncation: the mean number of steps a gradient is carried
TEXT_MAX_UPDATES = 5000  # about five minutes


def read_text(path=CORPUS):
    """d2l's preprocessing: every run of non-letters one space, lower case; token ids."""
    try:
        raw = path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise Refused(f"cannot read {path.name}: {exc.strerror} (download it next to "
                      f"{Path(__file__).name})") from None
    text = re.sub("[^A-Za-z]+", " ", raw).lower()
    index = {c: i for i, c in enumerate(TEXT_VOCAB)}
    return np.array([index[c] for c in text], dtype=np.intp)


def every_step_loss(cell, p, X, Y, state, keep=None, grads=True):
    """A language model's loss: softmax cross-entropy of the next token at every step,
    mean over steps and sequences. Returns the loss per model, the last state (to carry
    on with) and the gradients."""
    Hs, last, caches = forward(cell, p, X, state)
    H = np.stack(Hs)
    logits = H @ p["W_y"] + p["b_y"][:, None, :]  # (T, M, B, V)
    loss, _, d_logits = softmax_xent(logits, Y)
    if not grads:
        return loss, last, None
    g, _, _ = backward(cell, p, X, caches, d_logits @ p["W_y"].swapaxes(1, 2), keep)
    T, M, B, n = H.shape
    H_all = H.transpose(1, 0, 2, 3).reshape(M, T * B, n)
    d_all = d_logits.transpose(1, 0, 2, 3).reshape(M, T * B, -1)
    g["W_y"] = H_all.swapaxes(1, 2) @ d_all
    g["b_y"] = d_all.sum(axis=1)
    return loss, last, g


@dataclass
class TextRun:
    setting: str  # "sequential, k = 8": the partitioning and the truncation
    seed: int
    perplexity: float  # on the validation text read through, the state carried
    perplexity_windows: float  # on validation windows of TEXT_WINDOW from a zero state
    train_loss: float  # mean training cross-entropy over the last tenth of the updates
    curve: list  # validation perplexity, read through, at each of the checkpoints


def text_setting_name(partitioning, k):
    reach = "randomized" if k == "random" else "full" if k >= TEXT_WINDOW else f"k = {k}"
    return f"{partitioning}, {reach}"


def text_keep(settings, seeds, rng, T=TEXT_WINDOW, B=TEXT_BATCH):
    """keep (T, M, B, 1) for one update: for truncation at k, the gradient is cut every
    k steps within the window, where a new chunk of k steps starts (the state carried
    forward, the gradient not); randomized truncation (after Tallec and Ollivier, 2017,
    as d2l describes it): at every step the gradient carried back is cut with
    probability 1/RANDOM_MEAN and otherwise divided by the chance of going on, so that
    on average it is the full gradient."""
    keep = np.ones((T, len(settings) * len(seeds), B, 1), np.float32)
    go_on = 1 - 1 / RANDOM_MEAN
    for j, (_, k) in enumerate(settings):
        m = slice(j * len(seeds), (j + 1) * len(seeds))
        if k == "random":
            keep[:, m] = np.where(rng.random((T, len(seeds), B, 1)) < go_on, 1 / go_on, 0)
        elif k < T:
            keep[::k, m] = 0
    return keep


def compute_text(updates=TEXT_UPDATES, settings=TEXT_SETTINGS, seeds=TEXT_SEEDS):
    """An LSTM language model on The Time Machine for every (setting, seed), side by side.

    sequential partitioning (d2l's): the training text as TEXT_BATCH streams side by
    side, from an offset drawn per seed and epoch; each update reads the next window of
    TEXT_WINDOW steps of every stream, starting from the state the last window ended in,
    carried over with its graph cut. random partitioning: each update reads TEXT_BATCH
    windows from random places in the text (non-overlapping, shuffled per epoch), each
    from a zero state. Adam, clipping at TEXT_CLIP."""
    keep_freed_memory()
    tokens = read_text()
    if len(tokens) < TEXT_TRAIN + TEXT_VAL:
        raise Refused(f"{CORPUS.name} has {len(tokens):,} characters after preprocessing; "
                      f"the experiment needs {TEXT_TRAIN + TEXT_VAL:,}")
    train, val = tokens[:TEXT_TRAIN], tokens[TEXT_TRAIN:TEXT_TRAIN + TEXT_VAL]
    T, B, n, S = TEXT_WINDOW, TEXT_BATCH, TEXT_HIDDEN, len(seeds)
    M = len(settings) * S
    p = recall_init("lstm", [100 + s for s in seeds], 0.0, n, len(TEXT_VOCAB), len(TEXT_VOCAB))
    p = {name: np.concatenate([w] * len(settings)).astype(np.float32) for name, w in p.items()}
    rngs = [np.random.default_rng([40, s]) for s in seeds]
    keep_rng = np.random.default_rng([41])
    batches = [TextBatches(train, rng, T, B) for rng in rngs]
    adam = Adam(p, TEXT_LR)
    state = zero_state("lstm", M, B, n, np.float32)
    losses, curves = [], []
    checkpoints = text_checkpoints(updates)
    for update in range(1, updates + 1):
        X = np.empty((T, M, B), np.intp)
        Y = np.empty((T, M, B), np.intp)
        for j, (part, _) in enumerate(settings):
            for i, source in enumerate(batches):
                m = j * S + i
                X[:, m], Y[:, m], new_epoch = source.next(part)
                if part == "random" or new_epoch:
                    for s in state:
                        s[m] = 0
        loss, state, g = every_step_loss("lstm", p, X, Y, state,
                                         text_keep(settings, seeds, keep_rng))
        clip(g, TEXT_CLIP)
        adam.step(p, g)
        losses.append(loss)
        if update in checkpoints:
            curves.append(evaluate_text(p, val, windows=update == updates))
    tail = np.mean(losses[-max(1, updates // 10):], axis=0)
    through, windows = curves[-1]
    return [TextRun(text_setting_name(*settings[m // S]), seeds[m % S], float(through[m]),
                    float(windows[m]), float(tail[m]), [float(c[0][m]) for c in curves])
            for m in range(M)]


def text_checkpoints(updates):
    return sorted({max(1, round(updates * (j + 1) / TEXT_CHECKPOINTS))
                   for j in range(TEXT_CHECKPOINTS)})


class TextBatches:
    """The windows of one seed's training text: next("sequential") or next("random")
    gives inputs and targets (T, B) and whether an epoch of that kind began."""

    def __init__(self, tokens, rng, T, B):
        self.tokens, self.rng, self.T, self.B = tokens, rng, T, B
        self.plan = {"sequential": [], "random": []}

    def next(self, kind):
        new_epoch = not self.plan[kind]
        if new_epoch:
            offset = int(self.rng.integers(0, self.T))
            if kind == "sequential":
                L = (len(self.tokens) - offset - 1) // self.B  # each stream's length
                starts = [offset + b * L + np.arange(0, L - self.T, self.T)
                          for b in range(self.B)]
                self.plan[kind] = list(np.stack(starts, axis=1))  # per window, B starts
            else:
                starts = offset + self.T * np.arange((len(self.tokens) - offset - 1) // self.T)
                starts = self.rng.permutation(starts)
                count = len(starts) // self.B
                self.plan[kind] = list(starts[:count * self.B].reshape(count, self.B))
        starts = self.plan[kind].pop(0)
        index = starts[None, :] + np.arange(self.T)[:, None]  # (T, B)
        return self.tokens[index], self.tokens[index + 1], new_epoch


def evaluate_text(p, val, windows=True, streams=TEXT_BATCH, T=TEXT_WINDOW):
    """Validation perplexity per model, two ways: the text read through as `streams`
    streams, the state carried from window to window; and (if windows) in windows of T,
    each from a zero state, as the random partitioning trains."""
    M, n = len(p["W_h"]), p["W_h"].shape[1]
    L = len(val) // streams
    text = val[:L * streams].reshape(streams, L)
    state = zero_state("lstm", M, streams, n, np.float32)
    total = np.zeros(M)
    for start in range(0, L - 1, T):
        part = text[:, start:min(start + T + 1, L)]
        X = np.repeat(part[:, :-1].T[:, None], M, axis=1)
        loss, state, _ = every_step_loss("lstm", p, X, np.repeat(part[:, 1:].T[:, None], M, 1),
                                         state, grads=False)
        total += loss * (part.shape[1] - 1)
    through = np.exp(total / (L - 1))
    if not windows:
        return through, None
    count = (len(val) - 1) // T
    total = np.zeros(M)
    for first in range(0, count, streams):  # the windows, `streams` at a time
        w = np.arange(first, min(first + streams, count))
        index = T * w[None, :] + np.arange(T)[:, None]  # (T, windows)
        X = np.repeat(val[index][:, None], M, axis=1)
        Y = np.repeat(val[index + 1][:, None], M, axis=1)
        loss, _, _ = every_step_loss("lstm", p, X, Y, zero_state("lstm", M, len(w), n, np.float32),
                                     grads=False)
        total += loss * len(w)
    return through, np.exp(total / count)


# ----------------------------------------------------------- 16.5: initialisation of the plain RNN

INIT_LAGS = (50, 100)  # two of chapter 15's lags; all five, 5 to 100, take longer: --lags
INIT_MAX_LAG = 200
INIT_MODELS = ("random U, tanh", "U = I, ReLU", "orthogonal U, tanh")
INIT_MAX_STEPS = 20_000
INIT_MAX_WORK = 1_000_000  # steps x the sum of (lag + 1): about ten minutes
INIT_SETUPS = {  # model -> (cell, U at the start)
    "random U, tanh": ("tanh", "random"),  # chapter 15's plain RNN
    "U = I, ReLU": ("relu", "identity"),  # Le, Jaitly and Hinton's IRNN
    "orthogonal U, tanh": ("tanh", "orthogonal"),
}


@dataclass
class InitRun:
    model: str
    lag: int
    accuracy: list  # test accuracy per seed
    factor_init: list  # (g_1 / g_T)^(1/lag) per seed: the gradient's factor per step, at the start
    factor_trained: list  # the same after training


def compute_init(lags=INIT_LAGS, models=INIT_MODELS, steps=RECALL_STEPS, seeds=SEEDS):
    """Each plain RNN of INIT_SETUPS at each lag, chapter 15's budget and data; models of
    one cell side by side. Returns InitRuns, model by model, lag by lag."""
    runs = {}
    for lag in lags:
        for cell in dict.fromkeys(INIT_SETUPS[m][0] for m in models):
            mine = [m for m in models if INIT_SETUPS[m][0] == cell]
            parts = [plain_rnn_init(seeds, INIT_SETUPS[m][1]) for m in mine]
            p = {name: np.concatenate([q[name] for q in parts]).astype(np.float32)
                 for name in parts[0]}
            run = train_recall(cell, p, lag, list(seeds) * len(mine), steps)
            for j, model in enumerate(mine):
                m = slice(j * len(seeds), (j + 1) * len(seeds))

                def factor(g1, gT):
                    return [float((a / b) ** (1 / lag)) if a > 0 and b > 0 else 0.0
                            for a, b in zip(g1[m], gT[m])]

                runs[model, lag] = InitRun(model, lag, run.accuracy[m],
                                           factor(run.g1_init, run.gT_init),
                                           factor(run.g1_trained, run.gT_trained))
    return [runs[m, lag] for m in models for lag in lags]


# ------------------------------------------------------------------------ 16.6: the adding problem

# As Hochreiter and Schmidhuber (1997) set it, their experiment 4
ADDING_LENGTH = 100  # T: sequences of T to T + T/10 steps
ADDING_HIDDEN, ADDING_BATCH, ADDING_LR = 16, 32, 1e-2
ADDING_BIAS = 5.0  # initial b_f of the LSTM, b_z of the GRU: the carousel's f = 1, nearly
ADDING_SEQUENCES = 40_000  # the budget, in training sequences per seed
ADDING_SEEDS = (0, 1, 2)
ADDING_CORRECT = 0.04  # a sequence is processed correctly if |error| < 0.04 (the paper's)
ADDING_RECENT, ADDING_MSE = 2000, 0.01  # solved: the last 2,000 correct, mean error < 0.01
ADDING_TEST = 2560  # test sequences, as in the paper's table
ADDING_KEY = 1997
ADDING_MAX_SEQUENCES = 1_000_000
ADDING_MAX_WORK = 100_000_000  # T x sequences: about an hour
ADDING_INPUT_BIAS = -3.0  # the LSTM's b_i: the paper starts its input gates closed (-3, -6)


def make_adding(rng, n, T, length):
    """The adding problem as Hochreiter and Schmidhuber (1997) set it: n sequences of
    `length` pairs (value, marker), length between T and T + T/10; values uniform in
    [-1, 1]; one of the first ten pairs marked, then one of the first T/2 - 1 others;
    the first and the last marker -1 unless marked; X_1 set to 0 if the first pair is
    marked (by either choice). The target, given at the end: 0.5 + (X_1 + X_2) / 4.
    Returns inputs (n, length, 2) and targets (n,)."""
    values = rng.uniform(-1, 1, (n, length))
    markers = np.zeros((n, length))
    markers[:, [0, -1]] = -1
    rows = np.arange(n)
    first = rng.integers(0, 10, n)
    second = rng.integers(0, T // 2 - 2, n)  # one of the first T/2 - 1 pairs but `first`
    second += second >= first
    markers[rows, first] = markers[rows, second] = 1
    zero = (first == 0) | (second == 0)  # "the first pair of the sequence got marked"
    values[rows[zero], first[zero]] = 0.0  # then X_1 is set to zero
    target = 0.5 + (values[rows, first] + values[rows, second]) / 4
    return np.stack([values, markers], axis=-1), target


def adding_chance(T):
    """The mean squared error of always predicting the mean target, 0.5: Var(X_1 + X_2) / 16,
    each value's variance 1/3, X_1's zero with the chance that the first pair is marked."""
    zeroed = 0.1 + 0.9 / (T // 2 - 2)  # X_1 there (1 in 10), or X_2 there (1 in T/2 - 2)
    return ((1 - zeroed) / 3 + 1 / 3) / 16


def adding_batch(rngs, n, T, length):
    batches = [make_adding(rng, n, T, length) for rng in rngs]
    X = np.stack([x for x, _ in batches], axis=1).transpose(2, 1, 0, 3)  # (length, S, n, 2)
    return np.ascontiguousarray(X, dtype=np.float32), np.stack([y for _, y in batches])


@dataclass
class AddingRun:
    seed: int
    solved_after: int  # training sequences until the paper's criterion held; 0: not in budget
    wrong: int  # test sequences of ADDING_TEST with |error| >= ADDING_CORRECT, after training
    test_mse: float
    curve: list  # mean squared training error over each block of CURVE_EVERY batches


CURVE_EVERY = 32  # batches per point of the learning curve: 1,024 sequences


def adding_init(cell, seeds, b_i, hidden=ADDING_HIDDEN, bias=ADDING_BIAS):
    """Weights uniform(-1/sqrt(n), 1/sqrt(n)) (PyTorch's rule, as in chapter 15); biases
    zero but the LSTM's forget gate and the GRU's update gate at `bias`, so that both
    start by keeping what they hold, and the LSTM's input gate at b_i."""
    p = recall_init(cell, seeds, bias, hidden, vocab=2, classes=1)
    if cell == "lstm":
        p["b"][:, :hidden] = b_i
    return {name: w.astype(np.float32) for name, w in p.items()}


def recent(batches, count):
    """The last `count` entries of a ring of batches (M, ring, B) whose next slot to write
    is batches[:, 0] after a roll: (M, count)."""
    return batches.reshape(len(batches), -1)[:, -count:]


def compute_adding(cell="lstm", b_i=ADDING_INPUT_BIAS, T=ADDING_LENGTH, budget=ADDING_SEQUENCES,
                   seeds=ADDING_SEEDS):
    """Train one model per seed, side by side, on the adding problem at length T, until
    each has met the paper's criterion or `budget` sequences are spent; then test it on
    ADDING_TEST fresh sequences of length T. Returns an AddingRun per seed."""
    keep_freed_memory()
    p = adding_init(cell, seeds, b_i)
    M = len(seeds)
    streams = [np.random.default_rng([ADDING_KEY, s, T]) for s in seeds]
    lengths = np.random.default_rng([ADDING_KEY, T])  # one length per step, for every seed
    ring = -(-ADDING_RECENT // ADDING_BATCH)  # the batches that hold the last 2,000 sequences
    errors = np.full((M, ring, ADDING_BATCH), np.inf)  # |error| of each, oldest batch first
    squares = np.full((M, ring, ADDING_BATCH), np.inf)
    solved = np.zeros(M, int)
    curves, block = [[] for _ in range(M)], np.zeros(M)
    adam = Adam(p, ADDING_LR)
    step = 0
    while step * ADDING_BATCH < budget and not solved.all():
        X, Y = adding_batch(streams, ADDING_BATCH, T, int(lengths.integers(T, T + T // 10 + 1)))
        loss, error, g = last_step_loss(cell, p, X, Y.astype(np.float32))
        adam.step(p, g)  # each error was measured before the update, as in online learning
        errors = np.concatenate([errors[:, 1:], error[:, None]], axis=1)
        squares = np.concatenate([squares[:, 1:], error[:, None] ** 2], axis=1)
        step += 1
        block += loss
        if step % CURVE_EVERY == 0:
            for m in range(M):
                curves[m].append(float(block[m] / CURVE_EVERY))
            block[:] = 0
        done = ((recent(errors, ADDING_RECENT) < ADDING_CORRECT).all(axis=1)
                & (recent(squares, ADDING_RECENT).mean(axis=1) < ADDING_MSE) & (solved == 0))
        solved[done] = step * ADDING_BATCH
    test = [np.random.default_rng([ADDING_KEY + 1, s, T]) for s in seeds]
    X, Y = adding_batch(test, ADDING_TEST, T, T)
    error = np.concatenate([last_step_loss(cell, p, X[:, :, i:i + 128],
                                           Y[:, i:i + 128].astype(np.float32), grads=False)[1]
                            for i in range(0, ADDING_TEST, 128)], axis=1)  # 128 at a time
    return [AddingRun(int(s), int(solved[m]), int((error[m] >= ADDING_CORRECT).sum()),
                      float((error[m] ** 2).mean()), curves[m]) for m, s in enumerate(seeds)]


# ===========================================================================
# What the site prints: one format_* per table, the reports, the command line.
# Everything above computes; everything below only formats and prints.
# ===========================================================================

def spread(values):
    """'0.74 (0.26-1.00)': mean, then lowest and highest, over seeds."""
    return f"{sum(values) / len(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def sci(x):
    return f"{x:.1e}" if x > 0 else "0"


def format_gradcheck_table(rows):
    body = [(r.part, r.entries, f"{r.relative_error:.1e}", r.what) for r in rows]
    return format_table(("computation", "entries", "relative error", "derivative checked"),
                        body, "lrrl")


def format_jacobian_table(rows):
    body = [(f"{r.b_f:.1f}", f"{r.forget:.3f}", f"{r.route:.3f}", f"{r.predicted:.3f}",
             f"{r.factor_path:.3f}", f"{r.factor_mean:.3f}", f"{r.factor_full:.3f}")
            for r in rows]
    header = ("b_f", "mean F_t", "rho(R_t)", "mean F_t + rho(R_t)", "cell path",
              "F_t replaced by its mean", "full")
    return format_table(header, body, "rrrrrrr")


def format_route_table(rows):
    body = [(f"{r.b_f:.1f}", f"{r.route_cosine:.2f}", f"{r.predicted:.3f}",
             f"{r.factor_frozen:.3f}", f"{r.factor_mean:.3f}", f"{r.factor_independent:.3f}",
             f"{r.pythagoras:.3f}") for r in rows]
    header = ("b_f", "cosine of consecutive R_t", "mean F_t + rho(R_t)", "R_t frozen",
              "R_t as measured", "R_t turned at random every step",
              "sqrt(mean F_t^2 + rho(R_t)^2)")
    return format_table(header, body, "rrrrrrr")


def format_jacobian_at_table(rows, distance=JACOBIAN_DISTANCE):
    body = [(f"{r.b_f:.1f}", f"{r.path_best:.3e}", f"{r.one_step:.3e}", f"{r.full:.3e}")
            for r in rows]
    header = ("b_f", "cell path, best unit", "product of the full one-step Jacobians",
              f"full dC_{distance}/dC_0")
    return format_table(header, body, "rrrr")


def format_clip_table(rows, threshold):
    body = [(f"{r.radius:g}", f"at {threshold:g}" if r.clipped else "none", sci(r.share_init),
             f"{r.first_norm:.2f}", f"{r.largest_norm:.1f}", f"{r.over:.0%}",
             f"{spread(r.accuracy)}, {r.learned} of {len(r.accuracy)}") for r in rows]
    header = ("rho(U)", "clipping", "g_1 / g_T, start", "norm, step 1", "largest norm",
              f"steps above {threshold:g}", "test accuracy, learned")
    return format_table(header, body, "rlrrrrr")


def format_truncation_table(ks, accuracy, loss, lag):
    body = [(name, f"{k}" + (" (all)" if k > lag else ""), spread(loss[name][j]),
             f"{spread(accuracy[name][j])}, {learned(accuracy[name][j])} of "
             f"{len(accuracy[name][j])}") for name in accuracy for j, k in enumerate(ks)]
    return format_table(("model", "k", "test loss", "test accuracy, learned"), body, "lrrr")


def format_text_table(names, runs, checkpoints):
    body = []
    for name in names:
        mine = [r for r in runs if r.setting == name]
        body.append((name, *(spread([r.curve[j] for r in mine]) for j in range(len(checkpoints))),
                     spread([r.perplexity_windows for r in mine])))
    header = ("setting", *(f"after {c:,} updates" for c in checkpoints),
              f"after {checkpoints[-1]:,}: windows of {TEXT_WINDOW} from zero")
    return format_table(header, body, "l" + "r" * (len(checkpoints) + 1))


def format_init_table(runs):
    body = [(r.model, r.lag, spread(r.accuracy), f"{learned(r.accuracy)} of {len(r.accuracy)}",
             f"{float(np.median(r.factor_init)):.3f}", f"{float(np.median(r.factor_trained)):.3f}")
            for r in runs]
    return format_table(("start", "lag", "test accuracy", "learned", "factor at the start",
                         "factor after training"), body, "lrrrrr")


def format_adding_table(runs, budget):
    body = [(r.seed, f"{r.solved_after:,}" if r.solved_after else f"not within {budget:,}",
             f"{r.wrong:,}", f"{r.test_mse:.5f}") for r in runs]
    return format_table(("seed", "sequences until solved",
                         f"wrong of {ADDING_TEST:,} test sequences", "test MSE"), body, "rrrr")


def format_adding_setting(T, budget, name):
    rows = [
        ("task", f"0.5 + (X_1 + X_2) / 4 at the end, T = {T}", "the same, drawn the same way"),
        ("solved", "the last 2,000 within 0.04, their MSE below 0.01", "the same"),
        ("network", "2 blocks of 2 cells, no forget gate", f"{ADDING_HIDDEN} {name} units"),
        ("biases", "input gates at -3 and -6: closed",
         f"b_f = {ADDING_BIAS:g}, the GRU's b_z = {ADDING_BIAS:g}; the LSTM's b_i = "
         f"{ADDING_INPUT_BIAS:g}"),
        ("optimiser", "SGD, a sequence per update, rate 0.5",
         f"Adam, {ADDING_BATCH} per update, rate {ADDING_LR:g}"),
        ("gradient", "truncated: through the cells only", "full"),
        ("runs", "an average over trials", f"{len(ADDING_SEEDS)} seeds, at most {budget:,}"),
    ]
    return format_table(("compared", "Hochreiter and Schmidhuber (1997)", "here"), rows, "lll")


# ----------------------------------------------------------------------- the reports, one per flag

@dataclass
class GradcheckRecord:
    rows: List[GradcheckRow]
    worst: float
    passed: bool  # worst < 1e-6


@dataclass
class JacobianRecord:
    hidden: int
    inputs: int
    steps: int
    seed: int
    distance: int
    rows: List[JacobianRow]
    b_f: list


@dataclass
class ClipRecord:
    lag: int
    steps: int
    lr: float
    threshold: float
    rows: List[ClipRow]
    vanishing_identical: bool  # at the smallest radius, clipping changed no number
    seeds: int


@dataclass
class TruncationRecord:
    lag: int
    length: int  # lag + 1 steps: k = length is the gradient untruncated
    ks: list
    models: list
    accuracy: dict  # model -> per k, per seed
    mean_accuracy: dict  # model -> per k
    learned: dict  # model -> per k, seeds at LEARNED or above
    loss: dict  # model -> per k, per seed: the test loss
    curves: dict  # model -> per k, [block][seed]: the mean training loss of each block
    curve_every: int  # steps per block of the curves
    chance: float  # the accuracy of a guess: 1 / K
    chance_loss: float  # the loss of a guess, every answer 1 / K: ln K
    seeds: int
    steps: int
    lr: float  # Adam's
    batch: int


@dataclass
class TextRecord:
    settings: list
    seeds: list
    updates: int
    hidden: int
    batch: int
    window: int
    train_chars: int
    val_chars: int
    characters_read: int  # per model: updates x batch x window
    checkpoints: list  # the updates after which the validation perplexity was measured
    runs: List[TextRun]
    mean_perplexity: dict  # setting -> mean over seeds, read through
    mean_windows: dict  # setting -> mean over seeds, in windows from zero
    seconds: float
    lr: float  # Adam's
    clip: float  # the gradient's largest norm
    seed_count: int


@dataclass
class InitRecord:
    lags: list
    models: list
    steps: int
    runs: List[InitRun]
    mean_accuracy: dict  # model -> per lag
    learned: dict  # model -> per lag, seeds that learned
    factor_init: dict  # model -> per lag, the median over seeds, at the start
    factor_trained: dict  # model -> per lag, the median over seeds, after training
    seconds: float
    lr: float  # Adam's
    seeds: int
    chance: float  # the accuracy of a guess: 1 / K


@dataclass
class AddingRecord:
    length: int
    budget: int
    model: str  # "LSTM b_i=-3" or "GRU"
    cell: str
    input_bias: float
    hidden: int
    batch: int
    runs: List[AddingRun]
    solved: list  # sequences until solved, per seed (0: not in budget)
    chance_mse: float  # predicting the mean target, 0.5, every time
    paper_sequences: int  # 74,000: the paper's LSTM at T = 100
    test: int  # test sequences
    curve_every: int  # sequences per point of the curves
    seconds: float
    solved_count: int  # seeds that met the criterion within the budget
    seed_count: int


def report_gradcheck(args, out):
    rows = compute_gradcheck()
    worst = max(r.relative_error for r in rows)
    c = GRADCHECK
    out.text(f"Every hand-written derivative against central differences (step {c['eps']:g}), "
             f"float64, random weights of size {c['scale']}: one LSTM step equation by equation "
             f"(dL/dH_t and dL/dC_t given), its Jacobian column by column, then whole "
             f"sequences of {c['steps']} steps, {c['batch']} sequences and {c['models']} models "
             f"side by side, {c['hidden']} units. Relative error max |a - n| / max(|a| + |n|).")
    out.table("gradcheck", format_gradcheck_table(rows))
    out.text(f"worst: {worst:.1e} ({'under' if worst < 1e-6 else 'NOT under'} 1e-6)")
    return GradcheckRecord(rows, worst, worst < 1e-6)


def report_jacobian(args, out):
    seed = JACOBIAN_SEED if args.seed is None else args.seed
    rows = [compute_jacobian(b, seed) for b in JACOBIAN_BIASES]
    k = JACOBIAN_DISTANCE
    out.text(f"dC_t/dC_0 on chapter 13's random LSTMs (H = {JACOBIAN_HIDDEN}, d = "
             f"{JACOBIAN_INPUT}, T = {JACOBIAN_STEPS}, seed {seed}). The factor per step over "
             f"steps {JACOBIAN_STEPS // 2 + 1} to {JACOBIAN_STEPS} (a geometric mean) of: the cell "
             f"path alone; the product of the full one-step Jacobians diag(F_t) + R_t with "
             f"diag(F_t) replaced by mean(F_t) I; the whole Jacobian of the (C, H) system. "
             f"R_t: the route back through H_(t-1) and the gates.")
    out.table("jacobian", format_jacobian_table(rows))
    out.text("With diag(F_t) replaced by mean(F_t) I the factor per step stays where it "
             "was: what counts is the gates' mean, not their spread. The eigenvalues of "
             "mean(F_t) I + R_t are mean(F_t) plus those of R_t, which spread around zero out "
             "to rho(R_t): the largest lands near mean F_t + rho(R_t), and the product settles "
             f"a little below it. After {k} steps (chapter 13's table):")
    out.table("jacobian_at", format_jacobian_at_table(rows))
    out.text(f"Why mean F_t + rho(R_t) holds: consecutive R_t are much alike (W_h is shared). "
             f"The factor per step of mean(F_t) I + R_t with R_t as measured, held at step "
             f"{JACOBIAN_STEPS // 2 + 1}'s at every step, and turned by a random orthogonal "
             f"Q_t at every step (Q_t R_t Q_t^T: the same eigenvalues, independent directions):")
    out.table("route", format_route_table(rows))
    return JacobianRecord(JACOBIAN_HIDDEN, JACOBIAN_INPUT, JACOBIAN_STEPS, seed, k, rows,
                          list(JACOBIAN_BIASES))


def report_clip(args, out):
    threshold = CLIP_THRESHOLD if args.threshold is None else args.threshold
    rows = compute_clip(threshold=threshold)
    low = [r for r in rows if r.radius == min(CLIP_RADII)]
    identical = low[0].accuracy == low[1].accuracy and low[0].loss == low[1].loss
    out.text(f"The plain tanh RNN on the recall task at lag {CLIP_LAG}, U a random orthogonal "
             f"matrix times rho, plain SGD (learning rate {CLIP_LR:g}) for {CLIP_STEPS} steps, "
             f"{len(SEEDS)} seeds, with and without clipping at norm {threshold:g}. g_1 / g_T: "
             f"the gradient at the first input over the gradient at the query.")
    out.table("clip", format_clip_table(rows, threshold))
    out.text(f"At rho = {min(CLIP_RADII):g} the runs with and without clipping are "
             + ("identical, number for number: the gradient never reached the threshold, "
                "so clipping never acted." if identical else "not identical."))
    return ClipRecord(CLIP_LAG, CLIP_STEPS, CLIP_LR, threshold, rows, identical, len(SEEDS))


def report_truncation(args, out):
    lag = TRUNCATION_LAG if args.lag is None else args.lag
    ks = truncation_ks(lag)
    start = time.process_time()
    accuracy, loss, curves = compute_truncation(lag, ks)
    seconds = time.process_time() - start
    out.text(f"Chapter 15's recall task at lag {lag} ({lag + 1} steps), its setting (Adam, "
             f"{TRUNCATION_STEPS:,} steps of {RECALL_BATCH}, {len(SEEDS)} seeds), the backward "
             f"pass truncated to the last k steps, k = {', '.join(map(str, ks))}: test loss and "
             f"accuracy, mean (lowest-highest), and the seeds that learned (at least "
             f"{LEARNED}). Chance: {1 / K:g}.")
    out.table("truncation", format_truncation_table(ks, accuracy, loss, lag))
    out.text(f"time: {seconds:.1f} s of CPU")
    return TruncationRecord(
        lag=lag, length=lag + 1, ks=list(ks), models=list(accuracy), accuracy=accuracy,
        mean_accuracy={m: [float(np.mean(a)) for a in v] for m, v in accuracy.items()},
        learned={m: [learned(a) for a in v] for m, v in accuracy.items()},
        loss=loss, curves=curves, curve_every=TRUNCATION_EVERY, chance=1 / K,
        chance_loss=math.log(K),
        seeds=len(SEEDS), steps=TRUNCATION_STEPS, lr=ADAM_LR, batch=RECALL_BATCH)


def report_text(args, out):
    updates = TEXT_UPDATES if args.updates is None else args.updates
    start = time.process_time()
    runs = compute_text(updates)
    seconds = time.process_time() - start
    names = [text_setting_name(*s) for s in TEXT_SETTINGS]
    out.text(f"An LSTM language model ({TEXT_HIDDEN} units) on The Time Machine: the first "
             f"{TEXT_TRAIN:,} characters train, the next {TEXT_VAL:,} validate. {updates:,} "
             f"updates of {TEXT_BATCH} windows of {TEXT_WINDOW} characters (Adam, learning "
             f"rate {TEXT_LR:g}, clipping at {TEXT_CLIP:g}), {len(TEXT_SEEDS)} seeds: mean "
             f"(lowest-highest). Randomized: cut with probability 1/{RANDOM_MEAN} at each step.")
    checkpoints = text_checkpoints(updates)
    out.text("Validation perplexity, the text read through with the state carried, then "
             "in windows from a zero state:")
    out.table("text", format_text_table(names, runs, checkpoints))
    out.text(f"time: {seconds:.1f} s of CPU")
    mean = {n: float(np.mean([r.perplexity for r in runs if r.setting == n])) for n in names}
    mean_w = {n: float(np.mean([r.perplexity_windows for r in runs if r.setting == n]))
              for n in names}
    return TextRecord(names, list(TEXT_SEEDS), updates, TEXT_HIDDEN, TEXT_BATCH, TEXT_WINDOW,
                      TEXT_TRAIN, TEXT_VAL, updates * TEXT_BATCH * TEXT_WINDOW, checkpoints,
                      runs, mean, mean_w, seconds, TEXT_LR, TEXT_CLIP,
                      len(TEXT_SEEDS))


def report_init(args, out):
    steps = RECALL_STEPS if args.steps is None else args.steps
    lags = INIT_LAGS if args.lags is None else args.lags
    if steps * sum(lag + 1 for lag in lags) > INIT_MAX_WORK:
        raise Refused(f"--steps {steps} at lags {', '.join(map(str, lags))} would take over ten "
                      f"minutes: keep steps x the sum of (lag + 1) under {INIT_MAX_WORK:,}")
    start = time.process_time()
    runs = compute_init(lags, steps=steps)
    seconds = time.process_time() - start
    models = list(INIT_MODELS)
    out.text(f"The plain RNN on chapter 15's recall task, its setting and seeds ({steps:,} "
             f"steps), three starts: chapter 15's (random U, tanh), U = I with ReLU (Le, Jaitly "
             f"and Hinton, 2015), an orthogonal U with tanh. Test accuracy, mean (lowest-highest); "
             f"the gradient's factor per step, (g_1 / g_T)^(1/lag), median over the seeds.")
    out.table("init", format_init_table(runs))
    out.text(f"time: {seconds:.1f} s of CPU")
    mean = {m: [float(np.mean(r.accuracy)) for r in runs if r.model == m] for m in models}
    count = {m: [learned(r.accuracy) for r in runs if r.model == m] for m in models}
    by = {(r.model, r.lag): r for r in runs}
    factor_init = {m: [float(np.median(by[m, lag].factor_init)) for lag in lags] for m in models}
    factor_trained = {m: [float(np.median(by[m, lag].factor_trained)) for lag in lags]
                      for m in models}
    return InitRecord(list(lags), models, steps, runs, mean, count, factor_init, factor_trained,
                      seconds, ADAM_LR, len(SEEDS), chance=1 / K)


def report_adding(args, out):
    T = ADDING_LENGTH if args.length is None else args.length
    budget = ADDING_SEQUENCES if args.sequences is None else args.sequences
    cell = args.cell or "lstm"
    if args.input_bias is not None and cell != "lstm":
        raise Refused("--input-bias is the LSTM's input gate: it has no effect with --cell gru")
    b_i = ADDING_INPUT_BIAS if args.input_bias is None else args.input_bias
    if T * budget > ADDING_MAX_WORK:
        raise Refused(f"--length {T} with --sequences {budget:,} would take over an hour: keep "
                      f"T x sequences under {ADDING_MAX_WORK:,}")
    name = f"LSTM b_i={b_i:g}" if cell == "lstm" else "GRU"
    start = time.process_time()
    runs = compute_adding(cell, b_i, T, budget)
    seconds = time.process_time() - start
    chance = adding_chance(T)
    out.text(f"The adding problem at T = {T} as Hochreiter and Schmidhuber (1997) set it, and "
             f"this script's setting:")
    out.table("adding_setting", format_adding_setting(T, budget, CELL_NAMES[cell]))
    out.text(f"The {name}, {len(ADDING_SEEDS)} seeds. Predicting the mean target, 0.5, every "
             f"time scores a mean squared error of {chance:.4f}.")
    out.table("adding", format_adding_table(runs, budget))
    out.text(f"time: {seconds:.1f} s of CPU")
    return AddingRecord(T, budget, name, cell, float(b_i) if cell == "lstm" else 0.0,
                        ADDING_HIDDEN, ADDING_BATCH, runs, [r.solved_after for r in runs], chance,
                        74_000, ADDING_TEST, CURVE_EVERY * ADDING_BATCH, seconds,
                        sum(1 for r in runs if r.solved_after), len(runs))


REPORTS = {  # flag -> (what it prints, the function), in the order of the chapter
    "gradcheck": ("each equation of the LSTM's backward pass, and every gradient of the "
                  "three cells, against finite differences", report_gradcheck),
    "jacobian": ("dC_t/dC_(t-1) in full: why the LSTM's gradient keeps more than its cell "
                 "path", report_jacobian),
    "clip": ("clipping against an exploding and a vanishing gradient", report_clip),
    "truncation": ("chapter 15's recall task with the gradient truncated at k steps",
                   report_truncation),
    "text": ("truncation, state carried or reset, randomized truncation on The Time Machine",
             report_text),
    "init": ("the plain RNN started at U = I with ReLU, or an orthogonal U", report_init),
    "adding": ("the adding problem at T = 100 against Hochreiter and Schmidhuber (1997)",
               report_adding),
}
DEFAULT = tuple(REPORTS)  # with no flag: every report, in order
OPTIONS = {  # option -> the reports that use it; given to no chosen one, it is an error
    "seed": ("jacobian",),
    "threshold": ("clip",),
    "lag": ("truncation",),
    "updates": ("text",),
    "steps": ("init",),
    "length": ("adding",),
    "sequences": ("adding",),
    "cell": ("adding",),
    "input_bias": ("adding",),
    "lags": ("init",),
}


def estimate_seconds(args):  # the harness refuses a command past an hour
    return 0.0  # --init and --adding refuse their own long runs: INIT_MAX_WORK, ADDING_MAX_WORK


def add_options(parser):
    parser.add_argument("--seed", metavar="S", type=number(int, 0, 2 ** 32 - 1),
                        help=f"--jacobian: the random LSTM's seed (default {JACOBIAN_SEED})")
    parser.add_argument("--threshold", metavar="X", type=number(float, 1e-3, 1e3),
                        help=f"--clip: the clipping norm (default {CLIP_THRESHOLD:g})")
    parser.add_argument("--lag", metavar="L", type=number(int, 2, 200),
                        help=f"--truncation: the lag, 2 to 200 (default {TRUNCATION_LAG}); k is "
                             "then 1, 2, 4, ... below L + 1, and L + 1, the whole sequence")
    parser.add_argument("--updates", metavar="N", type=number(int, 1, TEXT_MAX_UPDATES),
                        help=f"--text: Adam updates (default {TEXT_UPDATES})")
    parser.add_argument("--steps", metavar="N", type=number(int, 1, INIT_MAX_STEPS),
                        help=f"--init: training steps (default {RECALL_STEPS:,})")
    parser.add_argument("--length", metavar="T", type=number(int, 20, 1000),
                        help=f"--adding: the sequence length T (default {ADDING_LENGTH})")
    parser.add_argument("--sequences", metavar="N", type=number(int, 1024, ADDING_MAX_SEQUENCES),
                        help=f"--adding: the budget in training sequences per seed "
                             f"(default {ADDING_SEQUENCES:,})")
    parser.add_argument("--cell", choices=("lstm", "gru"),
                        help="--adding: the cell (default lstm)")
    parser.add_argument("--input-bias", metavar="B", type=number(float, -10, 10),
                        help=f"--adding with the LSTM: the input gate's initial bias b_i "
                             f"(default {ADDING_INPUT_BIAS:g})")
    parser.add_argument("--lags", metavar="L,L", type=lag_list,
                        help=f"--init: the lags, 2 to {INIT_MAX_LAG}, separated by commas "
                             f"(default {','.join(map(str, INIT_LAGS))})")


def lag_list(text):
    try:
        lags = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of whole numbers: {text!r}") from None
    if not lags or len(lags) > 8 or not all(2 <= lag <= INIT_MAX_LAG for lag in lags):
        raise argparse.ArgumentTypeError(f"use one to eight lags from 2 to {INIT_MAX_LAG}, "
                                         f"got {text}")
    return tuple(sorted(set(lags)))


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
