"""gated.py: how the LSTM and the GRU let a gradient travel far, and what that costs.

Companion script to chapter 13 ("LSTM and GRU"). Python 3.9+ and numpy.

    python3 gated.py            every report below, in order
    python3 gated.py --highway  the decay of RNN and LSTM gradients compared
    python3 gated.py --bias     what the forget-gate bias does to the decay
    python3 gated.py --step     one LSTM cell step with every gate, then a GRU step
    python3 gated.py --params   LSTM against GRU against plain RNN, in parameters
    python3 gated.py --measure  the gradient measured along a real LSTM's cell
    python3 gated.py --notation one GRU step in every notation (the conventions page)

    options: --forget-bias B (--step), --input D and --hidden H (--params),
             --seed S (--measure)

The file reads top to bottom: the settings, the model (every compute_*
function returns a record of plain numbers and prints nothing), the tables
(one format_* per table), then the reports each flag prints and the command
line. The site that teaches this chapter runs these very reports.
"""

import argparse
import math
import os
import sys
import textwrap
from dataclasses import dataclass
from typing import List, Optional

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""

# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------

# Step 1: the gradient highway
HIGHWAY_DISTANCES = (1, 10, 47, 100, 500)
HIGHWAY_COLUMNS = (  # what multiplies the gradient per step
    ("RNN, factor 0.5", 0.5),
    ("LSTM, f = 0.9", 0.9),
    ("LSTM, f = 0.99", 0.99),
    ("LSTM of 1997: no forget gate", 1.0),  # the constant error carousel
)

# Step 2: the forget-gate bias
BIASES = (0.0, 1.0, 2.0, 3.0, 5.0)  # candidate b_f
BIAS_POWERS = (10, 47, 100)  # distances at which sigma(b_f)^k is shown
BIAS_DISTANCE = 47  # the ratios sigma(b)^47 / sigma(0)^47 are printed for b = 1 and 2

# Step 3: one LSTM step (2 units, input size 2; q = [h_prev, x_t])
h_prev = (0.10, -0.20)  # h_{t-1}
C_prev = (0.50, 0.30)  # C_{t-1}
x_t = (0.60, 0.40)  # the input
W_f = ((0.3, -0.2, 0.5, 0.1), (0.1, 0.4, -0.3, 0.2))  # forget gate, acting on q
W_i = ((-0.2, 0.3, 0.4, -0.1), (0.5, -0.1, 0.2, 0.3))  # input gate
W_C = ((0.4, 0.1, -0.2, 0.5), (-0.3, 0.2, 0.6, -0.1))  # candidate cell
W_o = ((0.2, 0.5, 0.1, -0.3), (0.4, -0.2, 0.3, 0.2))  # output gate
b_f = (1.0, 1.0)  # forget bias: 1, as step 2 recommends
b_i = (0.0, 0.0)  # input bias
b_o = (0.0, 0.0)  # output bias
# The same step as a GRU reuses the numbers, without biases. This site writes the GRU as
# Cho et al., d2l and PyTorch do, h_t = z * h_{t-1} + (1 - z) * h~ (z near 1 keeps the old
# state); Chung et al. write (1 - z') * h_{t-1} + z' * h~. With the update gate's numbers
# those of W_f with their sign flipped, z is Chung's 1 - z', and --step prints one step in
# both notations: the same h_t.
W_z = tuple(tuple(-w for w in row) for row in W_f)  # update gate: -W_f
W_r, W_h = W_i, W_C  # reset gate, candidate

# Step 4: what a gate costs
PARAM_INPUT, PARAM_HIDDEN = 100, 500  # d, H
MODELS = (  # name, gate blocks, what the blocks are
    ("plain RNN", 1, "one tanh layer"),
    ("GRU", 3, "update z, reset r, candidate h~"),
    ("LSTM", 4, "forget f, input i, output o, candidate C~"),
)

# Step 5: the gradient measured along a real LSTM's cell
MEASURE_HIDDEN, MEASURE_INPUT, MEASURE_STEPS = 32, 16, 100  # H, d, T
MEASURE_BIASES = (0.0, 1.0, 2.0)  # b_f
MEASURE_DISTANCE = 47
MEASURE_SEED = 0


def sigmoid(z):
    """1 / (1 + exp(-z)), computed as (1 + tanh(z / 2)) / 2, as gru.py does and the page's
    widgets do: the same function, never overflowing, the same last bits in both."""
    return 0.5 * (1 + np.tanh(0.5 * z))


