"""gated.py against the chapter 13 spec; expected values worked out here from the
spec's definitions, never pasted from the script's output. The records' named
values are the ones the page quotes, so each is checked too."""

import io
import math

import numpy as np
import pytest

from helpers import load_script, run_script

gated = load_script("gated.py")


def report(flag):
    """(record, tables) of `python3 gated.py --<flag>`, run in-process."""
    out = gated.Printer(io.StringIO())
    records = gated.run(gated.parse_args([f"--{flag}"]), out)
    return records[flag], out.tables


def sig(z):
    return 1 / (1 + math.exp(-z))


def matvec(M, q):
    return [sum(m * v for m, v in zip(row, q)) for row in M]


def cells(table):
    return [[c.strip() for c in line.split("|")[1:-1]] for line in table.splitlines()[2:]]


def signed4(v):
    return "(" + ", ".join(("+" if c >= 0 else "-") + f"{abs(c):.4f}" for c in v) + ")"


def test_highway_table():
    record, tables = report("highway")
    rows = cells(tables["highway"])
    assert [int(r[0]) for r in rows] == [1, 10, 47, 100, 500]
    for r in rows:
        k = int(r[0])
        assert r[1:] == [f"{0.5 ** k:.3e}", f"{0.9 ** k:.3e}", f"{0.99 ** k:.3e}", "1.000e+00"]
    assert rows[-1][3] == "6.570e-03"  # the spec's figure: two thirds of one per cent
    assert record.survive_500 == 0.99 ** 500
    first_below = next(k for k in range(1, 1000) if 0.5 ** k < 1e-14)  # found here, by search
    assert record.gone_by == first_below


def test_bias_table_and_ratios():
    record, tables = report("bias")
    rows = cells(tables["bias"])
    for r, b in zip(rows, (0.0, 1.0, 2.0, 3.0, 5.0)):
        f = sig(b)
        assert r == [f"{b:.1f}", f"{f:.4f}", f"{f ** 10:.3e}", f"{f ** 47:.3e}", f"{f ** 100:.3e}"]
    assert rows[2][1] == "0.8808"  # the spec's sigma(2)
    assert record.ratio_1 == pytest.approx(sig(1) ** 47 / 0.5 ** 47, rel=1e-12)
    assert record.ratio_2 == pytest.approx(sig(2) ** 47 / 0.5 ** 47, rel=1e-12)
    assert record.sigma_1 == pytest.approx(sig(1)) and record.sigma_2 == pytest.approx(sig(2))


def lstm_by_hand():
    h, C, x = [0.10, -0.20], [0.50, 0.30], [0.60, 0.40]
    q = h + x
    Wf = [[0.3, -0.2, 0.5, 0.1], [0.1, 0.4, -0.3, 0.2]]
    Wi = [[-0.2, 0.3, 0.4, -0.1], [0.5, -0.1, 0.2, 0.3]]
    WC = [[0.4, 0.1, -0.2, 0.5], [-0.3, 0.2, 0.6, -0.1]]
    Wo = [[0.2, 0.5, 0.1, -0.3], [0.4, -0.2, 0.3, 0.2]]
    f = [sig(v + 1.0) for v in matvec(Wf, q)]
    i = [sig(v) for v in matvec(Wi, q)]
    Ct = [math.tanh(v) for v in matvec(WC, q)]
    o = [sig(v) for v in matvec(Wo, q)]
    C_new = [f[k] * C[k] + i[k] * Ct[k] for k in range(2)]
    h_new = [o[k] * math.tanh(C_new[k]) for k in range(2)]
    # The spec's GRU step, in Chung et al.'s form: W_z, W_r, W_h are the numbers of W_f, W_i,
    # W_C, no biases, h_t = (1 - z) h_{t-1} + z h~. The page's form (d2l's) is the same step
    # with its update gate 1 - z.
    z_chung = [sig(v) for v in matvec(Wf, q)]
    r = [sig(v) for v in matvec(Wi, q)]
    h_tilde = [math.tanh(v) for v in matvec(WC, [r[0] * h[0], r[1] * h[1]] + x)]
    h_gru = [(1 - z_chung[k]) * h[k] + z_chung[k] * h_tilde[k] for k in range(2)]
    return dict(f=f, i=i, Ct=Ct, o=o, C=C_new, h=h_new, kept=[f[k] * C[k] for k in range(2)],
                added=[i[k] * Ct[k] for k in range(2)], z_chung=z_chung,
                z=[1 - v for v in z_chung], r=r, h_tilde=h_tilde, h_gru=h_gru)


