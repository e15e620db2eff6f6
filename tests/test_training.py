"""Tests for docs/code/training.py: the hand-written gradients, the tasks and the data, the
experiments' machinery, the command line.

The references are written here, independently of the script: finite-difference loops
of the test's own, a per-sequence LSTM written from the equations in column-vector form,
the adding problem drawn from the paper's description, d2l's preprocessing, and the
other chapters' scripts (memory.py's task and weights, gated.py's random LSTMs), which
this script must reproduce number for number.
"""

import math
import re
import shutil

import numpy as np
import pytest

from helpers import CODE, central_differences, load_script, run_script

training = load_script("training.py")
memory = load_script("memory.py")
gated = load_script("gated.py")


def sig(a):
    return 1 / (1 + np.exp(-a))


def close(a, b, tol=1e-6):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return np.abs(a - b).max() <= tol * max(1.0, np.abs(b).max())


# ----------------------------------------------------------- an independent LSTM

def reference_lstm(W_x, W_h, b, xs, h, c):
    """One sequence, column vectors, the equations of 16.1 gate by gate: W_x (d, 4n),
    W_h (n, 4n), b (4n,) in the script's layout [i, f, o, c~]. Returns every h_t and C_t."""
    n = len(h)
    hs, cs = [], []
    for x in xs:
        a = x @ W_x + h @ W_h + b
        i, f, o = sig(a[:n]), sig(a[n:2 * n]), sig(a[2 * n:3 * n])
        g = np.tanh(a[3 * n:])
        c = f * c + i * g
        h = o * np.tanh(c)
        hs.append(h)
        cs.append(c)
    return np.array(hs), np.array(cs)


def test_the_lstm_step_is_the_equations():
    rng = np.random.default_rng(3)
    M, B, n, d, T = 2, 3, 4, 5, 6
    p = {"W_x": rng.normal(0, 0.5, (M, d, 4 * n)), "W_h": rng.normal(0, 0.5, (M, n, 4 * n)),
         "b": rng.normal(0, 0.5, (M, 4 * n))}
    X = rng.normal(0, 1, (T, M, B, d))
    state = (rng.normal(0, 1, (M, B, n)), rng.normal(0, 1, (M, B, n)))
    Hs, (H_T, C_T), _ = training.forward("lstm", p, X, state)
    H = np.stack(Hs)
    for m in range(M):
        for b in range(B):
            hs, cs = reference_lstm(p["W_x"][m], p["W_h"][m], p["b"][m], X[:, m, b],
                                    state[0][m, b], state[1][m, b])
            assert close(H[:, m, b], hs, 1e-12) and close(C_T[m, b], cs[-1], 1e-12)


def test_the_gru_step_keeps_the_state_where_z_is_one():
    """d2l's convention (chapters 14 and 15): Z near 1 copies H_prev."""
    n = 3
    W_h = np.zeros((1, n, 3 * n))
    a_x = np.zeros((1, 1, 3 * n))
    a_x[..., :n] = 40.0  # the update gate's pre-activation: Z = 1
    H_prev = np.array([[[0.3, -0.2, 0.9]]])
    (H,), _ = training.gru_step(a_x, (H_prev,), W_h)
    assert np.allclose(H, H_prev)


# ----------------------------------------------------------- the gradients, checked here

def one_step_problem(seed=0, n=3, M=2, B=2):
    rng = np.random.default_rng(seed)
    W_h = rng.normal(0, 0.5, (M, n, 4 * n))
    a_x = rng.normal(0, 1, (M, B, 4 * n))
    H_prev, C_prev, u, w = (rng.normal(0, 1, (M, B, n)) for _ in range(4))
    return W_h, a_x, H_prev, C_prev, u, w


