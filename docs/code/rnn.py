"""rnn.py: what unrolling does to a recurrent network's parameter count and to its gradient.

Companion script to chapter 12 ("The recurrent network"). Python 3.9+ and numpy.

    python3 rnn.py            every report below, in order
    python3 rnn.py --unroll   three steps of a tiny RNN, by hand
    python3 rnn.py --params   the parameters do not grow with the sequence
    python3 rnn.py --vanish   why the memory fades (the 47-word example)
    python3 rnn.py --clip     gradient clipping, before and after
    python3 rnn.py --measure  the gradient measured through a real tanh RNN
    python3 rnn.py --scales   the same at other spectral radii and input scales

    options: --sentence "ran the dog" (--unroll), --hidden H (--params, --measure),
             --threshold X (--clip), --seed S (--clip, --measure, --scales),
             --input-scale S (--measure)

The file reads top to bottom: the settings, the model (every compute_*
function returns a record of plain numbers and prints nothing), then the part
the site prints: one format_* per table, the reports each flag prints, and
the harness (printing and the command line, the same in every script).
"""

import argparse
import os
import sys
import textwrap
from dataclasses import dataclass
from typing import List

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""

# ---------------------------------------------------------------------------
# Settings
# ---------------------------------------------------------------------------

# Step 1: a model small enough to print whole
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
MEASURE_INPUT_SCALE = 1.0  # the standard deviation of each unit's input W x_t
MEASURE_SEED = 0
MEASURE_MAX_HIDDEN = 512  # a larger network takes minutes (the cost grows as H^3)

# Step 6: the same, over a grid of spectral radii and input scales
SCALES_RADII = tuple(round(0.5 + 0.1 * k, 1) for k in range(11))  # rho = 0.5, 0.6, ..., 1.5
SCALES_INPUTS = (0.0, 0.1, 0.3, 1.0, 3.0)  # input scales; 0: no input at all


# ---------------------------------------------------------------------------
# Step 1: unrolling three steps by hand (--unroll)
# ---------------------------------------------------------------------------

@dataclass
class Step:
    t: int  # 1, 2, 3
    word: str  # the word read at step t
    x: List[float]  # x_t, its embedding
    a: List[float]  # W x_t + U h_{t-1} + b_h, the pre-activation
    h: List[float]  # h_t = tanh(a)
    p: List[float]  # y_t = softmax(V h_t + b_y): P(next word), in VOCAB order
    next: str  # the most likely next word


@dataclass
class Unroll:
    steps: List[Step]  # one per word read


def softmax(z):
    e = np.exp(z - z.max())  # shift for numerical safety; the result is unchanged
    return e / e.sum()


def compute_unroll(sentence=SENTENCE):
    """Run the tiny RNN over the sentence: one Step per word."""
    Wm, Um, Vm = np.array(W), np.array(U), np.array(V)
    bh, by = np.array(b_h), np.array(b_y)
    h = np.zeros(len(b_h))  # h_0
    steps = []
    for t, word in enumerate(sentence, start=1):
        x = np.array(EMBEDDING[word])  # x_t, the word's embedding
        a = Wm @ x + Um @ h + bh  # pre-activation W x_t + U h_{t-1} + b_h
        h = np.tanh(a)  # h_t: a summary of the whole prefix
        p = softmax(Vm @ h + by)  # y_t: a distribution over the next word
        steps.append(Step(t, word, x.tolist(), a.tolist(), h.tolist(), p.tolist(),
                          VOCAB[int(np.argmax(p))]))
    return Unroll(steps)


# ---------------------------------------------------------------------------
# Step 2: the parameter count does not grow with the sequence (--params)
# ---------------------------------------------------------------------------

@dataclass
class Block:
    name: str
    shape: str
    count: int


@dataclass
class Window:
    context: int  # words the feed-forward model reads
    feed_forward: int  # its first layer: context x d x H weights
    rnn: int  # the RNN's W and U: d x H + H x H, at any length


@dataclass
class Params:
    vocab_size: int
    embed_dim: int  # d
    hidden: int  # H
    blocks: List[Block]  # the last one is the total
    total: int
    windows: List[Window]


