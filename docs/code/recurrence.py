"""recurrence.py: linear recurrences computed in parallel, minGRU and minLSTM, and what a linear state can and cannot do.

Companion script to chapter 18 ("Recurrence returns"). Python 3.9+ and numpy.

Chapters 12 to 17 computed H_t from H_{t-1} inside a tanh or a sigmoid, so step t
waits for step t - 1. When the recurrence is linear in the state,

    h_t = a_t * h_{t-1} + b_t        (elementwise; h_0 = 0)

with a_t and b_t computed from the inputs alone, every h_t is a closed form of
the inputs, and all of them can be computed at once. The file reads top to
bottom: chapter 14's GRU, timed (how much of a pass waits on the step before);
the recurrence three ways (the loop, Blelloch's parallel scan, and Heinsen's
log-space cumulative sums); the cells built on it (minGRU and minLSTM of Feng
et al. 2024, a decay in (0, 1) or in (-1, 1), a decay fixed in time), their
hand-written backward pass and Adam; the tasks (chapter 15's recall, parity,
selective copying, chapter 14's characters); linear attention as a running
sum; what the site prints; the command line.

    python3 recurrence.py                what chapter 18 shows, in order
    python3 recurrence.py --loop         chapter 14's GRU: how much of a pass waits on the last step
    python3 recurrence.py --scan         the loop, the scan and the log form: equal, work, depth, time
    python3 recurrence.py --attention    linear attention all at once and as a running state
    python3 recurrence.py --gradcheck    every hand-written gradient against central differences
    python3 recurrence.py --recall       minGRU and minLSTM on chapter 15's recall task
    python3 recurrence.py --parity       decays in (0, 1) against (-1, 1): parity, trained short, tested long
    python3 recurrence.py --selective    a fixed decay against an input-dependent one: selective copying
    python3 recurrence.py --chars        a minGRU language model on chapter 14's data and recipe
    python3 recurrence.py --recall --lags 5,20,200 --steps 3000
                                         other lags and budgets (minutes at long lags)
    python3 recurrence.py --chars --epochs 10   a fifth of chapter 14's budget, in seconds

Everything is float64 and the same command prints the same tables, run after
run, but for the lines and columns that report measured times.
"""

import argparse
import math
import os
import re
import sys
import textwrap
import time
from dataclasses import dataclass

if __name__ == "__main__":  # as a script: one BLAS thread (must be set before numpy loads)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""


# ---------------------------------------------------------------------------
# 1. The price of the loop: chapter 14's GRU, timed
# ---------------------------------------------------------------------------
#
# Chapter 14's cell in d2l's notation. H_{t-1} sits inside the sigmoid and the tanh,
# so step t waits for step t - 1, forward and, in reverse, backward. What does not
# wait is done apart, for every step at once: before the forward loop, the input's
# share of each gate (X is one-hot, so X_t W_x? is a row of W_x?: a lookup), and after
# the backward loop, the weights' gradients (sums over t of products). gru_forward and
# gru_backward time the two kinds of work separately, in clock.

GRU_GATES = "rzh"  # reset, update, candidate: W_xr, W_hr, b_r and so on


def gru_params(V, hidden, seed=0, scale=0.1):
    rng = np.random.default_rng([18, 1, seed])
    p = {}
    for g in GRU_GATES:
        p["W_x" + g] = rng.normal(0, scale, (V, hidden))
        p["W_h" + g] = rng.normal(0, scale, (hidden, hidden))
        p["b_" + g] = np.zeros(hidden)
    return p


def gru_forward(p, X, clock):
    """The states H (T + 1, B, h) of chapter 14's GRU on the tokens X (T, B), H[0] = 0,
    and what the backward pass needs. clock["at once"] and clock["waits"] gain the CPU
    seconds of the work done for all steps together and of the loop over t."""
    start = time.process_time()
    P = {g: p["W_x" + g][X] + p["b_" + g] for g in GRU_GATES}  # X_t W_x? + b_?, every t
    looped = time.process_time()
    T, B, h = len(X), X.shape[1], p["W_hr"].shape[0]
    H, R, Z, H_tilde = (np.zeros((T + 1, B, h)),) + tuple(np.empty((T, B, h)) for _ in "rzh")
    for t in range(T):  # each step waits for the one before
        H_prev = H[t]
        R[t] = sigmoid(P["r"][t] + H_prev @ p["W_hr"])
        Z[t] = sigmoid(P["z"][t] + H_prev @ p["W_hz"])
        H_tilde[t] = np.tanh(P["h"][t] + (R[t] * H_prev) @ p["W_hh"])
        H[t + 1] = Z[t] * H_prev + (1 - Z[t]) * H_tilde[t]
    clock["at once"] += looped - start
    clock["waits"] += time.process_time() - looped
    return H, (R, Z, H_tilde)


def gru_backward(p, X, H, cache, dH_out, clock):
    """The gradients of L = sum_t dH_out[t] . H[t + 1], a fixed linear read-out of every
    state, by backpropagation through time; clock as in gru_forward."""
    R, Z, H_tilde = cache
    start = time.process_time()
    dP = {g: np.empty_like(R) for g in GRU_GATES}  # dL/d(pre-activation) of each gate
    dH = np.zeros_like(H[0])
    for t in reversed(range(len(X))):  # each step waits for the one after
        H_prev = H[t]
        dH = dH + dH_out[t]
        dP["h"][t] = dH * (1 - Z[t]) * (1 - H_tilde[t] ** 2)
        dP["z"][t] = dH * (H_prev - H_tilde[t]) * Z[t] * (1 - Z[t])
        dRH = dP["h"][t] @ p["W_hh"].T  # through (R_t * H_{t-1}) W_hh
        dP["r"][t] = dRH * H_prev * R[t] * (1 - R[t])
        dH = (dH * Z[t] + dRH * R[t] + dP["r"][t] @ p["W_hr"].T
              + dP["z"][t] @ p["W_hz"].T)  # dL/dH_{t-1}
    looped = time.process_time()
    V, h = p["W_xr"].shape
    tokens = X.reshape(-1)
    rows = {"r": H[:-1], "z": H[:-1], "h": R * H[:-1]}  # what multiplies W_h? at each step
    grads = {}
    for g in GRU_GATES:
        d = dP[g].reshape(-1, h)  # row v of W_x? gathers the steps that read token v:
        grads["W_x" + g] = np.stack([np.bincount(tokens, d[:, j], V) for j in range(h)], 1)
        grads["W_h" + g] = rows[g].reshape(-1, h).T @ d
        grads["b_" + g] = d.sum(axis=0)
    clock["waits"] += looped - start
    clock["at once"] += time.process_time() - looped
    return grads


# ---------------------------------------------------------------------------
# 2. The linear recurrence, three ways
# ---------------------------------------------------------------------------
#
# a and b are (T, ...) arrays, time first; every function returns H (T, ...), the
# states h_1 .. h_T of h_t = a_t * h_{t-1} + b_t with h_0 = 0.

def scan_loop(a, b):
    """The recurrence as written: T steps, each waiting for the one before."""
    H = np.empty_like(b)
    h = np.zeros_like(b[0])
    for t in range(len(b)):
        h = a[t] * h + b[t]
        H[t] = h
    return H


#   Two steps compose into one of the same form:
#     h_2 = a_2 (a_1 h_0 + b_1) + b_2 = (a_1 a_2) h_0 + (a_2 b_1 + b_2)
#   so a step is the pair (a, b), and (a_1, b_1) then (a_2, b_2) is
#   (a_1 a_2, a_2 b_1 + b_2). The composition is associative, and that is all a
#   parallel prefix scan needs. The identity is (1, 0), the step that changes nothing.