def test_lstm_step_every_gate():
    want = lstm_by_hand()
    record, tables = report("step")
    values = [r[2] for r in cells(tables["lstm"])]
    assert values == [signed4(want[k]) for k in ("f", "i", "Ct", "o", "C", "h")]
    update = [r[2] for r in cells(tables["cell_update"])]
    assert update == [signed4(want["kept"]), signed4(want["added"]), signed4(want["C"])]
    assert record.lstm.f == pytest.approx(want["f"], abs=1e-15)  # quoted by the page
    assert all(0.69 < f < 0.81 for f in want["f"])  # the spec's point: near 0.7 to 0.8


def test_gru_step_in_both_notations():
    """The page's GRU (z keeps) and the spec's table (Chung's form) are one step: the same
    r, h~ and h_t, update gates z and 1 - z."""
    want = lstm_by_hand()
    record, tables = report("step")
    values = [r[2] for r in cells(tables["gru"])]
    assert values == [signed4(want[k]) for k in ("z", "r", "h_tilde", "h_gru")]
    chung = [r[2] for r in cells(tables["gru_chung"])]
    assert chung == [signed4(want[k]) for k in ("z_chung", "r", "h_tilde", "h_gru")]
    assert record.gru.h_t == pytest.approx(want["h_gru"], abs=1e-15)
    assert cells(tables["gru"])[3][1] == "z * h_{t-1} + (1 - z) * h~"  # the site's convention


def test_step_at_other_inputs():
    """--h-prev, --c-prev, --x-t move the step; with nothing in, every gate is its bias."""
    out = io.StringIO()
    args = gated.parse_args(["--step", "--h-prev", "0,0", "--x-t", "0,0", "--c-prev", "1,-2"])
    printer = gated.Printer(out)
    record = gated.run(args, printer)["step"]
    assert record.lstm.f == [sig(1.0)] * 2 and record.lstm.i == [0.5, 0.5]
    assert record.lstm.C_t == pytest.approx([sig(1.0), -2 * sig(1.0)], abs=1e-15)
    assert (record.h_prev, record.x_t, record.C_prev) == ([0, 0], [0, 0], [1, -2])
    shown = [row[1] for row in cells(printer.tables["weights"])[:3]]  # h_{t-1}, C_{t-1}, x_t
    assert shown == [signed4([0, 0]), signed4([1, -2]), signed4([0, 0])], \
        "the weights table shows other inputs than the step used"
    for bad in ("1", "1,2,3", "a,b", "0,11", "nan,0"):
        result = run_script("gated.py", "--step", "--x-t", bad)
        assert result.returncode == 2 and "--x-t" in result.stderr, bad
    assert run_script("gated.py", "--params", "--x-t", "0,0").returncode == 2  # unused


def test_parameter_costs():
    d, H = 100, 500
    block = H * (H + d) + H
    record, tables = report("params")
    assert [r[2] for r in cells(tables["params"])] == ["300,500", "901,500", "1,202,000"]
    assert [c.params for c in record.costs] == [block, 3 * block, 4 * block]  # RNN, GRU, LSTM
    assert (record.gru, record.lstm) == (3 * block, 4 * block)  # quoted by the page
    assert record.gru_share == 0.75  # quoted by the page, and the spec's 75%
    two = cells(tables["bias_vectors"])
    assert [r[2] for r in two] == [f"{g * (block + H):,}" for g in (1, 3, 4)]