def compute_params(vocab_size=VOCAB_SIZE, d=EMBED_DIM, H=HIDDEN, contexts=CONTEXTS):
    """The parameter blocks of the RNN language model; then, like for like, the weights
    between the words read and the hidden layer: a feed-forward window's first layer
    against the RNN's W and U together."""
    blocks = [
        Block("E, embeddings", f"vocabulary x d = {vocab_size:,} x {d}", vocab_size * d),
        Block("W, input to hidden", f"H x d = {H} x {d}", H * d),
        Block("U, hidden to hidden", f"H x H = {H} x {H}", H * H),
        Block("V, hidden to vocabulary", f"vocabulary x H = {vocab_size:,} x {H}",
              H * vocab_size),
        Block("b_h and b_y, biases", f"H + vocabulary = {H} + {vocab_size:,}", H + vocab_size),
    ]
    total = sum(b.count for b in blocks)
    return Params(vocab_size=vocab_size, embed_dim=d, hidden=H,
                  blocks=blocks + [Block("total", "", total)], total=total,
                  windows=[Window(c, c * d * H, d * H + H * H) for c in contexts])


# ---------------------------------------------------------------------------
# Step 3: why the memory fades (--vanish)
# ---------------------------------------------------------------------------

@dataclass
class Decay:
    distances: List[int]
    factors: List[float]
    values: List[List[float]]  # values[i][j] = factors[j] ** distances[i]
    curves: List[List[float]]  # curves[j][k] = factors[j] ** k for k = 0 .. 100: the plot


@dataclass
class Example:
    factor: float  # the per-step factor
    survives: float  # factor ** EXAMPLE_DISTANCE
    verdict: str


@dataclass
class Vanish:
    decay: Decay
    distance: int  # the example's: "partner" is 47 words back
    example: List[Example]  # one per factor of EXAMPLE_FACTORS
    factor_05: float  # 0.5 ** distance, the page's two examples
    factor_12: float  # 1.2 ** distance
    spectral_radius: float  # of step 1's U
    largest_singular_value: float  # of step 1's U


def compute_decay(distances=DISTANCES, factors=FACTORS):
    """factor ** distance for every pair: what survives of a gradient."""
    return Decay(list(distances), list(factors), [[f ** k for f in factors] for k in distances],
                 [[f ** k for k in range(101)] for f in factors])


def verdict(g):
    if g < GONE:
        return "gone entirely"
    if g > 1:
        return "exploded"
    return "too small to matter"


def compute_example(distance=EXAMPLE_DISTANCE, factors=EXAMPLE_FACTORS):
    """What reaches 'partner', 47 words back, at each per-step factor."""
    return [Example(f, f ** distance, verdict(f ** distance)) for f in factors]


def compute_spectral_radius(matrix=U):
    """The largest |eigenvalue|: the long-run growth rate of the linearised product."""
    return float(np.max(np.abs(np.linalg.eigvals(np.array(matrix)))))


def compute_largest_singular_value(matrix=U):
    """The largest singular value: the most one step of the linear product can stretch
    a vector. Below 1 (and |tanh'| <= 1), the gradient must vanish."""
    return float(np.linalg.norm(np.array(matrix), 2))


def compute_vanish():
    """The decay table, the 47-word example, and what step 1's U does to the product."""
    k = EXAMPLE_DISTANCE
    return Vanish(decay=compute_decay(), distance=k, example=compute_example(k),
                  factor_05=0.5 ** k, factor_12=1.2 ** k,
                  spectral_radius=compute_spectral_radius(),
                  largest_singular_value=compute_largest_singular_value())


# ---------------------------------------------------------------------------
# Step 4: gradient clipping (--clip)
# ---------------------------------------------------------------------------

@dataclass
class Clipped:
    step: int
    before: float  # norm of the raw gradient
    after: float  # norm after clipping
    cosine: float  # between the raw and the clipped gradient


@dataclass
class Clipping:
    threshold: float
    seed: int
    rows: List[Clipped]  # one per raw gradient


def clip(g, threshold=CLIP_THRESHOLD):
    """Rescale g to length threshold if it is longer; never change its direction."""
    norm = np.linalg.norm(g)
    return g * (threshold / norm) if norm > threshold else g