def test_each_equation_of_one_lstm_step_against_finite_differences():
    """lstm_step_back's dA (all four gates), dC_prev and dH_prev for the scalar
    L = sum(u * H_t) + sum(w * C_t), whose dL/dH_t = u and dL/dC_t = w."""
    W_h, a_x, H_prev, C_prev, u, w = one_step_problem()

    def L():
        (H, C), _ = training.lstm_step(a_x, (H_prev, C_prev), W_h)
        return float((u * H).sum() + (w * C).sum())

    _, cache = training.lstm_step(a_x, (H_prev, C_prev), W_h)
    dA, (dH_prev, dC_prev) = training.lstm_step_back((u, w), cache, W_h)
    assert close(dA, central_differences(L, a_x))
    assert close(dH_prev, central_differences(L, H_prev))
    assert close(dC_prev, central_differences(L, C_prev))


def test_the_step_jacobian_and_the_full_dC_dC_against_finite_differences():
    rng = np.random.default_rng(5)
    n = 4
    W_h = rng.normal(0, 0.6, (n, 4 * n))
    a_prev, a_x = rng.normal(0, 1, (2, 4 * n))
    (H_prev, C_prev), last = training.lstm_step(a_prev, tuple(rng.normal(0, 1, (2, n))), W_h)
    _, cache = training.lstm_step(a_x, (H_prev, C_prev), W_h)
    dC_dC, dC_dH, dH_dC, dH_dH = training.lstm_step_jacobian(cache, W_h)
    O_prev = sig(a_prev[2 * n:3 * n] + last[0] @ W_h[:, 2 * n:3 * n])  # recomputed here

    def columns(f, x):
        return np.stack([central_differences(lambda: f()[j], x) for j in range(n)])

    step = lambda H, C: training.lstm_step(a_x, (H, C), W_h)[0]  # noqa: E731
    assert close(dC_dC, columns(lambda: step(H_prev, C_prev)[1], C_prev))
    assert close(dC_dH, columns(lambda: step(H_prev, C_prev)[1], H_prev))
    assert close(dH_dC, columns(lambda: step(H_prev, C_prev)[0], C_prev))
    assert close(dH_dH, columns(lambda: step(H_prev, C_prev)[0], H_prev))
    C = C_prev.copy()  # the full dC_t/dC_{t-1}: H_{t-1} = O_{t-1} tanh(C_{t-1}), O held
    full = columns(lambda: step(O_prev * np.tanh(C), C)[1], C)
    route = dC_dH * (O_prev * (1 - np.tanh(C_prev) ** 2))[None, :]
    assert close(dC_dC + route, full)
    assert not close(dC_dC, full)  # the route is not nothing


def sequence_problem(cell, task, seed=1, T=5, M=2, B=3, n=3, V=4):
    rng = np.random.default_rng(seed)
    G = training.CELLS[cell][2]
    d = 2 if task == "adding" else V
    out = 1 if task == "adding" else V
    p = {"W_x": rng.normal(0, 0.5, (M, d, G * n)), "W_h": rng.normal(0, 0.5, (M, n, G * n)),
         "b": rng.normal(0, 0.5, (M, G * n)), "W_y": rng.normal(0, 0.5, (M, n, out)),
         "b_y": rng.normal(0, 0.5, (M, out))}
    if task == "adding":
        X, Y = rng.normal(0, 1, (T, M, B, 2)), rng.normal(0, 1, (M, B))
    else:
        X = rng.integers(0, V, (T, M, B))
        Y = rng.integers(0, V, (T, M, B) if task == "text" else (M, B))
    state = tuple(rng.normal(0, 0.5, (M, B, n)) for _ in range(training.CELLS[cell][3]))
    return p, X, Y, state