# ---------------------------------------------------------------------------
# Step 1: the gradient highway (--highway)
# ---------------------------------------------------------------------------

@dataclass
class Highway:
    distances: List[int]
    columns: List[str]
    factors: List[float]
    values: List[List[float]]  # values[i][j] = factors[j] ** distances[i]
    curve_distances: List[int]  # 0, 2, ..., 500: the plot's x
    curves: List[List[float]]  # curves[j][n] = factors[j] ** curve_distances[n]
    survive_500: float  # 0.99 ** 500: what a forget gate of 0.99 keeps at the last distance
    gone_by: int  # the first distance at which 0.5 ** k < 1e-14


def first_distance_below(factor, threshold):
    """The first whole distance k with factor^k < threshold."""
    return math.floor(math.log(threshold) / math.log(factor)) + 1


def compute_highway(distances=HIGHWAY_DISTANCES, columns=HIGHWAY_COLUMNS):
    """factor ** distance: a plain RNN's factor against forget gates, and against 1."""
    ks = list(range(0, distances[-1] + 1, 2))
    return Highway(distances=list(distances), columns=[name for name, _ in columns],
                   factors=[f for _, f in columns],
                   values=[[f ** k for _, f in columns] for k in distances],
                   curve_distances=ks, curves=[[f ** k for k in ks] for _, f in columns],
                   survive_500=0.99 ** distances[-1], gone_by=first_distance_below(0.5, 1e-14))


# ---------------------------------------------------------------------------
# Step 2: the forget-gate bias (--bias)
# ---------------------------------------------------------------------------

@dataclass
class Bias:
    b_f: float
    f: float  # sigma(b_f), the forget gate at initialisation
    powers: List[float]  # f ** k for k in BIAS_POWERS
    curve: List[float]  # f ** k for k = 0 .. 100: the plot


@dataclass
class Biases:
    rows: List[Bias]  # one per b_f of BIASES
    powers: List[int]  # the distances k of each row's powers
    distance: int  # 47
    sigma_1: float  # sigma(1), the recommended start
    sigma_2: float  # sigma(2)
    ratio_1: float  # sigma(1)^47 / sigma(0)^47
    ratio_2: float  # sigma(2)^47 / sigma(0)^47


def compute_bias_ratio(b, k=BIAS_DISTANCE):
    """How much more signal survives k steps with b_f = b than with b_f = 0."""
    return float(sigmoid(b) ** k / sigmoid(0.0) ** k)


def compute_bias(biases=BIASES, powers=BIAS_POWERS, k=BIAS_DISTANCE):
    """For each b_f: sigma(b_f), the forget gate at initialisation, and its powers."""
    rows = []
    for b in biases:
        f = float(sigmoid(b))
        rows.append(Bias(b, f, [f ** k for k in powers], [f ** k for k in range(101)]))
    return Biases(rows=rows, powers=list(powers), distance=k, sigma_1=float(sigmoid(1.0)),
                  sigma_2=float(sigmoid(2.0)), ratio_1=compute_bias_ratio(1.0, k),
                  ratio_2=compute_bias_ratio(2.0, k))


# ---------------------------------------------------------------------------
# Step 3: one LSTM step and one GRU step, every gate shown (--step)
# ---------------------------------------------------------------------------

@dataclass
class LSTMStep:
    q: List[float]  # [h_{t-1}, x_t]
    f: List[float]  # forget gate
    i: List[float]  # input gate
    C_tilde: List[float]  # candidate
    o: List[float]  # output gate
    kept: List[float]  # f * C_{t-1}
    added: List[float]  # i * C~
    C_t: List[float]
    h_t: List[float]


@dataclass
class GRUStep:
    z: List[float]  # update gate, z near 1 keeps h_{t-1}
    z_chung: List[float]  # Chung et al.'s update gate for the same step: 1 - z
    r: List[float]  # reset gate
    h_tilde: List[float]  # candidate
    h_t: List[float]


