"""Tests for docs/code/gru.py: the data, the corpus's bounds, every gradient, clipping,
training, sampling, the reports and the command line.

numpy only; the file runs in a few minutes (no 50-epoch run here): the reports are called
with small configurations. The expected values come from d2l's configuration, from code
written here (the equations once more, finite differences, a training loop), or from
parsing what the script printed, never from the script's own formatters.
"""
import dataclasses
import hashlib
import io
import json
import math
import re
import time
from contextlib import redirect_stdout

import numpy as np
import pytest

from helpers import (CODE, ROOT, cells_of_markdown, central_differences, load_script,
                     run_loaded, run_script, table_blocks, without_times)

gru = load_script('gru.py')
CORPUS = CODE / 'timemachine.txt'
CORPUS_SHA256 = 'bc3c976c7f0d9e7912b8a857ccd92cccf28eb9809e837b8a7eb6dadae8fa75d6'


@pytest.fixture(scope='module')
def raw_text():
    return CORPUS.read_text(encoding='utf-8')


@pytest.fixture(scope='module')
def text():
    return gru.read_corpus(CORPUS)


def round_trips(record):
    d = dataclasses.asdict(record)
    return json.loads(json.dumps(d)) == d


def plain_values(x):
    """Only JSON's kinds of value, all the way down (no numpy scalars, no tuples)."""
    if isinstance(x, dict):
        return all(isinstance(k, str) and plain_values(v) for k, v in x.items())
    if isinstance(x, list):
        return all(plain_values(v) for v in x)
    return x is None or type(x) in (bool, int, float, str)


def tokenize(text):
    """d2l's tokens: the characters of the preprocessed text."""
    return list(re.sub('[^A-Za-z]+', ' ', text).lower())


def build_vocab(tokens):
    """d2l's Vocab with no frequency cut: the unknown token and every token, sorted."""
    return sorted(set(['<unk>'] + list(tokens)))


# ---------------------------------------------------------------- data

def test_corpus_is_the_pinned_file():
    assert hashlib.sha256(CORPUS.read_bytes()).hexdigest() == CORPUS_SHA256


def test_import_has_no_side_effects():
    out = io.StringIO()
    with redirect_stdout(out):
        load_script('gru.py')
    assert out.getvalue() == ''


def test_preprocessing_is_d2ls():
    assert gru.preprocess('The Time-Machine,\n 1895!  by H. G. Wells') == \
        'the time machine by h g wells'


def test_vocabulary_is_d2ls_vocab_of_the_book(raw_text):
    assert gru.VOCAB == build_vocab(tokenize(raw_text))
    assert len(gru.VOCAB) == 28                        # the spec: 26 letters, space, unknown


def test_windows_and_split_match_an_independent_count(raw_text, text):
    chars = ''.join(tokenize(raw_text))
    assert text == chars and len(chars) == 173501     # this copy of the book (the spec)
    data = gru.make_dataset(text, gru.Config())
    assert data.num_chars == 10000 + 5000 + 32
    assert data.X_train.shape == data.Y_train.shape == (10000, 32)
    assert data.X_val.shape == data.Y_val.shape == (5000, 32)

    def decode(ids):
        return ''.join(gru.VOCAB[i] for i in ids)
    for i in (0, 1, 4567, 9999):
        assert decode(data.X_train[i]) == chars[i:i + 32]
        assert decode(data.Y_train[i]) == chars[i + 1:i + 33]
    for i in (0, 2500, 4999):
        assert decode(data.X_val[i]) == chars[10000 + i:10000 + i + 32]
        assert decode(data.Y_val[i]) == chars[10000 + i + 1:10000 + i + 33]


def test_too_short_corpus_is_refused():
    with pytest.raises(gru.Refused, match='windows'):
        gru.make_dataset('just a few words', gru.Config())