def compute_clip(scales=CLIP_SCALES, threshold=CLIP_THRESHOLD, seed=CLIP_SEED):
    """One Clipped per raw gradient: its norm before and after, and the cosine between."""
    rng = np.random.default_rng(seed)
    rows = []
    for step, scale in enumerate(scales, start=1):
        g = rng.normal(0, 1, size=6) * scale  # a raw gradient of this size
        g_clipped = clip(g, threshold)
        cosine = g @ g_clipped / (np.linalg.norm(g) * np.linalg.norm(g_clipped))
        rows.append(Clipped(step, float(np.linalg.norm(g)), float(np.linalg.norm(g_clipped)),
                            float(cosine)))
    return Clipping(threshold=threshold, seed=seed, rows=rows)


# ---------------------------------------------------------------------------
# Step 5: the gradient measured through a real tanh RNN (--measure)
# ---------------------------------------------------------------------------

@dataclass
class Measured:
    radius: float  # spectral radius rho of U
    input_scale: float  # the standard deviation of each unit's input W x_t
    norms: List[float]  # ||dh_t/dh_0|| for t = 1 .. T (spectral norm)
    predicted: List[float]  # rho^t for t = 1 .. T, the linearised prediction
    mean_tanh_prime: float  # mean of tanh'(a) = 1 - h^2 over units and steps
    per_step: float  # the measured factor per step: ||dh_T/dh_0|| ** (1 / T)


@dataclass
class Measure:
    hidden: int  # H
    inputs: int  # d
    steps: int  # T
    seed: int
    input_scale: float
    measured: List[Measured]  # one per radius, smallest first
    tanh_prime_low: float  # the smallest and largest mean tanh' over the radii
    tanh_prime_high: float
    top_radius: float  # the largest radius measured, and its norms after 1 and T steps
    top_first: float
    top_last: float
    faster: bool  # below rho^T after T steps at every radius: faster than the theory
    faded: List[float]  # the radii whose norm after T steps is below 1


def make_measure_rnn(radius, input_scale=MEASURE_INPUT_SCALE, H=MEASURE_HIDDEN,
                     d=MEASURE_INPUT, T=MEASURE_STEPS, seed=MEASURE_SEED):
    """A random tanh RNN whose U has the given spectral radius, and T random inputs.

    The same seed for every radius and input scale, so the networks differ only in the
    scale of U and of W.
    """
    rng = np.random.default_rng(seed)
    U_m = rng.normal(0, 1, (H, H))
    U_m *= radius / np.max(np.abs(np.linalg.eigvals(U_m)))  # rescale: spectral radius = radius
    W_m = rng.normal(0, input_scale / np.sqrt(d), (H, d))  # W x_t: std input_scale per unit
    X = rng.normal(0, 1, (T, d))  # the inputs x_1 .. x_T
    return U_m, W_m, X


def rnn_states(U_m, W_m, X, h_0):
    """h_1 .. h_T of h_t = tanh(W x_t + U h_{t-1})."""
    hs, h = [], h_0
    for x in X:
        h = np.tanh(W_m @ x + U_m @ h)
        hs.append(h)
    return np.array(hs)


def compute_measured_jacobians(radius, input_scale=MEASURE_INPUT_SCALE, **kw):
    """||dh_t/dh_0|| (spectral norm) for t = 1..T, the mean tanh' along the way, and the
    measured factor per step.

    dh_t/dh_0 = diag(1 - h_t^2) U ... diag(1 - h_1^2) U: one Jacobian per step.
    """
    U_m, W_m, X = make_measure_rnn(radius, input_scale, **kw)
    hs = rnn_states(U_m, W_m, X, np.zeros(U_m.shape[0]))
    J = np.eye(U_m.shape[0])  # dh_0/dh_0
    norms = []
    for h in hs:
        J = (1 - h ** 2)[:, None] * (U_m @ J)  # diag(tanh'(.)) U times the product so far
        norms.append(float(np.linalg.norm(J, 2)))
    predicted = [float(radius) ** t for t in range(1, len(hs) + 1)]
    return Measured(float(radius), float(input_scale), norms, predicted,
                    float(np.mean(1 - hs ** 2)), norms[-1] ** (1 / len(norms)))