def compute_lstm_step(forget_bias=b_f, h_prev=h_prev, C_prev=C_prev, x_t=x_t):
    """f, i, C~, o, C_t, h_t for the two-unit cell of the settings."""
    hp, Cp, x = np.array(h_prev), np.array(C_prev), np.array(x_t)
    q = np.concatenate([hp, x])  # [h_{t-1}, x_t]
    f = sigmoid(np.array(W_f) @ q + np.array(forget_bias))  # forget gate: how much of C_{t-1} to keep
    i = sigmoid(np.array(W_i) @ q + np.array(b_i))  # input gate: how much of C~ to add
    C_tilde = np.tanh(np.array(W_C) @ q)  # candidate cell content
    o = sigmoid(np.array(W_o) @ q + np.array(b_o))  # output gate: how much of the cell to show
    kept, added = f * Cp, i * C_tilde  # the two terms of the cell update
    C_t = kept + added  # new cell state, reached by addition
    h_t = o * np.tanh(C_t)  # new hidden state
    return LSTMStep(*(v.tolist() for v in (q, f, i, C_tilde, o, kept, added, C_t, h_t)))


def compute_gru_step(h_prev=h_prev, x_t=x_t):
    """z, r, h~, h_t for the same inputs: h_t = z * h_{t-1} + (1 - z) * h~."""
    hp, x = np.array(h_prev), np.array(x_t)
    q = np.concatenate([hp, x])
    z = sigmoid(np.array(W_z) @ q)  # update gate: how much of h_{t-1} to keep
    r = sigmoid(np.array(W_r) @ q)  # reset gate: how much of h_{t-1} the candidate sees
    h_tilde = np.tanh(np.array(W_h) @ np.concatenate([r * hp, x]))  # candidate state
    h_t = z * hp + (1 - z) * h_tilde  # one gate splits old from new
    return GRUStep(z.tolist(), (1 - z).tolist(), r.tolist(), h_tilde.tolist(), h_t.tolist())


@dataclass
class CellStep:
    h_prev: List[float]  # the inputs the step read
    C_prev: List[float]
    x_t: List[float]
    b_f: List[float]
    lstm: LSTMStep
    gru: GRUStep  # the same inputs, without C_{t-1} and biases
    weights: dict  # {name: matrix or vector as lists}: every weight both steps use


def compute_step(forget_bias=b_f, h_prev=h_prev, C_prev=C_prev, x_t=x_t):
    """The LSTM step and the GRU step of the same inputs, with what they used."""
    weights = {"W_f": W_f, "W_i": W_i, "W_C": W_C, "W_o": W_o, "b_i": b_i, "b_o": b_o,
               "W_z": W_z, "W_r": W_r, "W_h": W_h}
    return CellStep(h_prev=list(h_prev), C_prev=list(C_prev), x_t=list(x_t),
                    b_f=list(forget_bias),
                    lstm=compute_lstm_step(forget_bias, h_prev, C_prev, x_t),
                    gru=compute_gru_step(h_prev, x_t),
                    weights={name: np.array(w).tolist() for name, w in weights.items()})


@dataclass
class NotationRow:
    source: str  # whose notation
    gate: Optional[List[float]]  # the update gate as that source names it (None: no gate)
    r: Optional[List[float]]  # the reset gate
    candidate: List[float]  # h~, PyTorch's n
    h_t: List[float]


@dataclass
class Notation:
    h_prev: List[float]
    x_t: List[float]
    rows: List[NotationRow]  # chapter 13's first


