"""Tests for docs/code/memory.py: the task, both models' gradients, the batched trainer
against the one-network model, the records, the command line.

numpy only (tests/test_memory_torch.py compares with PyTorch autograd). The references
here are written independently of the script: a per-sequence forward pass of d2l's
equations in float64 (one sequence, vectors), finite differences of it, and counts over
generated data. Where the script's own constants would make a check circular (the
chance level, the number of symbols), the expected value is counted from data.
"""
import dataclasses
import io
import json
import math

import numpy as np
import pytest

from helpers import CODE, central_differences, load_script, run_script, without_times

MEMORY_PY = CODE / "memory.py"
memory = load_script("memory.py")


def run_cli(*args):
    return run_script("memory.py", *args, timeout=300)


# ---------------------------------------------------------------- an independent reference

def sig(a):
    return 1 / (1 + np.exp(-a))


def reference_last_state(cell, P, xs):
    """d2l's equations for one sequence, float64: xs a list of input vectors (one-hot or
    not), P one network's parameters by d2l name. Returns H_T."""
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


def reference_loss(cell, P, xs, y):
    """Cross-entropy of answer y, read from the last state through W_hq, b_q."""
    o = reference_last_state(cell, P, xs) @ P["W_hq"] + P["b_q"]
    return float(np.log(np.exp(o - o.max()).sum()) + o.max() - o[y])


def one_hots(tokens):
    return [np.eye(memory.V)[t] for t in tokens]


def reference_mean_loss(cell, P, X, Y):
    """One network's mean cross-entropy over sequences X (B, T), answers Y (B,)."""
    return float(np.mean([reference_loss(cell, P, one_hots(x), y) for x, y in zip(X, Y)]))


def network(cell, P, m):
    """Network m of the batched parameters P, by d2l name (gates from the gate axis)."""
    p = {}
    for k, g in enumerate(memory.GATES[cell]):
        p["W_x" + g], p["W_h" + g], p["b_" + g] = P["W_x"][k, m], P["W_h"][k, m], P["b"][k, m]
    p["W_hq"], p["b_q"] = P["W_hq"][m], P["b_q"][m]
    return p


def random_network(cell, seed=0, hidden=3, scale=0.5):
    rng = np.random.default_rng(seed)
    p = memory.init_params(cell, 0, hidden=hidden)
    return {name: scale * rng.standard_normal(w.shape) for name, w in p.items()}


def random_stack(cell, lags=(4, 2, 4), seed=0, hidden=3, B=3, scale=0.5):
    """A stack of networks at several lags (the shorter ones start later), random
    float64 weights, tokens anywhere in the vocabulary."""
    rng = np.random.default_rng(seed)
    b_f = [float(m) if cell == "lstm" else None for m in range(len(lags))]
    S = memory.make_stack(cell, [(b, m, lag) for m, (b, lag) in enumerate(zip(b_f, lags))],
                          hidden)
    theta, P = memory.stack_params(S, "float64")
    theta[:] = scale * rng.standard_normal(theta.shape)
    X = rng.integers(0, memory.V, (S.T, len(lags), B))
    Y = rng.integers(0, memory.K, (len(lags), B))
    return S, theta, P, X, Y


def sequences_of(S, X, m):
    """Network m's sequences (B, its lag + 1) out of a stack's time-major tokens."""
    return X[S.start[m]:, m].T


# ---------------------------------------------------------------- the task

@pytest.mark.parametrize("lag", [1, 2, 5, 37])
def test_sequences_hold_the_symbol_distractors_and_query_where_the_docstring_says(lag):
    X, Y = memory.make_sequences(np.random.default_rng(lag), 2000, lag)
    assert X.shape == (2000, lag + 1) and Y.shape == (2000,)
    assert np.array_equal(Y, X[:, 0])  # the answer is the first input, lag steps back
    symbols = set(np.unique(X[:, 0]))
    query = set(np.unique(X[:, -1]))
    assert len(symbols) == 4 and len(query) == 1  # four symbols (the page's task), one query
    middle = X[:, 1:-1]
    assert not (set(np.unique(middle)) & (symbols | query))  # only distractors between
    if lag > 2:
        assert len(np.unique(middle)) == 4
    counts = np.bincount(Y) / len(Y)
    assert np.all(np.abs(counts[list(symbols)] - 1 / 4) < 0.05)  # near uniform