def compose(first, then):
    """(a_1, b_1) followed by (a_2, b_2): one step doing both."""
    (a1, b1), (a2, b2) = first, then
    return a1 * a2, a2 * b1 + b2


def scan_blelloch(a, b, trace=None):
    """Blelloch's work-efficient scan (1990): an up-sweep that composes pairs, then
    pairs of pairs, up a tree of depth log2 T, and a down-sweep that hands every
    position the composition of all the steps before it. Each level is one numpy
    operation over all its positions at once: on a parallel machine, one time step.
    Returns H and the counts (compositions, levels) the work and depth table reads;
    a list given as trace gets every round's name, the positions it changed and the
    pairs (A_t, B_t) of every position after it (the page's step-by-step figure)."""
    T = len(b)
    n = 1 << max(0, (T - 1).bit_length())  # T padded to a power of two with (1, 0)
    A = np.ones((n,) + b.shape[1:])
    B = np.zeros((n,) + b.shape[1:])
    A[:T], B[:T] = a, b
    work = levels = 0
    note = (lambda name, *changed: trace.append(
        (name, sorted(t for s in changed for t in range(n)[s] if t < T), A[:T].tolist(),
         B[:T].tolist()))) if trace is not None else (lambda *_: None)
    note("the steps (a_t, b_t)")
    stride = 2
    while stride <= n:  # up-sweep: position i takes in its left neighbour's block
        left, right = slice(stride // 2 - 1, n, stride), slice(stride - 1, n, stride)
        A[right], B[right] = compose((A[left], B[left]), (A[right], B[right]))
        work, levels, stride = work + n // stride, levels + 1, stride * 2
        note(f"up-sweep: pairs into blocks of {stride // 2}", right)
    A[n - 1], B[n - 1] = 1, 0  # the root gets the identity: nothing comes before it
    note("the last position gets the identity (1, 0)", slice(n - 1, n))
    stride = n
    while stride >= 2:  # down-sweep: a left child gets its parent's prefix, a right
        left, right = slice(stride // 2 - 1, n, stride), slice(stride - 1, n, stride)
        before = A[right].copy(), B[right].copy()  # child the parent's prefix then the
        A[right], B[right] = compose(before, (A[left], B[left]))  # left block
        A[left], B[left] = before
        work, levels, stride = work + n // stride, levels + 1, stride // 2
        note(f"down-sweep: prefixes into blocks of {stride}", left, right)
    # (A[t], B[t]) is now every step before t composed: h_{t-1} = B[t], as h_0 = 0
    return a * B[:T] + b, work + T, levels + 1


def scan_log(a, b):
    """Heinsen's form (2023) for a_t > 0: with A_t = log a_1 + ... + log a_t,
        h_t = exp(A_t) * sum_{s <= t} exp(log b_s - A_s),
    two cumulative sums, the second taken in log space (log-sum-exp) so that no
    exp(-A_s) overflows. A log needs b_s > 0: b is split into its positive and
    negative parts, h = h+ - h-, each part scanned on its own."""
    if np.any(a <= 0):
        raise ValueError("the log form needs every a_t > 0")
    A = np.cumsum(np.log(a), axis=0)
    with np.errstate(divide="ignore"):  # log 0 = -inf: a b_s of 0 adds nothing
        parts = [np.exp(A + np.logaddexp.accumulate(np.log(np.maximum(sign * b, 0)) - A,
                                                   axis=0)) for sign in (1, -1)]
    return parts[0] - parts[1]


SCANS = {"loop": scan_loop, "Blelloch scan": lambda a, b: scan_blelloch(a, b)[0],
         "log-space cumsum": scan_log}


def scan_backward(a, dH, scan):
    """The backward pass of the recurrence is the same recurrence, run from the end:
    dL/dh_t = dH_t + a_{t+1} dL/dh_{t+1}, dH_t being what reaches h_t from outside it.
    Then dL/db_t = dL/dh_t and dL/da_t = dL/dh_t * h_{t-1}. Returns dL/dh_t (T, ...)."""
    a_next = np.concatenate([a[1:], np.zeros_like(a[:1])])  # a_{t+1}; none after T
    dh = scan(a_next[::-1], dH[::-1])
    return (dh[0] if isinstance(dh, tuple) else dh)[::-1]


# ---------------------------------------------------------------------------
# 3. Cells whose gates do not read the state
# ---------------------------------------------------------------------------
#
# Every cell here computes its gates from the input x_t alone, in chapter 14's
# notation (Z near 1 keeps the old state), then hands the scan its a_t and b_t:
#
#   minGRU    Z = sigma(X W_xz + b_z),  H~ = X W_xh + b_h      (no tanh)
#             H = Z * H_prev + (1 - Z) * H~                   a = Z, b = (1 - Z) * H~
#   minLSTM   F = sigma(X W_xf + b_f),  I = sigma(X W_xi + b_i),  H~ = X W_xh + b_h
#             H = F / (F + I) * H_prev + I / (F + I) * H~
#   (0, 1)    A = sigma(X W_xa + b_a),  H = A * H_prev + X W_xb + b_b   (selective)
#   (-1, 1)   A = tanh(X W_xa + b_a),   H = A * H_prev + X W_xb + b_b
#   fixed     A = sigma(b_a), the same at every step (time-invariant, like S4)
#
# Feng et al. write h_t = (1 - z_t) h_{t-1} + z_t h~_t: their z_t is this site's
# 1 - Z, the share of the new candidate. X is one-hot, so X W_x? + b_? is a row of
# a table; the answer is read from the last state: Y_hat = H_T W_hq + b_q.

GATES = {"gru": GRU_GATES, "mingru": "zh", "mingru_bz2": "zh", "minlstm": "fih", "pos": "ab", "neg": "ab", "selective": "ab",
         "fixed": "b"}
CELL_NAMES = {"gru": "GRU (chapter 14)", "mingru": "minGRU", "mingru_bz2": "minGRU b_z=2", "minlstm": "minLSTM", "pos": "decay in (0, 1)",
              "neg": "decay in (-1, 1)", "selective": "decay from the input",
              "fixed": "decay fixed in time"}


def sigmoid(x):
    """sigma(x) = (1 + tanh(x/2)) / 2: the same function, and it never overflows."""
    return 0.5 + 0.5 * np.tanh(0.5 * x)


def init_params(cell, V, hidden, outputs, seeds):
    """One network per seed, side by side on a leading model axis M: W_x? (M, V, h),
    b_? (M, h), W_hq (M, h, outputs), b_q (M, outputs). PyTorch's rule, as in chapter
    15: every weight uniform(-1/sqrt(h), 1/sqrt(h)), biases zero. A network's weights
    depend on its seed only, not on the others beside it."""
    bound = 1 / math.sqrt(hidden)
    nets = []
    for seed in seeds:
        rng = np.random.default_rng([18, seed])
        p = {}
        for g in GATES[cell]:
            p["W_x" + g] = rng.uniform(-bound, bound, (V, hidden))
            p["b_" + g] = np.zeros(hidden)
        if cell == "fixed":
            p["b_a"] = np.zeros(hidden)  # the decay: one number per unit, no input
        if cell == "gru":  # chapter 14's cell: the gates read H_{t-1} too
            for g in GATES[cell]:
                p["W_h" + g] = rng.uniform(-bound, bound, (hidden, hidden))
        p["W_hq"] = rng.uniform(-bound, bound, (hidden, outputs))
        p["b_q"] = np.zeros(outputs)
        if cell == "mingru_bz2":
            p["b_z"][:] = 2  # Z = sigma(2) = 0.88 at the start: chapter 15's b_f = 2
        nets.append(p)
    return {k: np.stack([p[k] for p in nets]) for k in nets[0]}


def token_rows(X, V):
    """Network m's token x is row m V + x of its table W_x? (M, V, h) seen as (M V, h)."""
    return X + V * np.arange(X.shape[1])[:, None]


def decay_and_input(p, cell, X):
    """a_t and b_t (T, M, B, h) of every step, from the tokens X (T, M, B), and what
    the backward pass needs. Network m reads its own row of each table."""
    rows = token_rows(X, p["W_x" + GATES[cell][0]].shape[1])
    P = {g: np.take(p["W_x" + g].reshape(-1, p["W_x" + g].shape[2]), rows, axis=0)
            + p["b_" + g][:, None] for g in GATES[cell]}  # X W_x? + b_?, row lookups
    if cell.startswith("mingru"):
        Z = sigmoid(P["z"])
        return Z, (1 - Z) * P["h"], (P, Z)
    if cell == "minlstm":
        F, I = sigmoid(P["f"]), sigmoid(P["i"])
        S = F + I
        return F / S, I / S * P["h"], (P, F, I, S)
    if cell == "fixed":
        A = np.broadcast_to(sigmoid(p["b_a"])[:, None], P["b"].shape)
        return A, P["b"], (P, A)
    A = np.tanh(P["a"]) if cell == "neg" else sigmoid(P["a"])
    return A, P["b"], (P, A)


def decay_and_input_backward(cell, da, db, cache):
    """From dL/da_t and dL/db_t to dL/d(pre-activation) of every gate."""
    if cell.startswith("mingru"):
        P, Z = cache  # a = Z, b = (1 - Z) * H~
        return {"z": (da - db * P["h"]) * Z * (1 - Z), "h": db * (1 - Z)}
    if cell == "minlstm":
        P, F, I, S = cache  # a = F / S, b = c * H~ with c = I / S, S = F + I
        dc = db * P["h"]
        return {"f": (da - dc) * I / S ** 2 * F * (1 - F),
                "i": (dc - da) * F / S ** 2 * I * (1 - I), "h": db * I / S}
    P, A = cache
    if cell == "fixed":
        return {"b": db, "a": da * A * (1 - A)}
    return {"a": da * (1 - A ** 2 if cell == "neg" else A * (1 - A)), "b": db}


def log_softmax(Y_hat):
    shifted = Y_hat - Y_hat.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def loss_and_grads(p, cell, X, Y, scan=scan_loop, need_grads=True, every_step=False):
    """X (T, M, B) token ids. Y (M, B, heads): the answers read from H_T, one per head
    (recall and parity have one head, selective copying one per token to copy); or, with
    every_step, Y (T, M, B), the next character read from every H_t. The states by the
    scan, each network's mean cross-entropy over its answers and its accuracy, (M,)
    each; then the backward pass, itself a scan, of the sum of the M losses: each
    network gets its own loss's gradient."""
    T, M, B = X.shape
    if cell == "gru":  # no scan: chapter 14's loop, network by network (section 1)
        nets = [{k: w[m] for k, w in p.items() if k not in ("W_hq", "b_q")} for m in range(M)]
        clock = {"at once": 0.0, "waits": 0.0}
        runs = [gru_forward(net, X[:, m], clock) for m, net in enumerate(nets)]
        H = np.stack([states[1:] for states, _ in runs], axis=1)  # (T, M, B, h)
    else:
        a, b, cache = decay_and_input(p, cell, X)
        H = scan(a, b)
        H = H[0] if isinstance(H, tuple) else H
    Hr, Yr = (H, Y[..., None]) if every_step else (H[-1:], Y[None])  # states read out
    R, heads = len(Hr), Yr.shape[3]
    Y_hat = Hr @ p["W_hq"] + p["b_q"][:, None]  # (R, M, B, heads K)
    log_P = log_softmax(Y_hat.reshape(R, M, B, heads, -1))
    picked = np.take_along_axis(log_P, Yr[..., None], axis=4)[..., 0]
    loss = -picked.mean(axis=(0, 2, 3))
    accuracy = (log_P.argmax(axis=4) == Yr).mean(axis=(0, 2, 3))
    if not need_grads:
        return loss, accuracy, None
    dY_hat = np.exp(log_P)  # dL/dY_hat = (softmax - one_hot(Y)) / (answers per network)
    np.put_along_axis(dY_hat, Yr[..., None], np.exp(picked[..., None]) - 1, axis=4)
    dY_hat = dY_hat.reshape(R, M, B, -1) / (R * B * heads)
    by_model = lambda A: A.transpose(1, 0, 2, 3).reshape(M, R * B, -1)  # (M, R B, .)
    grads = {"W_hq": by_model(Hr).transpose(0, 2, 1) @ by_model(dY_hat),
             "b_q": dY_hat.sum(axis=(0, 2))}
    dH = np.zeros_like(H)
    dH[T - R:] = dY_hat @ p["W_hq"].transpose(0, 2, 1)  # what reaches H from Y_hat
    if cell == "gru":
        each = [gru_backward(net, X[:, m], states, cache, dH[:, m], clock)
                for m, (net, (states, cache)) in enumerate(zip(nets, runs))]
        grads.update({k: np.stack([g[k] for g in each]) for k in each[0]})
        return loss, accuracy, grads
    dh = scan_backward(a, dH, scan)  # dL/dh_t, carried back by the same scan
    H_prev = np.concatenate([np.zeros_like(H[:1]), H[:-1]])
    dP = decay_and_input_backward(cell, dh * H_prev, dh, cache)
    V, h = p["W_x" + GATES[cell][0]].shape[1:]
    entries = (token_rows(X, V).reshape(-1, 1) * h + np.arange(h)).ravel()
    for g in GATES[cell]:  # X^T dP: each sequence's row of dP added to its token's row
        grads["W_x" + g] = np.bincount(entries, dP[g].ravel(), M * V * h).reshape(M, V, h)
        grads["b_" + g] = dP[g].sum(axis=(0, 2))
    if cell == "fixed":
        grads["b_a"] = dP["a"].sum(axis=(0, 2))
    return loss, accuracy, grads


class Adam:
    """Adam with PyTorch's defaults (chapter 15's): betas 0.9 and 0.999, eps 1e-8. Each
    entry is its own, so networks side by side train as they would alone."""

    def __init__(self, p, lr):
        self.lr, self.t = lr, 0
        self.m = {k: np.zeros_like(w) for k, w in p.items()}
        self.v = {k: np.zeros_like(w) for k, w in p.items()}

    def step(self, p, grads):
        self.t += 1
        for k, w in p.items():
            self.m[k] = 0.9 * self.m[k] + 0.1 * grads[k]
            self.v[k] = 0.999 * self.v[k] + 0.001 * grads[k] ** 2
            w -= self.lr * (self.m[k] / (1 - 0.9 ** self.t)) / (
                np.sqrt(self.v[k] / (1 - 0.999 ** self.t)) + 1e-8)


@dataclass
class Task:
    """A task: its vocabulary, its answers, and how its sequences are drawn."""
    name: str
    V: int  # tokens
    K: int  # answers per head
    heads: int  # answers per sequence
    draw: object  # draw(rng, n, length) -> X (T, n), Y (n, heads): training sequences
    draw_test: object = None  # the same for test sequences, if they differ


def draw_stacked(draw, rngs, n, length):
    """One minibatch per network, each from its own stream: X (T, M, n), Y (M, n, heads)."""
    drawn = [draw(rng, n, length) for rng in rngs]
    return np.stack([X for X, _ in drawn], axis=1), np.stack([Y for _, Y in drawn])


def train(cell, task, length, seeds, steps, lr, hidden, batch, scan=scan_loop):
    """One network per seed trained with Adam on fresh minibatches of task at length,
    side by side; seed s's training sequences come from its own stream, the same for
    every cell. Returns the parameters and the CPU seconds the training took."""
    p = init_params(cell, task.V, hidden, task.heads * task.K, seeds)
    data = [np.random.default_rng([DATA_KEY, seed, length]) for seed in seeds]
    adam = Adam(p, lr)
    start = time.process_time()
    for _ in range(steps):
        X, Y = draw_stacked(task.draw, data, batch, length)
        adam.step(p, loss_and_grads(p, cell, X, Y, scan)[2])
    return p, time.process_time() - start


def test_accuracy(p, cell, task, length, seeds, n=512):
    """Accuracy per answer of each network on its seed's n fixed test sequences."""
    X, Y = draw_stacked(task.draw_test or task.draw,
                        [np.random.default_rng([TEST_KEY, seed, length]) for seed in seeds],
                        n, length)
    return [float(x) for x in loss_and_grads(p, cell, X, Y, need_grads=False)[1]]


# ---------------------------------------------------------------------------
# 4. The tasks
# ---------------------------------------------------------------------------

DATA_KEY, TEST_KEY = 16, 17  # chapter 15's seed prefixes for training and test sequences

# Chapter 15's recall: a symbol (one of R_K), lag - 1 distractors (of R_D), the query;
# the answer is the symbol. Drawn as memory.py's make_sequences draws them, from the
# same seed sequences, so that each seed sees the very sequences chapter 15's cells saw.
R_K, R_D = 4, 4
R_QUERY = R_K + R_D
LAGS = (5, 10, 20, 50, 100)  # chapter 15's lags
SEEDS = 4  # chapter 15's seeds per cell and lag
R_HIDDEN, R_BATCH, R_STEPS, R_LR = 16, 32, 1500, 1e-3  # chapter 15's budget


def draw_recall(rng, n, lag):
    first = rng.integers(0, R_K, n)
    X = np.empty((n, lag + 1), dtype=np.intp)
    X[:, 0] = first
    X[:, 1:lag] = rng.integers(R_K, R_K + R_D, (n, lag - 1))
    X[:, lag] = R_QUERY
    return X.T, first[:, None]


RECALL = Task("recall", R_K + R_D + 1, R_K, 1, draw_recall)


# Parity: a string of bits; the answer is 1 if it holds an odd number of 1s. Parity
# agrees with no part of the string smaller than the whole, so a long string gives a
# gradient nothing to start from: each training string is 1 to P_TRAIN random bits
# after leading zeros (which leave the parity as it is), as Grazzi et al. train on a
# range of lengths; the test strings are random bits all along.

P_TRAIN, P_TESTS = 10, (10, 20, 40, 80, 160)  # trained at length 10, tested up to 160
P_SEEDS, P_HIDDEN, P_BATCH, P_STEPS, P_LR = 4, 8, 64, 1000, 1e-2


def draw_parity(rng, n, length, full=False):
    X = rng.integers(0, 2, (length, n))
    if not full:
        X[np.arange(length)[:, None] < length - rng.integers(1, length + 1, n)] = 0
    return X, (X.sum(axis=0) % 2)[:, None]


PARITY = Task("parity", 2, 2, 1, draw_parity, lambda rng, n, length: draw_parity(rng, n, length, True))


# Selective copying (Gu and Dao, 2023): S_N tokens (of S_K) scattered at random places
# among noise; the answer is the S_N tokens in order, one head each, read from H_T.

S_K, S_N, S_LENGTH = 4, 3, 24
S_NOISE = S_K
S_SEEDS, S_HIDDEN, S_BATCH, S_STEPS, S_LR = 4, 16, 64, 1500, 1e-2


def draw_selective(rng, n, length):
    X = np.full((n, length), S_NOISE)
    places = np.sort(rng.random((n, length)).argsort(axis=1)[:, :S_N], axis=1)
    tokens = rng.integers(0, S_K, (n, S_N))
    np.put_along_axis(X, places, tokens, axis=1)
    return X.T, tokens


SELECTIVE = Task("selective copying", S_K + 1, S_K, S_N, draw_selective)


# Chapter 14's language model: The Time Machine, d2l's preprocessing (every run of
# non-letters one space, lower case) and vocabulary (space, <unk>, a-z), windows of
# C_STEPS + 1 characters, one per start position, the first C_TRAIN to train and the
# next C_VAL to validate; the model reads the window and predicts every next character.
# Chapter 14's budget and optimiser: 32 units, 50 epochs of batches of 1,024 windows
# reshuffled every epoch, SGD at a learning rate of 4, the gradient clipped to norm 1.

CORPUS = "timemachine.txt"
VOCAB = [" ", "<unk>"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]
C_STEPS, C_TRAIN, C_VAL = 32, 10000, 5000
C_HIDDEN, C_BATCH, C_EPOCHS, C_LR, C_CLIP = 32, 1024, 50, 4.0, 1.0


def char_windows(path=None):
    """Chapter 14's training and validation windows: X (T, n) token ids, Y the same
    shifted by one character."""
    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), CORPUS)
    try:
        with open(path, encoding="utf-8") as f:
            text = re.sub("[^A-Za-z]+", " ", f.read()).lower()
    except (OSError, UnicodeDecodeError) as exc:
        raise Refused(f"cannot read the corpus {path}: {exc}") from None
    n = C_TRAIN + C_VAL
    if len(text) < n + C_STEPS:
        raise Refused(f"the corpus {path} is too short: {n + C_STEPS:,} characters needed")
    index = {c: i for i, c in enumerate(VOCAB)}
    ids = np.array([index.get(c, 1) for c in text[:n + C_STEPS]])
    windows = ids[np.arange(n)[:, None] + np.arange(C_STEPS + 1)]
    return ((windows[:C_TRAIN, :-1].T, windows[:C_TRAIN, 1:].T),
            (windows[C_TRAIN:, :-1].T, windows[C_TRAIN:, 1:].T))


