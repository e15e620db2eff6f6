"""rnn.py against the chapter 12 spec, with every expected value worked out here
from the spec's definitions (plain Python math, or an independent numpy route),
never pasted from the script's output. The records' named values are the ones
the page quotes, so each is checked too."""

import io
import math

import numpy as np
import pytest

from helpers import load_script, run_script

rnn = load_script("rnn.py")


def report(flag):
    """(record, tables) of `python3 rnn.py --<flag>`, run in-process."""
    out = rnn.Printer(io.StringIO())
    records = rnn.run(rnn.parse_args([f"--{flag}"]), out)
    return records[flag], out.tables


def tanh_rnn_step(x, h):
    """h_t = tanh(W x_t + U h_{t-1} + b_h) with the spec's numbers, in plain Python."""
    W = [[0.60, -0.30], [0.20, 0.50]]
    U = [[0.40, 0.10], [-0.20, 0.70]]
    b = [0.05, -0.05]
    a = [W[r][0] * x[0] + W[r][1] * x[1] + U[r][0] * h[0] + U[r][1] * h[1] + b[r]
         for r in range(2)]
    return a, [math.tanh(v) for v in a]


def softmax_of(h):
    V = [[0.70, -0.30], [-0.40, 0.60], [0.10, 0.20]]
    z = [row[0] * h[0] + row[1] * h[1] for row in V]
    e = [math.exp(v) for v in z]
    return [v / sum(e) for v in e]


def signed4(v):
    return "(" + ", ".join(("+" if c >= 0 else "-") + f"{abs(c):.4f}" for c in v) + ")"


def rows_of(table):
    return [[c.strip() for c in line.split("|")[1:-1]] for line in table.splitlines()[2:]]


def test_unroll_matches_the_spec_by_hand():
    record, tables = report("unroll")
    E = {"the": (0.50, -0.20), "dog": (0.10, 0.80), "ran": (-0.60, 0.30)}
    h = [0.0, 0.0]
    unroll, prediction = rows_of(tables["unroll"]), rows_of(tables["prediction"])
    for t, word in enumerate(["the", "dog", "ran"], start=1):
        a, h = tanh_rnn_step(E[word], h)
        p = softmax_of(h)
        assert unroll[t - 1] == [str(t), word, signed4(E[word]), signed4(a), signed4(h)]
        assert prediction[t - 1][2:5] == [f"{q:.4f}" for q in p]
        assert prediction[t - 1][5] == ["the", "dog", "ran"][p.index(max(p))]
        if t == 1:  # the values the page quotes in prose
            assert record.steps[0].a == pytest.approx(a, abs=1e-15)
            assert record.steps[0].h == pytest.approx(h, abs=1e-15)
    assert "(+0.4100, -0.0500)" in tables["unroll"] and "0.4173" in tables["prediction"]


def test_parameter_count():
    V, d, H = 10_000, 100, 500
    total = V * d + H * d + H * H + H * V + (H + V)
    record, tables = report("params")
    assert record.total == total == 6_310_500  # the spec's figure
    last = rows_of(tables["params"])[-1]
    assert last[0] == "total" and last[2] == "6,310,500"
    assert (record.vocab_size, record.embed_dim, record.hidden) == (V, d, H)


def test_window_table_compares_like_with_like():
    """A window's first layer reads context x d inputs into H units; the RNN reads its
    input through W (d x H) and its past through U (H x H)."""
    record, tables = report("params")
    d, H = 100, 500
    assert [w.context for w in record.windows] == [3, 5, 10, 50, 500]
    for w, row in zip(record.windows, rows_of(tables["windows"])):
        assert w.feed_forward == w.context * d * H and w.rnn == d * H + H * H
        assert row[1:3] == [f"{w.context * d * H:,}", f"{d * H + H * H:,}"]