def compute_notation(h_prev=h_prev, x_t=x_t):
    """Step 3's GRU step written in each notation the site meets, with the same weights:
    chapter 13's matrices on q = [h_{t-1}, x_t]; d2l's rows (chapters 14 to 17), X_t W_x +
    H_{t-1} W_h with W_x and W_h the two blocks of columns of each W, transposed; chapter
    12's tanh(W x_t + U h_{t-1}), the candidate with the reset gate open; Chung et al.'s
    (and colah's) z' = 1 - z, which takes the new state; PyTorch's nn.GRU, whose reset
    gate scales W_hn h_{t-1} after the product (all its biases zero here)."""
    n = len(h_prev)
    hp, x = np.array(h_prev), np.array(x_t)
    W = {g: np.array(w) for g, w in (("z", W_z), ("r", W_r), ("h", W_h))}
    W_x = {g: w[:, n:].T for g, w in W.items()}  # d2l's W_xz, W_xr, W_xh: (d, n)
    W_hh = {g: w[:, :n].T for g, w in W.items()}  # d2l's W_hz, W_hr, W_hh: (n, n)
    X, H_prev = x[None], hp[None]  # one example as a row
    Z = sigmoid(X @ W_x["z"] + H_prev @ W_hh["z"])
    R = sigmoid(X @ W_x["r"] + H_prev @ W_hh["r"])
    H_tilde = np.tanh(X @ W_x["h"] + (R * H_prev) @ W_hh["h"])
    d2l = [Z[0], R[0], H_tilde[0], (Z * H_prev + (1 - Z) * H_tilde)[0]]
    mine = compute_gru_step(h_prev, x_t)
    U, W_in = W["h"][:, :n], W["h"][:, n:]  # chapter 12's U and W: the candidate's blocks
    plain = np.tanh(W_in @ x + U @ hp)
    z_chung = sigmoid(-(W["z"] @ np.concatenate([hp, x])))  # z' = 1 - z
    h_chung = np.tanh(W["h"] @ np.concatenate([sigmoid(W["r"] @ np.concatenate([hp, x])) * hp,
                                                x]))
    W_ih = np.vstack([W["r"][:, n:], W["z"][:, n:], W["h"][:, n:]])  # PyTorch's [r; z; n]
    W_hh_pt = np.vstack([W["r"][:, :n], W["z"][:, :n], W["h"][:, :n]])
    gi, gh = W_ih @ x, W_hh_pt @ hp
    r_pt, z_pt = sigmoid(gi[:n] + gh[:n]), sigmoid(gi[n:2 * n] + gh[n:2 * n])
    n_pt = np.tanh(gi[2 * n:] + r_pt * gh[2 * n:])  # the reset gate after the product
    rows = [
        ("chapter 13: W_z q, q = [h_{t-1}, x_t]", mine.z, mine.r, mine.h_tilde, mine.h_t),
        ("chapters 14 to 17 (d2l): X_t W_xz + H_{t-1} W_hz", *d2l),
        ("chapter 12: tanh(W x_t + U h_{t-1})", None, None, plain, plain),
        ("Chung et al., colah: z' = 1 - z", z_chung, mine.r, h_chung,
         (1 - z_chung) * hp + z_chung * h_chung),
        ("PyTorch nn.GRU: r * (W_hn h_{t-1})", z_pt, r_pt, n_pt, (1 - z_pt) * n_pt + z_pt * hp),
    ]
    return Notation(h_prev=list(h_prev), x_t=list(x_t),
                    rows=[NotationRow(name, *(None if v is None else np.asarray(v).tolist()
                                              for v in vals)) for name, *vals in rows])


# ---------------------------------------------------------------------------
# Step 4: what a gate costs (--params)
# ---------------------------------------------------------------------------

@dataclass
class Cost:
    model: str
    gates: int  # gate blocks
    params: int
    ratio: float  # to the plain RNN
    what: str


@dataclass
class BiasVectors:
    model: str
    one: int  # parameters with one bias vector per gate
    two: int  # with two (PyTorch's b_ih and b_hh)


@dataclass
class Params:
    d: int
    H: int
    costs: List[Cost]  # plain RNN, GRU, LSTM
    gru: int  # the GRU's parameters and the LSTM's, as the page quotes them
    lstm: int
    gru_share: float  # gru / lstm
    bias_vectors: List[BiasVectors]


def gate_block(d, H, biases_per_gate=1):
    """One gate reads [h_{t-1}, x_t] (length H + d) and makes H numbers."""
    return H * (H + d) + biases_per_gate * H


def compute_costs(d=PARAM_INPUT, H=PARAM_HIDDEN, biases_per_gate=1):
    """One Cost per model."""
    block = gate_block(d, H, biases_per_gate)
    return [Cost(name, gates, gates * block, float(gates), what) for name, gates, what in MODELS]


def compute_bias_vectors(d=PARAM_INPUT, H=PARAM_HIDDEN):
    one, two = compute_costs(d, H, 1), compute_costs(d, H, 2)
    return [BiasVectors(a.model, a.params, b.params) for a, b in zip(one, two)]


def compute_params(d=PARAM_INPUT, H=PARAM_HIDDEN):
    """The three models' costs, and the GRU's against the LSTM's."""
    costs = compute_costs(d, H)
    _, gru, lstm = (c.params for c in costs)  # plain RNN, GRU, LSTM
    return Params(d=d, H=H, costs=costs, gru=gru, lstm=lstm, gru_share=gru / lstm,
                  bias_vectors=compute_bias_vectors(d, H))


# ---------------------------------------------------------------------------
# Step 5: the gradient measured along a real LSTM's cell (--measure)
# ---------------------------------------------------------------------------