def train_chars(cell, train_set, seed=0, epochs=C_EPOCHS, hidden=C_HIDDEN):
    """Chapter 14's recipe on its windows: minibatch SGD, the gradient clipped to norm
    C_CLIP, the windows reshuffled every epoch. Returns the parameters, the training
    perplexity of each epoch and the CPU seconds."""
    X, Y = train_set
    p = init_params(cell, len(VOCAB), hidden, len(VOCAB), (seed,))
    rng = np.random.default_rng([18, 4, seed])
    start, history = time.process_time(), []
    for _ in range(epochs):
        order, losses = rng.permutation(X.shape[1]), []
        for k in range(0, len(order), C_BATCH):
            batch = order[k:k + C_BATCH]
            loss, _, grads = loss_and_grads(p, cell, X[:, None, batch], Y[:, None, batch],
                                            every_step=True)
            norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
            for name, g in grads.items():
                p[name] -= C_LR * min(1, C_CLIP / norm) * g
            losses.append(float(loss[0]))
        history.append(math.exp(np.mean(losses)))
    return p, history, time.process_time() - start


# ---------------------------------------------------------------------------
# 5. Attention without a softmax is a recurrence (Katharopoulos et al., 2020)
# ---------------------------------------------------------------------------
#
# Causal attention with a feature map phi in place of exp(q . k):
#   y_t = sum_{s <= t} phi(q_t) . phi(k_s) v_s / sum_{s <= t} phi(q_t) . phi(k_s)
# The sums over s do not depend on t's query, so they can be carried as a state:
#   S_t = S_{t-1} + phi(k_t) v_t^T,   z_t = z_{t-1} + phi(k_t)
#   y_t = phi(q_t)^T S_t / phi(q_t)^T z_t
# a linear recurrence with a_t = 1 and a state of d x d_v numbers, whatever t is.