def loss_by_hand(cell, p, X, Y, state, task):
    """The loss from the test's own forward over the script's step (no script loss code):
    softmax cross-entropy or squared error, mean per model, summed over models."""
    T, M, B = X.shape[:3]
    if X.dtype.kind in "iu":
        A = np.take_along_axis(p["W_x"][None], X[..., None], axis=2) + p["b"][None, :, None, :]
    else:
        A = X @ p["W_x"] + p["b"][None, :, None, :]
    Hs = []
    for t in range(T):
        state, _ = training.CELLS[cell][0](A[t], state, p["W_h"])
        Hs.append(state[0])
    H = np.stack(Hs)
    if task == "adding":
        y = (H[-1] @ p["W_y"])[..., 0] + p["b_y"]
        return float(((y - Y) ** 2).mean(axis=1).sum())
    Z = (H if task == "text" else H[-1:]) @ p["W_y"] + p["b_y"][:, None, :]
    Yt = Y if task == "text" else Y[None]
    logp = Z - Z.max(-1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(-1, keepdims=True))
    picked = np.take_along_axis(logp, Yt[..., None], axis=-1)[..., 0]
    return float(-picked.mean(axis=(0, 2)).sum())


@pytest.mark.parametrize("cell,task", [("lstm", "text"), ("lstm", "recall"), ("lstm", "adding"),
                                       ("gru", "recall"), ("gru", "adding"),
                                       ("tanh", "recall"), ("relu", "recall")])
def test_backpropagation_through_time_against_finite_differences(cell, task):
    p, X, Y, state = sequence_problem(cell, task)
    if task == "text":
        _, _, g = training.every_step_loss(cell, p, X, Y, state)
    else:
        _, _, g = training.last_step_loss(cell, p, X, Y, state=state)
    for name, w in p.items():
        numeric = central_differences(lambda: loss_by_hand(cell, p, X, Y, state, task), w)
        assert close(g[name], numeric, 1e-6), (cell, task, name)


def test_truncation_is_the_gradient_with_the_state_at_the_cut_held():
    """keep = 0 at step `cut`: the gradient of the steps before the cut as they are, plus
    the steps from the cut on computed from a state that does not move."""
    cell, task, cut = "lstm", "text", 2
    p, X, Y, state = sequence_problem(cell, task, seed=4)
    T, M, B = X.shape
    keep = np.ones((T, M, B, 1))
    keep[cut] = 0
    _, _, g = training.every_step_loss(cell, p, X, Y, state, keep)
    held = training.forward(cell, p, X[:cut], state)[1]
    held = tuple(s.copy() for s in held)

    def L():
        first = loss_by_hand(cell, p, X[:cut], Y[:cut], state, task) * cut / T
        rest = loss_by_hand(cell, p, X[cut:], Y[cut:], held, task) * (T - cut) / T
        return first + rest

    for name, w in p.items():
        assert close(g[name], central_differences(L, w), 1e-6), name
    _, _, full = training.every_step_loss(cell, p, X, Y, state)
    assert not close(g["W_h"], full["W_h"])


def test_a_cut_after_the_query_step_leaves_the_first_symbols_rows_untrained():
    """Truncated at k = 1 on the recall task, no gradient reaches the rows of W_x that
    only the first step reads (the symbols), and every row of the query's does."""
    p = training.recall_init("lstm", (0,), 2.0)
    X, Y = training.recall_batch([np.random.default_rng(9)], 16, 6)
    keep = training.truncation_keep((1,), X.shape[0], (0,))
    _, _, g = training.last_step_loss("lstm", p, X, Y, keep)
    assert np.all(g["W_x"][0, :training.K] == 0)
    assert np.all(g["W_x"][0, training.K:training.QUERY] == 0)  # distractors: not the last step
    assert np.any(g["W_x"][0, training.QUERY] != 0)
    _, _, full = training.last_step_loss("lstm", p, X, Y)
    assert np.any(full["W_x"][0, :training.K] != 0)


@pytest.mark.parametrize("lag,ks", [(10, (1, 2, 4, 8, 11)), (5, (1, 2, 4, 6)), (7, (1, 2, 4, 8)),
                                    (2, (1, 2, 3)), (200, (1, 2, 4, 8, 16, 32, 64, 128, 201))])
def test_the_truncations_are_the_powers_of_two_below_the_sequence_then_all_of_it(lag, ks):
    assert training.truncation_ks(lag) == ks


