"""rnn.py: what unrolling does to a recurrent network's parameter count and to its gradient.

Companion script to chapter 12 ("The recurrent network"). Python 3.9+ and numpy.

    python3 rnn.py            every step below, in order
    python3 rnn.py --unroll   step 1: three steps of a tiny RNN, by hand
    python3 rnn.py --params   step 2: parameters do not grow with the sequence
    python3 rnn.py --vanish   step 3: why the memory fades (the 47-word example)
    python3 rnn.py --clip     step 4: gradient clipping, before and after
    python3 rnn.py --measure  step 5: the gradient measured through a real tanh RNN

Every function named compute_* returns plain data and prints nothing; every
format_* turns that data into the text the script prints (markdown tables,
which read well in a terminal and render on the chapter page). The site that
teaches this chapter imports this very file and calls the same functions.
"""

import argparse
import os
import sys

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None

# ---------------------------------------------------------------------------
# Step 1: a model small enough to print whole
# ---------------------------------------------------------------------------

VOCAB = ("the", "dog", "ran")  # word i of the vocabulary
EMBEDDING = {  # E: one 2-vector per word
    "the": (0.50, -0.20),
    "dog": (0.10, 0.80),
    "ran": (-0.60, 0.30),
}
W = ((0.60, -0.30), (0.20, 0.50))  # input to hidden, H x d
U = ((0.40, 0.10), (-0.20, 0.70))  # hidden to hidden, H x H
b_h = (0.05, -0.05)  # hidden bias
V = ((0.70, -0.30), (-0.40, 0.60), (0.10, 0.20))  # hidden to vocabulary, |V| x H
b_y = (0.0, 0.0, 0.0)  # output bias
SENTENCE = ("the", "dog", "ran")  # what the model reads

# Step 2: a realistic size
VOCAB_SIZE, EMBED_DIM, HIDDEN = 10_000, 100, 500  # |V|, d, H
CONTEXTS = (3, 5, 10, 50, 500)  # feed-forward window sizes, in words

# Step 3: decay of a per-step factor
DISTANCES = (1, 5, 10, 20, 47, 100)  # steps between cause and effect
FACTORS = (0.5, 0.9, 1.0, 1.1, 1.2)  # per-step gradient factors
EXAMPLE_DISTANCE = 47  # "partner" is 47 words back
EXAMPLE_FACTORS = (0.01, 0.5, 1.2)
GONE = 1e-12  # below this a gradient is gone entirely
EXAMPLE = (
    "Raj entered CoffeeDay to meet his partner Dru. ... After a long and "
    "fruitful discussion, Raj said goodbye to his ______"
)

# Step 4: clipping
CLIP_THRESHOLD = 5.0  # largest gradient norm allowed
CLIP_SCALES = (0.4, 1.2, 3.0, 40.0, 900.0)  # size of each step's raw gradient
CLIP_SEED = 0

# Step 5: measured gradient norms
MEASURE_HIDDEN, MEASURE_INPUT, MEASURE_STEPS = 64, 16, 100  # H, d, T
MEASURE_RADII = (0.5, 0.9, 1.0, 1.1)  # spectral radius of U
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


def mat(m):
    """A matrix row by row with two decimals: [[+0.60, -0.30], [+0.20, +0.50]]."""
    return "[" + ", ".join("[" + ", ".join(f"{x:+.2f}" for x in row) + "]" for row in m) + "]"


def vec2(v):
    """A parameter vector with two decimals: (+0.05, -0.05)."""
    return "(" + ", ".join(f"{x:+.2f}" for x in v) + ")"


def sci3(x):
    return f"{x:.3e}"


def sci6(x):
    return f"{x:.6e}"


def count(n):
    return f"{n:,}"


# ---------------------------------------------------------------------------
# Step 1: unrolling three steps by hand
# ---------------------------------------------------------------------------

def softmax(z):
    e = np.exp(z - z.max())  # shift for numerical safety; the result is unchanged
    return e / e.sum()


def compute_unroll(sentence=SENTENCE):
    """Run the tiny RNN over the sentence; one dict per step t = 1, 2, 3."""
    Wm, Um, Vm = np.array(W), np.array(U), np.array(V)
    bh, by = np.array(b_h), np.array(b_y)
    h = np.zeros(len(b_h))  # h_0
    steps = []
    for t, word in enumerate(sentence, start=1):
        x = np.array(EMBEDDING[word])  # x_t, the word's embedding
        a = Wm @ x + Um @ h + bh  # pre-activation W x_t + U h_{t-1} + b_h
        h = np.tanh(a)  # h_t: a summary of the whole prefix
        p = softmax(Vm @ h + by)  # y_t: a distribution over the next word
        steps.append({"t": t, "word": word, "x": x, "a": a, "h": h, "p": p,
                      "next": VOCAB[int(np.argmax(p))]})
    return steps