def phi(x):
    """elu(x) + 1, the paper's feature map: positive, so the denominator is too."""
    return np.where(x > 0, x + 1, np.exp(np.minimum(x, 0)))


def attention_all_at_once(Q, K, V):
    """Every position at once: the (T, T) matrix of phi(q_t) . phi(k_s), masked to
    s <= t. T^2 d multiplications for the scores, T^2 d_v for the sums."""
    W = np.tril(phi(Q) @ phi(K).T)
    return (W @ V) / W.sum(axis=1, keepdims=True)


def attention_running_sum(Q, K, V):
    """One position at a time, carrying S (d, d_v) and z (d,): d d_v per token."""
    S, z = np.zeros((Q.shape[1], V.shape[1])), np.zeros(Q.shape[1])
    Y = np.empty((len(Q), V.shape[1]))
    for t in range(len(Q)):
        S += np.outer(phi(K[t]), V[t])
        z += phi(K[t])
        Y[t] = phi(Q[t]) @ S / (phi(Q[t]) @ z)
    return Y


def attention_by_scan(Q, K, V):
    """The running sums as the scan of section 2, with a_t = 1: all positions at once
    again, with the state's d x d_v numbers per position instead of T."""
    fK = phi(K)
    b = np.concatenate([(fK[:, :, None] * V[:, None, :]).reshape(len(Q), -1), fK], axis=1)
    states = scan_blelloch(np.ones_like(b), b)[0]
    S = states[:, :-Q.shape[1]].reshape(len(Q), Q.shape[1], V.shape[1])
    z = states[:, -Q.shape[1]:]
    fQ = phi(Q)
    return np.einsum("td,tdv->tv", fQ, S) / (fQ * z).sum(axis=1, keepdims=True)