def test_every_lags_truncations_are_sorted_unique_and_end_with_the_whole_sequence():
    for lag in range(2, 201):
        ks = training.truncation_ks(lag)
        assert list(ks) == sorted(set(ks)) and ks[-1] == lag + 1, lag
        assert all(k & (k - 1) == 0 and k < lag + 1 for k in ks[:-1]), lag
        assert 2 * ks[-2] >= lag + 1 and len(ks) <= 9, lag  # every power below, no more


def test_at_k_the_whole_sequence_truncation_is_training_untruncated():
    """The run at k = lag + 1, trained side by side with a truncated one, is number for
    number the same training with no keep at all, its curve the block means of its losses;
    the run at k = 1 is not. Its keep is all ones, k = 1's is not."""
    lag, seeds, steps, every = 3, (0, 1), 12, 4
    T, S = lag + 1, len(seeds)
    keep = training.truncation_keep((1, T), T, seeds)
    assert keep[:, S:].all() and not keep[:, :S].all()
    accuracy, loss, curves = training.compute_truncation(
        lag, ks=(1, T), models=(("gru", 0.0),), steps=steps, seeds=seeds, every=every)
    p = {n: w.astype(np.float32) for n, w in training.recall_init("gru", seeds).items()}
    run = training.train_recall("gru", p, lag, list(seeds), steps, losses=True)
    assert accuracy["GRU"][1] == run.accuracy and loss["GRU"][1] == run.loss
    blocks = np.array(run.losses).reshape(steps // every, every, S).mean(axis=1)
    assert curves["GRU"][1] == blocks.tolist()
    assert loss["GRU"][0] != run.loss


def test_the_scripts_own_gradient_check_passes_and_covers_every_cell():
    rows = training.compute_gradcheck()
    assert max(r.relative_error for r in rows) < 1e-6
    text = " ".join(r.what for r in rows)
    for name in ("LSTM", "GRU", "tanh", "ReLU", "truncated"):
        assert name in text


# ----------------------------------------------------------- the tasks and the data

@pytest.mark.parametrize("lag", [10, 50])
def test_the_recall_sequences_are_chapter_15s_seed_for_seed(lag):
    """The training stream and the test set are memory.py's, batch after batch."""
    seeds = (0, 1, 2, 3)

    def theirs(draw):  # memory.py's sequences of each seed, stacked as recall_batch stacks
        batches = [draw(s) for s in seeds]  # each (n, lag + 1) and (n,)
        return np.stack([x.T for x, _ in batches], axis=1), np.stack([y for _, y in batches])

    mine = [np.random.default_rng([training.DATA_KEY, s, lag]) for s in seeds]
    streams = [memory.training_stream(s, lag) for s in seeds]
    for _ in range(3):
        X, Y = training.recall_batch(mine, training.RECALL_BATCH, lag)
        X15, Y15 = theirs(lambda s: memory.make_sequences(streams[s], memory.BATCH, lag))
        assert np.array_equal(X, X15) and np.array_equal(Y, Y15)
    tests = [np.random.default_rng([training.TEST_KEY, s, lag]) for s in seeds]
    X, Y = training.recall_batch(tests, training.RECALL_TEST, lag)
    X15, Y15 = theirs(lambda s: memory.test_set(s, lag))
    assert np.array_equal(X, X15) and np.array_equal(Y, Y15)


def test_the_recall_setting_is_chapter_15s():
    assert (training.K, training.D, training.V, training.QUERY) == \
        (memory.K, memory.D, memory.V, memory.QUERY)
    assert (training.RECALL_HIDDEN, training.RECALL_BATCH, training.RECALL_STEPS,
            training.RECALL_TEST) == (memory.h, memory.BATCH, memory.STEPS, memory.TEST)
    assert training.SEEDS == tuple(range(memory.SEEDS)) and training.ADAM_LR == memory.LR
    assert training.INIT_LAGS[0] == memory.LAGS[3] == 50  # the page quotes memory.py's index 3


@pytest.mark.parametrize("cell,bias", [("tanh", None), ("lstm", 2.0), ("gru", None)])
def test_the_initial_weights_are_chapter_15s(cell, bias):
    seeds = (0, 3)
    mine = training.recall_init(cell, seeds, bias or 0.0)
    name = {"tanh": "rnn"}.get(cell, cell)
    theirs = [memory.init_params(name, s, bias or 0.0) for s in seeds]  # one dict a seed

    def stacked(prefix):  # memory.py's gates side by side, seed by seed, as training.py's
        return np.stack([np.concatenate([p[prefix + g] for g in memory.GATES[name]], axis=-1)
                         for p in theirs])

    assert np.array_equal(mine["W_x"], stacked("W_x"))
    assert np.array_equal(mine["W_h"], stacked("W_h"))
    assert np.array_equal(mine["b"], stacked("b_"))
    assert np.array_equal(mine["W_y"], np.stack([p["W_hq"] for p in theirs]))


def test_the_plain_rnn_starts_differ_only_in_U():
    base = training.plain_rnn_init((0, 1), "random")
    for kind in ("identity", "orthogonal"):
        other = training.plain_rnn_init((0, 1), kind)
        for name in ("W_x", "b", "W_y", "b_y"):
            assert np.array_equal(base[name], other[name])
        for U in other["W_h"]:
            assert np.allclose(U.T @ U, np.eye(len(U)), atol=1e-12)  # orthogonal (I too)
    assert np.array_equal(training.plain_rnn_init((0,), "identity")["W_h"][0], np.eye(16))
    U = training.plain_rnn_init((0,), "orthogonal", radius=2.0)["W_h"][0]
    assert math.isclose(np.abs(np.linalg.eigvals(U)).max(), 2.0, rel_tol=1e-9)


def test_the_adding_problem_is_the_papers():
    rng = np.random.default_rng(0)
    T = 100
    for length in (100, 105, 110):
        X, y = training.make_adding(rng, 500, T, length)
        assert X.shape == (500, length, 2)
        values, markers = X[..., 0], X[..., 1]
        assert np.all(np.abs(values) <= 1)
        marked = markers == 1
        assert np.all(marked.sum(axis=1) == 2)  # exactly two pairs marked
        first = marked.argmax(axis=1)
        second = length - 1 - marked[:, ::-1].argmax(axis=1)
        assert np.all(first < 10) and np.all(second < T // 2 - 1)  # the paper's ranges
        others = ~marked
        assert np.all(markers[:, -1] == -1)
        assert np.all((markers[:, 0] == -1) | marked[:, 0])
        assert np.all(markers[:, 1:-1][others[:, 1:-1]] == 0)
        x1 = values[np.arange(500), first]
        x2 = values[np.arange(500), second]
        at_start = marked[:, 0]  # the first pair marked: one of the two values is zero
        assert np.all((x1 == 0) | (x2 == 0) | ~at_start)
        assert np.allclose(y, 0.5 + (x1 + x2) / 4)
        assert np.any(at_start) and np.all((x1 != 0) & (x2 != 0) | at_start)


def test_the_chance_error_is_predicting_the_mean():
    """Measured on many sequences, not from the script's formula: MSE of always 0.5."""
    _, y = training.make_adding(np.random.default_rng(1), 200_000, 100, 100)
    assert abs(y.mean() - 0.5) < 0.002
    mse = ((y - 0.5) ** 2).mean()
    assert abs(mse - training.adding_chance(100)) < 0.0004
    assert abs(mse - 1 / 24) > 0.001  # X_1 zeroed in about one case in eight: below 1/24


def test_the_text_is_d2ls_preprocessing():
    raw = (CODE / "timemachine.txt").read_text("utf-8", "replace")
    expected = re.sub("[^A-Za-z]+", " ", raw).lower()
    ids = training.read_text()
    assert len(ids) == len(expected)
    vocab = training.TEXT_VOCAB
    assert "".join(vocab[i] for i in ids[:5000]) == expected[:5000]
    assert vocab[1] == "<unk>" and 1 not in set(ids.tolist())


def test_sequential_windows_follow_each_other_and_random_ones_do_not_overlap():
    tokens = np.arange(5000)  # positions stand for themselves
    batches = training.TextBatches(tokens, np.random.default_rng(2), 8, 4)
    X1, Y1, new = batches.next("sequential")
    X2, _, again = batches.next("sequential")
    assert new and not again
    assert np.array_equal(X2[0], X1[-1] + 1)  # each stream goes on where it stopped
    assert np.array_equal(Y1, X1 + 1)
    starts = set()
    first = True
    while True:
        X, Y, new = batches.next("random")
        if new and not first:
            break
        first = False
        assert np.array_equal(Y, X + 1)
        for col in X.T:
            assert not (set(col.tolist()) & starts)
            starts |= set(col.tolist())


def test_randomized_truncation_is_unbiased():
    keep = training.text_keep((("sequential", "random"),), (0,), np.random.default_rng(0),
                              T=64, B=2000)
    assert abs(keep.mean() - 1) < 0.01
    assert abs((keep == 0).mean() - 1 / training.RANDOM_MEAN) < 0.005


def test_the_jacobian_lstms_are_chapter_13s():
    """The same weights and inputs as gated.py --measure, and the same full Jacobian."""
    ours = training.compute_jacobian(1.0)
    theirs = gated.compute_cell_gradient(1.0)
    k = training.JACOBIAN_DISTANCE
    assert math.isclose(ours.full, theirs.full[k - 1], rel_tol=1e-9)
    assert math.isclose(ours.path_best, theirs.path_max[k - 1], rel_tol=1e-9)


def test_the_clip_rows_without_clipping_never_reach_the_threshold():
    rows = training.compute_clip(radii=(0.5,), steps=20)
    assert rows[0].accuracy == rows[1].accuracy and rows[0].loss == rows[1].loss
    assert rows[0].largest_norm < training.CLIP_THRESHOLD
    big = training.compute_clip(radii=(2.0,), steps=20)
    assert big[0].first_norm > training.CLIP_THRESHOLD and big[1].loss != big[0].loss


# ----------------------------------------------------------- the command line

@pytest.mark.parametrize("args", [["--truncation", "--lag", "1"], ["--truncation", "--lag", "201"],
                                  ["--text", "--updates", "0"], ["--text", "--updates", "5001"],
                                  ["--init", "--lags", "x"], ["--init", "--lags", "1,50"],
                                  ["--init", "--lags", "1,2,3,4,5,6,7,8,9"],
                                  ["--clip", "--threshold", "0"], ["--adding", "--length", "19"],
                                  ["--adding", "--sequences", "100"], ["--jacobian", "--lag", "5"],
                                  ["--jacobian", "--updates", "5"], ["--adding", "--cell", "rnn"]])
def test_bad_options_are_argparse_errors(args):
    result = run_script("training.py", *args)
    assert result.returncode == 2 and "error:" in result.stderr and "Traceback" not in result.stderr


def test_the_input_bias_is_refused_for_the_gru():
    result = run_script("training.py", "--adding", "--cell", "gru", "--input-bias", "-3")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert result.stderr.strip() == ("training.py: --input-bias is the LSTM's input gate: it has "
                                     "no effect with --cell gru")


@pytest.mark.parametrize("args,says", [
    (["--adding", "--length", "1000", "--sequences", "200000"], "over an hour"),
    (["--init", "--steps", "20000", "--lags", "50,100"], "over ten minutes")])
def test_runs_that_would_take_too_long_are_refused(args, says):
    result = run_script("training.py", *args)
    assert result.returncode == 1 and says in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_a_missing_text_is_one_line(tmp_path):
    shutil.copy(CODE / "training.py", tmp_path / "training.py")
    result = run_script(str(tmp_path / "training.py"), "--text", "--updates", "1", cwd=tmp_path)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "timemachine.txt" in result.stderr


def test_the_same_command_prints_the_same():
    first = run_script("training.py", "--gradcheck", "--jacobian")
    second = run_script("training.py", "--gradcheck", "--jacobian")
    assert first.returncode == 0 and first.stdout == second.stdout