def format_model_table():
    """The whole tiny model: every number the unrolled steps use."""
    rows = [
        ("E, embeddings (d = 2)", "; ".join(f"{w} {vec2(EMBEDDING[w])}" for w in VOCAB)),
        ("W, input to hidden (2 x 2)", mat(W)),
        ("U, hidden to hidden (2 x 2)", mat(U)),
        ("b_h, hidden bias", vec2(b_h)),
        ("V, hidden to vocabulary (3 x 2)", mat(V)),
        ("b_y, output bias", vec2(b_y)),
    ]
    return format_table(("parameter", "value"), rows, "ll")


def format_unroll_table(steps):
    rows = [(s["t"], s["word"], vec(s["x"]), vec(s["a"]), vec(s["h"])) for s in steps]
    return format_table(("t", "word", "x_t", "W x_t + U h_{t-1} + b_h", "h_t"), rows, "rlllll")


def format_prediction_table(steps):
    rows = [(s["t"], s["word"], *(f"{q:.4f}" for q in s["p"]), s["next"]) for s in steps]
    header = ("t", "read", *(f"P({w})" for w in VOCAB), "most likely next")
    return format_table(header, rows, "rl" + "r" * len(VOCAB) + "l")


# ---------------------------------------------------------------------------
# Step 2: the parameter count does not grow with the sequence
# ---------------------------------------------------------------------------

def compute_params(vocab_size=VOCAB_SIZE, d=EMBED_DIM, H=HIDDEN):
    """(name, shape, count) for each parameter block of the RNN language model."""
    blocks = [
        ("E, embeddings", f"vocabulary x d = {vocab_size:,} x {d}", vocab_size * d),
        ("W, input to hidden", f"H x d = {H} x {d}", H * d),
        ("U, hidden to hidden", f"H x H = {H} x {H}", H * H),
        ("V, hidden to vocabulary", f"H x vocabulary = {H} x {vocab_size:,}", H * vocab_size),
        ("b_h and b_y, biases", f"H + vocabulary = {H} + {vocab_size:,}", H + vocab_size),
    ]
    return blocks + [("total", "", sum(n for _, _, n in blocks))]


def compute_window_params(contexts=CONTEXTS, d=EMBED_DIM, H=HIDDEN):
    """(context, feed-forward hidden weights, RNN U weights) for each window size."""
    return [(c, c * d * H, H * H) for c in contexts]


def format_params_table(blocks):
    return format_table(("parameter", "shape", "count"),
                        [(name, shape, count(n)) for name, shape, n in blocks], "llr")


def format_window_table(rows):
    body = [(c, count(ff), count(u), f"{ff / u:g}x") for c, ff, u in rows]
    return format_table(("context (words)", "feed-forward: context x d x H", "RNN: U is H x H",
                         "feed-forward / RNN"), body, "rrrr")


# ---------------------------------------------------------------------------
# Step 3: why the memory fades
# ---------------------------------------------------------------------------

def compute_decay(distances=DISTANCES, factors=FACTORS):
    """factor ** distance for every pair: what survives of a gradient."""
    return {"distances": list(distances), "factors": list(factors),
            "values": [[f ** k for f in factors] for k in distances]}


def verdict(g):
    if g < GONE:
        return "gone entirely"
    if g > 1:
        return "exploded"
    return "too small to matter"


def compute_example(distance=EXAMPLE_DISTANCE, factors=EXAMPLE_FACTORS):
    """What reaches 'partner', 47 words back, at each per-step factor."""
    return [(f, f ** distance, verdict(f ** distance)) for f in factors]


def compute_spectral_radius(matrix=U):
    """The largest |eigenvalue|: below 1 the linearised product vanishes."""
    return float(np.max(np.abs(np.linalg.eigvals(np.array(matrix)))))


def format_decay_table(decay):
    header = ("distance", *(f"factor {f:g}" for f in decay["factors"]))
    rows = [(k, *(sci3(v) for v in vals)) for k, vals in zip(decay["distances"], decay["values"])]
    return format_table(header, rows, "r" * len(header))