def compute_measure(radii=MEASURE_RADII, input_scale=MEASURE_INPUT_SCALE, H=MEASURE_HIDDEN,
                    d=MEASURE_INPUT, T=MEASURE_STEPS, seed=MEASURE_SEED):
    """The measurement at each radius, and what the page reads off it."""
    measured = [compute_measured_jacobians(r, input_scale, H=H, d=d, T=T, seed=seed)
                for r in radii]
    tanh_primes = [m.mean_tanh_prime for m in measured]
    top = max(measured, key=lambda m: m.radius)
    return Measure(hidden=H, inputs=d, steps=T, seed=seed, input_scale=input_scale,
                   measured=measured, tanh_prime_low=min(tanh_primes),
                   tanh_prime_high=max(tanh_primes), top_radius=top.radius,
                   top_first=top.norms[0], top_last=top.norms[-1],
                   faster=all(m.norms[-1] < m.predicted[-1] for m in measured),
                   faded=[m.radius for m in measured if m.norms[-1] < 1])


# ---------------------------------------------------------------------------
# Step 6: the same, over spectral radii and input scales (--scales)
# ---------------------------------------------------------------------------

@dataclass
class Scales:
    hidden: int  # H
    inputs: int  # d
    steps: int  # T
    seed: int
    distance: int  # the distance the table shows: 47
    radii: List[float]
    input_scales: List[float]
    grid: List[List[Measured]]  # grid[i][j]: radius radii[i], input scale input_scales[j]
    at_distance: List[List[float]]  # the table's cells: the measured norm at `distance`
    past_one: List[List[float]]  # for each input scale, the radii whose norm at T is above 1


def compute_scales(radii=SCALES_RADII, inputs=SCALES_INPUTS, distance=EXAMPLE_DISTANCE,
                   H=MEASURE_HIDDEN, d=MEASURE_INPUT, T=MEASURE_STEPS, seed=MEASURE_SEED):
    """grid[i][j]: the measurement at radius radii[i] and input scale inputs[j]."""
    grid = [[compute_measured_jacobians(r, s, H=H, d=d, T=T, seed=seed) for s in inputs]
            for r in radii]
    return Scales(hidden=H, inputs=d, steps=T, seed=seed, distance=distance,
                  radii=list(radii), input_scales=list(inputs), grid=grid,
                  at_distance=[[m.norms[distance - 1] for m in row] for row in grid],
                  past_one=[[m.radius for m in column if m.norms[-1] > 1]
                            for column in zip(*grid)])


# ===========================================================================
# What the site prints: the reports and the command line. A table is made in its
# report by format_table, or by a format_* of its own where its rows take lines to say.
# Everything above computes; everything below only formats and prints.
# ===========================================================================

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


def format_unroll_table(unroll):
    rows = [(s.t, s.word, vec(s.x), vec(s.a), vec(s.h)) for s in unroll.steps]
    return format_table(("t", "word", "x_t", "W x_t + U h_{t-1} + b_h", "h_t"), rows, "rllll")


def format_measure_table(measure, distance=EXAMPLE_DISTANCE):
    rows = [(f"{m.radius:g}", sci3(m.predicted[distance - 1]), sci3(m.norms[distance - 1]),
             f"{m.mean_tanh_prime:.4f}", f"{m.per_step:.4f}") for m in measure.measured]
    return format_table(("spectral radius rho", f"rho^{distance}",
                         f"measured norm of dh_{distance}/dh_0", "mean tanh'",
                         f"measured factor per step (over {measure.steps})"), rows, "rrrrr")


def report_unroll(args, out):
    sentence = tuple(args.sentence.split()) if args.sentence else SENTENCE
    unroll = compute_unroll(sentence)
    out.text(f"Step 1: unrolling {len(unroll.steps)} steps by hand")
    out.text(f"Vocabulary {', '.join(VOCAB)}; the sentence \"{' '.join(sentence)}\".")
    out.table("model", format_model_table())
    out.text("h_t = tanh(W x_t + U h_{t-1} + b_h), h_0 = 0; the same W, U, V at every step.")
    out.table("unroll", format_unroll_table(unroll))
    out.text("y_t = softmax(V h_t + b_y): one distribution over the next word per step.")
    header = ("t", "read", *(f"P({w})" for w in VOCAB), "most likely next")
    rows = [(s.t, s.word, *(f"{q:.4f}" for q in s.p), s.next) for s in unroll.steps]
    out.table("prediction", format_table(header, rows, "rl" + "r" * len(VOCAB) + "l"))
    out.text("h_t summarises the whole prefix, not a window. The weights are arbitrary,\n"
             "so these predictions mean nothing yet: training would set them.")
    return unroll


