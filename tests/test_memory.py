"""Tests for docs/code/memory.py: the task, the cells' gradients, batching, the command line.

numpy only (tests/test_memory_torch.py compares with PyTorch autograd). The
references here are written independently of the script: a plain per-sequence
forward pass of d2l's equations in float64, finite differences of it, and
counts over generated data.
"""
import dataclasses
import importlib.util
import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
MEMORY_PY = ROOT / "docs" / "code" / "memory.py"
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def load_memory():
    spec = importlib.util.spec_from_file_location("memory_under_test", MEMORY_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


memory = load_memory()


def run_cli(*args):
    return subprocess.run([sys.executable, str(MEMORY_PY), *args], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, **ONE_THREAD))


def without_times(text):
    return "\n".join(line for line in text.splitlines() if not line.startswith("time:"))


# ---------------------------------------------------------------- an independent reference

def sig(a):
    return 1 / (1 + np.exp(-a))


def reference_last_state(cell, p, m, xs):
    """d2l's equations, one sequence, float64: xs is a list of input vectors (one-hot
    or not), p the script's parameters of which model m is used. Returns H_T."""
    P = {name: w[m] for name, w in p.items()}
    hidden = P["W_hq"].shape[0]
    H, C = np.zeros(hidden), np.zeros(hidden)

    def gate(g, H_in):
        return x @ P["W_x" + g] + H_in @ P["W_h" + g] + P["b_" + g]

    for x in xs:
        if cell == "rnn":
            H = np.tanh(gate("h", H))
        elif cell == "lstm":
            I, F, O = sig(gate("i", H)), sig(gate("f", H)), sig(gate("o", H))
            C = F * C + I * np.tanh(gate("c", H))
            H = O * np.tanh(C)
        else:
            Z, R = sig(gate("z", H)), sig(gate("r", H))
            H_tilde = np.tanh(x @ P["W_xh"] + (R * H) @ P["W_hh"] + P["b_h"])
            H = Z * H + (1 - Z) * H_tilde
    return H


def reference_loss(cell, p, m, xs, y):
    """Cross-entropy of answer y, read from the last state through W_hq, b_q."""
    o = reference_last_state(cell, p, m, xs) @ p["W_hq"][m] + p["b_q"][m]
    return float(np.log(np.exp(o - o.max()).sum()) + o.max() - o[y])


def one_hots(tokens, V):
    return [np.eye(V)[t] for t in tokens]


def reference_total_loss(cell, p, X, Y):
    """Sum over models of each model's mean cross-entropy; X (T, M, B), Y (M, B)."""
    T, M, B = X.shape
    V = p[next(n for n in p if n.startswith("W_x"))].shape[1]
    return sum(np.mean([reference_loss(cell, p, m, one_hots(X[:, m, b], V), Y[m, b])
                        for b in range(B)]) for m in range(M))


def random_problem(cell, seed=0, models=2, B=3, T=5, hidden=3, scale=0.5):
    """Random float64 weights (model axis first), tokens anywhere in the vocabulary."""
    rng = np.random.default_rng(seed)
    biases = tuple(range(models)) if cell == "lstm" else (None,)
    seeds = (0,) if cell == "lstm" else tuple(range(models))
    p = memory.init_params(cell, seeds, biases, "float64", hidden)
    p = {name: scale * rng.standard_normal(w.shape) for name, w in p.items()}
    X = rng.integers(0, memory.V, (T, models, B))
    Y = rng.integers(0, memory.K, (models, B))
    return p, X, Y


# ---------------------------------------------------------------- the task

@pytest.mark.parametrize("lag", [1, 2, 5, 37])
def test_sequences_hold_the_symbol_distractors_and_query_where_the_docstring_says(lag):
    rng = np.random.default_rng(lag)
    X, Y = memory.make_sequences(rng, 2000, lag)
    assert X.shape == (2000, lag + 1) and Y.shape == (2000,)
    K, D = memory.K, memory.D
    assert np.array_equal(Y, X[:, 0])  # the answer is the first input, lag steps back
    assert set(np.unique(X[:, 0])) == set(range(K))
    assert np.all(X[:, -1] == K + D)  # the query, and only at the end
    middle = X[:, 1:-1]
    assert np.all((middle >= K) & (middle < K + D))  # only distractors between
    if lag > 2:
        assert set(np.unique(middle)) == set(range(K, K + D))
    counts = np.bincount(Y, minlength=K) / len(Y)
    assert np.all(np.abs(counts - 1 / K) < 0.05)  # answers near uniform: chance is 1/K