def test_a_corpus_past_the_bound_is_refused_after_reading_only_the_bound(tmp_path, monkeypatch):
    """17.14: a huge file must not be read whole. With the bound at 1 MB, a 50 MB file is
    refused, and reading it stops at the bound (quick, and the memory of the bound)."""
    import tracemalloc
    monkeypatch.setattr(gru, 'MAX_FILE_BYTES', 1_000_000)
    big = tmp_path / 'big.txt'
    with open(big, 'wb') as f:
        f.truncate(50_000_000)                         # sparse: 50 MB of zero bytes
    tracemalloc.start()
    start = time.perf_counter()
    with pytest.raises(gru.Refused, match='larger than 1,000,000 bytes'):
        gru.read_corpus(big)
    seconds, peak = time.perf_counter() - start, tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert seconds < 2 and peak < 5e6, (seconds, peak)
    exact = tmp_path / 'exact.txt'
    exact.write_bytes(b'ab ' * (1_000_000 // 3))       # at the bound: read
    assert gru.read_corpus(exact).startswith('ab ab')


def test_cli_refuses_dev_zero_quickly_in_one_line():
    """`gru.py --corpus /dev/zero` grew past 6 GB in 30 s (17.14): now one line, status 1."""
    start = time.perf_counter()
    done = run_script('gru.py', '--corpus', '/dev/zero', timeout=60)
    assert time.perf_counter() - start < 30
    line = one_line_error(done)
    assert '/dev/zero' in line and 'larger than 10,000,000 bytes' in line


def test_non_utf8_error_gives_the_offset(tmp_path):
    path = tmp_path / 'bad.txt'
    path.write_bytes(b'abcdefgh\xe9ijk')
    with pytest.raises(gru.Refused, match=r'not UTF-8 text \(byte 0xe9 at offset 8\)'):
        gru.read_corpus(path)


# ---------------------------------------------------------------- parameters

@pytest.mark.parametrize('cell, gates', [('gru', 3), ('lstm', 4), ('rnn', 1)])
def test_param_counts(cell, gates):
    """Per gate an input weight (28 x 32), a recurrent one (32 x 32) and a bias (32); then
    the output layer (32 x 28 and 28): the GRU's 6,780 of the spec's config table."""
    p = gru.init_params(cell, 28, 32, np.random.default_rng(0))
    assert gru.num_params(p) == gates * (28 * 32 + 32 * 32 + 32) + 32 * 28 + 28
    assert gru.num_params(gru.named(p, cell)) == gru.num_params(p)


def test_config_defaults_are_d2ls():
    c = gru.Config()
    assert (c.cell, c.hidden, c.num_steps, c.batch_size, c.lr, c.clip, c.epochs) == \
        ('gru', 32, 32, 1024, 4.0, 1.0, 50)                 # the spec's table
    assert (c.num_train, c.num_val, c.init_sigma, c.prefix, c.num_preds) == \
        (10000, 5000, 0.01, 'it has', 20)
    assert gru.Config(cell='rnn').lr == 1.0 and gru.Config(cell='rnn', lr=4.0).lr == 4.0


def test_init_is_d2ls_and_named_views_are_the_stacked_blocks():
    p = gru.init_params('gru', 28, 32, np.random.default_rng(0))
    n = gru.named(p, 'gru')
    assert list(n) == ['W_xz', 'W_hz', 'b_z', 'W_xr', 'W_hr', 'b_r', 'W_xh', 'W_hh', 'b_h',
                       'W_hq', 'b_q']
    assert all(v.dtype == np.float32 for v in p.values())
    for name, v in n.items():
        kind = name if name in ('W_hq', 'b_q') else name[:-1]   # W_x, W_h or b_
        assert v.shape == {'W_x': (28, 32), 'W_h': (32, 32), 'b_': (32,), 'W_hq': (32, 28),
                           'b_q': (28,)}[kind], name
        if name.startswith('b'):
            assert not v.any()
        else:
            assert 0.007 < v.std() < 0.013 and abs(v.mean()) < 0.003
    n['W_hr'][0, 0] = 5.0                              # a view: the stacked matrix changes
    assert p['W_h'][1][0, 0] == 5.0


def test_forget_bias_sets_b_f_only_and_leaves_the_weights_alone():
    a = gru.init_params('lstm', 28, 32, np.random.default_rng(0))
    b = gru.init_params('lstm', 28, 32, np.random.default_rng(0), forget_bias=1.0)
    nb = gru.named(b, 'lstm')
    assert np.all(nb['b_f'] == 1) and not nb['b_i'].any() and not nb['b_o'].any()
    assert all(np.array_equal(a[k], b[k]) for k in a if k != 'b')


# ---------------------------------------------------------------- gradients

def small_problem(cell, seed=1, V=5, B=2, T=4, h=3, scale=0.5):
    """Random float64 weights, windows and a random initial state (not gru.py's helper)."""
    rng = np.random.default_rng(seed)
    params = {k: scale * rng.standard_normal(v.shape)
              for k, v in gru.init_params(cell, V, h, rng, 'float64').items()}
    X, Y = rng.integers(0, V, (B, T)), rng.integers(0, V, (B, T))
    H = scale * rng.standard_normal((2, B, h))
    return params, X, Y, ((H[0], H[1]) if cell == 'lstm' else (H[0],))


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_every_gradient_matches_central_differences(cell):
    params, X, Y, state = small_problem(cell)
    loss, grads = gru.loss_and_grads(params, cell, X, Y, state)
    assert set(grads) == set(params)

    def f():
        return gru.loss_and_grads(params, cell, X, Y, state, need_grads=False)[0]
    assert f() == loss
    for name, p in params.items():
        numeric = central_differences(f, p, 1e-5)
        a = grads[name]
        assert a.shape == p.shape
        rel = np.abs(a - numeric).max() / (np.abs(a) + np.abs(numeric)).max()
        assert rel < 1e-6, (cell, name, rel)
        assert np.all(np.abs(a - numeric) <= 1e-6 * np.abs(numeric) + 1e-9), (cell, name)


def independent_loss(params, cell, X, Y, state):
    """d2l's equations once more, written here with the named matrices and one-hot
    products: the mean cross-entropy, float64."""
    def sig(a):
        return 1 / (1 + np.exp(-a))
    P = gru.named(params, cell)
    H, C = (state if cell == 'lstm' else (state[0], None))
    total = 0.0
    for t in range(X.shape[1]):
        x = np.eye(len(P['b_q']))[X[:, t]]
        if cell == 'gru':
            Z = sig(x @ P['W_xz'] + H @ P['W_hz'] + P['b_z'])
            R = sig(x @ P['W_xr'] + H @ P['W_hr'] + P['b_r'])
            Ht = np.tanh(x @ P['W_xh'] + (R * H) @ P['W_hh'] + P['b_h'])
            H = Z * H + (1 - Z) * Ht
        elif cell == 'lstm':
            i, f, o = (sig(x @ P['W_x' + g] + H @ P['W_h' + g] + P['b_' + g]) for g in 'ifo')
            C = f * C + i * np.tanh(x @ P['W_xc'] + H @ P['W_hc'] + P['b_c'])
            H = o * np.tanh(C)
        else:
            H = np.tanh(x @ P['W_xh'] + H @ P['W_hh'] + P['b_h'])
        logits = H @ P['W_hq'] + P['b_q']
        m = logits.max(axis=1, keepdims=True)
        logp = logits - m - np.log(np.exp(logits - m).sum(axis=1, keepdims=True))
        total -= logp[np.arange(len(X)), Y[:, t]].sum()
    return total / X.size


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_loss_is_d2ls_equations(cell):
    params, X, Y, state = small_problem(cell, seed=7, B=3, T=5)
    assert gru.loss_and_grads(params, cell, X, Y, state, need_grads=False)[0] == \
        pytest.approx(independent_loss(params, cell, X, Y, state), rel=1e-13)


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_float32_gradients_agree_with_float64(cell):
    params, X, Y, state = small_problem(cell, seed=2, V=28, B=64, T=16, h=32, scale=0.3)
    loss64, g64 = gru.loss_and_grads(params, cell, X, Y, state)
    p32 = {k: v.astype(np.float32) for k, v in params.items()}
    loss32, g32 = gru.loss_and_grads(p32, cell, X, Y, tuple(s.astype(np.float32) for s in state))
    assert loss32 == pytest.approx(loss64, rel=1e-5)
    for k in params:
        assert g32[k].dtype == np.float32
        assert np.abs(g32[k] - g64[k]).max() <= 1e-4 * max(1e-2, np.abs(g64[k]).max()), k


def test_a_loss_with_logits_far_apart_between_rows_stays_finite():
    """The softmax's shift: one constant for all rows unless a row could underflow whole."""
    logits = np.array([[0.0, 1.0, 2.0], [-500.0, -501.0, -499.0]])
    expected = logits - logits.max(axis=1, keepdims=True)
    expected -= np.log(np.exp(expected).sum(axis=1, keepdims=True))
    assert np.allclose(gru.log_softmax(logits), expected, atol=1e-12)


def test_sigmoid_does_not_overflow_in_float32():
    a = np.array([-1000, -90, -5, 0, 5, 90, 1000], np.float32)
    with np.errstate(all='raise'):
        s = gru.sigmoid(a)
    assert np.all(np.isfinite(s)) and s[0] == 0 and s[-1] == 1 and s[3] == 0.5
    with np.errstate(over='ignore'):                   # the reference's exp(1000)
        assert np.allclose(s, 1 / (1 + np.exp(-a.astype(np.float64))), atol=1e-7)


def test_scripts_own_gradcheck_passes_for_every_parameter_of_the_equations():
    record = gru.compute_gradcheck()
    assert [(r.cell, r.parameter) for r in record.rows] == \
        [(c, n) for c in ('gru', 'lstm', 'rnn')
         for n in gru.named(gru.init_params(c, 6, 4, np.random.default_rng(0)), c)]
    assert len(record.rows) == (3 * 3 + 2) + (4 * 3 + 2) + (3 + 2)  # per gate W_x, W_h, b
    assert record.worst < 1e-6 and record.passed
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


def test_a_wrong_gradient_fails_the_gradcheck(monkeypatch):
    real = gru.gru_step_backward

    def wrong(p, dstate, cache, grads):
        dstate, dA = real(p, dstate, cache, grads)
        return dstate, dA * 1.01                       # one wrong factor
    monkeypatch.setitem(gru.STEPS, 'gru', (gru.gru_step, wrong))
    record = gru.compute_gradcheck(('gru',))
    assert not record.passed and record.worst > 1e-3


# ---------------------------------------------------------------- clipping

def test_clipping_rescales_a_long_gradient_to_norm_one():
    rng = np.random.default_rng(0)
    grads = {'a': rng.standard_normal((3, 4)), 'b': rng.standard_normal(5)}
    scale = 7 / math.sqrt(sum((g ** 2).sum() for g in grads.values()))
    grads = {k: g * scale for k, g in grads.items()}
    before = {k: g.copy() for k, g in grads.items()}
    assert gru.clip_gradients(grads, 1.0) == pytest.approx(7.0, rel=1e-12)
    assert math.sqrt(sum((g ** 2).sum() for g in grads.values())) == pytest.approx(1.0, abs=1e-12)
    for k in grads:                                    # same direction
        assert np.allclose(grads[k] * 7.0, before[k], rtol=1e-12)


def test_clipping_leaves_a_short_gradient_alone():
    grads = {'a': np.full((2, 2), 0.1), 'b': np.array([0.2, -0.3])}
    before = {k: g.copy() for k, g in grads.items()}
    assert gru.clip_gradients(grads, 1.0) < 1
    for k in grads:
        assert np.array_equal(grads[k], before[k])


# ---------------------------------------------------------------- training and sampling

SMALL = dict(num_train=2048, num_val=1024, epochs=2)   # a quick run for in-process checks


def test_training_runs_and_is_deterministic(text):
    r = gru.train_model(text, gru.Config(**SMALL)).record
    assert [e.epoch for e in r.history] == [1, 2]
    assert all(1 < ppl < 28 for e in r.history for ppl in (e.train_ppl, e.val_ppl))
    assert r.history[1].val_ppl < r.history[0].val_ppl   # it learns something
    assert r.sample.startswith('it has') and len(r.sample) == len('it has') + 20
    assert r.num_params == 6780 and r.vocab_size == 28 and r.num_chars == 173501
    assert round_trips(r) and plain_values(dataclasses.asdict(r))
    gru._TRAINED.clear()                                 # a real second run, not the memo
    again = gru.train_model(text, gru.Config(**SMALL)).record
    assert again is not r and again.history == r.history and again.samples == r.samples
    assert gru.train_model(text, gru.Config(**dict(SMALL, seed=1))).record.history != r.history


def test_training_is_memoised_by_configuration_and_text(text):
    config = gru.Config(**dict(SMALL, epochs=1, seed=11))
    first = gru.train_model(text, config)
    rows = []
    assert gru.train_model(text, config, rows.append) is first   # trained once
    assert rows == first.record.history                          # rows replayed
    assert gru.train_model(text, dataclasses.replace(config, lr=2.0)) is not first
    assert gru.train_model(text[1:] + 'x', config) is not first


def test_validation_at_the_end_only_gives_the_same_model(text):
    """validate=False measures the validation perplexity after the last epoch only; the
    training is the same, so the last value equals a validated run's, and a validated run
    in the memo serves for an unvalidated one (not the other way round)."""
    gru._TRAINED.clear()
    config = gru.Config(**dict(SMALL, epochs=3, seed=4, validate=False))
    end_only = gru.train_model(text, config)
    assert [row.val_ppl is None for row in end_only.record.history] == [True, True, False]
    validated = gru.train_model(text, dataclasses.replace(config, validate=True))
    assert validated is not end_only
    assert all(row.val_ppl is not None for row in validated.record.history)
    assert validated.record.val_ppl == end_only.record.val_ppl
    assert [r.train_ppl for r in validated.record.history] == \
        [r.train_ppl for r in end_only.record.history]
    gru._TRAINED.clear()
    validated = gru.train_model(text, dataclasses.replace(config, validate=True))
    assert gru.train_model(text, config) is validated


@pytest.mark.parametrize('cell', ['lstm', 'rnn'])
def test_other_cells_train(text, cell):
    rows = []
    r = gru.train_model(text, gru.Config(cell=cell, **SMALL), rows.append).record
    assert rows == r.history
    assert r.history[1].val_ppl < r.history[0].val_ppl < 28


def test_gradient_norms_and_clipping_are_recorded_per_epoch(text):
    """The record's max grad norm and clipped fraction against a training loop written
    here from the script's loss and gradient (the plain RNN at lr 30 gets clipped)."""
    config = gru.Config(cell='rnn', lr=30.0, num_train=2048, num_val=512, epochs=3, seed=2)
    r = gru.train_model(text, config).record
    data = gru.make_dataset(text, config)
    rng = np.random.default_rng(config.seed)
    params = gru.init_params('rnn', 28, 32, rng, 'float32', 0.01)
    for epoch in r.history:
        order = rng.permutation(2048)
        norms = []
        for i in range(0, 2048, 1024):
            b = order[i:i + 1024]
            _, g = gru.loss_and_grads(params, 'rnn', data.X_train[b], data.Y_train[b])
            norm = math.sqrt(sum(float((v.astype(np.float64) ** 2).sum()) for v in g.values()))
            norms.append(norm)
            for k in g:
                params[k] -= config.lr * g[k] * (min(1.0, 1.0 / norm))
        assert epoch.max_grad_norm == pytest.approx(max(norms), rel=1e-4)
        assert epoch.clipped_fraction == sum(n > 1 for n in norms) / len(norms)
    assert any(e.clipped_fraction > 0 for e in r.history)


def test_non_finite_loss_stops_training(text):
    for lr in (1e30, math.inf):                        # a huge loss, then NaN
        with pytest.raises(gru.TrainingDiverged, match='training diverged in epoch 1'):
            gru.train_model(text, gru.Config(lr=lr, **SMALL))


def test_samples_at_the_chosen_epochs_and_independent_of_training(text):
    config = gru.Config(**dict(SMALL, epochs=6))
    r = gru.train_model(text, config).record
    assert [s.epoch for s in r.samples] == [1, 5, 6]
    assert r.sample == r.samples[-1].greedy
    for s in r.samples:
        for sample in (s.greedy, s.temp_0_5, s.temp_1_0):
            assert sample.startswith('it has') and len(sample) == 26 and '<unk>' not in sample
    other = gru.train_model(text, dataclasses.replace(config, prefix='the')).record
    assert other.history == r.history and other.samples != r.samples


def independent_next_logits(weights, ids):
    """The GRU's logits after reading ids from a zero state, by the equations, float64;
    weights: the equations' matrices by name."""
    P = {k: np.asarray(v, np.float64) for k, v in weights.items()}
    H = np.zeros(len(P['b_z']))
    for i in ids:
        x = np.eye(28)[i]
        Z = 1 / (1 + np.exp(-(x @ P['W_xz'] + H @ P['W_hz'] + P['b_z'])))
        R = 1 / (1 + np.exp(-(x @ P['W_xr'] + H @ P['W_hr'] + P['b_r'])))
        H = Z * H + (1 - Z) * np.tanh(x @ P['W_xh'] + (R * H) @ P['W_hh'] + P['b_h'])
    return H @ P['W_hq'] + P['b_q']


def test_greedy_sample_is_argmax_decoding(text):
    m = gru.train_model(text, gru.Config(**SMALL))
    ids = [gru.VOCAB.index(c) for c in 'it has']
    for _ in range(20):                                # the whole text again, each time
        ids.append(int(independent_next_logits(gru.named(m.params, 'gru'), ids).argmax()))
    assert m.record.sample == ''.join(gru.VOCAB[i] for i in ids)


def test_at_temperature_1_sampling_draws_from_the_models_own_distribution(text):
    """16.1: softmax(logits / T) at T = 1 is softmax(logits), the model's distribution:
    the draws equal inverse-transform draws from it (the same random numbers), and at
    T = 0.5 from softmax(2 logits), sharper."""
    m = gru.train_model(text, gru.Config(**SMALL))
    unk = gru.VOCAB.index('<unk>')
    for temperature in (1.0, 0.5):
        got = gru.predict(m.params, 'gru', 'it has', 8, temperature, np.random.default_rng(5))
        rng, ids = np.random.default_rng(5), [gru.VOCAB.index(c) for c in 'it has']
        for _ in range(8):
            logits = independent_next_logits(gru.named(m.params, 'gru'), ids)
            p = np.exp(logits / temperature - (logits / temperature).max())
            p[unk] = 0
            p /= p.sum()                               # T = 1: the softmax itself
            ids.append(int(np.searchsorted(np.cumsum(p), rng.random(), side='right')))
        assert got == ''.join(gru.VOCAB[i] for i in ids), temperature


# ---------------------------------------------------------------- reports

TINY = gru.Config(num_train=1024, num_val=512, epochs=2, hidden=16)


def args_for(*argv):
    return gru.parse_args(list(argv))


def parsed(table):
    """The cells of a printed markdown table, header first (parsed here, not formatted)."""
    return cells_of_markdown(table)


def test_report_train_prints_its_record():
    """The printed rows parsed back hold the record's numbers (to the printed digits), and
    the samples table the record's samples between quotes."""
    buf = io.StringIO()
    record = gru.report_train(args_for('--epochs', '2'), gru.Printer(buf), TINY)
    tables = table_blocks(buf.getvalue())
    assert len(tables) == 3                            # config, history, samples
    header, *rows = parsed(tables[1])
    assert header == ['epoch', 'train ppl', 'val ppl', 'max grad norm', 'clipped']
    assert len(rows) == 2
    for row, e in zip(rows, record.history):
        assert int(row[0]) == e.epoch
        assert float(row[1]) == pytest.approx(e.train_ppl, abs=0.005)
        assert float(row[2]) == pytest.approx(e.val_ppl, abs=0.005)
        assert float(row[3]) == pytest.approx(e.max_grad_norm, abs=0.0005)
        assert row[4] == f'{round(100 * e.clipped_fraction)}%'
    _, *samples = parsed(tables[2])
    assert [[int(r[0])] + [c[1:-1] for c in r[1:]] for r in samples] == \
        [[s.epoch, s.greedy, s.temp_0_5, s.temp_1_0] for s in record.samples]
    last = buf.getvalue().rstrip('\n').splitlines()[-1]
    assert re.fullmatch(r'time: [0-9.]+ s for 2 epochs, [0-9,]+ training tokens/s', last)
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


SMALL_COMPARE = (('GRU', 'gru', 0.0, 4.0, 2), ('plain RNN', 'rnn', 0.0, 1.0, 1),
                 ('plain RNN', 'rnn', 0.0, 2.0, 3))


def test_report_compare_gives_each_line_its_seeds_mean_and_range(monkeypatch, text):
    monkeypatch.setattr(gru, 'COMPARE', SMALL_COMPARE + (('LSTM', 'lstm', 0.0, 4.0, 1),))
    buf = io.StringIO()
    record = gru.report_compare(args_for('--compare', '--seed', '3'), gru.Printer(buf), TINY)
    assert [(m.model, m.lr, m.seeds) for m in record.models] == \
        [('GRU', 4.0, [3, 4]), ('plain RNN', 1.0, [3]), ('plain RNN', 2.0, [3, 4, 5]),
         ('LSTM', 4.0, [3])]
    gru._TRAINED.clear()
    for m in record.models:                            # each seed trained again, alone
        val = [gru.train_model(text, dataclasses.replace(
            TINY, cell=m.cell, lr=m.lr, seed=s, validate=k == 0)).record.val_ppl
            for k, s in enumerate(m.seeds)]
        assert m.val_ppl == val
        assert m.val_mean == pytest.approx(np.mean(val), rel=1e-12)
        assert (m.val_low, m.val_high) == (min(val), max(val))
        assert all(row.val_ppl is not None for row in m.history)   # the first seed's, plotted
    assert record.rnn.lr == 1.0 and record.gru.lr == 4.0 and record.lstm.lr == 4.0
    assert record.rnn_best is min(record.models[1:3], key=lambda m: m.val_mean)
    header, *rows = parsed(table_blocks(buf.getvalue())[0])
    assert header[:4] == ['model', 'parameters', 'learning rate', 'seeds']
    for row, m in zip(rows, record.models):
        numbers = [float(x) for x in re.findall(r'[0-9]+\.[0-9]+', row[4])]
        expected = [m.val_mean] + ([m.val_low, m.val_high] if len(m.seeds) > 1 else [])
        assert numbers == pytest.approx(expected, abs=0.005), row
        assert row[2].endswith("(d2l's)") == (m.lr == gru.D2L_LR[m.cell])
    assert sum(line.startswith('time:') for line in buf.getvalue().splitlines()) == 1
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


def test_the_compare_runs_serve_the_single_run_commands(monkeypatch):
    """`gru.py --cell rnn --lr 2` after `--compare` in one process trains nothing more: its
    first seed is that run (validated every epoch)."""
    monkeypatch.setattr(gru, 'COMPARE', SMALL_COMPARE)
    monkeypatch.setattr(gru, '_TRAINED', {})
    gru.report_compare(args_for('--compare'), gru.Printer(io.StringIO()), TINY)
    calls = []
    real = gru.train
    monkeypatch.setattr(gru, 'train', lambda *a: calls.append(a[1]) or real(*a))
    gru.report_train(args_for('--cell', 'rnn', '--lr', '2'), gru.Printer(io.StringIO()), TINY)
    gru.report_train(args_for(), gru.Printer(io.StringIO()), TINY)
    assert calls == []


def finite_difference_distance(params, cell, x, y, k, eps=1e-6):
    """dL_T / dH_{T-k} for one window (x, y), by central differences: run the equations
    (independent_loss's steps) to H_{T-k}, nudge one unit, run on to the last step's loss."""
    T = len(x)
    P = gru.named(params, cell)

    def steps(H, C, ids):
        for i in ids:
            xv = np.eye(len(P['b_q']))[i]
            if cell == 'gru':
                Z = 1 / (1 + np.exp(-(xv @ P['W_xz'] + H @ P['W_hz'] + P['b_z'])))
                R = 1 / (1 + np.exp(-(xv @ P['W_xr'] + H @ P['W_hr'] + P['b_r'])))
                H = Z * H + (1 - Z) * np.tanh(xv @ P['W_xh'] + (R * H) @ P['W_hh'] + P['b_h'])
            elif cell == 'lstm':
                i_, f, o = (1 / (1 + np.exp(-(xv @ P['W_x' + g] + H @ P['W_h' + g] + P['b_' + g])))
                            for g in 'ifo')
                C = f * C + i_ * np.tanh(xv @ P['W_xc'] + H @ P['W_hc'] + P['b_c'])
                H = o * np.tanh(C)
            else:
                H = np.tanh(xv @ P['W_xh'] + H @ P['W_hh'] + P['b_h'])
        return H, C

    h = len(P['b_q']) and params['W_h'].shape[-1]
    H0, C0 = steps(np.zeros(h), np.zeros(h), x[:T - k])

    def last_loss(H):
        H, _ = steps(H, C0, x[T - k:])
        logits = H @ P['W_hq'] + P['b_q']
        return float(np.log(np.exp(logits - logits.max()).sum()) + logits.max() - logits[y[-1]])
    grad = np.zeros(h)
    for j in range(h):
        nudged = [H0.copy(), H0.copy()]
        nudged[0][j] += eps
        nudged[1][j] -= eps
        grad[j] = (last_loss(nudged[0]) - last_loss(nudged[1])) / (2 * eps)
    return grad


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_gradient_distance_matches_finite_differences(cell):
    params, X, Y, _ = small_problem(cell, seed=9, V=6, B=3, T=6, h=4, scale=0.8)
    curve, curve_C = gru.compute_gradient_distance(params, cell, X, Y)
    assert len(curve) == 6 and (curve_C is not None) == (cell == 'lstm')
    for k in range(6):
        norms = [np.linalg.norm(finite_difference_distance(params, cell, X[b], Y[b], k))
                 for b in range(3)]
        assert curve[k] == pytest.approx(np.mean(norms), rel=1e-6, abs=1e-12), k


def test_report_distance_covers_three_models_trained_and_at_init():
    record = gru.report_distance(args_for('--distance'), gru.Printer(io.StringIO()), TINY)
    assert [c.model for c in record.curves] == ['GRU', 'LSTM', 'plain RNN']
    assert record.ks == [0, 1, 2, 4, 8, 16, 31]
    for c in record.curves:
        assert len(c.trained) == len(c.init) == 32
        assert all(v >= 0 for v in c.trained + c.init)
    m = gru.train_model(gru.read_corpus(CORPUS), gru.model_config(args_for(), TINY, 'gru'))
    full = gru.compute_gradient_distance(m.initial, 'gru', m.data.X_val, m.data.Y_val)
    assert record.curves[0].init == full[0]
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


def test_report_inside_values_come_from_the_models_steps(text):
    buf = io.StringIO()
    record = gru.report_inside(args_for('--inside'), gru.Printer(buf), TINY)
    m = gru.train_model(text, gru.model_config(args_for(), TINY, 'gru'))
    val_text = m.text[TINY.num_train:]
    if val_text[0] != ' ':                             # the split falls mid-word: from the next word
        val_text = val_text[val_text.index(' ') + 1:]
    n = record.passage_chars
    assert record.passage == val_text[:n] and len(record.z_mean) == n
    assert gru.INSIDE_PASSAGE - 20 < n <= gru.INSIDE_PASSAGE and val_text[n] == ' ' != val_text[0]
    P = {k: v.astype(np.float64) for k, v in gru.named(m.params, 'gru').items()}
    H, Hs = np.zeros(TINY.hidden), []
    for i, c in enumerate(val_text):                   # d2l's equations, one by one
        x = np.eye(28)[gru.VOCAB.index(c)]
        Z = 1 / (1 + np.exp(-(x @ P['W_xz'] + H @ P['W_hz'] + P['b_z'])))
        R = 1 / (1 + np.exp(-(x @ P['W_xr'] + H @ P['W_hr'] + P['b_r'])))
        H = Z * H + (1 - Z) * np.tanh(x @ P['W_xh'] + (R * H) @ P['W_hh'] + P['b_h'])
        Hs.append(H)
        if i < 5:
            assert record.z_mean[i] == pytest.approx(Z.mean(), abs=1e-4)
    Hs = np.array(Hs)
    inside = np.array([a.isalpha() and b.isalpha() for a, b in zip(val_text, val_text[1:])], float)
    r = [np.corrcoef(Hs[:-1, j], inside)[0, 1] for j in range(TINY.hidden)]
    unit = record.units[0]
    assert unit.feature == 'inside a word' and unit.unit == int(np.argmax(np.abs(r)))
    assert unit.correlation == pytest.approx(r[unit.unit], abs=1e-4)
    assert unit.values[:3] == pytest.approx(Hs[:3, unit.unit], abs=1e-4)
    assert record.units[1].unit != unit.unit and not unit.runner_up
    assert round_trips(record) and plain_values(dataclasses.asdict(record))
    printed = buf.getvalue()
    assert record.passage[:64].replace(' ', '_') in printed and '| unit' in printed


def test_inside_passage_is_wrapped_with_a_digit_under_each_character():
    record = gru.InsideRecord('ab cd' * 30, 150, [0.05, 0.95, 1.0, 0.5, 0.0] * 30,
                              [gru.UnitRecord('a space', 3, -0.5, False,
                                              [-1.0, 1.0, 0.0, -0.05, 0.99] * 30)], 1000)
    blocks = gru.format_inside_passage(record).split('\n\n')
    assert len(blocks) == 3                            # 150 characters, 64 per line
    text, z, unit = blocks[0].splitlines()
    assert text.startswith('text    ab_cd') and z.startswith('Z       09950')
    assert unit.startswith('unit 3  09549')
    assert len(text) == len(z) == len(unit) == len('unit 3  ') + 64


def test_report_saturation_against_an_independent_forward_pass(text):
    record = gru.report_saturation(args_for('--saturation'), gru.Printer(io.StringIO()), TINY)
    assert [(g.model, g.gate) for g in record.gates] == \
        [('GRU', 'Z'), ('GRU', 'R'), ('LSTM', 'I'), ('LSTM', 'F'), ('LSTM', 'O')]
    for cell, gates in (('gru', 'zr'), ('lstm', 'ifo')):
        m = gru.train_model(text, gru.model_config(args_for(), TINY, cell))
        P = {k: v.astype(np.float64) for k, v in gru.named(m.params, cell).items()}
        X = m.data.X_val
        H = np.zeros((len(X), TINY.hidden))
        C = np.zeros_like(H)
        values = {g: [] for g in gates}
        for t in range(X.shape[1]):                    # d2l's equations, written here
            x = np.eye(28)[X[:, t]]
            a = {g: 1 / (1 + np.exp(-(x @ P['W_x' + g] + H @ P['W_h' + g] + P['b_' + g])))
                 for g in gates}
            for g in gates:
                values[g].append(a[g])
            if cell == 'gru':
                Ht = np.tanh(x @ P['W_xh'] + (a['r'] * H) @ P['W_hh'] + P['b_h'])
                H = a['z'] * H + (1 - a['z']) * Ht
            else:
                C = a['f'] * C + a['i'] * np.tanh(x @ P['W_xc'] + H @ P['W_hc'] + P['b_c'])
                H = a['o'] * np.tanh(C)
        for g in gates:
            v = np.concatenate(values[g])
            rec = next(r for r in record.gates if r.gate == g.upper()
                       and r.model == gru.MODEL_NAMES[cell])
            assert rec.left == pytest.approx((v < 0.1).mean(), abs=1e-6)
            assert rec.right == pytest.approx((v > 0.9).mean(), abs=1e-6)
            assert rec.unit_right == pytest.approx(list((v > 0.9).mean(axis=0)), abs=1e-3)
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


def test_reports_in_one_process_train_only_the_models_they_read(monkeypatch):
    """--inside reads the GRU, --saturation the GRU and the LSTM, --distance all three:
    run alone, each trains only those (the lead found --inside alone training three);
    run in one process, each model once."""
    real = gru.train
    for report, cells in ((gru.report_inside, ['gru']), (gru.report_saturation, ['gru', 'lstm']),
                          (gru.report_export, ['gru'])):
        calls = []
        monkeypatch.setattr(gru, 'train', lambda *a: calls.append(a[1]) or real(*a))
        monkeypatch.setattr(gru, '_TRAINED', {})
        report(args_for(), gru.Printer(io.StringIO()), TINY)
        assert sorted(c.cell for c in calls) == cells, report.__name__
    calls = []
    monkeypatch.setattr(gru, '_TRAINED', {})
    for report in (gru.report_distance, gru.report_inside, gru.report_saturation,
                   gru.report_reach, gru.report_export):
        report(args_for(), gru.Printer(io.StringIO()), TINY)
    assert sorted(c.cell for c in calls) == ['gru', 'lstm', 'rnn']


def test_export_holds_the_models_weights_and_its_greedy_continuation(text):
    """The exported weights are the trained ones by the equations' names (to float32's
    precision); a forward pass written here on them continues the prefix as the record
    says; and the record survives JSON."""
    record = gru.report_export(args_for('--export'), gru.Printer(io.StringIO()), TINY)
    m = gru.train_model(text, gru.model_config(args_for(), TINY, 'gru'))
    assert record.vocab == gru.VOCAB and list(record.weights) == list(gru.named(m.params, 'gru'))
    for name, p in gru.named(m.params, 'gru').items():
        assert np.array_equal(np.array(record.weights[name], np.float32), p), name
    ids = [gru.VOCAB.index(c) for c in record.prefix]
    for _ in range(TINY.num_preds):
        ids.append(int(independent_next_logits(record.weights, ids).argmax()))
    assert record.greedy == ''.join(gru.VOCAB[i] for i in ids)
    assert json.loads(json.dumps(dataclasses.asdict(record))) == dataclasses.asdict(record)


def independent_step(P, cell, x, state):
    """One step of each cell from its equations (chapter 13's and d2l's), written here."""
    def sigma(a):
        return 1 / (1 + np.exp(-a))

    def A(g, H):                                       # X W_x? + H_prev W_h? + b_?
        return x @ P['W_x' + g] + H @ P['W_h' + g] + P['b_' + g]
    H = state[0]
    if cell == 'gru':
        Z, R = sigma(A('z', H)), sigma(A('r', H))
        return (Z * H + (1 - Z) * np.tanh(x @ P['W_xh'] + (R * H) @ P['W_hh'] + P['b_h']),)
    if cell == 'lstm':
        I, F, O, C_tilde = sigma(A('i', H)), sigma(A('f', H)), sigma(A('o', H)), np.tanh(A('c', H))
        C = F * state[1] + I * C_tilde
        return (O * np.tanh(C), C)
    return (np.tanh(A('h', H)),)


@pytest.mark.parametrize('cell', gru.CELLS)
def test_reach_is_the_gradient_of_each_prediction_with_respect_to_earlier_inputs(cell):
    """compute_reach by each cell's backward steps against central differences of log
    P(next character) in the one-hot inputs, with a forward pass written here."""
    rng = np.random.default_rng(3)
    params = {k: 0.6 * rng.standard_normal(v.shape)
              for k, v in gru.init_params(cell, 28, 5, rng, 'float64').items()}
    text = 'the time machine'
    reach = gru.compute_reach(params, cell, text)
    P = gru.named(params, cell)
    ids = [gru.VOCAB.index(c) for c in text]

    def log_p(inputs, t):                              # inputs: one row per character
        state = (np.zeros(5), np.zeros(5))
        for x in inputs[:t + 1]:
            state = independent_step(P, cell, x, state)
        logits = state[0] @ P['W_hq'] + P['b_q']
        return logits[ids[t + 1]] - logits.max() - np.log(np.exp(logits - logits.max()).sum())
    assert len(reach) == len(text) - 1 and [len(r) for r in reach[:3]] == [1, 2, 3]
    onehot = np.eye(28)[ids]
    for t, k in ((0, 0), (5, 0), (5, 3), (14, 14), (14, 2)):
        grad = np.zeros(28)
        for v in range(28):
            up, down = onehot.copy(), onehot.copy()
            up[t - k, v] += 1e-6
            down[t - k, v] -= 1e-6
            grad[v] = (log_p(up, t) - log_p(down, t)) / 2e-6
        assert reach[t][k] == pytest.approx(np.linalg.norm(grad), rel=5e-3), (t, k)  # 3 digits


def test_report_reach_is_each_models_reach_over_the_inside_passage(text):
    """--reach: the passage of --inside and the character after it; for each of the three
    models, compute_reach over it and the mean of each column (recomputed here); and the
    printed table's columns are those means."""
    buf = io.StringIO()
    record = gru.report_reach(args_for('--reach'), gru.Printer(buf), TINY)
    inside = gru.report_inside(args_for('--inside'), gru.Printer(io.StringIO()), TINY)
    assert record.passage == inside.passage and record.reach_back == gru.REACH_BACK
    val_text = gru.validation_text(gru.train_model(text, gru.model_config(args_for(), TINY, 'gru')))
    assert record.next_char == val_text[len(record.passage)] == ' '
    assert [c.model for c in record.models] == ['GRU', 'LSTM', 'plain RNN']
    for c in record.models:
        m = gru.train_model(text, gru.model_config(args_for(), TINY, c.cell))
        assert c.reach == gru.compute_reach(m.params, c.cell, record.passage + record.next_char)
        for k in (0, 5, 63):
            column = [row[k] for row in c.reach if len(row) > k]
            assert len(column) == len(record.passage) - k
            assert c.mean_reach[k] == pytest.approx(sum(column) / len(column), rel=5e-3)
    printed = [line.split('|') for line in buf.getvalue().splitlines() if line.startswith('|')]
    k8 = next(row for row in printed if row[1].strip() == '8')
    assert [float(v) for v in k8[2:5]] == [pytest.approx(c.mean_reach[8], rel=5e-3)
                                           for c in record.models]
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


# ---------------------------------------------------------------- the command line

def test_cli_output_is_byte_identical_across_runs_but_for_the_time():
    a, b = run_script('gru.py', '--epochs', '1', '--cell', 'rnn'), \
        run_script('gru.py', '--epochs', '1', '--cell', 'rnn')
    assert a.returncode == b.returncode == 0
    assert without_times(a.stdout) == without_times(b.stdout)
    assert sum(line.startswith('time:') for line in a.stdout.splitlines()) == 1


@pytest.mark.parametrize('args', [('--epochs', '0'), ('--epochs', 'many'), ('--epochs', '100000'),
                                  ('--lr', '-1'), ('--lr', '0'), ('--lr', 'inf'), ('--lr', 'nan'),
                                  ('--lr', '1e30'), ('--lr', '100.5'), ('--seed', '-3'),
                                  ('--cell', 'transformer'), ('--forget-bias', 'inf'),
                                  ('--forget-bias', '50')])
def test_cli_rejects_bad_values(args):
    done = run_script('gru.py', *args)
    assert done.returncode == 2
    assert args[0] in done.stderr and 'Traceback' not in done.stderr


def test_cli_accepts_the_largest_learning_rate():
    assert gru.parse_args(['--lr', '100']).lr == 100.0
    with pytest.raises(SystemExit):
        gru.parse_args(['--lr', '100.01'])


@pytest.mark.parametrize('args', [('--gradcheck', '--epochs', '3'), ('--gradcheck', '--lr', '2'),
                                  ('--gradcheck', '--corpus', 'x'),
                                  ('--gradcheck', '--forget-bias', '1'), ('--compare', '--lr', '2'),
                                  ('--compare', '--cell', 'gru'), ('--distance', '--lr', '2'),
                                  ('--inside', '--cell', 'lstm'),
                                  ('--saturation', '--forget-bias', '1'),
                                  ('--export', '--cell', 'rnn')])
def test_cli_refuses_options_a_report_does_not_use(args):
    done = run_script('gru.py', *args)
    assert done.returncode == 2, done.stdout
    assert 'Traceback' not in done.stderr and done.stdout == ''
    assert 'has no effect without' in done.stderr


@pytest.mark.parametrize('args', [('--forget-bias', '1'), ('--cell', 'rnn', '--forget-bias', '1')])
def test_cli_refuses_a_forget_bias_without_an_lstm(args):
    done = run_script('gru.py', *args)
    assert done.returncode == 1 and done.stdout == ''
    assert done.stderr == "gru.py: --forget-bias is the LSTM's forget-gate bias: add --cell lstm\n"


def test_cli_takes_options_that_some_chosen_report_uses():
    args = gru.parse_args(['--gradcheck', '--train', '--epochs', '3', '--cell', 'lstm',
                           '--forget-bias', '1'])
    assert args.epochs == 3 and args.forget_bias == 1.0 and args.chosen == ['train', 'gradcheck']


def test_cli_help_mentions_every_option():
    done = run_script('gru.py', '--help')
    assert done.returncode == 0
    for flag in ('--cell', '--epochs', '--lr', '--seed', '--corpus', '--forget-bias', '--help',
                 '--train', '--gradcheck', '--compare', '--distance', '--inside', '--saturation',
                 '--export'):
        assert flag in done.stdout, flag


def test_cli_diverging_training_is_one_line_and_status_1():
    done = run_loaded('gru.py', 'script.LR_MAX = 1e40; '
                      'sys.exit(script.main(["--epochs", "2", "--lr", "1e30"]))')
    assert done.returncode == 1, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith('gru.py: training diverged in epoch 1')
    assert 'nan' not in done.stdout.lower() and '| epoch |' in done.stdout


def one_line_error(done):
    assert done.returncode == 1
    assert done.stdout == ''
    assert 'Traceback' not in done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith('gru.py: ')
    return lines[0]


def test_cli_missing_corpus(tmp_path):
    line = one_line_error(run_script('gru.py', '--corpus', str(tmp_path / 'nope.txt')))
    assert 'cannot read corpus' in line and 'nope.txt' in line and 'No such file' in line


def test_cli_directory_as_corpus(tmp_path):
    assert 'cannot read corpus' in one_line_error(run_script('gru.py', '--corpus', str(tmp_path)))


def test_cli_non_utf8_corpus(tmp_path):
    bad = tmp_path / 'latin1.txt'
    bad.write_bytes('The Time Traveller \u00e9tait l\u00e0. '.encode('latin-1') * 2000)
    assert 'UTF-8' in one_line_error(run_script('gru.py', '--corpus', str(bad)))


def test_cli_too_short_corpus(tmp_path):
    short = tmp_path / 'short.txt'
    short.write_text('The Time Machine, by H. G. Wells.\n', encoding='utf-8')
    assert 'windows' in one_line_error(run_script('gru.py', '--corpus', str(short)))


def test_cli_finds_the_corpus_next_to_itself(tmp_path):
    for name in ('gru.py', 'timemachine.txt'):
        (tmp_path / name).write_bytes((CODE / name).read_bytes())
    done = run_script(str(tmp_path / 'gru.py'), '--epochs', '1', '--cell', 'rnn', cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert '|     1 |' in done.stdout
    assert sorted(p.name for p in tmp_path.iterdir()) == ['gru.py', 'timemachine.txt']


def test_cli_gradcheck_for_one_cell():
    done = run_script('gru.py', '--gradcheck', '--cell', 'rnn')
    assert done.returncode == 0, done.stderr
    assert '| rnn  | W_hh' in done.stdout and '| gru ' not in done.stdout


# ---------------------------------------------------------------- the speed study

def load_profile():
    return load_script(str(ROOT / 'benchmarks' / 'gru_profile.py'))


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_the_speed_studys_variants_compute_the_served_model(cell):
    """benchmarks/gru_profile.py times gru.py against itself without one speed-up at a
    time; each variant must give the served loss and gradient, float64, to 1e-10."""
    profile = load_profile()
    params, X, Y, state = small_problem(cell, seed=6, V=9, B=5, T=7, h=4)
    loss, grads = gru.loss_and_grads(params, cell, X, Y, state)
    names = profile.VARIANTS if cell == 'gru' else ('one-hot', 'per-step output')
    for name in names:
        v_loss, v_grads = profile.variant(name, cell)(
            {k: p.copy() for k, p in params.items()}, X, Y, state)
        assert abs(v_loss - loss) < 1e-10, name
        for k, g in grads.items():
            assert np.abs(v_grads[k] - g).max() < 1e-10 * max(1.0, np.abs(g).max()), (name, k)


# -- training by updates (--updates), the run chapter 14's page trains -------------------

UPDATES = dict(num_train=96, num_val=8, batch_size=8, dtype='float64', seed=3)


def test_updates_for_whole_epochs_are_the_epochs_of_train(text):
    """Two epochs of 12 batches: train_updates' 24 updates are train()'s two epochs,
    parameter for parameter (the same batches from the same generator, the same steps)."""
    config = gru.Config(**UPDATES, epochs=2)
    trained = gru.train(text, config)
    params, run = gru.train_updates(text, dataclasses.replace(config, updates=24))
    for name, p in trained.params.items():
        assert np.array_equal(params[name], p), name
    history = trained.record.history
    per_epoch = [np.mean(run.losses[:12]), np.mean(run.losses[12:])]
    assert [math.log(r.train_ppl) for r in history] == pytest.approx(per_epoch, rel=1e-12)
    assert run.rows[-1].val_ppl == pytest.approx(history[-1].val_ppl, rel=1e-12)
    assert [r.epoch for r in run.rows] == [2]  # 24 updates: one row, after the last


def test_update_rows_come_every_50_and_after_the_last(text):
    config = gru.Config(**dict(UPDATES, batch_size=1), updates=120)
    _, run = gru.train_updates(text, config)
    assert [r.update for r in run.rows] == [50, 100, 120]
    assert [r.epoch for r in run.rows] == [1, 2, 2]  # 96 windows an epoch
    assert run.rows[-1].train_ppl == pytest.approx(math.exp(np.mean(run.losses[100:])))
    assert run.rows[1].max_grad_norm == max(run.grad_norms[50:100])
    assert round_trips(run) and plain_values(dataclasses.asdict(run))


def test_init_record_is_init_params_and_the_generator_after_it():
    import base64
    config = gru.Config(hidden=5, seed=7)
    record = gru.compute_init(config)
    rng = np.random.default_rng(7)
    params = gru.init_params('gru', len(gru.VOCAB), 5, rng, 'float64')
    flat = np.frombuffer(base64.b64decode(record.float64), '<f8')
    assert np.array_equal(flat, np.concatenate([p.ravel() for p in params.values()]))
    assert {k: tuple(v) for k, v in record.shapes.items()} == {k: p.shape for k, p in params.items()}
    after = np.random.default_rng(0)
    after.bit_generator.state = {'bit_generator': 'PCG64', 'state': {
        'state': int(record.state), 'inc': int(record.inc)}, 'has_uint32': record.has_uint32,
        'uinteger': record.uinteger}
    assert np.array_equal(after.permutation(50), rng.permutation(50))


def test_cli_updates_prints_a_row_every_50_and_refuses_epochs_with_it(tmp_path):
    corpus = tmp_path / 'mine.txt'
    corpus.write_text('It was a bright cold day in April, and the clocks were striking '
                      'thirteen. ' * 6, 'utf-8')
    args = ('--updates', '60', '--float64', '--hidden', '8', '--batch-size', '2', '--lr', '2',
            '--clip', '0.5', '--num-train', '300', '--num-val', '20', '--corpus', str(corpus))
    result = run_script('gru.py', *args)
    assert result.returncode == 0, result.stderr
    config, updates, samples = [cells_of_markdown(t) for t in table_blocks(result.stdout)]
    assert [row[0] for row in updates[1:]] == ['50', '60']
    assert [row[0] for row in samples[1:]] == ['50', '60']
    assert dict(config[1:])['training'] == '60 updates, seed 0, float64'
    assert dict(config[1:])['optimiser'] == 'SGD, learning rate 2, gradient clipped to norm 0.5'
    both = run_script('gru.py', '--updates', '5', '--epochs', '2')
    assert both.returncode == 1 and both.stderr.strip().count('\n') == 0
    assert 'give one' in both.stderr
    alone = run_script('gru.py', '--gradcheck', '--batch-size', '4')
    assert alone.returncode == 2 and '--batch-size has no effect' in alone.stderr