def test_the_answer_cannot_be_read_off_anything_but_the_first_symbol():
    X, Y = memory.make_sequences(np.random.default_rng(0), 20000, 6)
    for t in range(1, 6):  # the best guess from x_t alone stays at chance
        best = sum(np.bincount(Y[X[:, t] == v]).max() for v in np.unique(X[:, t]))
        assert best / len(Y) < 1 / 4 + 0.02


def test_every_cell_and_bias_reads_the_same_streams_and_test_sets():
    S = memory.make_stack("lstm", [(0.0, 0, 4), (1.0, 0, 4), (0.0, 1, 4), (0.0, 0, 2)])
    X, Y = memory.stack_sequences(S, 8, {(s, lag): memory.training_stream(s, lag)
                                         for _, s, lag in S.models})
    assert X.shape == (5, 4, 8) and Y.shape == (4, 8)
    x, y = memory.make_sequences(memory.training_stream(0, 4), 8, 4)
    assert np.array_equal(sequences_of(S, X, 0), x) and np.array_equal(Y[1], y)  # b_f 0 and 1
    assert not np.array_equal(sequences_of(S, X, 0), sequences_of(S, X, 2))  # seed 1: its own
    x2, _ = memory.make_sequences(memory.training_stream(0, 2), 8, 2)
    assert S.models[3] == (0.0, 0, 2) and np.array_equal(sequences_of(S, X, 3), x2)
    X_test, _ = memory.stack_sequences(S, memory.TEST)
    assert np.array_equal(sequences_of(S, X_test, 0), memory.test_set(0, 4)[0])


def test_initialisation_follows_the_rule_and_forget_biases_differ_only_in_b_f():
    S = memory.make_stack("lstm", [(b, s, 5) for b in (0.0, 1.0, 2.0) for s in (0, 1)])
    theta, P = memory.stack_params(S, "float64")
    nets = [network("lstm", P, m) for m in range(6)]
    assert [n["b_f"][0] for n in nets] == [0, 0, 1, 1, 2, 2]
    for name in nets[0]:
        if name != "b_f":
            assert np.array_equal(nets[0][name], nets[2][name])  # same seed, other b_f
            assert np.array_equal(nets[1][name], nets[5][name])
        if name.startswith("b_") and name != "b_f":
            assert not nets[3][name].any()
    assert not np.array_equal(nets[0]["W_xi"], nets[1]["W_xi"])  # two seeds, two draws
    plain = memory.init_params("lstm", 1, 2.0)
    assert all(np.array_equal(plain[k], nets[5][k]) for k in plain)
    W = np.concatenate([P[k].ravel() for k in ("W_x", "W_h", "W_hq")])
    bound = 1 / math.sqrt(16)  # uniform(-1/sqrt(h), 1/sqrt(h)) with the page's h = 16
    assert np.abs(W).max() <= bound and np.abs(W).max() > 0.99 * bound
    assert abs(W.std() - bound / math.sqrt(3)) < 0.02 * bound and abs(W.mean()) < 0.03 * bound


# ---------------------------------------------------------------- the model, one network

@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_the_one_network_loss_matches_the_reference(cell):
    p = random_network(cell, hidden=5)
    X = np.random.default_rng(1).integers(0, memory.V, (4, 6))
    Y = np.random.default_rng(2).integers(0, memory.K, 4)
    loss, accuracy, _, _ = memory.loss_and_grads(p, cell, X, Y, need_grads=False)
    assert loss == pytest.approx(reference_mean_loss(cell, p, X, Y), rel=1e-12)
    logits = [reference_last_state(cell, p, one_hots(x)) @ p["W_hq"] + p["b_q"] for x in X]
    assert accuracy == np.mean([np.argmax(o) == y for o, y in zip(logits, Y)])


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_every_one_network_gradient_matches_finite_differences_of_the_reference(cell):
    p = random_network(cell, seed=3)
    rng = np.random.default_rng(4)
    X, Y = rng.integers(0, memory.V, (3, 5)), rng.integers(0, memory.K, 3)
    _, _, grads, _ = memory.loss_and_grads(p, cell, X, Y)
    assert set(grads) == set(p)
    for name, w in p.items():
        want = central_differences(lambda: reference_mean_loss(cell, p, X, Y), w)
        assert np.allclose(grads[name], want, rtol=1e-6, atol=1e-9), name


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_the_gradient_at_the_first_input_matches_finite_differences(cell):
    """||dl/dx_1|| and ||dl/dx_T|| with x_t moved off its one-hot value, by central
    differences of the reference, averaged over the sequences as the docstring says."""
    p = random_network(cell, seed=5, hidden=4)
    rng = np.random.default_rng(6)
    X, Y = rng.integers(0, memory.V, (3, 4)), rng.integers(0, memory.K, 3)
    g_1, g_T = memory.input_gradients(p, cell, X, Y)
    for t, got in ((0, g_1), (3, g_T)):
        norms = []
        for x, y in zip(X, Y):
            xs = one_hots(x)
            grad = np.empty(memory.V)
            for j in range(memory.V):
                up, down = [v.copy() for v in xs], [v.copy() for v in xs]
                up[t][j] += 1e-6
                down[t][j] -= 1e-6
                grad[j] = (reference_loss(cell, p, up, y) - reference_loss(cell, p, down, y)) / 2e-6
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


