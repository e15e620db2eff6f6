"""gated.py: how the LSTM and the GRU let a gradient travel far, and what that costs.

Companion script to chapter 13 ("LSTM and GRU"). Python 3.9+ and numpy.

    python3 gated.py            every step below, in order
    python3 gated.py --highway  step 1: the decay of RNN and LSTM gradients compared
    python3 gated.py --bias     step 2: what the forget-gate bias does to the decay
    python3 gated.py --step     step 3: one LSTM cell step with every gate, then a GRU step
    python3 gated.py --params   step 4: LSTM against GRU against plain RNN, in parameters
    python3 gated.py --measure  step 5: the gradient measured along a real LSTM's cell

Every function named compute_* returns plain data and prints nothing; every
format_* turns that data into the text the script prints (markdown tables,
which read well in a terminal and render on the chapter page). The site that
teaches this chapter imports this very file and calls the same functions.
"""

import argparse
import math
import os
import sys

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None

# Step 1: the gradient highway
HIGHWAY_DISTANCES = (1, 10, 47, 100, 500)
HIGHWAY_COLUMNS = (("RNN, factor 0.5", 0.5), ("LSTM, f = 0.9", 0.9), ("LSTM, f = 0.99", 0.99))

# Step 2: the forget-gate bias
BIASES = (0.0, 1.0, 2.0, 3.0, 5.0)  # candidate b_f
BIAS_POWERS = (10, 47, 100)  # distances at which sigma(b_f)^k is shown
BIAS_COMPARE = (2.0, 0.0, 47)  # sigma(2)^47 / sigma(0)^47

# Step 3: one LSTM step (2 units, input size 2; q = [h_prev, x_t])
h_prev = (0.10, -0.20)  # h_{t-1}
C_prev = (0.50, 0.30)  # C_{t-1}
x_t = (0.60, 0.40)  # the input
W_f = ((0.3, -0.2, 0.5, 0.1), (0.1, 0.4, -0.3, 0.2))  # forget gate, acting on q
W_i = ((-0.2, 0.3, 0.4, -0.1), (0.5, -0.1, 0.2, 0.3))  # input gate
W_C = ((0.4, 0.1, -0.2, 0.5), (-0.3, 0.2, 0.6, -0.1))  # candidate cell
W_o = ((0.2, 0.5, 0.1, -0.3), (0.4, -0.2, 0.3, 0.2))  # output gate
b_f = (1.0, 1.0)  # forget bias, the initialisation step 2 argues for
b_i = (0.0, 0.0)  # input bias
b_o = (0.0, 0.0)  # output bias
# The same step as a GRU reuses the numbers, without biases:
W_z, W_r, W_h = W_f, W_i, W_C  # update gate, reset gate, candidate

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


# ---------------------------------------------------------------------------
# Formatting helpers
# ---------------------------------------------------------------------------

def format_table(header, rows, align):
    """A markdown pipe table with padded columns; align is a string of 'l'/'r'."""
    cells = [list(header)] + [[str(c) for c in row] for row in rows]
    widths = [max(3, *(len(row[j]) for row in cells)) for j in range(len(header))]

    def line(row):
        padded = (c.rjust(w) if a == "r" else c.ljust(w) for c, w, a in zip(row, widths, align))
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join(
        "-" * (w + 1) + ":" if a == "r" else "-" * (w + 2) for w, a in zip(widths, align)
    ) + "|"
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def vec(v):
    """A vector as a signed four-decimal tuple: (+0.4100, -0.0500)."""
    return "(" + ", ".join(f"{x:+.4f}" for x in v) + ")"


def sci3(x):
    return f"{x:.3e}"


def count(n):
    return f"{n:,}"


def sigmoid(z):
    return 1 / (1 + np.exp(-z))


# ---------------------------------------------------------------------------
# Step 1: the gradient highway
# ---------------------------------------------------------------------------

def compute_highway(distances=HIGHWAY_DISTANCES, columns=HIGHWAY_COLUMNS):
    """factor ** distance: the RNN's uncontrolled factor against two forget gates."""
    return {"distances": list(distances), "columns": [name for name, _ in columns],
            "factors": [f for _, f in columns],
            "values": [[f ** k for _, f in columns] for k in distances]}


def format_highway_table(highway):
    header = ("distance", *highway["columns"])
    rows = [(k, *(sci3(v) for v in vals))
            for k, vals in zip(highway["distances"], highway["values"])]
    return format_table(header, rows, "r" * len(header))


def first_distance_below(factor, threshold):
    """The first whole distance k with factor^k < threshold."""
    return math.floor(math.log(threshold) / math.log(factor)) + 1


# ---------------------------------------------------------------------------
# Step 2: the forget-gate bias
# ---------------------------------------------------------------------------