def test_the_answer_cannot_be_read_off_anything_but_the_first_symbol():
    rng = np.random.default_rng(0)
    X, Y = memory.make_sequences(rng, 20000, 6)
    for t in range(1, 6):  # the best guess from x_t alone stays at chance
        best = sum(np.bincount(Y[X[:, t] == v], minlength=memory.K).max()
                   for v in np.unique(X[:, t]))
        assert best / len(Y) < 1 / memory.K + 0.02


def test_each_seed_has_its_own_stream_and_every_cell_gets_the_same_one():
    X, Y = memory.seeds_sequences(memory.TEST_KEY, (0, 1, 2), 8, 4)
    assert X.shape == (5, 3, 8) and Y.shape == (3, 8)
    for s in range(3):
        x, y = memory.make_sequences(np.random.default_rng([memory.TEST_KEY, s, 4]), 8, 4)
        assert np.array_equal(X[:, s], x.T) and np.array_equal(Y[s], y)
    assert not np.array_equal(X[:, 0], X[:, 1])


def test_initialisation_follows_the_rule_and_forget_biases_differ_only_in_b_f():
    p = memory.init_params("lstm", (0, 1), (0.0, 1.0, 2.0), "float64")
    assert p["W_xi"].shape == (6, memory.V, memory.h) and p["W_hf"].shape == (6, memory.h, memory.h)
    assert np.allclose(p["b_f"][:, 0], [0, 0, 1, 1, 2, 2])
    for name, w in p.items():
        if name != "b_f":
            assert np.array_equal(w[0], w[2]) and np.array_equal(w[1], w[5])  # same seed
        if name.startswith("b_") and name != "b_f":
            assert not w.any()
    assert not np.array_equal(p["W_xi"][0], p["W_xi"][1])  # two seeds, two draws
    W = np.concatenate([w.ravel() for n, w in p.items() if n.startswith("W_")])
    bound = 1 / math.sqrt(memory.h)  # uniform(-1/sqrt(h), 1/sqrt(h)): std bound / sqrt(3)
    assert np.abs(W).max() <= bound and np.abs(W).max() > 0.99 * bound
    assert abs(W.std() - bound / math.sqrt(3)) < 0.02 * bound and abs(W.mean()) < 0.03 * bound


# ---------------------------------------------------------------- the cells and their gradients

@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_loss_matches_the_reference_forward(cell):
    p, X, Y = random_problem(cell, B=4, T=6, hidden=5)
    losses, _, _ = memory.loss_and_grads(cell, p, X, Y, need_grads=False)
    assert losses.sum() == pytest.approx(reference_total_loss(cell, p, X, Y), rel=1e-12)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_every_gradient_matches_finite_differences_of_the_reference(cell):
    p, X, Y = random_problem(cell, seed=3)
    _, _, grads = memory.loss_and_grads(cell, p, X, Y)
    assert set(grads) == set(p)
    eps = 1e-6
    for name, w in p.items():
        numeric = np.empty_like(w)
        for i in np.ndindex(w.shape):
            old = w[i]
            w[i] = old + eps
            plus = reference_total_loss(cell, p, X, Y)
            w[i] = old - eps
            minus = reference_total_loss(cell, p, X, Y)
            w[i] = old
            numeric[i] = (plus - minus) / (2 * eps)
        assert np.allclose(grads[name], numeric, rtol=1e-6, atol=1e-9), name


def test_the_scripts_own_gradcheck_passes_for_every_parameter():
    rows = memory.compute_gradcheck()
    names = {(r.cell, r.parameter) for r in rows}
    for cell in memory.CELLS:
        for name in memory.init_params(cell, (0,)):
            assert (cell, name) in names
    assert max(r.relative_error for r in rows) < 1e-6


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_gradient_at_the_first_input_matches_finite_differences(cell):
    """||dl/dx_1|| with x_1 moved off its one-hot value, by central differences of the
    reference forward, averaged over the sequences as the docstring says."""
    p, X, Y = random_problem(cell, seed=5, B=3, T=4, hidden=4)
    g_1, g_T = memory.input_gradients(cell, p, X, Y)
    T, M, B = X.shape
    eps = 1e-6
    for m in range(M):
        for t, got in ((0, g_1[m]), (T - 1, g_T[m])):
            norms = []
            for b in range(B):
                xs = one_hots(X[:, m, b], memory.V)
                grad = np.empty(memory.V)
                for j in range(memory.V):
                    up = [x.copy() for x in xs]
                    down = [x.copy() for x in xs]
                    up[t][j] += eps
                    down[t][j] -= eps
                    grad[j] = (reference_loss(cell, p, m, up, Y[m, b])
                               - reference_loss(cell, p, m, down, Y[m, b])) / (2 * eps)
                norms.append(np.linalg.norm(grad))
            assert got == pytest.approx(np.mean(norms), rel=1e-6)