def format_example_table(example, distance=EXAMPLE_DISTANCE):
    rows = [(f"{f:g}", sci6(g), v) for f, g, v in example]
    return format_table(("per-step factor", f"factor^{distance}", "verdict"), rows, "rrl")


# ---------------------------------------------------------------------------
# Step 4: gradient clipping
# ---------------------------------------------------------------------------

def clip(g, threshold=CLIP_THRESHOLD):
    """Rescale g to length threshold if it is longer; never change its direction."""
    norm = np.linalg.norm(g)
    return g * (threshold / norm) if norm > threshold else g


def compute_clipping(scales=CLIP_SCALES, threshold=CLIP_THRESHOLD, seed=CLIP_SEED):
    """(step, norm before, norm after, cosine between them) for each raw gradient."""
    rng = np.random.default_rng(seed)
    rows = []
    for step, scale in enumerate(scales, start=1):
        g = rng.normal(0, 1, size=6) * scale  # a raw gradient of this size
        g_clipped = clip(g, threshold)
        cosine = g @ g_clipped / (np.linalg.norm(g) * np.linalg.norm(g_clipped))
        rows.append((step, float(np.linalg.norm(g)), float(np.linalg.norm(g_clipped)),
                     float(cosine)))
    return rows


def format_clipping_table(rows):
    body = [(s, f"{b:.4f}", f"{a:.4f}", f"{c:.4f}") for s, b, a, c in rows]
    return format_table(("step", "norm of g before", "norm of g after", "cosine(before, after)"),
                        body, "rrrr")


# ---------------------------------------------------------------------------
# Step 5: the gradient measured through a real tanh RNN
# ---------------------------------------------------------------------------

def make_measure_rnn(radius, H=MEASURE_HIDDEN, d=MEASURE_INPUT, T=MEASURE_STEPS,
                     seed=MEASURE_SEED):
    """A random tanh RNN whose U has the given spectral radius, and T random inputs.

    The same seed for every radius, so the networks differ only in the scale of U.
    """
    rng = np.random.default_rng(seed)
    U_m = rng.normal(0, 1, (H, H))
    U_m *= radius / np.max(np.abs(np.linalg.eigvals(U_m)))  # rescale: spectral radius = radius
    W_m = rng.normal(0, 1 / np.sqrt(d), (H, d))  # each W x_t has unit variance per unit
    X = rng.normal(0, 1, (T, d))  # the inputs x_1 .. x_T
    return U_m, W_m, X


def rnn_states(U_m, W_m, X, h_0):
    """h_1 .. h_T of h_t = tanh(W x_t + U h_{t-1})."""
    hs, h = [], h_0
    for x in X:
        h = np.tanh(W_m @ x + U_m @ h)
        hs.append(h)
    return np.array(hs)


def compute_measured_jacobians(radius, **kw):
    """||dh_t/dh_0|| (spectral norm) for t = 1..T, and the mean tanh' along the way.

    dh_t/dh_0 = diag(1 - h_t^2) U ... diag(1 - h_1^2) U: one Jacobian per step.
    """
    U_m, W_m, X = make_measure_rnn(radius, **kw)
    hs = rnn_states(U_m, W_m, X, np.zeros(U_m.shape[0]))
    J = np.eye(U_m.shape[0])  # dh_0/dh_0
    norms = []
    for h in hs:
        J = (1 - h ** 2)[:, None] * (U_m @ J)  # diag(tanh'(.)) U times the product so far
        norms.append(float(np.linalg.norm(J, 2)))
    return {"radius": radius, "norms": norms, "mean_tanh_prime": float(np.mean(1 - hs ** 2))}


def compute_measure(radii=MEASURE_RADII, **kw):
    return [compute_measured_jacobians(r, **kw) for r in radii]


def format_measure_table(measured, distance=EXAMPLE_DISTANCE):
    rows = []
    for m in measured:
        T, r = len(m["norms"]), m["radius"]
        per_step = m["norms"][-1] ** (1 / T)  # geometric mean of the per-step shrink
        rows.append((f"{r:g}", sci3(r ** distance), sci3(m["norms"][distance - 1]),
                     f"{m['mean_tanh_prime']:.4f}", f"{per_step:.4f}"))
    return format_table(("spectral radius rho", f"rho^{distance}",
                         f"measured norm of dh_{distance}/dh_0", "mean tanh'",
                         f"measured factor per step (over {T})"), rows, "rrrrr")


# ---------------------------------------------------------------------------
# The printed steps
# ---------------------------------------------------------------------------