def softmax_attention(Q, K, V):
    """Chapter 17's attention (scaled dot product, causal), for the cost table only."""
    scores = np.tril(Q @ K.T / math.sqrt(Q.shape[1])) - np.triu(np.full((len(Q),) * 2, np.inf), 1)
    W = np.exp(scores - scores.max(axis=1, keepdims=True))
    return (W @ V) / W.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------
# 6. The measurements: plain records, nothing printed
# ---------------------------------------------------------------------------

EQUAL_LENGTHS = (16, 256, 4096)  # T of the equality check
EQUAL_UNITS = 8  # independent recurrences side by side (h)
TOLERANCE = 1e-12  # what "equal" means here, in float64


def random_steps(seed, T, units, low):
    """a_t uniform in (low, 1), b_t standard normal: (T, units) each."""
    rng = np.random.default_rng([18, 1, seed, T])
    return rng.uniform(low, 1, (T, units)), rng.standard_normal((T, units))


@dataclass
class ScanEqual:
    rows: list  # (form, decays, T, max |h|, max |difference from the loop|)
    largest: float  # the largest difference from the loop, relative to max |h_t|
    passed: bool


def compute_scan_equal(lengths=EQUAL_LENGTHS):
    rows = []
    for low, decays in ((0.8, "(0.8, 1)"), (-1.0, "(-1, 1)")):
        for T in lengths:
            a, b = random_steps(0, T, EQUAL_UNITS, low)
            H = scan_loop(a, b)
            for form, scan in SCANS.items():
                if form == "loop" or (form == "log-space cumsum" and low < 0):
                    continue  # the log form needs a_t > 0
                rows.append((form, decays, T, float(np.abs(H).max()),
                             float(np.abs(scan(a, b) - H).max())))
    largest = max(gap / h for *_, h, gap in rows)
    return ScanEqual(rows, largest, largest <= TOLERANCE)


WORK_LENGTHS = (8, 64, 512, 4096, 32768)


@dataclass
class WorkDepth:
    rows: list  # (T, loop work, loop depth, scan work, scan depth, log work, log depth)


def compute_work_depth(lengths=WORK_LENGTHS):
    """Work: how many compositions (each a multiply and a multiply-add) a form does;
    depth: how many must follow one another, the time on unlimited processors. The
    Blelloch scan's are counted as it runs; the log form is two scans of additions
    (cumsum, then log-sum-exp), each of a Blelloch scan's shape, plus T logs and exps."""
    rows = []
    for T in lengths:
        _, work, depth = scan_blelloch(np.ones(T), np.zeros(T))
        rows.append((T, T, T, work, depth, 2 * work, 2 * depth))
    return WorkDepth(rows)


TRACE_T = 8  # positions of the step-by-step figure


@dataclass
class ScanTrace:
    a: list
    b: list
    stages: list  # (round, positions it changed, A_t after it, B_t after it)
    h_scan: list  # a_t B_t + b_t after the last round
    h_loop: list


def compute_scan_trace(T=TRACE_T):
    """Blelloch's scan of one unit over T steps, every round recorded: after the last,
    B_t is h_{t-1}, so h_t = a_t B_t + b_t, the loop's h_t."""
    a, b = (x[:, 0] for x in random_steps(2, T, 1, 0.8))
    stages = []
    H = scan_blelloch(a, b, stages)[0]
    return ScanTrace(a.tolist(), b.tolist(), stages, H.tolist(), scan_loop(a, b).tolist())


LOOP_LENGTHS = (32, 128, 512, 2048)  # T; 32 is chapter 14's window
LOOP_CHARACTERS = 32 * 1024  # a pass over chapter 14's batch: 1,024 windows of 32
LOOP_REPEATS = 3


@dataclass
class LoopTime:
    hidden: int
    characters: int
    rows: list  # (T, windows, forward and backward ms, ms in the loops over t, their share)


def compute_loop_time(lengths=LOOP_LENGTHS, characters=LOOP_CHARACTERS, hidden=C_HIDDEN):
    """CPU time of a forward and backward pass of chapter 14's GRU over the same number
    of characters cut into windows of T (the fastest of LOOP_REPEATS), and of it the
    part spent in the loops over t: the same arithmetic, in more steps that wait."""
    p = gru_params(len(VOCAB), hidden)
    rng = np.random.default_rng([18, 1, 1])
    rows = []
    for T in lengths:
        batch = characters // T
        X = rng.integers(0, len(VOCAB), (T, batch))
        dH_out = rng.normal(0, 1, (T, batch, hidden))
        best = None
        for _ in range(LOOP_REPEATS):
            clock = {"at once": 0.0, "waits": 0.0}
            H, cache = gru_forward(p, X, clock)
            gru_backward(p, X, H, cache, dH_out, clock)
            total = clock["at once"] + clock["waits"]
            if best is None or total < best[0]:
                best = (total, clock["waits"])
        rows.append((T, batch, 1000 * best[0], 1000 * best[1], best[1] / best[0]))
    return LoopTime(hidden, characters, rows)


TIME_LENGTHS = (256, 1024, 4096, 16384)
TIME_UNITS = 64
TIME_REPEATS = 3


@dataclass
class ScanTime:
    units: int
    rows: list  # (T, loop ms, scan ms, log ms): the fastest of TIME_REPEATS runs, CPU time


def cpu_ms(function, *args, repeats=TIME_REPEATS):
    """The least CPU time of repeats calls, in milliseconds."""
    best = math.inf
    for _ in range(repeats):
        start = time.process_time()
        function(*args)
        best = min(best, time.process_time() - start)
    return 1000 * best


def compute_scan_time(lengths=TIME_LENGTHS, units=TIME_UNITS):
    rows = []
    for T in lengths:
        a, b = random_steps(1, T, units, 0.8)
        rows.append((T,) + tuple(cpu_ms(scan, a, b) for scan in SCANS.values()))
    return ScanTime(units, rows)


GRADCHECK = {"mingru": RECALL, "minlstm": RECALL, "pos": PARITY, "neg": PARITY,
             "fixed": SELECTIVE}  # each cell on a task it is trained on
GRADCHECK_EPS = 1e-6


@dataclass
class Gradcheck:
    rows: list  # (cell, parameter, entries, max |analytic|, max |analytic - numerical|, relative)
    worst: float  # the largest relative error
    passed: bool  # every relative error below 1e-6