# ---------------------------------------------------------------- the batched model

@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_a_stack_of_lags_computes_each_networks_own_loss(cell):
    """Networks of lags 4, 2 and 4 side by side: each one's loss is the reference's on its
    own sequences, so a shorter network really starts later, from a zero state."""
    S, _, P, X, Y = random_stack(cell, hidden=5)
    assert [lag for *_, lag in S.models] == [4, 4, 2]  # the longest first
    losses, _ = memory.stack_loss_and_grads(S, P, X, Y)
    for m in range(3):
        want = reference_mean_loss(cell, network(cell, P, m), sequences_of(S, X, m), Y[m])
        assert losses[m] == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_the_batched_gradients_are_each_networks_own(cell):
    """stack_loss_and_grads against loss_and_grads network by network (itself checked by
    finite differences above), every parameter, float64."""
    S, theta, P, X, Y = random_stack(cell, seed=7)
    _, G = memory.stack_params(S, theta=np.empty_like(theta))
    memory.stack_loss_and_grads(S, P, X, Y, G)
    for m in range(3):
        _, _, want, _ = memory.loss_and_grads(network(cell, P, m), cell,
                                              sequences_of(S, X, m), Y[m])
        got = network(cell, G, m)
        for name in want:
            assert np.allclose(got[name], want[name], rtol=1e-10, atol=1e-14), (m, name)


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_the_batched_input_gradients_are_each_networks_own(cell):
    S, _, P, X, Y = random_stack(cell, seed=8)
    g_1, g_T = memory.stack_input_gradients(S, P, X, Y)
    for m in range(3):
        want = memory.input_gradients(network(cell, P, m), cell, sequences_of(S, X, m), Y[m])
        assert np.allclose((g_1[m], g_T[m]), want, rtol=1e-10)


def test_the_scripts_own_gradcheck_covers_every_parameter_of_both_models():
    rows = memory.compute_gradcheck()
    for cell in memory.CELLS:
        names = {r.parameter for r in rows if r.cell == cell}
        assert names == set(memory.init_params(cell, 0))
    assert max(max(r.plain_error, r.batched_error) for r in rows) < 1e-6


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_training_side_by_side_equals_one_network_at_a_time(cell):
    b = (0.0, 2.0) if cell == "lstm" else (None, None)
    models = [(b[0], 0, 3), (b[1], 1, 3), (b[0], 1, 6)]
    together = memory.train_stack(cell, models, steps=30, dtype="float64")
    for m, run in zip(models, together):
        alone = memory.train_stack(cell, [m], steps=30, dtype="float64")[0]
        assert (alone.seed, alone.b_f, alone.lag) == (run.seed, run.b_f, run.lag)
        assert np.allclose(alone.curve_loss, run.curve_loss, rtol=1e-10)
        assert np.allclose([alone.g1_init, alone.g1_trained], [run.g1_init, run.g1_trained],
                           rtol=1e-10)