@dataclass
class CellGradient:
    b_f: float
    sigma: float  # sigma(b_f)
    path_median: List[float]  # product of forget gates f_1 .. f_t, median unit, t = 1..T
    path_max: List[float]  # the same, best unit
    full: List[float]  # ||dC_t/dC_0||, spectral norm of the whole Jacobian
    predicted: List[float]  # sigma(b_f)^t, t = 1..T: the forget gate at initialisation, compounded


@dataclass
class Measure:
    hidden: int  # H
    inputs: int  # d
    steps: int  # T
    seed: int
    distance: int  # the table's: 47
    measured: List[CellGradient]  # one per b_f
    top_b_f: float  # the largest bias measured, and after T steps at that bias:
    top_full: float  # the full Jacobian's norm
    top_path_best: float  # the best unit's cell path
    zero_full: float  # at b_f = 0, after `distance` steps: the full Jacobian's norm
    zero_path: float  # and the median unit's cell path


def make_measure_lstm(H=MEASURE_HIDDEN, d=MEASURE_INPUT, T=MEASURE_STEPS, seed=MEASURE_SEED):
    """Random LSTM weights drawn as PyTorch draws them, uniform(-1/sqrt(H), 1/sqrt(H)),
    and random inputs. Biases: zero, except the forget gate's b_f, set by the caller."""
    rng = np.random.default_rng(seed)
    k = 1 / np.sqrt(H)
    weights = {name: rng.uniform(-k, k, (H, H + d)) for name in ("W_f", "W_i", "W_C", "W_o")}
    X = rng.normal(0, 1, (T, d))  # x_1 .. x_T
    return weights, X


def compute_cell_gradient(bias_f, **kw):
    """dC_t/dC_0 for t = 1..T along the cell path alone and in full.

    cell path: the product of forget gates f_1 * ... * f_t, unit by unit, the
    only factor on the highway (dE/dC_{t-1} = f_t * dE/dC_t).
    full: the whole Jacobian, which also runs through h_t and back into every
    gate; carried forward as J_C = dC_t/dC_0 and J_h = dh_t/dC_0.
    """
    weights, X = make_measure_lstm(**kw)
    H = weights["W_f"].shape[0]
    Wh = {name: W[:, :H] for name, W in weights.items()}  # the parts acting on h_{t-1}
    h, C = np.zeros(H), np.zeros(H)
    J_C, J_h = np.eye(H), np.zeros((H, H))
    path, full = np.ones(H), []
    path_median, path_max = [], []
    for x in X:
        q = np.concatenate([h, x])
        f = sigmoid(weights["W_f"] @ q + bias_f)
        i = sigmoid(weights["W_i"] @ q)
        g = np.tanh(weights["W_C"] @ q)  # C~
        o = sigmoid(weights["W_o"] @ q)
        df = (f * (1 - f))[:, None] * (Wh["W_f"] @ J_h)  # d f_t / d C_0
        di = (i * (1 - i))[:, None] * (Wh["W_i"] @ J_h)
        dg = (1 - g ** 2)[:, None] * (Wh["W_C"] @ J_h)
        do = (o * (1 - o))[:, None] * (Wh["W_o"] @ J_h)
        J_C = f[:, None] * J_C + C[:, None] * df + g[:, None] * di + i[:, None] * dg
        C = f * C + i * g
        tanh_C = np.tanh(C)
        J_h = tanh_C[:, None] * do + (o * (1 - tanh_C ** 2))[:, None] * J_C
        h = o * tanh_C
        path *= f  # the highway alone
        path_median.append(float(np.median(path)))
        path_max.append(float(np.max(path)))
        full.append(float(np.linalg.norm(J_C, 2)))
    sigma = float(sigmoid(bias_f))
    return CellGradient(float(bias_f), sigma, path_median, path_max, full,
                        [sigma ** t for t in range(1, len(full) + 1)])


def compute_measure(biases=MEASURE_BIASES, distance=MEASURE_DISTANCE, H=MEASURE_HIDDEN,
                    d=MEASURE_INPUT, T=MEASURE_STEPS, seed=MEASURE_SEED):
    """dC_t/dC_0 at each b_f, and what the page reads off it."""
    measured = [compute_cell_gradient(b, H=H, d=d, T=T, seed=seed) for b in biases]
    top = max(measured, key=lambda m: m.b_f)
    zero = next(m for m in measured if m.b_f == 0.0)
    return Measure(hidden=H, inputs=d, steps=T, seed=seed, distance=distance, measured=measured,
                   top_b_f=top.b_f, top_full=top.full[-1], top_path_best=top.path_max[-1],
                   zero_full=zero.full[distance - 1], zero_path=zero.path_median[distance - 1])


