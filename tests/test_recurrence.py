"""recurrence.py (chapter 18) against references written here: the closed form of the
linear recurrence summed term by term, the minGRU and minLSTM recurrences in the paper's
own convention, causal linear attention as a double loop, chapter 15's own recall
sequences (memory.py), and central differences for every hand-written gradient. Then the
sentences of the page that read its tables, against the numbers the built page shows."""

import math
import re

import numpy as np
import pytest

from helpers import central_differences, html_command_tables, load_script, page_html, page_text

rec = load_script("recurrence.py")
PAGE = "ch18-recurrence.md"


def closed_form(a, b):
    """h_t = sum_{s <= t} (prod_{s < r <= t} a_r) b_s, term by term: no recurrence."""
    T = len(b)
    H = np.zeros_like(b)
    for t in range(T):
        for s in range(t + 1):
            H[t] += np.prod(a[s + 1:t + 1], axis=0) * b[s]
    return H


@pytest.mark.parametrize("T", [1, 2, 3, 5, 8, 13, 64, 100])
@pytest.mark.parametrize("low", [-1.0, 0.5])
def test_the_scan_and_the_loop_are_the_closed_form(T, low):
    rng = np.random.default_rng([T, int(low * 10) + 20])
    a, b = rng.uniform(low, 1, (T, 3, 2)), rng.standard_normal((T, 3, 2))
    H = closed_form(a, b)
    assert np.abs(rec.scan_loop(a, b) - H).max() <= 1e-12
    assert np.abs(rec.scan_blelloch(a, b)[0] - H).max() <= 1e-12
    if low > 0:
        assert np.abs(rec.scan_log(a, b) - H).max() <= 1e-12


def test_the_scan_counts_its_work_and_depth():
    """Blelloch: 2 (n - 1) compositions up and down the tree, T more to finish, and
    2 log2 n + 1 rounds, n being T rounded up to a power of two."""
    for T in (1, 2, 8, 100, 1024):
        n = 1 << max(0, (T - 1).bit_length())
        _, work, depth = rec.scan_blelloch(np.ones(T), np.zeros(T))
        assert (work, depth) == (2 * (n - 1) + T, 2 * int(math.log2(n)) + 1)


def test_the_log_form_refuses_a_decay_that_is_not_positive():
    with pytest.raises(ValueError):
        rec.scan_log(np.array([0.5, -0.1]), np.array([1.0, 1.0]))


def test_the_backward_scan_is_the_gradient_of_the_recurrence():
    """dL/db_t of L = sum_t g_t . h_t, by central differences."""
    rng = np.random.default_rng(4)
    a, b, g = rng.uniform(-1, 1, (9, 2)), rng.standard_normal((9, 2)), rng.standard_normal((9, 2))
    for scan in (rec.scan_loop, rec.scan_blelloch):
        numerical = central_differences(lambda: float((g * rec.scan_loop(a, b)).sum()), b)
        assert np.abs(rec.scan_backward(a, g, scan) - numerical).max() < 1e-8


def paper_states(cell, p, X):
    """minGRU and minLSTM as Feng et al. write them, one network (m = 0), one step at a
    time: h_t = (1 - z_t) h_{t-1} + z_t h~_t, z_t the share of the new candidate, and
    minLSTM's f'_t = f_t / (f_t + i_t), i'_t = i_t / (f_t + i_t)."""
    lin = {g: p["W_x" + g][0][X[:, 0]] + p["b_" + g][0] for g in rec.GATES[cell]}
    sig = lambda x: 1 / (1 + np.exp(-x))
    h = np.zeros(lin["h"].shape[1:])
    out = []
    for t in range(len(X)):
        if cell == "mingru":
            z = 1 - sig(lin["z"][t])  # the paper's z is this site's 1 - Z
            h = (1 - z) * h + z * lin["h"][t]
        else:
            f, i = sig(lin["f"][t]), sig(lin["i"][t])
            h = f / (f + i) * h + i / (f + i) * lin["h"][t]
        out.append(h)
    return np.array(out)


@pytest.mark.parametrize("cell", ["mingru", "minlstm"])
def test_the_cells_are_the_papers_recurrences(cell):
    p = rec.init_params(cell, rec.RECALL.V, 5, rec.R_K, (3,))
    rng = np.random.default_rng(5)
    for w in p.values():
        w[...] = rng.normal(0, 1, w.shape)
    X, _ = rec.draw_stacked(rec.RECALL.draw, [rng], 4, 12)
    a, b, _ = rec.decay_and_input(p, cell, X)
    assert np.abs(rec.scan_blelloch(a, b)[0][:, 0] - paper_states(cell, p, X)).max() < 1e-12