def report_params(args, out):
    params = compute_params(H=args.hidden or HIDDEN)
    out.text(f"Step 2: the parameter count does not grow with the sequence "
             f"(|V| = {params.vocab_size:,}, d = {params.embed_dim}, H = {params.hidden})")
    out.table("params", format_table(("parameter", "shape", "count"),
                                     [(b.name, b.shape, f"{b.count:,}") for b in params.blocks],
                                     "llr"))
    out.text("Between the words read and the hidden layer, a feed-forward model that\n"
             "reads a fixed window needs context x d x H weights; the RNN needs W and U,\n"
             "d x H + H x H, whatever the length of the sequence.")
    rows = [(w.context, f"{w.feed_forward:,}", f"{w.rnn:,}", f"{w.feed_forward / w.rnn:.2f}x")
            for w in params.windows]
    out.table("windows", format_table(("context (words)", "feed-forward: context x d x H",
                                       "RNN: W and U, d x H + H x H", "feed-forward / RNN"),
                                      rows, "rrrr"))
    return params


def report_vanish(args, out):
    vanish = compute_vanish()
    out.text("Step 3: why the memory fades")
    out.text("Backpropagation through time multiplies one Jacobian per step,\n"
             "diag(tanh'(a_j)) U, so what survives behaves like factor^distance.")
    decay = vanish.decay
    header = ("distance", *(f"factor {f:g}" for f in decay.factors))
    rows = [(k, *(sci3(v) for v in vals)) for k, vals in zip(decay.distances, decay.values)]
    out.table("decay", format_table(header, rows, "r" * len(header)))
    out.text("Below 1 it vanishes, above 1 it explodes. For the linearised product the\n"
             "long-run rate is the spectral radius of U; a largest singular value below 1\n"
             "is enough for vanishing whatever the inputs, because |tanh'| <= 1.\n"
             f"The U of step 1: spectral radius {vanish.spectral_radius:.4f}, "
             f"largest singular value {vanish.largest_singular_value:.4f}.")
    out.text(f"{EXAMPLE}\nThe answer, \"partner\", is {vanish.distance} words back.")
    rows = [(f"{e.factor:g}", f"{e.survives:.6e}", e.verdict) for e in vanish.example]
    out.table("example", format_table(("per-step factor", f"factor^{vanish.distance}",
                                       "verdict"), rows, "rrl"))
    out.text("The forward pass carries the information fine; it is the backward pass\n"
             "that cannot deliver the blame.")
    return vanish


def report_clip(args, out):
    clipping = compute_clip(threshold=args.threshold if args.threshold is not None
                            else CLIP_THRESHOLD,
                            seed=args.seed if args.seed is not None else CLIP_SEED)
    out.text(f"Step 4: gradient clipping at norm {clipping.threshold:g} "
             f"(numpy.random.default_rng({clipping.seed}), six-dimensional gradients)")
    rows = [(r.step, f"{r.before:.4f}", f"{r.after:.4f}", f"{r.cosine:.4f}")
            for r in clipping.rows]
    out.table("clipping", format_table(("step", "norm of g before", "norm of g after",
                                        "cosine(before, after)"), rows, "rrrr"))
    out.text("The cosine is 1 every time: clipping changes the length of the step, never\n"
             "its direction. It stops explosions and does nothing for vanishing.")
    return clipping


def measure_setting(args):
    H = args.hidden or MEASURE_HIDDEN
    if H > MEASURE_MAX_HIDDEN:
        raise Refused(f"--hidden {H} is too large for --measure (it takes minutes from about "
                      f"1,000 units on): use at most {MEASURE_MAX_HIDDEN}")
    return H, (args.seed if args.seed is not None else MEASURE_SEED)


def report_measure(args, out):
    H, seed = measure_setting(args)
    scale = args.input_scale if args.input_scale is not None else MEASURE_INPUT_SCALE
    measure = compute_measure(input_scale=scale, H=H, seed=seed)
    out.text(f"Step 5: the gradient measured through a real tanh RNN "
             f"(H = {H}, d = {measure.inputs}, random U rescaled to each spectral radius, "
             f"input scale {scale:g}: each unit's input W x_t has standard deviation {scale:g}; "
             f"seed {seed})")
    out.table("measure", format_measure_table(measure))
    out.text("The linearised theory predicts rho^t. "
             + ("The measurement shrinks faster: each step also multiplies by tanh', which is "
                "below 1 wherever a unit is not at zero, so the real per-step factor sits "
                "below rho." if measure.faster else
                "The measurement does not fall below it at every radius: inputs this small "
                "leave the units near zero, where tanh' is close to 1, and a random U's "
                "largest singular value is larger than its spectral radius.")
             + f"\nAfter {measure.steps} steps the gradient is below 1 for rho = "
             f"{', '.join(f'{r:g}' for r in measure.faded) or 'none'}.")
    return measure