def test_decay_table_and_the_47_word_example():
    record, tables = report("vanish")
    rows = {int(r[0]): r[1:] for r in rows_of(tables["decay"])}
    assert sorted(rows) == [1, 5, 10, 20, 47, 100]
    for k, cells in rows.items():
        assert cells == [f"{f ** k:.3e}" for f in (0.5, 0.9, 1.0, 1.1, 1.2)]
    assert rows[47][0] == "7.105e-15"  # the spec's figure
    example = rows_of(tables["example"])
    assert [r[1] for r in example] == [f"{f ** 47:.6e}" for f in (0.01, 0.5, 1.2)]
    assert example[1][1] == "7.105427e-15"  # the spec's figure
    assert [r[2] for r in example] == ["gone entirely", "gone entirely", "exploded"]
    # the values the page quotes
    assert record.factor_05 == 0.5 ** 47 and record.factor_12 == 1.2 ** 47


def test_verdict_thresholds():
    assert rnn.verdict(1e-13) == "gone entirely"
    assert rnn.verdict(1e-6) == "too small to matter"
    assert rnn.verdict(1.5) == "exploded"


def test_spectral_radius_and_largest_singular_value_of_the_toy_U():
    """U = [[0.4, 0.1], [-0.2, 0.7]]: trace 1.1 and determinant 0.3, so eigenvalues 0.6 and
    0.5; U^T U = [[0.2, -0.1], [-0.1, 0.5]], whose largest eigenvalue is (0.7 + sqrt(0.13)) / 2."""
    record, _ = report("vanish")
    assert record.spectral_radius == pytest.approx(0.6, abs=1e-12)
    assert record.largest_singular_value == pytest.approx(math.sqrt((0.7 + math.sqrt(0.13)) / 2),
                                                          abs=1e-12)
    assert 0.728 < record.largest_singular_value < 0.729


def test_clipping_keeps_direction_and_caps_length():
    rng = np.random.default_rng(0)
    raw = [rng.normal(0, 1, size=6) * s for s in (0.4, 1.2, 3.0, 40.0, 900.0)]
    record, tables = report("clip")
    for row, g in zip(record.rows, raw):
        norm = math.sqrt(sum(v * v for v in g))
        assert row.before == pytest.approx(norm)
        assert row.after == pytest.approx(min(norm, 5.0))
        assert row.cosine == pytest.approx(1.0)
    assert [r[2] for r in rows_of(tables["clipping"])].count("5.0000") == 3
    assert record.threshold == 5.0


def tanh_rnn(U, W, X, h_0):
    """h_T of h_t = tanh(W x_t + U h_{t-1}): written here, not taken from rnn.py."""
    h = h_0
    for x in X:
        h = np.tanh(W @ x + U @ h)
    return h


def jacobian_norm(U, W, X, eps):
    """||dh_T/dh_0|| at h_0 = 0, by central differences."""
    H = U.shape[0]
    J = np.zeros((H, H))
    for j in range(H):
        e = np.zeros(H)
        e[j] = eps
        J[:, j] = (tanh_rnn(U, W, X, e) - tanh_rnn(U, W, X, -e)) / (2 * eps)
    return np.linalg.norm(J, 2)


def chain_rule_norms(U, W, X):
    """||dh_t/dh_0|| at h_0 = 0 for t = 1 .. T by the chain rule, written here:
    dh_t/dh_{t-1} = diag(1 - h_t^2) U, multiplied up step by step. Finite differences
    check it on short sequences (below); they cannot reach a norm of 1e-17 (a central
    difference of tanh outputs loses it to rounding), this product can."""
    h, J, norms = np.zeros(U.shape[0]), np.eye(U.shape[0]), []
    for x in X:
        h = np.tanh(W @ x + U @ h)
        J = ((1 - h ** 2)[:, None] * U) @ J
        norms.append(float(np.linalg.norm(J, 2)))
    return norms


def measure_network(radius, scale, H=64, d=16, T=100, seed=0):
    """The chapter's network from its description: U standard normal rescaled to spectral
    radius rho, W normal with standard deviation scale / sqrt(d), x_t standard normal, in
    that order from numpy.random.default_rng(seed)."""
    rng = np.random.default_rng(seed)
    U = rng.normal(0, 1, (H, H))
    U *= radius / np.max(np.abs(np.linalg.eigvals(U)))
    W = rng.normal(0, scale / np.sqrt(d), (H, d))
    return U, W, rng.normal(0, 1, (T, d))