def test_the_timed_gru_is_chapter_14s():
    """18.1 times chapter 14's cell: its states are gru.py's, step for step (gru.py's
    forward, its weights stacked in d2l's gate order z, r, h)."""
    gru = load_script("gru.py")
    p = rec.gru_params(6, 4, seed=3, scale=0.7)
    rng = np.random.default_rng(11)
    for g in "rzh":
        p["b_" + g][...] = rng.normal(0, 0.5, 4)
    X = rng.integers(0, 6, (9, 5))
    H, _ = rec.gru_forward(p, X, {"at once": 0.0, "waits": 0.0})
    theirs = {"W_x": np.stack([p["W_x" + g] for g in "zrh"]),
              "W_h": np.stack([p["W_h" + g] for g in "zrh"]),
              "b": np.stack([p["b_" + g] for g in "zrh"])}
    Hs, _, _ = gru.forward(theirs, "gru", X, (np.zeros((5, 4)),))
    assert np.abs(H[1:] - Hs).max() < 1e-14
    assert not H[0].any()


def test_the_timed_gru_backward_against_central_differences():
    p = rec.gru_params(5, 3, seed=4, scale=0.9)
    rng = np.random.default_rng(12)
    X, dH_out = rng.integers(0, 5, (7, 4)), rng.normal(0, 1, (7, 4, 3))
    clock = {"at once": 0.0, "waits": 0.0}
    H, cache = rec.gru_forward(p, X, clock)
    grads = rec.gru_backward(p, X, H, cache, dH_out, clock)
    assert clock["at once"] > 0 and clock["waits"] > 0
    for name, w in p.items():
        numerical = central_differences(
            lambda: float((dH_out * rec.gru_forward(p, X, clock)[0][1:]).sum()), w)
        scale = max(np.abs(numerical).max(), 1e-3)
        assert np.abs(grads[name] - numerical).max() / scale < 1e-7, name


@pytest.mark.parametrize("cell", sorted(rec.GATES))
def test_every_gradient_against_central_differences(cell):
    """The tests' own check (the page's table is the script's): two networks side by
    side, the loss their sum, every parameter."""
    task = {"pos": rec.PARITY, "neg": rec.PARITY, "fixed": rec.SELECTIVE,
            "selective": rec.SELECTIVE}.get(cell, rec.RECALL)
    p = rec.init_params(cell, task.V, 4, task.heads * task.K, (7, 8))
    rng = np.random.default_rng(6)
    for w in p.values():
        w[...] = rng.normal(0, 0.8, w.shape)
    X, Y = rec.draw_stacked(task.draw, [rng, rng], 5, 7)
    _, _, grads = rec.loss_and_grads(p, cell, X, Y, rec.scan_blelloch)
    for name, w in p.items():
        numerical = central_differences(
            lambda: float(rec.loss_and_grads(p, cell, X, Y, need_grads=False)[0].sum()), w)
        scale = max(np.abs(numerical).max(), 1e-3)
        assert np.abs(grads[name] - numerical).max() / scale < 1e-6, (cell, name)


def test_networks_side_by_side_train_as_they_would_alone():
    both, _ = rec.train("minlstm", rec.RECALL, 6, (0, 1), 30, 1e-2, 4, 8)
    alone, _ = rec.train("minlstm", rec.RECALL, 6, (1,), 30, 1e-2, 4, 8)
    for k in alone:
        assert np.abs(both[k][1] - alone[k][0]).max() < 1e-12


@pytest.mark.parametrize("lag", [5, 20])
def test_the_recall_sequences_are_chapter_15s(lag):
    """Each stream as train() and test_accuracy() seed it, against memory.py's own
    training_stream and test_set: the same tokens, so the same sequences."""
    memory = load_script("memory.py")
    for seed in (0, 3):
        X, Y = rec.draw_recall(np.random.default_rng([rec.DATA_KEY, seed, lag]), 64, lag)
        X15, Y15 = memory.make_sequences(memory.training_stream(seed, lag), 64, lag)
        assert np.array_equal(X.T, X15) and np.array_equal(Y[:, 0], Y15)
        X, Y = rec.draw_recall(np.random.default_rng([rec.TEST_KEY, seed, lag]), memory.TEST,
                               lag)
        X15, Y15 = memory.test_set(seed, lag)
        assert np.array_equal(X.T, X15) and np.array_equal(Y[:, 0], Y15)