def test_the_batched_trainer_trains_the_networks_of_the_plain_loop():
    """The agreement --agree prints, on a smaller case: train() and train_stack() in
    float64 give the same curves and gradients; float32 the same to a few digits."""
    models = [(1.0, 0, 3), (1.0, 0, 6)]
    batched = memory.train_stack("lstm", models, steps=100, dtype="float64")
    single = memory.train_stack("lstm", models, steps=100, dtype="float32")
    for (b_f, seed, lag), r64, r32 in zip(models, batched, single):
        one = memory.train("lstm", lag, seed, b_f, steps=100)
        assert np.allclose(r64.curve_loss, one.curve_loss, rtol=1e-9)
        assert r64.curve_accuracy == one.curve_accuracy
        assert np.allclose([r64.g1_init, r64.g1_trained], [one.g1_init, one.g1_trained],
                           rtol=1e-9)
        assert np.allclose(r32.curve_loss, one.curve_loss, rtol=1e-3)


def test_the_agree_report_passes_and_fails_when_the_trainers_differ(monkeypatch):
    rows = memory.compute_agreement()
    assert {r.model for r in rows} == {memory.model_name(c, b) for c, b in memory.MODELS}
    assert max(r.batched64 for r in rows) < 1e-9 < min(r.batched32 for r in rows)
    original = memory.sigmoid_

    def slightly_off(a):  # a batched trainer that is not the plain model's
        return original(a * (1 + 1e-6))
    monkeypatch.setattr(memory, "sigmoid_", slightly_off)
    assert max(r.batched64 for r in memory.compute_agreement()) > 1e-9


def test_a_short_lag_is_learned_by_every_cell():
    for cell in memory.CELLS:
        b = 0.0 if cell == "lstm" else None
        runs = memory.train_stack(cell, [(b, 0, 2), (b, 1, 2)], steps=300)
        assert all(r.accuracy > 0.95 for r in runs), (cell, [r.accuracy for r in runs])
        assert all(r.loss < 0.2 for r in runs)


def test_untrained_networks_sit_at_what_a_constant_guess_scores():
    """Chance, counted from the test answers (the best constant guess), not taken from
    the script's constant; and ln(number of answers) for the loss."""
    for cell in memory.CELLS:
        b = 0.0 if cell == "lstm" else None
        S = memory.make_stack(cell, [(b, s, 5) for s in range(3)])
        _, P = memory.stack_params(S)
        X, Y = memory.stack_sequences(S, memory.TEST)
        loss, acc = memory.stack_evaluate(S, P, X, Y)
        best_constant = max(np.mean(Y == k) for k in np.unique(Y))
        assert np.all(np.abs(acc - best_constant) < 0.08)
        assert np.all(np.abs(loss - math.log(len(np.unique(Y)))) < 0.1)


def test_training_runs_are_memoised_by_configuration():
    memory._RUNS.clear()
    first = memory.compute_training("rnn", (2,), seeds=(0,), steps=5)[2]
    again = memory.compute_training("rnn", (2,), seeds=(0,), steps=5)[2]
    assert first[0] is again[0]
    other = memory.compute_training("rnn", (2,), seeds=(0,), steps=6)[2]
    assert other[0] is not first[0]
    memory._RUNS.clear()


# ---------------------------------------------------------------- command line and records

def test_help_lists_every_report_and_option():
    result = run_cli("--help")
    assert result.returncode == 0
    for flag in list(memory.REPORTS) + ["cell", "forget-bias", "lag", "steps"]:
        assert "--" + flag in result.stdout