# ---------------------------------------------------------------------------
# The tables whose rows take lines to say: a format_* each (the others are made
# by format_table in their report)
# ---------------------------------------------------------------------------

def vec(v):
    """A vector as a signed four-decimal tuple: (+0.4100, -0.0500)."""
    return "(" + ", ".join(f"{x:+.4f}" for x in v) + ")"


def sci3(x):
    return f"{x:.3e}"


def format_weights_table(step):
    """Every number the step uses: the state, the input and each gate's matrix."""
    def mat(m):
        return "[" + ", ".join("[" + ", ".join(f"{x:+.1f}" for x in row) + "]" for row in m) + "]"

    rows = [
        ("h_{t-1}, previous hidden state", vec(step.h_prev)),
        ("C_{t-1}, previous cell state", vec(step.C_prev)),
        ("x_t, input", vec(step.x_t)),
        ("W_f, forget (2 x 4, acting on q)", mat(step.weights["W_f"])),
        ("W_i, input", mat(step.weights["W_i"])),
        ("W_C, candidate", mat(step.weights["W_C"])),
        ("W_o, output", mat(step.weights["W_o"])),
        ("b_f; b_i and b_o", f"{vec(step.b_f)}; zero"),
    ]
    return format_table(("name", "value"), rows, "ll")


def format_lstm_table(s):
    rows = [
        ("forget f", "sigma(W_f q + b_f)", vec(s.f)),
        ("input i", "sigma(W_i q + b_i)", vec(s.i)),
        ("candidate C~", "tanh(W_C q)", vec(s.C_tilde)),
        ("output o", "sigma(W_o q + b_o)", vec(s.o)),
        ("cell C_t", "f * C_{t-1} + i * C~", vec(s.C_t)),
        ("hidden h_t", "o * tanh(C_t)", vec(s.h_t)),
    ]
    return format_table(("gate", "formula", "value"), rows, "lll")


def format_cell_update_table(s):
    rows = [
        ("kept from the past", "f * C_{t-1}", vec(s.kept)),
        ("added now", "i * C~", vec(s.added)),
        ("new cell state", "C_t", vec(s.C_t)),
    ]
    return format_table(("term", "formula", "value"), rows, "lll")


def format_gru_table(s):
    rows = [
        ("update z", "sigma(W_z q)", vec(s.z)),
        ("reset r", "sigma(W_r q)", vec(s.r)),
        ("candidate h~", "tanh(W_h [r * h_{t-1}, x_t])", vec(s.h_tilde)),
        ("hidden h_t", "z * h_{t-1} + (1 - z) * h~", vec(s.h_t)),
    ]
    return format_table(("gate", "formula", "value"), rows, "lll")


def format_gru_chung_table(s):
    rows = [
        ("update z' = 1 - z", "sigma(-W_z q)", vec(s.z_chung)),
        ("reset r", "sigma(W_r q)", vec(s.r)),
        ("candidate h~", "tanh(W_h [r * h_{t-1}, x_t])", vec(s.h_tilde)),
        ("hidden h_t", "(1 - z') * h_{t-1} + z' * h~", vec(s.h_t)),
    ]
    return format_table(("gate", "formula", "value"), rows, "lll")


def format_measure_table(measure):
    distance, k = measure.distance, measure.distance - 1
    rows = [(f"{m.b_f:.1f}", sci3(m.sigma ** distance), sci3(m.path_median[k]),
             sci3(m.path_max[k]), sci3(m.full[k])) for m in measure.measured]
    header = ("b_f", f"sigma(b_f)^{distance}", "cell path, median unit",
              "cell path, best unit", f"full norm of dC_{distance}/dC_0")
    return format_table(header, rows, "rrrrr")


# ---------------------------------------------------------------------------
# The reports: what each flag prints; each returns the record of its compute_*
# ---------------------------------------------------------------------------

