"""Chapter 15's prose reads its tables ("the GRU learns lag 20 in every seed and lag 50 in
none"); the tables are computed at build time, the prose is written by hand. Each claim is
checked here against the table the built page shows, so that a change of the experiment
that turns a sentence false fails the build's tests instead of publishing it."""

import re

import pytest

from helpers import html_command_tables, page_html

PAGE = "ch15-memory.md"
LEARNED = 0.95  # a seed has learned (the page's own threshold: generator/chapters/ch15)
MODELS = ["plain RNN", "LSTM b_f=0", "LSTM b_f=1", "LSTM b_f=2", "GRU"]


def shown(command):
    """{row key: {model: (mean, lowest, highest)}} of the table under `command`."""
    tables = [rows for cmd, rows in html_command_tables(page_html(PAGE)) if cmd == command]
    assert len(tables) == 1, f"{PAGE} shows {len(tables)} tables under `{command}`"
    header, *body = tables[0]
    models = [h.replace("$", "") for h in header[1:]]
    assert models == MODELS, header
    table = {}
    for key, *cells in body:
        parsed = [re.fullmatch(r"([0-9.]+) \(([0-9.]+)-([0-9.]+)\)", c) for c in cells]
        assert all(parsed), cells
        table[int(key.replace(",", ""))] = {
            m: tuple(float(x) for x in p.groups()) for m, p in zip(MODELS, parsed)}
    return table


@pytest.fixture(scope="module")
def accuracy(site):
    return shown("python3 memory.py --accuracy")


@pytest.fixture(scope="module")
def curves(site):
    return shown("python3 memory.py --curves")


def every_seed(cell):
    return cell[1] >= LEARNED


def some_seed(cell):
    return cell[2] >= LEARNED


def test_at_lag_20_the_plain_rnn_and_the_unbiased_lstm_fail_where_two_gated_cells_learn(
        accuracy):
    """15.2 and 15.5: 'at lag 20 the plain RNN and the LSTM without a forget-gate bias are
    near chance, or stuck at partial solutions, while the GRU and the LSTM with b_f = 2 have
    learned the task in every seed'."""
    at20 = accuracy[20]
    for model in ("plain RNN", "LSTM b_f=0"):
        assert not some_seed(at20[model]) and at20[model][0] < 0.5, (model, at20[model])
    for model in ("GRU", "LSTM b_f=2"):
        assert every_seed(at20[model]), (model, at20[model])


def test_the_plain_rnn_fails_gradually(accuracy):
    """'The plain RNN learns a lag of 10 in some seeds'; every seed at lag 5."""
    assert every_seed(accuracy[5]["plain RNN"])
    assert some_seed(accuracy[10]["plain RNN"]) and not every_seed(accuracy[10]["plain RNN"])


def test_the_gru_sits_between_the_lstm_with_bias_1_and_with_bias_2(accuracy):
    """'The GRU learns lag 20 in every seed and lag 50 in none: it sits between the LSTM
    with b_f = 1 and the LSTM with b_f = 2.'"""
    assert every_seed(accuracy[20]["GRU"]) and not some_seed(accuracy[50]["GRU"])
    assert not every_seed(accuracy[20]["LSTM b_f=1"])
    assert some_seed(accuracy[50]["LSTM b_f=2"])


def test_at_lag_100_only_the_lstm_with_bias_2_gets_anywhere(accuracy):
    at100 = accuracy[100]
    assert some_seed(at100["LSTM b_f=2"])
    for model in MODELS:
        if model != "LSTM b_f=2":
            assert at100[model][2] < 0.5, (model, at100[model])  # no seed even half-way


def test_the_forget_bias_orders_the_three_lstms(accuracy):
    """'The three LSTMs differ in nothing else, and they span the whole range': at every
    lag a larger b_f does at least as well on average."""
    for lag, row in accuracy.items():
        means = [row[f"LSTM b_f={b}"][0] for b in (0, 1, 2)]
        assert means == sorted(means), (lag, means)


def test_the_lstm_with_bias_2_learns_at_once_or_not_at_all(curves):
    """15.3: 'The LSTM with b_f = 2 learns at once, within the first few hundred steps,
    or not at all in this budget ... The others stay near chance throughout.'"""
    steps = sorted(curves)
    early = [s for s in steps if s <= 300]
    assert early and max(curves[s]["LSTM b_f=2"][0] for s in early) > 0.6
    assert some_seed(curves[early[-1]]["LSTM b_f=2"])
    for model in ("plain RNN", "LSTM b_f=0", "GRU"):
        assert max(curves[s][model][0] for s in steps) < 0.35, model
    assert not any(some_seed(curves[s]["LSTM b_f=1"]) for s in steps)  # partial at most


def gradients(command_table):
    """{model: {lag: g_1}} of one of the --gradient tables (the n-th under the command)."""
    header, *body = command_table
    lags = [int(h.split()[-1]) for h in header[1:]]
    return {row[0].replace("$", ""): dict(zip(lags, map(float, row[1:]))) for row in body}


@pytest.fixture(scope="module")
def g1(site):
    tables = [rows for cmd, rows in html_command_tables(page_html(PAGE))
              if cmd == "python3 memory.py --gradient"]
    assert len(tables) == 3  # at initialisation, after training, the share
    return gradients(tables[0]), gradients(tables[1])


def test_where_the_first_gradient_starts_near_1e_12_nothing_is_learned(g1, accuracy):
    """15.4: 'Wherever g_1 at initialisation has fallen to around 1e-12 or below, nothing
    was learned, in any seed'; and the LSTM with b_f = 2 keeps g_1 within a factor of ten
    of its short-lag value all the way to lag 100."""
    init, _ = g1
    gone = [(m, lag) for m in MODELS for lag, g in init[m].items() if g <= 1e-11]
    assert gone
    for model, lag in gone:
        assert not some_seed(accuracy[lag][model]), (model, lag, init[model][lag])
    assert init["LSTM b_f=2"][100] * 10 >= init["LSTM b_f=2"][5]


def test_the_grus_first_gradient_grows_by_orders_of_magnitude_at_lag_20(g1):
    """'its g_1 there starts hardly larger than the plain RNN's' and, after training,
    'has grown by orders of magnitude'."""
    init, trained = g1
    assert init["GRU"][20] < 10 * init["plain RNN"][20]
    assert trained["GRU"][20] >= 100 * init["GRU"][20]