def report_scales(args, out):
    scales = compute_scales(seed=args.seed if args.seed is not None else MEASURE_SEED)
    out.text(f"Step 6: the measured norm of dh_{scales.distance}/dh_0 at other spectral radii "
             f"and input scales (H = {scales.hidden}, d = {scales.inputs}, seed {scales.seed}; "
             "input scale s: each unit's input W x_t has standard deviation s, 0 is no input)")
    k = scales.distance
    header = ("spectral radius rho", f"rho^{k}",
              *(f"input scale {s:g}" for s in scales.input_scales))
    rows = [(f"{row[0].radius:g}", sci3(row[0].predicted[k - 1]), *(sci3(v) for v in cells))
            for row, cells in zip(scales.grid, scales.at_distance)]
    out.table("scales", format_table(header, rows, "r" * len(header)))
    out.text("The smaller the inputs, the closer the units stay to zero, where tanh' is 1,\n"
             "and the closer the measurement comes to rho^t: with no input at all it is\n"
             "the linear product U^t. Whether a radius above 1 explodes depends on how\n"
             f"hard the inputs drive the units. After {scales.steps} steps the norm is above "
             "1 for rho = "
             + "; ".join(f"{', '.join(f'{r:g}' for r in radii) or 'none'} at input scale {s:g}"
                         for radii, s in zip(scales.past_one, scales.input_scales)) + ".")
    return scales


REPORTS = {  # flag -> (what it prints, the function), in the order of the chapter
    "unroll": ("step 1: three steps of a tiny RNN unrolled by hand", report_unroll),
    "params": ("step 2: the RNN's parameters against a feed-forward window", report_params),
    "vanish": ("step 3: the decay table and the 47-word example", report_vanish),
    "clip": ("step 4: gradient clipping, before and after", report_clip),
    "measure": ("step 5: the norm of dh_t/dh_0 measured through a real tanh RNN",
                report_measure),
    "scales": ("step 6: the same measurement over spectral radii and input scales",
               report_scales),
}
DEFAULT = tuple(REPORTS)  # with no flag: every report, in order
OPTIONS = {  # option -> the reports that use it; given to no chosen one, it is an error
    "sentence": ("unroll",),
    "hidden": ("params", "measure"),
    "threshold": ("clip",),
    "seed": ("clip", "measure", "scales"),
    "input_scale": ("measure",),
}


def estimate_seconds(args):  # the harness refuses a command past an hour: none is near it
    return 0.0  # (every report takes seconds, at every setting its options accept)


def add_options(parser):
    parser.add_argument("--sentence", metavar="WORDS", type=sentence,
                        help=f"--unroll: another sentence of the words {', '.join(VOCAB)} "
                             "(default \"the dog ran\")")
    parser.add_argument("--hidden", metavar="H", type=number(int, 1, 100_000),
                        help=f"--params, --measure: the hidden size (default {HIDDEN} and "
                             f"{MEASURE_HIDDEN}; at most {MEASURE_MAX_HIDDEN} for --measure)")
    parser.add_argument("--threshold", metavar="X", type=number(float, 1e-6, 1e6),
                        help=f"--clip: the largest norm allowed, 1e-6 to 1e6 "
                             f"(default {CLIP_THRESHOLD:g})")
    parser.add_argument("--seed", metavar="S", type=number(int, 0, 2 ** 32 - 1),
                        help="--clip, --measure, --scales: the random seed (default 0)")
    parser.add_argument("--input-scale", metavar="S", type=number(float, 0, 100),
                        help="--measure: the standard deviation of each unit's input W x_t, "
                             f"0 to 100 (default {MEASURE_INPUT_SCALE:g})")


def sentence(text):
    words = text.split()
    unknown = [w for w in words if w not in VOCAB]
    if not words or unknown or len(words) > 50:
        raise argparse.ArgumentTypeError(f"use up to 50 of the words {', '.join(VOCAB)}, "
                                         f"got {text!r}")
    return " ".join(words)


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