def compute_bias(biases=BIASES, powers=BIAS_POWERS):
    """For each b_f: sigma(b_f), the forget gate at initialisation, and its powers."""
    rows = []
    for b in biases:
        f = float(sigmoid(b))
        rows.append({"b_f": b, "f": f, "powers": [f ** k for k in powers]})
    return rows


def compute_bias_ratio(compare=BIAS_COMPARE):
    """How much more signal survives k steps with b_f = b1 than with b_f = b0."""
    b1, b0, k = compare
    return float(sigmoid(b1) ** k / sigmoid(b0) ** k)


def format_bias_table(rows, powers=BIAS_POWERS):
    header = ("b_f", "f = sigma(b_f)", *(f"f^{k}" for k in powers))
    body = [(f"{r['b_f']:.1f}", f"{r['f']:.4f}", *(sci3(p) for p in r["powers"])) for r in rows]
    return format_table(header, body, "r" * len(header))


# ---------------------------------------------------------------------------
# Step 3: one LSTM step and one GRU step, every gate shown
# ---------------------------------------------------------------------------

def compute_lstm_step():
    """f, i, C~, o, C_t, h_t for the spec's two-unit cell."""
    hp, Cp, x = np.array(h_prev), np.array(C_prev), np.array(x_t)
    q = np.concatenate([hp, x])  # [h_{t-1}, x_t]
    f = sigmoid(np.array(W_f) @ q + np.array(b_f))  # forget gate: how much of C_{t-1} to keep
    i = sigmoid(np.array(W_i) @ q + np.array(b_i))  # input gate: how much of C~ to add
    C_tilde = np.tanh(np.array(W_C) @ q)  # candidate cell content
    o = sigmoid(np.array(W_o) @ q + np.array(b_o))  # output gate: how much of the cell to show
    kept, added = f * Cp, i * C_tilde  # the two terms of the cell update
    C_t = kept + added  # new cell state, reached by addition
    h_t = o * np.tanh(C_t)  # new hidden state
    return {"q": q, "f": f, "i": i, "C_tilde": C_tilde, "o": o,
            "kept": kept, "added": added, "C_t": C_t, "h_t": h_t}


def compute_gru_step():
    """z, r, h~, h_t for the same inputs, with this chapter's convention."""
    hp, x = np.array(h_prev), np.array(x_t)
    q = np.concatenate([hp, x])
    z = sigmoid(np.array(W_z) @ q)  # update gate: how much of the candidate to take
    r = sigmoid(np.array(W_r) @ q)  # reset gate: how much of h_{t-1} the candidate sees
    h_tilde = np.tanh(np.array(W_h) @ np.concatenate([r * hp, x]))  # candidate state
    h_t = (1 - z) * hp + z * h_tilde  # one gate splits old from new
    return {"z": z, "r": r, "h_tilde": h_tilde, "h_t": h_t}


def format_weights_table():
    """Every number the step uses: the state, the input and each gate's matrix."""
    def mat(m):
        return "[" + ", ".join("[" + ", ".join(f"{x:+.1f}" for x in row) + "]" for row in m) + "]"

    rows = [
        ("h_{t-1}, previous hidden state", vec(h_prev)),
        ("C_{t-1}, previous cell state", vec(C_prev)),
        ("x_t, input", vec(x_t)),
        ("W_f, forget (2 x 4, acting on q)", mat(W_f)),
        ("W_i, input", mat(W_i)),
        ("W_C, candidate", mat(W_C)),
        ("W_o, output", mat(W_o)),
        ("b_f; b_i and b_o", f"{vec(b_f)}; zero"),
    ]
    return format_table(("name", "value"), rows, "ll")


def format_lstm_table(s):
    rows = [
        ("forget f", "sigma(W_f q + b_f)", vec(s["f"])),
        ("input i", "sigma(W_i q + b_i)", vec(s["i"])),
        ("candidate C~", "tanh(W_C q)", vec(s["C_tilde"])),
        ("output o", "sigma(W_o q + b_o)", vec(s["o"])),
        ("cell C_t", "f * C_{t-1} + i * C~", vec(s["C_t"])),
        ("hidden h_t", "o * tanh(C_t)", vec(s["h_t"])),
    ]
    return format_table(("gate", "formula", "value"), rows, "lll")


def format_cell_update_table(s):
    rows = [
        ("kept from the past", "f * C_{t-1}", vec(s["kept"])),
        ("added now", "i * C~", vec(s["added"])),
        ("new cell state", "C_t", vec(s["C_t"])),
    ]
    return format_table(("term", "formula", "value"), rows, "lll")