def lstm_cells(weights, X, b_f, C_0):
    """C_1 .. C_T of an LSTM with these weights (acting on [h, x]), h_0 = 0, and its forget
    gates: written here from the equations, not taken from gated.py."""
    H = len(C_0)
    h, C, Cs, fs = np.zeros(H), C_0, [], []
    sigmoid = lambda a: 1 / (1 + np.exp(-a))  # noqa: E731
    for x in X:
        q = np.concatenate([h, x])
        f = sigmoid(weights["W_f"] @ q + b_f)
        C = f * C + sigmoid(weights["W_i"] @ q) * np.tanh(weights["W_C"] @ q)
        h = sigmoid(weights["W_o"] @ q) * np.tanh(C)
        Cs.append(C)
        fs.append(f)
    return np.array(Cs), np.array(fs)


def jacobian_by_differences(weights, X, b_f, eps=1e-6):
    """dC_T/dC_0 by central differences around C_0 = 0."""
    H = weights["W_f"].shape[0]
    J = np.zeros((H, H))
    for j in range(H):
        e = np.zeros(H)
        e[j] = eps
        J[:, j] = (lstm_cells(weights, X, b_f, e)[0][-1]
                   - lstm_cells(weights, X, b_f, -e)[0][-1]) / (2 * eps)
    return J


def test_measured_cell_jacobian_matches_finite_differences():
    """The full dC_t/dC_0 norm against central differences through an LSTM run."""
    H, d, T = 6, 3, 5
    weights, X = gated.make_measure_lstm(H=H, d=d, T=T, seed=2)
    for b_f in (0.0, 2.0):
        measured = gated.compute_cell_gradient(b_f, H=H, d=d, T=T, seed=2)
        J = jacobian_by_differences(weights, X, b_f)
        assert measured.full[-1] == pytest.approx(np.linalg.norm(J, 2), rel=1e-6)
        _, fs = lstm_cells(weights, X, b_f, np.zeros(H))
        assert measured.path_median[-1] == pytest.approx(np.median(np.prod(fs, axis=0)))
        assert measured.path_max[-1] == pytest.approx(np.max(np.prod(fs, axis=0)))


def test_the_values_the_page_quotes_are_the_measured_ones():
    """13.7 quotes the full norm and the best unit's cell path after T steps at b_f = 2, and
    13.3 the two at 47 steps for b_f = 0: each against this test's own measurement of the
    page's LSTM (H 32, d 16, T 100, seed 0), by central differences."""
    record, _ = report("measure")
    weights, X = gated.make_measure_lstm()  # the weights' recipe is checked just above
    J = jacobian_by_differences(weights, X, 2.0)
    assert record.top_b_f == 2.0
    assert record.top_full == pytest.approx(np.linalg.norm(J, 2), rel=1e-4)
    _, fs = lstm_cells(weights, X, 2.0, np.zeros(32))
    assert record.top_path_best == pytest.approx(np.max(np.prod(fs, axis=0)), rel=1e-12)
    assert record.top_full > record.top_path_best  # the page's point: the second route adds
    J47 = jacobian_by_differences(weights, X[:47], 0.0, eps=1e-3)  # a norm near 1e-10
    _, fs = lstm_cells(weights, X[:47], 0.0, np.zeros(32))
    assert record.zero_full == pytest.approx(np.linalg.norm(J47, 2), rel=1e-3)
    assert record.zero_path == pytest.approx(np.median(np.prod(fs, axis=0)), rel=1e-12)


def test_help_lists_every_report():
    out = run_script("gated.py", "--help").stdout
    for flag in ("--highway", "--bias", "--step", "--params", "--measure"):
        assert flag in out


def test_flags_print_in_chapter_order():
    out = run_script("gated.py", "--params", "--highway").stdout
    assert out.index("Step 1") < out.index("Step 4") and "Step 2" not in out