def report_highway(args, out):
    highway = compute_highway()
    out.text("Step 1: the gradient highway")
    out.text("Plain RNN: every step multiplies the gradient by diag(tanh'(a_t)) U. U is\n"
             "learned, but keeping that product near 1 needs rho(U) near 1 and units that\n"
             "never saturate. LSTM: along the cell state the only factor is the forget\n"
             "gate, dE/dC_{t-1} = f_t * dE/dC_t: no matrix, no tanh'. The LSTM of 1997 had\n"
             "no forget gate, so the factor was exactly 1: the constant error carousel.")
    header = ("distance", *highway.columns)
    rows = [(k, *(sci3(v) for v in vals)) for k, vals in zip(highway.distances, highway.values)]
    out.table("highway", format_table(header, rows, "r" * len(header)))
    out.text(f"At f = 0.99, {sci3(highway.survive_500)} of the gradient survives "
             f"{highway.distances[-1]} steps ({100 * highway.survive_500:.2f}%);\n"
             f"at 0.5 it is below 1e-14 from step {highway.gone_by} on. The forget gate trades "
             "the\ncarousel's perfect memory for a decay the network learns, input by input.")
    return highway


def report_bias(args, out):
    biases = compute_bias()
    k = biases.distance
    out.text("Step 2: the forget-gate bias")
    out.text("At initialisation the weights are small, so f_t is roughly sigma(b_f).")
    header = ("b_f", "f = sigma(b_f)", *(f"f^{n}" for n in biases.powers))
    rows = [(f"{r.b_f:.1f}", f"{r.f:.4f}", *(sci3(p) for p in r.powers)) for r in biases.rows]
    out.table("bias", format_table(header, rows, "r" * len(header)))
    out.text(f"b_f = 0 starts the gate at 0.50: the cell halves its memory every step.\n"
             f"b_f = 1 starts it at {biases.sigma_1:.4f}, and after {k} steps the signal "
             f"is larger by\nsigma(1)^{k} / sigma(0)^{k} = {sci3(biases.ratio_1)}; b_f = 2 "
             f"({biases.sigma_2:.4f}) by {sci3(biases.ratio_2)}.\n"
             "Gers, Schmidhuber and Cummins (2000) introduced the forget gate; Jozefowicz,\n"
             "Zaremba and Sutskever (2015) recommend b_f = 1. Keras does it by default\n"
             "(unit_forget_bias=True); PyTorch initialises every bias uniformly.")
    return biases


def report_step(args, out):
    bias = (args.forget_bias,) * len(b_f) if args.forget_bias is not None else b_f
    step = compute_step(bias, args.h_prev or h_prev, args.c_prev or C_prev, args.x_t or x_t)
    out.text("Step 3: one LSTM step, every gate shown")
    out.text(f"Two units, input size 2; every gate reads q = [h_{{t-1}}, x_t], length 4: "
             f"h_{{t-1}} = {vec(step.h_prev)}, C_{{t-1}} = {vec(step.C_prev)}, "
             f"x_t = {vec(step.x_t)}.")
    out.table("weights", format_weights_table(step))
    out.table("lstm", format_lstm_table(step.lstm))
    out.text("The cell update, term by term:")
    out.table("cell_update", format_cell_update_table(step.lstm))
    out.text("C_t is reached by addition, not by a matrix product: the old memory, scaled\n"
             "by the forget gate, plus what the input gate lets in.")
    out.text("The same step as a GRU, with z near 1 keeping the old state (d2l, PyTorch):\n"
             "W_r and W_h reuse W_i and W_C, W_z is -W_f; no biases.")
    out.table("gru", format_gru_table(step.gru))
    out.text("No separate cell state: one gate, z, splits old from new. Chung et al.\n"
             "(2014) write the same step with z' = 1 - z, so that z' near 1 takes the\n"
             "candidate; in their notation, the same h_t:")
    out.table("gru_chung", format_gru_chung_table(step.gru))
    return step


def report_params(args, out):
    params = compute_params(args.input or PARAM_INPUT, args.hidden or PARAM_HIDDEN)
    out.text(f"Step 4: what a gate costs (input d = {params.d}, hidden H = {params.H})")
    out.text("Each gate block reads [h_{t-1}, x_t] and makes H numbers: H(H + d) + H parameters.")
    rows = [(c.model, c.gates, f"{c.params:,}", f"{c.ratio:.2f}x", c.what) for c in params.costs]
    out.table("params", format_table(("model", "gate blocks", "parameters", "ratio to RNN",
                                      "what the gates are"), rows, "lrrrl"))
    out.text(f"A GRU has {100 * params.gru_share:.0f}% of an LSTM's parameters: "
             f"{params.lstm - params.gru:,} fewer here.\nThese count the recurrent layer alone; "
             "frameworks that keep two bias\nvectors per gate (PyTorch's b_ih and b_hh) count "
             "H more per gate:")
    rows = [(r.model, f"{r.one:,}", f"{r.two:,}", f"{r.two - r.one:,}")
            for r in params.bias_vectors]
    out.table("bias_vectors", format_table(("model", "one bias per gate",
                                            "two bias vectors (PyTorch)", "difference"),
                                           rows, "lrrr"))
    return params