def format_gru_table(s):
    rows = [
        ("update z", "sigma(W_z q)", vec(s["z"])),
        ("reset r", "sigma(W_r q)", vec(s["r"])),
        ("candidate h~", "tanh(W_h [r * h_{t-1}, x_t])", vec(s["h_tilde"])),
        ("hidden h_t", "(1 - z) * h_{t-1} + z * h~", vec(s["h_t"])),
    ]
    return format_table(("gate", "formula", "value"), rows, "lll")


# ---------------------------------------------------------------------------
# Step 4: what a gate costs
# ---------------------------------------------------------------------------

def gate_block(d, H, biases_per_gate=1):
    """One gate reads [h_{t-1}, x_t] (length H + d) and makes H numbers."""
    return H * (H + d) + biases_per_gate * H


def compute_params(d=PARAM_INPUT, H=PARAM_HIDDEN, biases_per_gate=1):
    """(model, gate blocks, parameters, ratio to the RNN, what the gates are)."""
    rnn = gate_block(d, H, biases_per_gate)
    return [(name, gates, gates * rnn, gates, what) for name, gates, what in MODELS]


def compute_bias_vector_counts(d=PARAM_INPUT, H=PARAM_HIDDEN):
    """(model, parameters with one bias vector per gate, with two) for each model."""
    one, two = compute_params(d, H, 1), compute_params(d, H, 2)
    return [(a[0], a[2], b[2]) for a, b in zip(one, two)]


def format_bias_vector_table(rows):
    body = [(name, count(one), count(two), count(two - one)) for name, one, two in rows]
    return format_table(("model", "one bias per gate", "two bias vectors (PyTorch)", "difference"),
                        body, "lrrr")


def format_params_table(rows):
    body = [(name, gates, count(n), f"{ratio:.2f}x", what) for name, gates, n, ratio, what in rows]
    return format_table(("model", "gate blocks", "parameters", "ratio to RNN", "what the gates are"),
                        body, "lrrrl")


# ---------------------------------------------------------------------------
# Step 5: the gradient measured along a real LSTM's cell
# ---------------------------------------------------------------------------

def make_measure_lstm(H=MEASURE_HIDDEN, d=MEASURE_INPUT, T=MEASURE_STEPS, seed=MEASURE_SEED):
    """Random LSTM weights as PyTorch initialises them, U(-1/sqrt(H), 1/sqrt(H)), and inputs."""
    rng = np.random.default_rng(seed)
    k = 1 / np.sqrt(H)
    weights = {name: rng.uniform(-k, k, (H, H + d)) for name in ("W_f", "W_i", "W_C", "W_o")}
    X = rng.normal(0, 1, (T, d))  # x_1 .. x_T
    return weights, X


def lstm_run(weights, X, bias_f, h_0, C_0):
    """Forward pass: the states C_1..C_T and the forget gates f_1..f_T."""
    h, C, Cs, fs = h_0, C_0, [], []
    for x in X:
        q = np.concatenate([h, x])
        f = sigmoid(weights["W_f"] @ q + bias_f)
        i = sigmoid(weights["W_i"] @ q)
        C = f * C + i * np.tanh(weights["W_C"] @ q)
        h = sigmoid(weights["W_o"] @ q) * np.tanh(C)
        Cs.append(C)
        fs.append(f)
    return np.array(Cs), np.array(fs)


def compute_measured_cell_gradient(bias_f, **kw):
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
    return {"b_f": bias_f, "sigma": float(sigmoid(bias_f)), "path_median": path_median,
            "path_max": path_max, "full": full}


def compute_measure(biases=MEASURE_BIASES, **kw):
    return [compute_measured_cell_gradient(b, **kw) for b in biases]


def format_measure_table(measured, distance=MEASURE_DISTANCE):
    k = distance - 1
    rows = [(f"{m['b_f']:.1f}", sci3(m["sigma"] ** distance), sci3(m["path_median"][k]),
             sci3(m["path_max"][k]), sci3(m["full"][k])) for m in measured]
    header = ("b_f", f"sigma(b_f)^{distance}", "cell path, median unit",
              "cell path, best unit", f"full norm of dC_{distance}/dC_0")
    return format_table(header, rows, "rrrrr")


# ---------------------------------------------------------------------------
# The printed steps
# ---------------------------------------------------------------------------

def report_highway():
    highway = compute_highway()
    survive = highway["values"][-1][-1]
    gone_by = first_distance_below(0.5, 1e-14)
    return "\n\n".join([
        "Step 1: the gradient highway",
        "Plain RNN: every step multiplies the gradient by diag(tanh') U, a product\n"
        "nobody controls. LSTM: along the cell state the only factor is the forget\n"
        "gate, dE/dC_{t-1} = f_t * dE/dC_t, a number the network learns.",
        format_highway_table(highway),
        f"At f = 0.99, {sci3(survive)} of the gradient survives {highway['distances'][-1]} "
        f"steps ({100 * survive:.2f}%);\n"
        f"at 0.5 it is below 1e-14 from step {gone_by} on. The LSTM does not remove the\n"
        "decay: it puts its rate under the network's control.",
    ])