def test_adam_follows_its_update_rule_entry_by_entry():
    """Three steps of Adam on a fixed gradient sequence, against the rule written out
    with Python floats (Kingma and Ba, algorithm 1, PyTorch's defaults)."""
    rng = np.random.default_rng(0)
    w0 = rng.standard_normal((2, 3))
    p = {"w": w0.copy()}
    adam = memory.Adam(p, lr=0.01)
    gs = [rng.standard_normal((2, 3)) for _ in range(3)]
    for g in gs:
        adam.step(p, {"w": g.copy()})
    for i in np.ndindex(w0.shape):
        w, m, v = float(w0[i]), 0.0, 0.0
        for t, g in enumerate(gs, start=1):
            m = 0.9 * m + 0.1 * g[i]
            v = 0.999 * v + 0.001 * g[i] ** 2
            w -= 0.01 * (m / (1 - 0.9 ** t)) / (math.sqrt(v / (1 - 0.999 ** t)) + 1e-8)
        assert p["w"][i] == pytest.approx(w, rel=1e-12)


# ---------------------------------------------------------------- batching, training, determinism

@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_training_side_by_side_equals_one_model_at_a_time(cell):
    biases = (0.0, 2.0) if cell == "lstm" else (None,)
    together = memory.train_models(cell, 3, (0, 1), biases, steps=30)
    for run in together:
        alone = memory.train_models(cell, 3, (run.seed,),
                                    (run.b_f,) if cell == "lstm" else (None,), steps=30)[0]
        assert (alone.seed, alone.b_f) == (run.seed, run.b_f)
        assert np.allclose(alone.curve_loss, run.curve_loss, rtol=1e-4, atol=1e-6)
        assert np.allclose([alone.g1_init, alone.g1_trained],
                           [run.g1_init, run.g1_trained], rtol=1e-4)


def test_a_short_lag_is_learned_by_every_cell():
    for cell in memory.CELLS:
        runs = memory.train_models(cell, 2, (0, 1), (0.0,) if cell == "lstm" else (None,),
                                   steps=300)
        assert all(r.accuracy > 0.95 for r in runs), (cell, [r.accuracy for r in runs])
        assert all(r.loss < 0.2 for r in runs)


def test_untrained_networks_sit_near_chance():
    for cell in memory.CELLS:
        p = memory.init_params(cell, (0, 1, 2))
        X, Y = memory.seeds_sequences(memory.TEST_KEY, (0, 1, 2), 512, 5)
        loss, acc = memory.evaluate(cell, p, X, Y)
        assert np.all(np.abs(loss - math.log(memory.K)) < 0.1)
        assert np.all(np.abs(acc - 1 / memory.K) < 0.1)


def test_training_runs_are_memoised_by_configuration():
    memory._RUNS.clear()
    first = memory.compute_training("rnn", 2, seeds=(0,), steps=5)
    again = memory.compute_training("rnn", 2, seeds=(0,), steps=5)
    assert first[0] is again[0]
    other = memory.compute_training("rnn", 2, seeds=(0,), steps=6)
    assert other[0] is not first[0]
    memory._RUNS.clear()


# ---------------------------------------------------------------- command line and records

def test_help_lists_every_report_and_option():
    result = run_cli("--help")
    assert result.returncode == 0
    for flag in list(memory.REPORTS) + ["cell", "forget-bias", "lag", "steps"]:
        assert "--" + flag in result.stdout


@pytest.mark.parametrize("args", [
    ["--bogus"], ["--lag", "5"], ["--accuracy", "--cell", "gru"], ["--gradcheck", "--steps", "9"],
    ["--row"], ["--row", "--cell", "gru"], ["--row", "--lag", "5"],
    ["--row", "--cell", "gru", "--lag", "5", "--forget-bias", "1"],
    ["--row", "--cell", "gru", "--lag", "0"], ["--row", "--cell", "gru", "--lag", "abc"],
    ["--row", "--cell", "gru", "--lag", "1e9"], ["--row", "--cell", "cnn", "--lag", "5"],
    ["--row", "--cell", "lstm", "--lag", "5", "--forget-bias", "nan"],
    ["--row", "--cell", "lstm", "--lag", "5", "--forget-bias", "inf"],
    ["--row", "--cell", "lstm", "--lag", "5", "--steps", "-3"],
])
def test_bad_or_unused_options_are_argparse_errors(args):
    result = run_cli(*args)
    assert result.returncode == 2, result
    assert "Traceback" not in result.stderr and "error:" in result.stderr


def test_importing_has_no_side_effects():
    code = (f"import importlib.util as u; s = u.spec_from_file_location('m', {str(MEMORY_PY)!r}); "
            "m = u.module_from_spec(s); s.loader.exec_module(m); print(len(m._RUNS))")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60)
    assert result.stdout == "0\n" and result.stderr == ""