def report_unroll():
    steps = compute_unroll()
    return "\n\n".join([
        "Step 1: unrolling three steps by hand",
        f"Vocabulary {', '.join(VOCAB)}; the sentence \"{' '.join(SENTENCE)}\".",
        format_model_table(),
        "h_t = tanh(W x_t + U h_{t-1} + b_h), h_0 = 0; the same W, U, V at every step.",
        format_unroll_table(steps),
        "y_t = softmax(V h_t + b_y): one distribution over the next word per step.",
        format_prediction_table(steps),
        "h_t summarises the whole prefix, not a window. The weights are arbitrary,\n"
        "so these predictions mean nothing yet: training would set them.",
    ])


def report_params():
    return "\n\n".join([
        f"Step 2: the parameter count does not grow with the sequence "
        f"(|V| = {VOCAB_SIZE:,}, d = {EMBED_DIM}, H = {HIDDEN})",
        format_params_table(compute_params()),
        "A feed-forward model that reads a fixed window needs context x d x H hidden\n"
        "weights; the RNN's U is H x H whatever the length of the sequence.",
        format_window_table(compute_window_params()),
    ])


def report_vanish():
    rho = compute_spectral_radius()
    return "\n\n".join([
        "Step 3: why the memory fades",
        "Backpropagation through time multiplies one Jacobian per step,\n"
        "diag(tanh'(.)) U, so what survives behaves like factor^distance.",
        format_decay_table(compute_decay()),
        "Below 1 it vanishes, above 1 it explodes, exactly 1 survives and nothing\n"
        "holds it there. The threshold is the spectral radius of U: all |lambda| < 1\n"
        "vanishes, any |lambda| > 1 explodes (for the linearised product).\n"
        f"The U of step 1 has spectral radius {rho:.4f}.",
        f"{EXAMPLE}\nThe answer, \"partner\", is {EXAMPLE_DISTANCE} words back.",
        format_example_table(compute_example()),
        "The forward pass carries the information fine; it is the backward pass\n"
        "that cannot deliver the blame.",
    ])


def report_clip():
    return "\n\n".join([
        f"Step 4: gradient clipping at norm {CLIP_THRESHOLD:g} "
        f"(numpy.random.default_rng({CLIP_SEED}), six-dimensional gradients)",
        format_clipping_table(compute_clipping()),
        "The cosine is 1 every time: clipping changes the length of the step, never\n"
        "its direction. It stops explosions and does nothing for vanishing.",
    ])


def report_measure():
    measured = compute_measure()
    faded = [f"{m['radius']:g}" for m in measured if m["norms"][-1] < 1]
    return "\n\n".join([
        f"Step 5: the gradient measured through a real tanh RNN "
        f"(H = {MEASURE_HIDDEN}, d = {MEASURE_INPUT}, random U rescaled to each "
        f"spectral radius, seed {MEASURE_SEED})",
        format_measure_table(measured),
        "The linearised theory predicts rho^t. The measurement shrinks faster:\n"
        "each step also multiplies by tanh', which is below 1 wherever a unit is\n"
        "not at zero, so the real per-step factor sits below rho.\n"
        f"After {MEASURE_STEPS} steps the gradient is below 1 for rho = "
        f"{', '.join(faded) or 'none'}.",
    ])


REPORTS = {  # flag -> the step it prints, in the order of the chapter
    "unroll": ("step 1: unroll three steps of a tiny RNN by hand (Tables A and B)", report_unroll),
    "params": ("step 2: the RNN's parameters against a feed-forward window", report_params),
    "vanish": ("step 3: the decay table and the 47-word example", report_vanish),
    "clip": ("step 4: gradient clipping, before and after", report_clip),
    "measure": ("step 5: the norm of dh_t/dh_0 measured through a real tanh RNN",
                report_measure),
}


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        prog="rnn.py",
        description="What unrolling does to a recurrent network's parameter count and "
                    "to its gradient. With no flag, print every step in order; several "
                    "flags print those steps, in the order below.")
    for flag, (help_text, _) in REPORTS.items():
        parser.add_argument(f"--{flag}", action="store_true", help=help_text)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if np is None:
        print("rnn.py needs numpy: pip install numpy", file=sys.stderr)
        return 1
    chosen = [flag for flag in REPORTS if getattr(args, flag)] or list(REPORTS)
    try:
        print("\n\n\n".join(REPORTS[flag][1]() for flag in chosen), flush=True)
    except BrokenPipeError:  # piped into `head`, which stopped reading: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