def test_measured_jacobian_matches_finite_differences():
    """The norms of dh_t/dh_0 against a Jacobian built by central differences, on a small
    network built here from the chapter's description."""
    T, H, d = 6, 8, 3
    for scale in (1.0, 0.1):
        U, W, X = measure_network(1.1, scale, H=H, d=d, T=T, seed=3)
        measured = rnn.compute_measured_jacobians(1.1, scale, H=H, d=d, T=T, seed=3)
        chained = chain_rule_norms(U, W, X)
        for t in (1, 3, T):
            by_differences = jacobian_norm(U, W, X[:t], 1e-6)
            assert measured.norms[t - 1] == pytest.approx(by_differences, rel=1e-6, abs=0)
            assert chained[t - 1] == pytest.approx(by_differences, rel=1e-6, abs=0)


def test_measure_report_and_the_values_the_page_quotes():
    """12.5 quotes the norm after 1 and after T steps at the largest radius, and the range
    of the mean tanh': each against this test's own measurement of the page's network."""
    record, tables = report("measure")
    assert (record.input_scale, record.hidden, record.inputs, record.steps) == (1.0, 64, 16, 100)
    U, W, X = measure_network(1.1, 1.0)
    assert record.top_radius == 1.1
    assert record.top_first == pytest.approx(jacobian_norm(U, W, X[:1], 1e-6), rel=1e-6, abs=0)
    # about 3e-17: pytest.approx's default abs=1e-12 would accept any small number here
    assert record.top_last == pytest.approx(chain_rule_norms(U, W, X)[-1], rel=1e-9, abs=0)
    assert record.top_last < 1  # the chapter's point: at this input scale rho = 1.1 vanishes
    primes = []
    for radius in (0.5, 0.9, 1.0, 1.1):
        U, W, X = measure_network(radius, 1.0)
        h, states = np.zeros(64), []
        for x in X:
            h = np.tanh(W @ x + U @ h)
            states.append(h)
        primes.append(float(np.mean(1 - np.array(states) ** 2)))
    assert (record.tanh_prime_low, record.tanh_prime_high) == pytest.approx(
        (min(primes), max(primes)), rel=1e-12, abs=0)
    buf = io.StringIO()
    rnn.run(rnn.parse_args(["--measure"]), rnn.Printer(buf))
    assert "input scale 1: each unit's input W x_t has\nstandard deviation 1" in buf.getvalue()


def test_the_input_scale_decides_whether_rho_above_1_vanishes():
    """12.5's second table: with no input the measurement is ||U^47||, which follows rho^47
    within a constant factor; at the page's input scale rho = 1.1 vanishes, at 0.1 it does
    not (the review's independent figures: 3.7e-8 at scale 1, 3.7 at 0.1, 2.1e2 at 0)."""
    record, tables = report("scales")
    j = {s: record.input_scales.index(s) for s in (0.0, 0.1, 1.0)}
    i = record.radii.index(1.1)
    assert record.at_distance[i][j[1.0]] == pytest.approx(3.7e-8, rel=0.01)
    assert record.at_distance[i][j[0.1]] == pytest.approx(3.7, rel=0.01)
    assert record.at_distance[i][j[0.0]] == pytest.approx(2.2e2, rel=0.03)
    U, _, _ = measure_network(1.1, 0.0)
    assert record.at_distance[i][j[0.0]] == pytest.approx(
        np.linalg.norm(np.linalg.matrix_power(U, 47), 2), rel=1e-9)
    for row in record.at_distance:  # larger inputs, smaller gradient, at every radius
        assert row == sorted(row, reverse=True)
    header = rows_of(tables["scales"])
    assert len(header) == len(record.radii) == 11


# The command line --------------------------------------------------------------

def test_several_flags_print_their_steps_in_chapter_order():
    out = run_script("rnn.py", "--clip", "--unroll").stdout
    assert out.index("Step 1") < out.index("Step 4") and "Step 2" not in out


def test_no_flag_prints_every_step():
    out = run_script("rnn.py").stdout
    positions = [out.index(f"Step {n}:") for n in range(1, 7)]
    assert positions == sorted(positions)


def test_help_describes_every_flag_and_no_missing_table():
    out = run_script("rnn.py", "--help").stdout
    for flag in ("--unroll", "--params", "--vanish", "--clip", "--measure", "--scales",
                 "--input-scale"):
        assert flag in out
    assert "Table" not in out  # the help once named "Tables A and B", which exist nowhere


