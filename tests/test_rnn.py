"""rnn.py against the chapter 12 spec, with every expected value worked out here
from the spec's definitions (plain Python math, or an independent numpy route),
never pasted from the script's output."""

import math

import numpy as np
import pytest

from conftest import load_script, run_script

rnn = load_script("rnn.py")


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


def test_unroll_matches_the_spec_by_hand():
    E = {"the": (0.50, -0.20), "dog": (0.10, 0.80), "ran": (-0.60, 0.30)}
    h = [0.0, 0.0]
    table_a = rnn.format_unroll_table(rnn.compute_unroll())
    table_b = rnn.format_prediction_table(rnn.compute_unroll())
    for t, word in enumerate(["the", "dog", "ran"], start=1):
        a, h = tanh_rnn_step(E[word], h)
        p = softmax_of(h)
        row_a = next(line for line in table_a.splitlines() if line.startswith(f"| {t:>3} |"))
        assert signed4(E[word]) in row_a and signed4(a) in row_a and signed4(h) in row_a
        row_b = next(line for line in table_b.splitlines() if line.startswith(f"| {t:>3} |"))
        for q in p:
            assert f"{q:.4f}" in row_b
        assert row_b.rstrip(" |").endswith(["the", "dog", "ran"][p.index(max(p))])
    # the spec's own examples of the formats
    assert "(+0.4100, -0.0500)" in table_a and "0.4173" in table_b


def test_parameter_count():
    V, d, H = 10_000, 100, 500
    total = V * d + H * d + H * H + H * V + (H + V)
    assert total == 6_310_500  # the spec's figure
    last = rnn.format_params_table(rnn.compute_params()).splitlines()[-1]
    assert last.split("|")[1].strip() == "total" and last.split("|")[3].strip() == f"{total:,}"
    windows = rnn.compute_window_params()
    assert [c for c, _, _ in windows] == [3, 5, 10, 50, 500]
    assert all(ff == c * d * H and u == H * H for c, ff, u in windows)


def test_decay_table_and_the_47_word_example():
    table = rnn.format_decay_table(rnn.compute_decay())
    rows = {int(line.split("|")[1]): [c.strip() for c in line.split("|")[2:-1]]
            for line in table.splitlines()[2:]}
    assert sorted(rows) == [1, 5, 10, 20, 47, 100]
    for k, cells in rows.items():
        assert cells == [f"{f ** k:.3e}" for f in (0.5, 0.9, 1.0, 1.1, 1.2)]
    assert rows[47][0] == "7.105e-15"
    example = rnn.format_example_table(rnn.compute_example())
    assert f"{0.5 ** 47:.6e}" == "7.105427e-15" and "7.105427e-15" in example
    verdicts = [line.split("|")[3].strip() for line in example.splitlines()[2:]]
    assert verdicts == ["gone entirely", "gone entirely", "exploded"]  # 1e-94, 7e-15, 5266


def test_verdict_thresholds():
    assert rnn.verdict(1e-13) == "gone entirely"
    assert rnn.verdict(1e-6) == "too small to matter"
    assert rnn.verdict(1.5) == "exploded"


def test_spectral_radius_of_the_toy_U():
    # U = [[0.4, 0.1], [-0.2, 0.7]]: trace 1.1, determinant 0.3, eigenvalues 0.6 and 0.5
    assert rnn.compute_spectral_radius() == pytest.approx(0.6)


def test_clipping_keeps_direction_and_caps_length():
    rng = np.random.default_rng(0)
    raw = [rng.normal(0, 1, size=6) * s for s in (0.4, 1.2, 3.0, 40.0, 900.0)]
    rows = rnn.compute_clipping()
    for (step, before, after, cosine), g in zip(rows, raw):
        norm = math.sqrt(sum(v * v for v in g))
        assert before == pytest.approx(norm)
        assert after == pytest.approx(min(norm, 5.0))
        assert cosine == pytest.approx(1.0)
    table = rnn.format_clipping_table(rows)
    assert table.count("1.0000") == 5 and table.count("5.0000") == 3


def test_measured_jacobian_matches_finite_differences():
    """The norms of dh_t/dh_0 against a Jacobian built by central differences."""
    T, H, d = 6, 8, 3
    U, W, X = rnn.make_measure_rnn(1.1, H=H, d=d, T=T, seed=3)
    measured = rnn.compute_measured_jacobians(1.1, H=H, d=d, T=T, seed=3)
    h0, eps = np.zeros(H), 1e-6
    for t in (1, 3, T):
        J = np.zeros((H, H))
        for j in range(H):
            e = np.zeros(H)
            e[j] = eps
            J[:, j] = (rnn.rnn_states(U, W, X[:t], h0 + e)[-1]
                       - rnn.rnn_states(U, W, X[:t], h0 - e)[-1]) / (2 * eps)
        assert measured["norms"][t - 1] == pytest.approx(np.linalg.norm(J, 2), rel=1e-6)
    assert np.max(np.abs(np.linalg.eigvals(U))) == pytest.approx(1.1)


def test_measured_norms_fall_below_rho_to_the_t():
    """What the chapter says the measurement shows: tanh' < 1 makes decay faster."""
    for m in rnn.compute_measure():
        assert m["norms"][-1] < m["radius"] ** len(m["norms"])
        assert 0 < m["mean_tanh_prime"] < 1


# The command line --------------------------------------------------------------

def test_several_flags_print_their_steps_in_chapter_order():
    out = run_script("rnn.py", "--clip", "--unroll").stdout
    assert out.index("Step 1") < out.index("Step 4") and "Step 2" not in out


def test_no_flag_prints_every_step():
    out = run_script("rnn.py").stdout
    positions = [out.index(f"Step {n}:") for n in range(1, 6)]
    assert positions == sorted(positions)


def test_help_describes_every_flag():
    out = run_script("rnn.py", "--help").stdout
    for flag in ("--unroll", "--params", "--vanish", "--clip", "--measure"):
        assert flag in out


def test_unknown_flag_is_a_usage_error():
    result = run_script("rnn.py", "--vanihs")
    assert result.returncode == 2
    assert "unrecognized arguments: --vanihs" in result.stderr and "usage:" in result.stderr


def test_importing_has_no_side_effects(capsys):
    load_script("rnn.py")
    assert capsys.readouterr() == ("", "")