def test_the_parity_and_selective_tasks_answer_what_they_ask():
    rng = np.random.default_rng(9)
    X, Y = rec.draw_parity(rng, 50, 12)
    assert np.array_equal(Y[:, 0], [sum(col) % 2 for col in X.T])
    X, Y = rec.draw_selective(rng, 50, rec.S_LENGTH)
    for x, y in zip(X.T, Y):
        assert list(x[x != rec.S_NOISE]) == list(y)  # the tokens, in order, and no others


def test_linear_attention_is_a_double_loop():
    Q, K, V = rec.random_qkv(2, 20, 3)
    phi = lambda x: np.where(x > 0, x + 1, np.exp(x))  # elu + 1
    Y = np.array([sum(phi(Q[t]) @ phi(K[s]) * V[s] for s in range(t + 1))
                  / sum(phi(Q[t]) @ phi(K[s]) for s in range(t + 1)) for t in range(20)])
    for form in (rec.attention_all_at_once, rec.attention_running_sum, rec.attention_by_scan):
        assert np.abs(form(Q, K, V) - Y).max() <= 1e-12


def test_the_printed_checks_pass():
    assert rec.compute_scan_equal().passed
    assert rec.compute_attention_equal().passed


# -- the page's sentences, against the numbers the built page shows ------------------

SPREAD = re.compile(r"([0-9.]+) \(([0-9.]+)-([0-9.]+)\) (\d+)/(\d+)")


def table(command, column=None):
    """The page's first table under `command`, or the first with a column so named."""
    found = [rows for cmd, rows in html_command_tables(page_html(PAGE))
             if cmd == command and (column is None or column in rows[0])]
    assert found, f"{PAGE} shows no table under `{command}`"
    header, *body = found[0]
    return header, body


def experiment(command, column):
    """{column: {first cell: (mean, low, high, solved, seeds)}} of the table with a
    column so named."""
    header, body = table(command, column)
    out = {}
    for j, name in enumerate(header[1:], 1):
        out[name] = {}
        for row in body:
            m = SPREAD.fullmatch(row[j])
            assert m, row[j]
            mean, low, high, solved, seeds = m.groups()
            out[name][row[0]] = (float(mean), float(low), float(high), int(solved), int(seeds))
    return out


def test_page_every_row_of_the_loop_table_is_the_same_characters_in_more_steps(site):
    """18.1: "Every row does the same arithmetic; only the number of steps it is cut
    into changes", and the windows grow fewer as T grows (the table's second column)."""
    header, body = table("python3 recurrence.py --loop")
    assert header[:2] == ["T", "windows"], header
    T, windows = ([int(r[j].replace(",", "")) for r in body] for j in (0, 1))
    assert len(set(t * w for t, w in zip(T, windows))) == 1
    assert T == sorted(T) and windows == sorted(windows, reverse=True) and T[0] == 32
    assert windows[0] == 1024  # chapter 14's batch at chapter 14's window


def test_page_the_scan_equals_the_loop_and_the_log_form_drifts_with_T(site):
    header, body = table("python3 recurrence.py --scan", "relative to max abs h_t")
    rel = {(r[0], r[1], int(r[2].replace(",", ""))): float(r[5].replace(" ", "").replace(
        "×10", "e").replace("−", "-")) for r in body}
    assert max(rel.values()) <= 1e-12  # "equal ... to rounding"
    log = [v for (form, _, T), v in sorted(rel.items(), key=lambda kv: kv[0][2])
           if form == "log-space cumsum"]
    assert log == sorted(log) and log[-1] > 10 * log[0]  # "its error grows with T"


def test_page_parity_separates_the_ranges_and_falls_with_length(site):
    e = experiment("python3 recurrence.py --parity", "length")
    pos, neg = e["decay in (0, 1)"], e["decay in (-1, 1)"]
    assert all(abs(v[0] - 0.5) < 0.05 for v in pos.values())  # "stays at chance"
    assert neg["10"][3] == neg["10"][4]  # "learns parity at the trained length ... every seed"
    assert neg["10"][1] > max(v[2] for v in pos.values())  # every seed above every (0, 1) seed
    means = [neg[k][0] for k in ("10", "20", "40", "80", "160")]
    assert means == sorted(means, reverse=True) and means[-1] < 0.7  # "falls as ... longer"


def test_page_chapter_14s_gru_learns_parity_and_falls_more_slowly_than_the_decay(site):
    """18.4: the GRU "learns the trained length in every seed too, and its accuracy
    also falls as the strings grow; but it falls more slowly than the decay in (-1, 1),
    above it at every length past the trained one"."""
    e = experiment("python3 recurrence.py --parity", "length")
    gru, neg = e["GRU (chapter 14)"], e["decay in (-1, 1)"]
    assert gru["10"][3] == gru["10"][4]
    means = [gru[k][0] for k in ("10", "20", "40", "80", "160")]
    assert means == sorted(means, reverse=True) and means[-1] < means[0]
    assert all(gru[k][0] > neg[k][0] for k in ("20", "40", "80", "160"))