def report_notation(args, out):
    notation = compute_notation()
    out.text(f"The conventions page: step 3's GRU step (h_{{t-1}} = {vec(notation.h_prev)}, "
             f"x_t = {vec(notation.x_t)}, the same weights, no biases) in every notation the "
             "site meets. The update gate is named as each source names it: Chung et al.'s "
             "z' = 1 - z takes the new state. PyTorch's reset gate scales W_hn h_{t-1} after "
             "the product, which is another function, not another notation.")
    rows = [(r.source, *(vec(v) if v is not None else "none" for v in (r.gate, r.r)),
             vec(r.candidate), vec(r.h_t)) for r in notation.rows]
    out.table("notation", format_table(("notation", "update gate", "reset gate r", "candidate",
                                        "h_t"), rows, "lllll"))
    return notation


def report_measure(args, out):
    measure = compute_measure(seed=args.seed if args.seed is not None else MEASURE_SEED)
    out.text(f"Step 5: the gradient measured along a real LSTM's cell (H = {measure.hidden}, "
             f"d = {measure.inputs}, weights uniform(-1/sqrt(H), 1/sqrt(H)), biases zero but "
             f"b_f, seed {measure.seed})")
    out.table("measure", format_measure_table(measure))
    out.text("Along the cell path alone the median unit follows sigma(b_f)^t; units whose\n"
             "gate sits higher keep far more. The full Jacobian also runs through h_t and\n"
             "back into the gates, a second route the highway picture leaves out.")
    return measure


REPORTS = {  # flag -> (what it prints, the function), in the order of the chapter
    "highway": ("step 1: the decay of the gradient, RNN against LSTM", report_highway),
    "bias": ("step 2: what the forget-gate bias does to the decay", report_bias),
    "step": ("step 3: one LSTM cell step with every gate, then the same step as a GRU",
             report_step),
    "params": ("step 4: parameters of LSTM, GRU and plain RNN", report_params),
    "measure": ("step 5: dC_t/dC_0 measured along a real LSTM's cell for b_f = 0, 1, 2",
                report_measure),
    "notation": ("the conventions page: one GRU step in every notation the site meets",
                 report_notation),
}
DEFAULT = tuple(REPORTS)  # with no flag: every report, in order
OPTIONS = {  # option -> the reports that use it; given to no chosen one, it is an error
    "forget_bias": ("step",),
    "h_prev": ("step",),
    "c_prev": ("step",),
    "x_t": ("step",),
    "input": ("params",),
    "hidden": ("params",),
    "seed": ("measure",),
}


def estimate_seconds(args):  # the harness refuses a command past an hour: none is near it
    return 0.0  # (every report takes seconds, at every setting its options accept)


def add_options(parser):
    parser.add_argument("--forget-bias", metavar="B", type=number(float, -10, 10),
                        help="--step: the forget gate's bias for both units (default 1), "
                             "-10 to 10")
    for name, value, what in (("h-prev", h_prev, "h_{t-1}"), ("c-prev", C_prev, "C_{t-1}"),
                              ("x-t", x_t, "x_t")):
        parser.add_argument(f"--{name}", metavar="A,B", type=pair,
                            help=f"--step: {what}, two numbers from -10 to 10 "
                                 f"(default {value[0]:g},{value[1]:g})")
    parser.add_argument("--input", metavar="D", type=number(int, 1, 100_000),
                        help=f"--params: the input size d (default {PARAM_INPUT})")
    parser.add_argument("--hidden", metavar="H", type=number(int, 1, 100_000),
                        help=f"--params: the hidden size H (default {PARAM_HIDDEN})")
    parser.add_argument("--seed", metavar="S", type=number(int, 0, 2 ** 32 - 1),
                        help=f"--measure: the random seed (default {MEASURE_SEED})")


def pair(text):
    """An argparse type: two numbers from -10 to 10, "0.6,0.4"."""
    parts = text.split(",")
    if len(parts) != 2:
        raise argparse.ArgumentTypeError(f"two numbers separated by a comma, got {text!r}")
    return tuple(number(float, -10, 10)(part) for part in parts)


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