def central_differences(f, w, eps=GRADCHECK_EPS):
    """(f(w + eps e_i) - f(w - eps e_i)) / (2 eps) for every entry i of w, in place."""
    g = np.empty_like(w)
    for i in np.ndindex(w.shape):
        keep = w[i]
        w[i] = keep + eps
        up = f()
        w[i] = keep - eps
        g[i] = (up - f()) / (2 * eps)
        w[i] = keep
    return g


def compute_gradcheck(seed=0):
    """Every hand-written gradient (the scan's backward pass and each cell's gates)
    against central differences of the loss, float64, a small random problem per
    cell: 3 units, 3 sequences of 6 steps, weights of scale 1 (not the init's) so
    that the gates are away from 1/2 and the decays away from 0."""
    rows = []
    for cell, task in GRADCHECK.items():
        rng = np.random.default_rng([18, 2, seed])
        p = init_params(cell, task.V, 3, task.heads * task.K, (seed, seed + 1))
        for w in p.values():
            w[...] = rng.normal(0, 1, w.shape)
        X, Y = draw_stacked(task.draw, (rng, rng), 3, 6)
        _, _, grads = loss_and_grads(p, cell, X, Y, scan_blelloch)  # both ways by the scan
        for name, w in p.items():
            numerical = central_differences(
                lambda: loss_and_grads(p, cell, X, Y, need_grads=False)[0].sum(), w)
            gap = np.abs(grads[name] - numerical).max()
            scale = max(np.abs(grads[name]).max(), np.abs(numerical).max(), 1e-300)
            rows.append((CELL_NAMES[cell], name, w.size, float(scale), float(gap), float(gap / scale)))
    rng = np.random.default_rng([18, 1, seed])  # chapter 14's GRU, as 18.1 times it
    p = gru_params(5, 3, seed, scale=1.0)
    X, dH_out = rng.integers(0, 5, (6, 3)), rng.normal(0, 1, (6, 3, 3))
    clock = {"at once": 0.0, "waits": 0.0}
    H, cache = gru_forward(p, X, clock)
    grads = gru_backward(p, X, H, cache, dH_out, clock)
    for name, w in p.items():
        numerical = central_differences(
            lambda: float((dH_out * gru_forward(p, X, clock)[0][1:]).sum()), w)
        gap = np.abs(grads[name] - numerical).max()
        scale = max(np.abs(grads[name]).max(), np.abs(numerical).max(), 1e-300)
        rows.append(("GRU (chapter 14)", name, w.size, float(scale), float(gap), float(gap / scale)))
    worst = max(r[-1] for r in rows)
    return Gradcheck(rows, worst, worst < 1e-6)


@dataclass
class Experiment:
    """Networks of some cells trained on one task, every seed, and tested."""
    task: str
    cells: list
    seeds: int
    steps: int
    train_length: list  # the length (lag) each network trained at, per column
    test_length: list  # the length each column tests at
    accuracy: dict  # cell name -> [[accuracy of each seed] per column]
    mean_accuracy: dict  # cell name -> [mean over the seeds, per column]
    solved: dict  # cell name -> [seeds at or above 0.99, per column]
    seconds: dict  # cell name -> CPU seconds its training took, all columns


def run_experiment(task, cells, columns, seeds, steps, lr, hidden, batch):
    """columns: (train length, test length); a network is trained once per train
    length and tested at every column that names it."""
    accuracy, seconds = {}, {}
    for cell in cells:
        name, trained = CELL_NAMES[cell], {}
        accuracy[name], seconds[name] = [], 0.0
        for L_train, L_test in columns:
            if L_train not in trained:  # every seed side by side
                trained[L_train], s = train(cell, task, L_train, range(seeds), steps, lr,
                                            hidden, batch)
                seconds[name] += s
            accuracy[name].append(test_accuracy(trained[L_train], cell, task, L_test,
                                                range(seeds)))
    return Experiment(task.name, [CELL_NAMES[c] for c in cells], seeds, steps,
                      [c[0] for c in columns], [c[1] for c in columns], accuracy,
                      {n: [float(np.mean(a)) for a in acc] for n, acc in accuracy.items()},
                      {n: [int(sum(x >= 0.99 for x in a)) for a in acc] for n, acc in accuracy.items()},
                      seconds)


def compute_recall(lags=LAGS, steps=R_STEPS, seeds=SEEDS):
    return run_experiment(RECALL, ("mingru", "mingru_bz2", "minlstm"), [(lag, lag) for lag in lags], seeds,
                          steps, R_LR, R_HIDDEN, R_BATCH)


def compute_parity(steps=P_STEPS, seeds=P_SEEDS):
    return run_experiment(PARITY, ("pos", "neg", "gru"), [(P_TRAIN, L) for L in P_TESTS], seeds,
                          steps, P_LR, P_HIDDEN, P_BATCH)


def compute_selective(steps=S_STEPS, seeds=S_SEEDS):
    return run_experiment(SELECTIVE, ("fixed", "selective"), [(S_LENGTH, S_LENGTH)], seeds, steps,
                          S_LR, S_HIDDEN, S_BATCH)


def count_params(cell, V, hidden, K):
    """Parameters of a one-layer network with a K-way readout. Chapter 15's cells have
    a recurrent weight W_h? (h, h) per gate besides W_x? and b_?; these cells have none."""
    recurrent = {"gru": 3, "lstm": 4}.get(cell, 0)
    gates = recurrent or len(GATES[cell])
    return gates * (V * hidden + hidden) + recurrent * hidden * hidden + hidden * K + K


LOOP_STEPS = 100  # optimiser steps of the scan-against-loop timing


@dataclass
class ScanTraining:
    lag: int
    steps: int
    loop_seconds: float
    scan_seconds: float
    largest_difference: float  # between the two trained networks' parameters


def compute_scan_training(lag=LAGS[-1], steps=LOOP_STEPS):
    """The same minGRU trained with the forward and backward recurrences as loops, and
    as scans: the same network, and the time of each."""
    seeds = range(SEEDS)
    loop, t_loop = train("mingru", RECALL, lag, seeds, steps, R_LR, R_HIDDEN, R_BATCH, scan_loop)
    scan, t_scan = train("mingru", RECALL, lag, seeds, steps, R_LR, R_HIDDEN, R_BATCH,
                         scan_blelloch)
    return ScanTraining(lag, steps, t_loop, t_scan,
                        float(max(np.abs(loop[k] - scan[k]).max() for k in loop)))




@dataclass
class Chars:
    epochs: int
    train_ppl: list  # training perplexity during each epoch
    val_ppl: float  # validation perplexity after the last epoch
    params: dict  # model -> parameters, minGRU and chapter 14's GRU
    seconds: float


def compute_chars(epochs=C_EPOCHS, windows=None):
    """A one-layer minGRU language model trained by chapter 14's recipe on its windows
    (char_windows(), read here if not given)."""
    train_set, (X_val, Y_val) = windows or char_windows()
    p, history, seconds = train_chars("mingru", train_set, epochs=epochs)
    loss = loss_and_grads(p, "mingru", X_val[:, None], Y_val[:, None], need_grads=False,
                          every_step=True)[0]
    V = len(VOCAB)
    return Chars(epochs, history, math.exp(float(loss[0])),
                 {"GRU": count_params("gru", V, C_HIDDEN, V),
                  "minGRU": count_params("mingru", V, C_HIDDEN, V)}, seconds)


ATT_T, ATT_D = 64, 8  # the equality check's positions and width (d = d_v)
ATT_LENGTHS = (256, 1024, 2048)


@dataclass
class AttentionEqual:
    T: int
    d: int
    running_sum: float  # max |difference| from all-at-once
    by_scan: float
    passed: bool