def test_page_the_mingru_trains_chapter_14s_budget_and_ends_well_above_its_gru(site):
    """18.3: the minGRU on chapter 14's recipe "and its budget"; the gap to chapter 14's
    GRU "is wide" (more than a point of perplexity), in the GRU's favour."""
    text = page_text(PAGE)
    m = re.search(r"its budget, (\d+) epochs.*?validation perplexity is ([0-9.]+)\. "
                  r"Chapter 14's GRU, with ([0-9,]+) parameters to the minGRU's ([0-9,]+), "
                  r"ended at ([0-9.]+) after its (\d+)\.", text)
    assert m, "18.3's paragraph on the character model is not as this test reads it"
    epochs, mingru, gru_params, mingru_params, gru, gru_epochs = m.groups()
    assert epochs == gru_epochs
    assert float(mingru) > float(gru) + 1
    assert int(mingru_params.replace(",", "")) < int(gru_params.replace(",", ""))
    ch14 = re.search(r"validation perplexity of ([0-9.]+) after (\d+) epochs",
                     page_text("ch14-gru-lm.md"))
    assert ch14.groups() == (gru, gru_epochs)  # the number chapter 14 shows


def test_page_selective_copying_needs_the_input_dependent_decay(site):
    e = experiment("python3 recurrence.py --selective", "length")
    (fixed,), (selective,) = e["decay fixed in time"].values(), e["decay from the input"].values()
    assert fixed[3] == 0 and 0.5 < fixed[1] and fixed[2] < 0.99  # "well above chance, short"
    assert selective[3] == selective[4]  # "solved in every seed"


def test_page_recall_gates_at_one_half_reach_lag_10_and_b_z_2_reaches_50(site):
    e = experiment("python3 recurrence.py --recall", "lag")
    for name in ("minGRU", "minLSTM"):  # "learn lags 5 and 10 in every seed, and from lag
        for lag in ("5", "10"):          # 20 on neither gets past chance in any seed"
            assert e[name][lag][3] == e[name][lag][4]
        for lag in ("20", "50", "100"):
            assert e[name][lag][3] == 0 and e[name][lag][2] < 0.35
    b_z = e["minGRU b_z=2"]
    assert all(b_z[lag][3] == b_z[lag][4] for lag in ("5", "10", "20", "50"))  # "every seed"
    assert b_z["100"][3] == 0 and b_z["100"][2] < 0.35  # "back at chance"


def test_page_the_cells_have_about_a_third_of_the_parameters(site):
    _, body = table("python3 recurrence.py --recall", "cell")
    params = {row[0]: int(row[1].replace(",", "")) for row in body}
    assert 0.25 < params["minGRU"] / params["GRU (chapter 15)"] < 0.36
    assert 0.25 < params["minLSTM"] / params["LSTM (chapter 15)"] < 0.36


def numbers(command, column):
    _, body = table(command, column)
    return [[float(c.replace(",", "")) for c in row] for row in body]


def test_page_on_one_core_the_log_form_is_the_slowest_at_every_length(site):
    """18.2: 'The log form ... is the slowest at every length' (measured times)."""
    for T, loop, scan, log in numbers("python3 recurrence.py --scan", "loop (ms)"):
        assert log > max(loop, scan), (T, loop, scan, log)


def test_page_attention_costs_grow_for_one_form_only(site):
    """18.6: multiplications per token grow with T all at once and stay put as a running
    sum; in numpy's microseconds the all-at-once form is the faster at these sizes."""
    rows = numbers("python3 recurrence.py --attention", "T")
    assert [r[1] for r in rows] == sorted(r[1] for r in rows) and rows[-1][1] > 4 * rows[0][1]
    assert len({r[2] for r in rows}) == 1
    assert all(r[4] < r[5] for r in rows)


def test_page_the_build_trains_with_the_loops_which_were_the_cheaper(site):
    """18.3: 'numpy's loop was the cheaper, in the run above' (the two CPU times quoted
    in that sentence of the built page)."""
    from bs4 import BeautifulSoup
    text = " ".join(BeautifulSoup(page_html(PAGE), "html.parser").get_text(" ").split())
    m = re.search(r"the scans took ([0-9.]+) CPU seconds against ([0-9.]+) for the loops", text)
    assert m, "the sentence is not on the page"
    assert float(m.group(2)) < float(m.group(1))