def report_bias():
    b1, b0, k = BIAS_COMPARE
    return "\n\n".join([
        "Step 2: the forget-gate bias",
        "At initialisation the weights are small, so f_t is roughly sigma(b_f).",
        format_bias_table(compute_bias()),
        f"b_f = 0 gives f = 0.50, the plain RNN's 0.5 decay. With b_f = {b1:g}, f starts at\n"
        f"{float(sigmoid(b1)):.4f}, and after {k} steps the signal is larger by\n"
        f"sigma({b1:g})^{k} / sigma({b0:g})^{k} = {sci3(compute_bias_ratio())}. "
        "One scalar, not the architecture.\n"
        "Gers, Schmidhuber and Cummins (2000) introduced the forget gate; Jozefowicz,\n"
        "Zaremba and Sutskever (2015) recommend b_f = 1. Keras does it by default\n"
        "(unit_forget_bias=True); PyTorch initialises every bias uniformly.",
    ])


def report_step():
    lstm, gru = compute_lstm_step(), compute_gru_step()
    return "\n\n".join([
        "Step 3: one LSTM step, every gate shown",
        "Two units, input size 2; every gate reads q = [h_{t-1}, x_t], length 4.",
        format_weights_table(),
        format_lstm_table(lstm),
        "The cell update, term by term:",
        format_cell_update_table(lstm),
        "The forget gate keeps most of the old memory, and C_t is reached by\n"
        "addition, not by a matrix product: that is why the gradient survives.",
        "The same step as a GRU (W_z, W_r, W_h reuse W_f, W_i, W_C; no biases):",
        format_gru_table(gru),
        "No separate cell state: one gate, z, splits old from new. This chapter\n"
        "writes h_t = (1 - z) * h_{t-1} + z * h~; Cho et al. (2014), d2l and PyTorch\n"
        "write z * h_{t-1} + (1 - z) * h~, the same model with z and 1 - z swapped.",
    ])


def report_params():
    rows = compute_params()
    gru, lstm = rows[1][2], rows[2][2]
    return "\n\n".join([
        f"Step 4: what a gate costs (input d = {PARAM_INPUT}, hidden H = {PARAM_HIDDEN})",
        "Each gate block reads [h_{t-1}, x_t] and makes H numbers: H(H + d) + H parameters.",
        format_params_table(rows),
        f"A GRU is {100 * gru / lstm:.0f}% the size of an LSTM: {lstm - gru:,} parameters "
        "fewer here.\nThese count the recurrent layer alone; frameworks that keep two bias\n"
        "vectors per gate (PyTorch's b_ih and b_hh) count H more per gate:",
        format_bias_vector_table(compute_bias_vector_counts()),
    ])


def report_measure():
    measured = compute_measure()
    return "\n\n".join([
        f"Step 5: the gradient measured along a real LSTM's cell (H = {MEASURE_HIDDEN}, "
        f"d = {MEASURE_INPUT}, PyTorch-style random weights, seed {MEASURE_SEED})",
        format_measure_table(measured),
        "Along the cell path alone the median unit follows sigma(b_f)^t; units whose\n"
        "gate sits higher keep far more. The full Jacobian also runs through h_t and\n"
        "back into the gates, a second route the highway picture leaves out.",
    ])


REPORTS = {  # flag -> the step it prints, in the order of the chapter
    "highway": ("step 1: the decay of the gradient, RNN against LSTM", report_highway),
    "bias": ("step 2: what the forget-gate bias does to the decay", report_bias),
    "step": ("step 3: one LSTM cell step with every gate, then the same step as a GRU",
             report_step),
    "params": ("step 4: parameters of LSTM, GRU and plain RNN", report_params),
    "measure": ("step 5: dC_t/dC_0 measured along a real LSTM's cell for b_f = 0, 1, 2",
                report_measure),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="gated.py",
        description="How the LSTM and the GRU let a gradient travel far, and what that "
                    "costs. With no flag, print every step in order; several flags print "
                    "those steps, in the order below.")
    for flag, (help_text, _) in REPORTS.items():
        parser.add_argument(f"--{flag}", action="store_true", help=help_text)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if np is None:
        print("gated.py needs numpy: pip install numpy", file=sys.stderr)
        return 1
    chosen = [flag for flag in REPORTS if getattr(args, flag)] or list(REPORTS)
    try:
        print("\n\n\n".join(REPORTS[flag][1]() for flag in chosen), flush=True)
    except BrokenPipeError:  # piped into `head`, which stopped reading: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