def random_qkv(seed, T, d):
    rng = np.random.default_rng([18, 3, seed, T])
    return tuple(rng.standard_normal((T, d)) for _ in range(3))


def compute_attention_equal(T=ATT_T, d=ATT_D):
    Q, K, V = random_qkv(0, T, d)
    Y = attention_all_at_once(Q, K, V)
    gaps = [float(np.abs(f(Q, K, V) - Y).max()) for f in (attention_running_sum, attention_by_scan)]
    return AttentionEqual(T, d, *gaps, max(gaps) <= TOLERANCE)


@dataclass
class AttentionCost:
    d: int
    rows: list  # (T, multiplications per token all at once, running sum, softmax us/token,
    #             all at once us/token, running sum us/token)


def compute_attention_cost(lengths=ATT_LENGTHS, d=ATT_D):
    """Multiplications per token, counted from the formulas: all at once, position t
    scores t keys (d each) and sums t values (d_v each), (T + 1) / 2 (d + d_v) on
    average; the running sum updates S and z and reads them, 2 d d_v + 2 d whatever T.
    Then CPU microseconds per token in numpy, which is another matter (see the page)."""
    rows = []
    for T in lengths:
        Q, K, V = random_qkv(1, T, d)
        times = [cpu_ms(f, Q, K, V, repeats=1) * 1000 / T
                 for f in (softmax_attention, attention_all_at_once, attention_running_sum)]
        rows.append((T, (T + 1) * 2 * d // 2, 2 * d * d + 2 * d, *times))
    return AttentionCost(d, rows)


# ---------------------------------------------------------------------------
# What the site prints: one format_* per table, one report_<flag> per flag
# ---------------------------------------------------------------------------

def sci(x):
    return f"{x:.1e}"


def spread(values):
    """'0.97 (0.93-1.00)': the mean, then the lowest and highest, over seeds."""
    return f"{np.mean(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def format_equal_table(equal):
    rows = [(form, decays, f"{T:,}", f"{h:.2f}", sci(gap), sci(gap / h))
            for form, decays, T, h, gap in equal.rows]
    return format_table(("form", "a_t in", "T", "max abs h_t", "max abs difference",
                         "relative to max abs h_t"), rows, "llrrrr")


def format_work_table(work):
    rows = [(f"{T:,}", f"{lw:,}", f"{ld:,}", f"{sw:,}", sd, f"{gw:,}", gd)
            for T, lw, ld, sw, sd, gw, gd in work.rows]
    return format_table(("T", "loop: work", "loop: depth", "scan: work", "scan: depth",
                         "log form: work", "log form: depth"), rows, "rrrrrrr")


def format_time_table(times):
    rows = [(f"{T:,}",) + tuple(f"{ms:.2f}" for ms in row) for T, *row in times.rows]
    return format_table(("T",) + tuple(f"{form} (ms)" for form in SCANS), rows, "rrrr")


def format_trace_table(trace):
    rows = [(k, name) + tuple(f"{x:+.4f}" for x in B) for k, (name, _, _, B) in
            enumerate(trace.stages)]
    rows.append(("", "h_t = a_t B_t + b_t") + tuple(f"{x:+.4f}" for x in trace.h_scan))
    rows.append(("", "h_t, the loop") + tuple(f"{x:+.4f}" for x in trace.h_loop))
    return format_table(("round", "what it does") + tuple(
        f"B_{t + 1}" for t in range(len(trace.b))), rows, "rl" + "r" * len(trace.b))


@dataclass
class ScanReport:
    equal: ScanEqual
    work: WorkDepth
    trace: ScanTrace
    times: ScanTime
    passed: bool


def report_loop(args, out):
    loop = compute_loop_time()
    out.text(f"time: a forward and backward pass of chapter 14's GRU ({loop.hidden} units, "
             f"float64) over {loop.characters:,} characters in windows of T, CPU milliseconds "
             f"on one thread, the fastest of {LOOP_REPEATS}; of it, the loops over t, whose "
             "every step waits for the one before")
    out.table("loop", format_table(
        ("T", "windows", "forward and backward (ms)", "in the loops over t (ms)",
         "share in the loops (ms/ms)"),
        [(f"{T:,}", f"{batch:,}", f"{total:.1f}", f"{waits:.1f}", f"{share:.0%}")
         for T, batch, total, waits, share in loop.rows], "rrrrr"))
    return loop


def report_scan(args, out):
    out.text("The recurrence h_t = a_t * h_{t-1} + b_t computed three ways, float64, "
             f"{EQUAL_UNITS} units side by side: the largest difference from the loop over "
             f"all steps and units (equal means within {TOLERANCE:g} of the states' size)")
    equal = compute_scan_equal()
    out.table("equal", format_equal_table(equal))
    out.text("Work (compositions) and depth (compositions that must follow one another) "
             "as T grows")
    work = compute_work_depth()
    out.table("work", format_work_table(work))
    trace = compute_scan_trace()
    out.text(f"The scan round by round, one unit, T = {len(trace.b)}: the b part of the pair "
             "each position holds (the a part multiplies; after the last round B_t = h_{t-1})")
    out.table("trace", format_trace_table(trace))
    times = compute_scan_time()
    out.text(f"time: CPU milliseconds, numpy on one thread, {times.units} units, the fastest "
             f"of {TIME_REPEATS} runs")
    out.table("time", format_time_table(times))
    return ScanReport(equal, work, trace, times, equal.passed)


def format_gradcheck_table(check):
    rows = [(cell, name, n, f"{scale:.2f}", sci(gap), sci(rel))
            for cell, name, n, scale, gap, rel in check.rows]
    return format_table(("cell", "parameter", "entries", "max abs dL/dw", "max abs difference",
                         "relative"), rows, "llrrrr")


def report_gradcheck(args, out):
    out.text("Every hand-written gradient against central differences (eps = "
             f"{GRADCHECK_EPS:g}), float64, one small random problem per cell")
    check = compute_gradcheck()
    out.table("gradcheck", format_gradcheck_table(check))
    out.text(f"worst relative difference: {sci(check.worst)} "
             f"({'below' if check.passed else 'NOT below'} 1e-6)")
    return check


def format_experiment_table(e, label):
    rows = []
    for k, (L_train, L_test) in enumerate(zip(e.train_length, e.test_length)):
        rows.append((L_test if label == "lag" else f"{L_test:,}",)
                    + tuple(f"{spread(e.accuracy[n][k])} {e.solved[n][k]}/{e.seeds}"
                            for n in e.cells))
    return format_table((label,) + tuple(e.cells), rows, "r" * (len(e.cells) + 1))


def format_params_table(V, hidden, K):
    rows = [(name, f"{count_params(cell, V, hidden, K):,}")
            for cell, name in (("gru", "GRU (chapter 15)"), ("lstm", "LSTM (chapter 15)"),
                               ("mingru", "minGRU"), ("minlstm", "minLSTM"))]
    return format_table(("cell", "parameters"), rows, "lr")


@dataclass
class RecallReport:
    experiment: Experiment
    params: dict  # cell -> parameters
    scan_training: ScanTraining


def report_recall(args, out):
    lags, steps, seeds = args.lags or LAGS, args.steps or R_STEPS, args.seeds or SEEDS
    out.text(f"Chapter 15's recall task, {R_K} symbols (chance {1 / R_K:.2f}), {R_HIDDEN} "
             f"units, Adam at {R_LR:g}, {steps:,} steps of {R_BATCH} sequences, {seeds} seeds: "
             "test accuracy, mean (lowest-highest), and how many seeds reached 0.99")
    e = compute_recall(lags, steps, seeds)
    out.table("recall", format_experiment_table(e, "lag"))
    out.text("time: training took " + ", ".join(f"{s:.1f} CPU s ({name})"
                                                 for name, s in e.seconds.items()))
    out.text("Parameters, one layer and the readout")
    out.table("params", format_params_table(RECALL.V, R_HIDDEN, R_K))
    s = compute_scan_training()
    out.text(f"time: one minGRU at lag {s.lag}, {s.steps} steps, recurrences as loops "
             f"{s.loop_seconds:.2f} CPU s, as scans {s.scan_seconds:.2f} CPU s")
    out.text(f"the two trained networks differ by at most {sci(s.largest_difference)}")
    params = {c: count_params(c, RECALL.V, R_HIDDEN, R_K) for c in ("gru", "lstm", "mingru",
                                                                     "minlstm")}
    return RecallReport(e, params, s)


def report_parity(args, out):
    steps, seeds = args.steps or P_STEPS, args.seeds or P_SEEDS
    out.text(f"Parity of a bit string, trained at length {P_TRAIN} and tested at the lengths "
             f"below: {P_HIDDEN} units, Adam at {P_LR:g}, {steps:,} steps of {P_BATCH} strings, "
             f"{seeds} seeds; accuracy (chance 0.50), mean (lowest-highest), seeds at 0.99")
    e = compute_parity(steps, seeds)
    out.table("parity", format_experiment_table(e, "length"))
    return e


def report_selective(args, out):
    steps, seeds = args.steps or S_STEPS, args.seeds or S_SEEDS
    out.text(f"Selective copying: {S_N} tokens (of {S_K}) at random places among "
             f"{S_LENGTH - S_N} noise tokens, to be named in order: {S_HIDDEN} units, Adam at "
             f"{S_LR:g}, {steps:,} steps of {S_BATCH}, {seeds} seeds; accuracy per token "
             f"(chance {1 / S_K:.2f}), mean (lowest-highest), seeds at 0.99")
    e = compute_selective(steps, seeds)
    out.table("selective", format_experiment_table(e, "length"))
    return e


def report_chars(args, out):
    epochs, windows = args.epochs or C_EPOCHS, char_windows()  # refused before printing
    out.text(f"A one-layer minGRU language model on The Time Machine, chapter 14's data and "
             f"recipe ({C_HIDDEN} units, batches of {C_BATCH:,} windows of {C_STEPS} "
             f"characters, SGD at {C_LR:g}, clipped to norm {C_CLIP:g}), {epochs} epochs")
    c = compute_chars(epochs, windows)
    shown = sorted({0, epochs // 2 - 1, epochs - 1} - {-1})
    out.table("chars", format_table(
        ("model", "parameters", "epoch", "training perplexity"),
        [("minGRU", f"{c.params['minGRU']:,}", k + 1, f"{c.train_ppl[k]:.2f}") for k in shown],
        "lrrr"))
    out.text(f"validation perplexity after epoch {epochs}: {c.val_ppl:.2f}; chapter 14's GRU "
             f"has {c.params['GRU']:,} parameters")
    out.text(f"time: training took {c.seconds:.1f} CPU s")
    return c


def format_attention_cost(cost):
    rows = [(f"{T:,}", f"{all_:,}", f"{run:,}", f"{soft:.1f}", f"{a:.1f}", f"{r:.1f}")
            for T, all_, run, soft, a, r in cost.rows]
    return format_table(("T", "all at once: mult./token", "running sum: mult./token",
                         "softmax (us/token)", "all at once (us/token)",
                         "running sum (us/token)"), rows, "rrrrrr")


@dataclass
class AttentionReport:
    equal: AttentionEqual
    cost: AttentionCost
    passed: bool


def report_attention(args, out):
    equal = compute_attention_equal()
    out.text(f"Linear attention (phi = elu + 1), causal, T = {equal.T}, d = d_v = {equal.d}, "
             "float64: the largest difference from the all-at-once form")
    out.table("attention_equal", format_table(
        ("form", "max abs difference"), [("running sum, one token at a time",
                                          sci(equal.running_sum)),
                                       ("running sum as a scan (a_t = 1)", sci(equal.by_scan))],
        "lr"))
    cost = compute_attention_cost()
    out.text(f"time: cost per token as T grows (d = d_v = {cost.d}): multiplications from the "
             "formulas, then CPU microseconds per token in numpy, one run")
    out.table("attention_cost", format_attention_cost(cost))
    return AttentionReport(equal, cost, equal.passed)


def lag_list(text):
    """An argparse type: up to five lags, comma-separated, each from 1 to MAX_LAG."""
    try:
        lags = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of whole numbers: {text!r}") from None
    if not 1 <= len(lags) <= 5 or not all(1 <= x <= MAX_LAG for x in lags):
        raise argparse.ArgumentTypeError(f"one to five lags from 1 to {MAX_LAG}, got {text}")
    return lags


MAX_LAG, MAX_STEPS, MAX_SEEDS, MAX_EPOCHS = 1000, 100_000, 20, 500

REPORTS = {
    "loop": ("step 1: chapter 14's GRU, forward and backward: the time in the loops over t",
             report_loop),
    "scan": ("step 2: the loop, the parallel scan and the log form: equal, work, depth, time",
             report_scan),
    "gradcheck": ("step 3: every hand-written gradient against central differences",
                  report_gradcheck),
    "recall": ("step 4: minGRU and minLSTM on chapter 15's recall task", report_recall),
    "parity": ("step 5: decays in (0, 1) against (-1, 1) on parity, trained short, tested long",
               report_parity),
    "selective": ("step 6: a fixed decay against an input-dependent one, selective copying",
                  report_selective),
    "chars": ("step 7: a minGRU language model on chapter 14's data and recipe", report_chars),
    "attention": ("step 8: linear attention all at once and as a running sum", report_attention),
}
DEFAULT = tuple(REPORTS)
OPTIONS = {"lags": ("recall",), "steps": ("recall", "parity", "selective"),
           "seeds": ("recall", "parity", "selective"), "epochs": ("chars",)}


# CPU seconds of each report at its defaults, as the builds measured them (one core, a
# busy machine): a run's estimate scales them by the work its flags ask for.
BUILT_SECONDS = {"recall": 82.0, "parity": 5.0, "selective": 15.0, "chars": 40.0}


def estimate_seconds(args):
    """About how long the chosen reports train (the harness refuses a command past an
    hour); --loop, --scan, --gradcheck and --attention take seconds whatever the flags."""
    seeds = (args.seeds or SEEDS) / SEEDS
    work = {"recall": sum(lag + 5 for lag in (args.lags or LAGS))
                      / sum(lag + 5 for lag in LAGS) * (args.steps or R_STEPS) / R_STEPS * seeds,
            "parity": (args.steps or P_STEPS) / P_STEPS * seeds,
            "selective": (args.steps or S_STEPS) / S_STEPS * seeds,
            "chars": (args.epochs or C_EPOCHS) / C_EPOCHS}
    return sum(BUILT_SECONDS[r] * work[r] for r in args.chosen if r in work)


def add_options(parser):
    parser.add_argument("--lags", metavar="L,L", type=lag_list,
                        help=f"--recall: the lags, up to five, each up to {MAX_LAG} (default "
                             f"{','.join(map(str, LAGS))})")
    parser.add_argument("--steps", metavar="N", type=number(int, 1, MAX_STEPS),
                        help=f"training steps (defaults: {R_STEPS:,} for --recall, {P_STEPS:,} "
                             f"for --parity, {S_STEPS:,} for --selective)")
    parser.add_argument("--seeds", metavar="N", type=number(int, 1, MAX_SEEDS),
                        help=f"seeds per cell and setting (default {SEEDS})")
    parser.add_argument("--epochs", metavar="N", type=number(int, 1, MAX_EPOCHS),
                        help=f"--chars: epochs (default {C_EPOCHS}, chapter 14's)")


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