@pytest.mark.parametrize("args", [
    ["--lag", "5"], ["--accuracy", "--cell", "gru"], ["--gradcheck", "--steps", "9"],
    ["--agree", "--lag", "5"],
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


@pytest.mark.parametrize("args", [
    ["--row"], ["--row", "--cell", "gru"], ["--row", "--lag", "5"],
    ["--row", "--cell", "gru", "--lag", "5", "--forget-bias", "1"],
])
def test_an_incomplete_row_is_refused_in_one_line(args):
    result = run_cli(*args)
    assert result.returncode == 1 and result.stdout == ""
    assert len(result.stderr.strip().splitlines()) == 1 and "memory.py: " in result.stderr


def test_importing_has_no_side_effects():
    fresh = load_script("memory.py")
    assert fresh._RUNS == {}


def test_runs_alone_in_an_empty_folder_and_writes_nothing(tmp_path):
    copy = tmp_path / "memory.py"
    copy.write_bytes(MEMORY_PY.read_bytes())
    result = run_script(str(copy), "--task", "--gradcheck", cwd=tmp_path, timeout=120)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == run_cli("--task", "--gradcheck").stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.py"]


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
    # the printed chance is what a constant guess scores on the row's own test answers
    answers = np.concatenate([memory.test_set(s, 4)[1] for s in range(memory.SEEDS)])
    chance = max(np.mean(answers == k) for k in np.unique(answers))
    assert abs(record.chance_accuracy - chance) < 0.02
    assert f"chance {1 / len(np.unique(answers)):.2f}" in first.stdout
    assert len(record.runs) == 4 and all(r.b_f == 2.0 for r in record.runs)
    assert all(r.curve_steps == [60] for r in record.runs)
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


def test_accuracy_table_shows_mean_and_range_over_seeds_for_each_model():
    runs = []
    for cell, b_f in memory.MODELS:
        for seed, acc in enumerate([0.25, 0.5, 1.0, 0.75]):
            runs.append(memory.Run(cell, 0.0 if b_f is None else b_f, seed, 7, acc, 1.0,
                                   [1], [acc], [1.0], 1.0, 1.0, 1.0, 1.0))
    table = memory.format_accuracy_table({7: runs})
    cells = [c.strip() for c in table.splitlines()[-1].split("|")[1:-1]]
    assert cells == ["7"] + ["0.62 (0.25-1.00)"] * len(memory.MODELS)  # mean 2.5 / 4


def test_the_chance_line_is_what_a_constant_guess_scores():
    buf = io.StringIO()
    record = memory.report_task(memory.parse_args(["--task"]), memory.Printer(buf))
    Y = np.concatenate([memory.test_set(s, 50)[1] for s in range(memory.SEEDS)])
    best_constant = max(np.mean(Y == k) for k in np.unique(Y))
    assert abs(best_constant - record.chance_accuracy) < 0.03
    assert record.chance_loss == pytest.approx(math.log(len(np.unique(Y))))
    n = len(np.unique(Y))  # the symbols the answers take, counted
    uniform_loss = -np.mean(np.log(np.full(len(Y), 1 / n)))  # a uniform guess's cross-entropy
    printed = buf.getvalue().split("accuracy 1/")[1].splitlines()[0]
    assert printed.startswith(f"{n} = {1 / n:.2f}, cross-entropy ln {n} = {uniform_loss:.3f}")


def test_gradcheck_command_passes():
    result = run_cli("--gradcheck")
    assert result.returncode == 0 and "(under 1e-6)" in result.stdout


# ---------------------------------------------------------------- what the build records

def build_record(*argv):
    """The record of `python3 memory.py <argv>` as the build computed it (from the run
    cache the build filled; computed here if it is not there)."""
    from generator import contract, runs
    from generator.cache import RunCache

    module = contract.load_script("memory.py")
    run = runs.run_command(module, "memory.py", tuple(argv), (), RunCache())
    return run.records.plain()[argv[0].lstrip("-")], run.tables


def test_records_carry_every_learning_curve_and_gradient(site):
    """For chapter 15's widget (issue 19): the learning curve of every seed at every lag
    for every model (test accuracy every CURVE_EVERY steps) and g_1 before and after
    training, from the runs the page already makes; shaped like the printed tables, and
    small."""
    acc, tables = build_record("--accuracy")
    printed = [line.split("|")[1:-1] for line in tables["accuracy"].splitlines()[2:]]
    lags = [int(row[0]) for row in printed]
    assert acc["lags"] == lags and acc["models"] == [c.strip() for c in
                                                     tables["accuracy"].splitlines()[0].split("|")[2:-1]]
    steps = acc["curve_steps"]
    assert steps == list(range(100, 1501, 100))
    for name in acc["models"]:
        assert len(acc["curves"][name]) == len(lags)
        for lag_curves, finals in zip(acc["curves"][name], acc["accuracy"][name]):
            assert len(lag_curves) == len(finals) == 4  # every seed
            assert all(len(c) == len(steps) for c in lag_curves)
            assert [c[-1] for c in lag_curves] == finals  # the curve ends at the table's value
    grad, _ = build_record("--gradient")
    for field in ("g1_init", "g1_trained"):
        for name in acc["models"]:
            assert [len(seeds) for seeds in grad[field][name]] == [4] * len(lags)
    import json
    assert len(json.dumps(acc)) + len(json.dumps(grad)) < 300_000