def test_without_numpy_one_line_and_status_1(tmp_path):
    fake = tmp_path / "fake-site" / "numpy"
    fake.mkdir(parents=True)
    (fake / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    env = {"PYTHONPATH": str(fake.parent), "PATH": "/usr/bin:/bin"}
    for args, status in ((["--task"], 1), (["--help"], 0)):
        result = subprocess.run([sys.executable, str(MEMORY_PY), *args], capture_output=True,
                                text=True, timeout=60, env=env, cwd=tmp_path)
        assert result.returncode == status
        if status:
            assert result.stdout == ""
            assert result.stderr.strip() == "memory.py needs numpy: pip install numpy"


def test_runs_alone_in_an_empty_folder_and_writes_nothing(tmp_path):
    copy = tmp_path / "memory.py"
    copy.write_bytes(MEMORY_PY.read_bytes())
    result = subprocess.run([sys.executable, str(copy), "--task", "--gradcheck"],
                            capture_output=True, text=True, timeout=120, cwd=tmp_path,
                            env=dict(os.environ, **ONE_THREAD))
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == run_cli("--task", "--gradcheck").stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.py"]


def test_output_closed_early_is_not_an_error():
    proc = subprocess.Popen([sys.executable, str(MEMORY_PY), "--task", "--gradcheck"],
                            stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=dict(os.environ, **ONE_THREAD))
    proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`: --gradcheck then writes into a closed pipe
    assert proc.wait(timeout=60) == 0
    assert b"Traceback" not in proc.stderr.read()


def test_row_prints_the_same_bytes_twice_and_as_run_does():
    args = ["--row", "--cell", "lstm", "--forget-bias", "2", "--lag", "4", "--steps", "60"]
    first, second = run_cli(*args), run_cli(*args)
    assert first.returncode == 0 and first.stderr == ""
    assert without_times(first.stdout) == without_times(second.stdout)
    buf = io.StringIO()
    memory._RUNS.clear()
    records = memory.run(memory.parse_args(args), memory.Printer(buf))
    assert without_times(buf.getvalue()) == without_times(first.stdout)
    record = records["row"]
    assert record.chance_accuracy == 1 / memory.K
    assert f"chance {1 / memory.K:.2f}" in first.stdout
    assert len(record.runs) == memory.SEEDS and all(r.b_f == 2.0 for r in record.runs)
    assert all(r.curve_steps[-1] == 60 for r in record.runs)
    memory._RUNS.clear()


def test_records_are_plain_json():
    buf = io.StringIO()
    records = memory.run(memory.parse_args(["--task", "--gradcheck"]), memory.Printer(buf))
    for record in records.values():
        data = dataclasses.asdict(record)
        assert json.loads(json.dumps(data)) == data
    out = memory.Printer(io.StringIO())
    memory._RUNS.clear()
    rec = memory.report_row(memory.parse_args(["--row", "--cell", "rnn", "--lag", "2",
                                               "--steps", "3"]), out)
    data = dataclasses.asdict(rec)
    assert json.loads(json.dumps(data)) == data
    assert set(out.tables) == {"row"}
    memory._RUNS.clear()


def test_accuracy_row_shows_mean_and_range_over_seeds_for_each_model():
    runs = []
    for cell, b_f in memory.MODELS:
        for seed, acc in enumerate([0.25, 0.5, 1.0, 0.75]):
            runs.append(memory.Run(cell, 0.0 if b_f is None else b_f, seed, 7, acc, 1.0,
                                   [1], [acc], [1.0], 1.0, 1.0, 1.0, 1.0))
    row = memory.accuracy_row(7, runs)
    assert row == ("7",) + ("0.62 (0.25-1.00)",) * len(memory.MODELS)


def test_the_chance_line_is_what_a_constant_guess_scores():
    buf = io.StringIO()
    record = memory.report_task(memory.parse_args(["--task"]), memory.Printer(buf))
    _, Y = memory.seeds_sequences(memory.TEST_KEY, range(memory.SEEDS), memory.TEST, 50)
    best_constant = max(np.mean(Y == k) for k in range(memory.K))
    assert record.chance_accuracy == 1 / memory.K
    assert abs(best_constant - record.chance_accuracy) < 0.03
    assert record.chance_loss == pytest.approx(-math.log(1 / memory.K))
    assert f"accuracy 1/{memory.K} = {1 / memory.K:.2f}" in buf.getvalue()


def test_gradcheck_command_passes():
    result = run_cli("--gradcheck")
    assert result.returncode == 0 and "(under 1e-6)" in result.stdout
