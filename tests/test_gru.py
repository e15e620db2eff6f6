"""Tests for docs/code/gru.py: data pipeline, both paths' gradients, clipping, training,
the reports and the command line.

numpy only; the whole file runs in a few minutes at most (no 50-epoch run here): the
reports are called with small configurations.
"""
import dataclasses
import hashlib
import importlib.util
import io
import json
import math
import os
import re
import subprocess
import sys
import time
import tracemalloc
from contextlib import redirect_stdout
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parent.parent
GRU_PY = ROOT / 'docs' / 'code' / 'gru.py'
CORPUS = GRU_PY.with_name('timemachine.txt')
CORPUS_SHA256 = 'bc3c976c7f0d9e7912b8a857ccd92cccf28eb9809e837b8a7eb6dadae8fa75d6'


def load_gru():
    spec = importlib.util.spec_from_file_location('gru_under_test', GRU_PY)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gru = load_gru()


@pytest.fixture(scope='module')
def text():
    return CORPUS.read_text(encoding='utf-8')


@pytest.fixture(scope='module')
def corpus():
    return gru.read_corpus(CORPUS, gru.Config().num_chars_needed)


ONE_THREAD = {'OPENBLAS_NUM_THREADS': '1', 'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1'}


def run_cli(*args, cwd=None):
    # one BLAS thread, as gru.py uses when run as a script: results depend on the count
    return subprocess.run([sys.executable, str(GRU_PY), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=300, env=dict(os.environ, **ONE_THREAD))


def run_python(code):
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, **ONE_THREAD))


LOAD = ('import importlib.util, io, sys; '
        f'spec = importlib.util.spec_from_file_location("g", {str(GRU_PY)!r}); '
        'g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g); ')


def without_times(stdout):
    return [line for line in stdout.splitlines() if not line.startswith('time:')]


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


# ---------------------------------------------------------------- data

def test_corpus_is_the_pinned_file():
    assert hashlib.sha256(CORPUS.read_bytes()).hexdigest() == CORPUS_SHA256


def test_import_has_no_side_effects():
    out = io.StringIO()
    with redirect_stdout(out):
        load_gru()
    assert out.getvalue() == ''


def test_preprocessing_is_d2ls():
    assert gru.tokenize('The Time-Machine,\n 1895!  by H. G. Wells') == \
        list('the time machine by h g wells')


def test_vocabulary_has_28_tokens_in_d2l_order(text):
    vocab = gru.build_vocab(gru.tokenize(text))
    assert vocab == [' ', '<unk>'] + [chr(c) for c in range(ord('a'), ord('z') + 1)]
    assert gru.VOCAB == vocab                          # the fixed list is d2l's for this text


def test_windows_and_split_match_an_independent_count(text, corpus):
    chars = re.sub('[^A-Za-z]+', ' ', text).lower()
    assert corpus.total_chars == len(chars)
    assert corpus.chars == chars[:10000 + 5000 + 32]
    data = gru.make_dataset(corpus.chars, gru.Config())
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


def test_too_short_corpus_is_a_corpus_error():
    with pytest.raises(gru.CorpusError, match='windows'):
        gru.make_dataset('just a few words', gru.Config())


@pytest.mark.parametrize('raw', [b'', b'abc', b'  abc', b'abc  ', b'a\xc3\xa9b--c!', b'\n\n',
                                 'caf\u00e9 na\u00efve \u2014 ok'.encode()])
def test_streaming_count_is_the_preprocessed_length(tmp_path, raw):
    path = tmp_path / 'c.txt'
    path.write_bytes(raw)
    with open(path, 'rb') as f:
        assert gru.count_preprocessed(f, block=2) == len(gru.preprocess(raw.decode()))


def test_a_large_corpus_is_read_only_as_far_as_training_needs(tmp_path, text):
    """A 100 MB corpus: reading it for training must be quick and small (it used to be
    read, decoded and tokenised whole: gigabytes and a minute for 200 MB); its length
    after preprocessing is still counted, exactly."""
    copies = 560
    big = tmp_path / 'big.txt'
    data = text.encode('utf-8')
    with open(big, 'wb') as f:
        for _ in range(copies):
            f.write(data)
    assert big.stat().st_size > 100e6
    one, two = len(gru.preprocess(text)), len(gru.preprocess(text + text))
    expected = one + (copies - 1) * (two - one)        # each join is like the first
    needed = gru.Config().num_chars_needed
    tracemalloc.start()
    start = time.perf_counter()
    c = gru.read_corpus(big, needed)
    seconds = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert c.chars == gru.preprocess(text)[:needed]
    assert c.total_chars == expected
    assert peak < 40e6, peak
    assert seconds < 20, seconds


def test_corpus_read_stops_early_and_spans_chunk_boundaries(tmp_path, monkeypatch):
    monkeypatch.setattr(gru, 'CHUNK_BYTES', 3)         # runs and UTF-8 characters cut by chunks
    raw = 'Ab  c\u00e9\u00e9d!!  ef'.encode() * 50
    path = tmp_path / 'c.txt'
    path.write_bytes(raw)
    full = gru.preprocess(raw.decode())
    for n in (1, 5, 17, len(full), len(full) + 10):
        c = gru.read_corpus(path, n)
        assert c.chars == full[:n] and c.total_chars == len(full)


def test_non_utf8_error_gives_the_absolute_offset(tmp_path, monkeypatch):
    monkeypatch.setattr(gru, 'CHUNK_BYTES', 4)
    path = tmp_path / 'bad.txt'
    path.write_bytes(b'abcdefgh\xe9ijk')
    with pytest.raises(gru.CorpusError, match=r'byte 0xe9 at offset 8\)'):
        gru.read_corpus(path, 100)


def test_param_counts():
    assert gru.compute_param_counts() == {
        'gru': 3 * (28 * 32 + 32 * 32 + 32) + 32 * 28 + 28,
        'lstm': 4 * (28 * 32 + 32 * 32 + 32) + 32 * 28 + 28,
        'rnn': 28 * 32 + 32 * 32 + 32 + 32 * 28 + 28}


def test_config_defaults_are_d2ls():
    c = gru.Config()
    assert (c.cell, c.hidden, c.num_steps, c.batch_size, c.lr, c.clip, c.epochs) == \
        ('gru', 32, 32, 1024, 4.0, 1.0, 50)
    assert (c.num_train, c.num_val, c.init_sigma, c.prefix, c.num_preds) == \
        (10000, 5000, 0.01, 'it has', 20)
    assert c.forget_bias == 0.0 and c.fast
    assert gru.Config(cell='lstm').lr == 4.0 and gru.Config(cell='rnn').lr == 1.0
    assert gru.Config(cell='rnn', lr=4.0).lr == 4.0


def test_init_is_d2ls():
    p = gru.init_params('gru', 28, 32, np.random.default_rng(0))
    assert set(p) == {'W_xz', 'W_hz', 'b_z', 'W_xr', 'W_hr', 'b_r',
                      'W_xh', 'W_hh', 'b_h', 'W_hq', 'b_q'}
    assert all(v.dtype == np.float32 for v in p.values())
    for name, v in p.items():
        if name.startswith('b'):
            assert not v.any()
        else:
            assert 0.007 < v.std() < 0.013 and abs(v.mean()) < 0.003


def test_forget_bias_sets_b_f_only_and_leaves_the_weights_alone():
    a = gru.init_params('lstm', 28, 32, np.random.default_rng(0))
    b = gru.init_params('lstm', 28, 32, np.random.default_rng(0), forget_bias=1.0)
    assert np.all(b['b_f'] == 1) and not a['b_f'].any()
    assert all(np.array_equal(a[k], b[k]) for k in a if k != 'b_f')


# ---------------------------------------------------------------- gradients

def small_problem(cell, seed=1, V=5, B=2, T=4, h=3, scale=0.5):
    """Random float64 weights, windows and a random initial state (not gru.py's helper)."""
    rng = np.random.default_rng(seed)
    params = {k: scale * rng.standard_normal(v.shape)
              for k, v in gru.init_params(cell, V, h, rng, 'float64').items()}
    X = rng.integers(0, V, (B, T))
    Y = rng.integers(0, V, (B, T))
    H = scale * rng.standard_normal((2, B, h))
    state = (H[0], H[1]) if cell == 'lstm' else H[0]
    return params, X, Y, state


def numeric_gradient(f, p, eps=1e-5):
    numeric = np.zeros_like(p)
    flat, nflat = p.reshape(-1), numeric.reshape(-1)
    for i in range(flat.size):
        old = flat[i]
        flat[i] = old + eps
        up = f()
        flat[i] = old - eps
        down = f()
        flat[i] = old
        nflat[i] = (up - down) / (2 * eps)
    return numeric


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_every_plain_gradient_matches_central_differences(cell):
    params, X, Y, state = small_problem(cell)
    loss, grads = gru.loss_and_grads(params, cell, X, Y, state)
    assert set(grads) == set(params)

    def f():
        return gru.loss_and_grads(params, cell, X, Y, state, need_grads=False)[0]
    assert f() == loss
    for name, p in params.items():
        numeric = numeric_gradient(f, p)
        a = grads[name]
        assert a.shape == p.shape
        rel = np.abs(a - numeric).max() / (np.abs(a) + np.abs(numeric)).max()
        assert rel < 1e-6, (cell, name, rel)
        assert np.all(np.abs(a - numeric) <= 1e-6 * np.abs(numeric) + 1e-9), (cell, name)


def independent_loss(params, cell, X, Y, state):
    """d2l's equations once more, written here: the mean cross-entropy, float64."""
    def sig(a):
        return 1 / (1 + np.exp(-a))
    P = params
    H, C = (state if cell == 'lstm' else (state, None))
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
def test_plain_loss_is_d2ls_equations(cell):
    params, X, Y, state = small_problem(cell, seed=7, B=3, T=5)
    assert gru.loss_and_grads(params, cell, X, Y, state, need_grads=False)[0] == \
        pytest.approx(independent_loss(params, cell, X, Y, state), rel=1e-13)


@pytest.mark.parametrize('chunk', [512, 2])
@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_fast_path_equals_plain_path_in_float64(cell, chunk, monkeypatch):
    """Loss and every gradient, from a random initial state; chunk 2 splits the batch of
    5 into chunks of 2, 2 and 1 (the fast path's cache blocking)."""
    monkeypatch.setattr(gru, 'FAST_CHUNK', chunk)
    params, X, Y, state = small_problem(cell, seed=3, V=6, B=5, T=7, h=4)
    loss, grads = gru.loss_and_grads(params, cell, X, Y, state)
    fast_loss, fast_grads = gru.fast_loss_and_grads(params, cell, X, Y, state)
    assert abs(fast_loss - loss) < 1e-10 * max(1.0, abs(loss))
    assert set(fast_grads) == set(grads) and list(fast_grads) == list(params)
    for name, g in grads.items():
        assert fast_grads[name].shape == g.shape
        assert np.abs(fast_grads[name] - g).max() < 1e-10 * max(1.0, np.abs(g).max()), name
    no_grads = gru.fast_loss_and_grads(params, cell, X, Y, state, need_grads=False)
    assert no_grads[1] is None and abs(no_grads[0] - loss) < 1e-10


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_fast_path_equals_plain_path_on_a_d2l_sized_batch(cell):
    params, X, Y, state = small_problem(cell, seed=4, V=28, B=600, T=8, h=32, scale=0.2)
    loss, grads = gru.loss_and_grads(params, cell, X, Y, state)
    fast_loss, fast_grads = gru.fast_loss_and_grads(params, cell, X, Y, state)
    assert abs(fast_loss - loss) < 1e-10
    for name, g in grads.items():
        assert np.abs(fast_grads[name] - g).max() < 1e-10 * max(1.0, np.abs(g).max()), name


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_float32_fast_gradients_agree_with_float64(cell):
    params, X, Y, state = small_problem(cell, seed=2, V=28, B=64, T=16, h=32, scale=0.3)
    loss64, g64 = gru.loss_and_grads(params, cell, X, Y, state)
    p32 = {k: v.astype(np.float32) for k, v in params.items()}
    s32 = tuple(s.astype(np.float32) for s in state) if cell == 'lstm' else state.astype(np.float32)
    loss32, g32 = gru.fast_loss_and_grads(p32, cell, X, Y, s32)
    assert loss32 == pytest.approx(loss64, rel=1e-5)
    for k in params:
        assert g32[k].dtype == np.float32
        assert np.abs(g32[k] - g64[k]).max() <= 1e-4 * max(1e-2, np.abs(g64[k]).max()), k


def test_reused_buffers_give_the_same_result():
    params, X, Y, state = small_problem('gru', seed=3)
    work = {}
    a = gru.fast_loss_and_grads(params, 'gru', X, Y, state, work=work)
    gru.fast_loss_and_grads(params, 'gru', X[:1], Y[:1], work=work)   # other shapes in between
    b = gru.fast_loss_and_grads(params, 'gru', X, Y, state, work=work)
    c = gru.fast_loss_and_grads(params, 'gru', X, Y, state)
    assert a[0] == b[0] == c[0]
    for k in params:
        assert np.array_equal(a[1][k], b[1][k]) and np.array_equal(a[1][k], c[1][k])


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_forward_logits_give_the_same_loss(cell):
    params, X, Y, state = small_problem(cell, seed=4)
    for forward in (gru.forward, gru.fast_forward):
        logits, _ = forward(params, cell, X, state)
        logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        expected = -np.take_along_axis(logp, Y[..., None], -1).mean()
        assert gru.loss_and_grads(params, cell, X, Y, state, need_grads=False)[0] == \
            pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize('cell', ['gru', 'lstm'])
def test_state_carries_over_between_calls(cell):
    params, X, _, state = small_problem(cell, seed=5)
    for forward in (gru.forward, gru.fast_forward):
        whole, end = forward(params, cell, X, state)
        first, mid = forward(params, cell, X[:, :2], state)
        second, end2 = forward(params, cell, X[:, 2:], mid)
        assert np.allclose(np.concatenate([first, second], axis=1), whole, atol=1e-14)
        assert np.allclose(np.concatenate(end if cell == 'lstm' else [end]),
                           np.concatenate(end2 if cell == 'lstm' else [end2]), atol=1e-14)


def test_sigmoid_does_not_overflow_in_float32():
    a = np.array([-1000, -90, -5, 0, 5, 90, 1000], np.float32)
    with np.errstate(over='raise'):
        s = gru.sigmoid(a)
        f = gru.sigmoid_(a.copy())
    assert np.all(np.isfinite(s)) and s[0] < 1e-34 and s[-1] == 1 and s[3] == 0.5
    assert np.allclose(s, f, atol=1e-7)


def test_scripts_own_gradcheck_passes():
    record = gru.compute_gradcheck()
    assert len(record.rows) == 11 + 14 + 5
    assert record.worst < 1e-6 and record.worst_fast_vs_plain < 1e-10 and record.passed
    assert round_trips(record) and plain_values(dataclasses.asdict(record))
    table = gru.format_gradcheck_table(record)
    assert '| gru  | W_xz' in table


# ---------------------------------------------------------------- clipping

def test_clipping_rescales_a_long_gradient_to_norm_one():
    rng = np.random.default_rng(0)
    grads = {'a': rng.standard_normal((3, 4)), 'b': rng.standard_normal(5)}
    scale = 7 / math.sqrt(sum((g ** 2).sum() for g in grads.values()))
    grads = {k: g * scale for k, g in grads.items()}
    before = {k: g.copy() for k, g in grads.items()}
    norm = gru.clip_gradients(grads, 1.0)
    assert norm == pytest.approx(7.0, rel=1e-12)
    after = math.sqrt(sum((g ** 2).sum() for g in grads.values()))
    assert after == pytest.approx(1.0, abs=1e-12)
    for k in grads:                                    # same direction
        assert np.allclose(grads[k] * 7.0, before[k], rtol=1e-12)


def test_clipping_leaves_a_short_gradient_alone():
    grads = {'a': np.full((2, 2), 0.1), 'b': np.array([0.2, -0.3])}
    before = {k: g.copy() for k, g in grads.items()}
    norm = gru.clip_gradients(grads, 1.0)
    assert norm < 1
    for k in grads:
        assert np.array_equal(grads[k], before[k])


# ---------------------------------------------------------------- tables and records

def test_format_table_pads_every_row_to_the_same_widths():
    table = gru.format_table(('name', 'value'), [('a', '1.00'), ('longer name', '12345.67')], 'lr')
    lines = table.splitlines()
    assert len({len(line) for line in lines}) == 1
    assert lines[1].split('|')[1:3] == ['-' * 13, '-' * 9 + ':']
    assert lines[2].endswith('     1.00 |')


def test_train_record_round_trips_through_json():
    record = gru.TrainRecord(
        config=dataclasses.asdict(gru.Config(epochs=2, seed=3)),
        history=[gru.EpochRecord(1, 20.123456789012345, 17.5, 0.25, 0.0),
                 gru.EpochRecord(2, 1 / 3, math.pi, 3.5, 0.5)],
        samples=[gru.SampleRecord(2, 'it has a sample ', 'it has x', 'it has y')],
        sample='it has a sample ', seconds=1.2345678901234567,
        tokens_per_second=265432.1098765432, num_params=6780, vocab_size=28,
        corpus='timemachine.txt', num_chars=173501, chars_used=15032)
    d = json.loads(json.dumps(dataclasses.asdict(record)))
    assert gru.TrainRecord.from_dict(d) == record
    assert plain_values(d)


# ---------------------------------------------------------------- training

SMALL = dict(num_train=2048, num_val=1024, epochs=2)   # a quick run for in-process checks


def test_training_runs_and_is_deterministic(corpus):
    r = gru.compute_training(corpus, gru.Config(**SMALL))
    assert [e.epoch for e in r.history] == [1, 2]
    assert all(1 < ppl < 28 for e in r.history for ppl in (e.train_ppl, e.val_ppl))
    assert r.history[1].val_ppl < r.history[0].val_ppl   # it learns something
    assert r.sample.startswith('it has') and len(r.sample) == len('it has') + 20
    assert r.num_params == 6780 and r.vocab_size == 28
    assert r.tokens_per_second > 0 and r.seconds > 0
    assert round_trips(r) and plain_values(dataclasses.asdict(r))
    gru._TRAINED.clear()                                 # a real second run, not the memo
    again = gru.compute_training(corpus, gru.Config(**SMALL))
    assert again is not r and again.history == r.history and again.samples == r.samples
    other = gru.compute_training(corpus, gru.Config(**dict(SMALL, seed=1)))
    assert other.history != r.history


def test_training_is_memoised_by_configuration_and_corpus(corpus, tmp_path):
    config = gru.Config(**dict(SMALL, epochs=1, seed=11))
    first = gru.train_model(corpus, config)
    rows = []
    assert gru.train_model(corpus, config, rows.append) is first   # trained once
    assert rows == first.record.history                            # rows replayed
    assert gru.train_model(corpus, dataclasses.replace(config, lr=2.0)) is not first
    other_text = dataclasses.replace(corpus, chars=corpus.chars[1:] + 'x', digest='other')
    assert gru.train_model(other_text, config) is not first


@pytest.mark.parametrize('cell', ['lstm', 'rnn'])
def test_other_cells_train(corpus, cell):
    rows = []
    r = gru.compute_training(corpus, gru.Config(cell=cell, **SMALL), rows.append)
    assert rows == r.history
    assert r.history[1].val_ppl < r.history[0].val_ppl < 28


def test_plain_path_trains_like_the_fast_path(corpus):
    """Config(fast=False) trains with the plain path: the same model, so the same
    perplexities up to float32 rounding."""
    small = dict(num_train=1024, num_val=512, epochs=2, seed=5)
    fast = gru.compute_training(corpus, gru.Config(**small))
    plain = gru.compute_training(corpus, gru.Config(fast=False, **small))
    for a, b in zip(fast.history, plain.history):
        assert a.val_ppl == pytest.approx(b.val_ppl, rel=1e-3)
        assert a.max_grad_norm == pytest.approx(b.max_grad_norm, rel=1e-3)


def test_gradient_norms_and_clipping_are_recorded_per_epoch(corpus):
    """The record's max grad norm and clipped fraction against a training loop written
    here from the script's parts (the plain RNN at lr 4 gets clipped)."""
    config = gru.Config(cell='rnn', lr=30.0, num_train=2048, num_val=512, epochs=3, seed=2)
    r = gru.compute_training(corpus, config)
    data = gru.make_dataset(corpus.chars, config)
    rng = np.random.default_rng(config.seed)
    params = gru.init_params('rnn', 28, 32, rng, 'float32', 0.01)
    for epoch in r.history:
        order = rng.permutation(2048)
        norms = []
        for i in range(0, 2048, 1024):
            b = order[i:i + 1024]
            _, g = gru.fast_loss_and_grads(params, 'rnn', data.X_train[b], data.Y_train[b])
            norm = math.sqrt(sum(float((v.astype(np.float64) ** 2).sum()) for v in g.values()))
            norms.append(norm)
            for k in g:
                params[k] -= config.lr * g[k] * (min(1.0, 1.0 / norm))
        assert epoch.max_grad_norm == pytest.approx(max(norms), rel=1e-4)
        assert epoch.clipped_fraction == sum(n > 1 for n in norms) / len(norms)
    assert any(e.clipped_fraction > 0 for e in r.history)
    assert 'max grad norm' in gru.format_history_table(r)


def test_non_finite_loss_stops_training(corpus):
    for lr in (1e30, math.inf):                       # a huge loss, then NaN
        with pytest.raises(gru.TrainingDiverged, match='training diverged in epoch 1'):
            gru.compute_training(corpus, gru.Config(lr=lr, **SMALL))


def test_samples_at_the_chosen_epochs_and_independent_of_training(corpus):
    config = gru.Config(**dict(SMALL, epochs=6))
    r = gru.compute_training(corpus, config)
    assert [s.epoch for s in r.samples] == [1, 5, 6]
    assert r.sample == r.samples[-1].greedy
    for s in r.samples:
        for text in (s.greedy, s.temp_0_5, s.temp_1_0):
            assert text.startswith('it has') and len(text) == 26 and '<unk>' not in text
    # other prefixes: other samples, the same training (sampling has its own random numbers)
    other = gru.compute_training(corpus, dataclasses.replace(config, prefix='the'))
    assert other.history == r.history and other.samples != r.samples
    table = gru.format_samples_table(r)
    assert f'"{r.samples[0].greedy}"' in table          # quoted: trailing spaces show


def test_greedy_sample_is_argmax_decoding(corpus):
    m = gru.train_model(corpus, gru.Config(**SMALL))
    ids = [gru.VOCAB.index(c) for c in 'it has']
    for _ in range(20):                                # independent: the whole text each time
        logits, _ = gru.forward(m.params, 'gru', np.array([ids]))
        ids.append(int(logits[0, -1].argmax()))
    assert m.record.sample == ''.join(gru.VOCAB[i] for i in ids)


# ---------------------------------------------------------------- reports

TINY = gru.Config(num_train=1024, num_val=512, epochs=2, hidden=16)


def args_for(*argv):
    return gru.parse_args(list(argv))


def test_report_train_prints_and_returns_its_record():
    buf = io.StringIO()
    out = gru.Printer(buf)
    record = gru.report_train(args_for('--epochs', '2'), out, TINY)
    assert set(out.tables) == {'config', 'history', 'samples'}
    assert out.tables['history'] == gru.format_history_table(record)
    assert out.tables['samples'] == gru.format_samples_table(record)
    assert buf.getvalue().rstrip('\n').splitlines()[-1] == gru.format_timing(record)
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


def test_report_compare_trains_four_models_with_one_timing_line():
    buf = io.StringIO()
    record = gru.report_compare(args_for('--compare', '--epochs', '1'), gru.Printer(buf), TINY)
    assert [m.model for m in record.models] == ['GRU', 'LSTM (b_f 0)', 'LSTM (b_f 1)', 'plain RNN']
    assert [m.lr for m in record.models] == [4.0, 4.0, 4.0, 1.0]
    assert [m.forget_bias for m in record.models] == [0.0, 0.0, 1.0, 0.0]
    assert record.models[1].history != record.models[2].history
    assert sum(line.startswith('time:') for line in buf.getvalue().splitlines()) == 1
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


def finite_difference_distance(params, cell, x, y, k, eps=1e-6):
    """dL_T / dH_{T-k} for one window (x, y), by central differences: run the plain steps
    to H_{T-k}, nudge one unit, run on to the last step's loss."""
    T = len(x)
    state = gru.zero_state(params, cell, 1)
    for t in range(T - k):
        state, _, _ = gru.step(params, cell, x[t:t + 1], state)

    def last_loss(state):
        H = state[0] if cell == 'lstm' else state
        for t in range(T - k, T):
            state, H, _ = gru.step(params, cell, x[t:t + 1], state)
        logits = (H @ params['W_hq'] + params['b_q'])[0]
        return float(np.log(np.exp(logits - logits.max()).sum()) + logits.max() - logits[y[-1]])
    H = state[0] if cell == 'lstm' else state
    grad = np.zeros(H.shape[1])
    for j in range(H.shape[1]):
        values = []
        for sign in (1, -1):
            nudged = H.copy()
            nudged[0, j] += sign * eps
            values.append(last_loss((nudged, state[1]) if cell == 'lstm' else nudged))
        grad[j] = (values[0] - values[1]) / (2 * eps)
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
    buf = io.StringIO()
    record = gru.report_distance(args_for('--distance'), gru.Printer(buf), TINY)
    assert [c.model for c in record.curves] == ['GRU', 'LSTM', 'plain RNN']
    assert record.ks == [0, 1, 2, 4, 8, 16, 31]
    for c in record.curves:
        assert len(c.trained) == len(c.init) == 32
        assert all(v >= 0 for v in c.trained + c.init)
    m = gru.train_model(gru.corpus_for(args_for('--distance'), TINY),
                        gru.model_config(args_for('--distance'), TINY, 'gru'))
    check = gru.compute_gradient_distance(m.initial, 'gru', m.data.X_val[:64], m.data.Y_val[:64])
    full = gru.compute_gradient_distance(m.initial, 'gru', m.data.X_val, m.data.Y_val)
    assert record.curves[0].init == full[0] and len(check[0]) == 32
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


def test_report_inside_values_come_from_the_models_steps():
    args = args_for('--inside')
    buf = io.StringIO()
    record = gru.report_inside(args, gru.Printer(buf), TINY)
    m = gru.train_model(gru.corpus_for(args, TINY), gru.model_config(args, TINY, 'gru'))
    text = m.text[TINY.num_train:]
    n = gru.INSIDE_PASSAGE
    assert record.passage == text[:n] and len(record.z_mean) == n == record.passage_chars
    p = {k: v.astype(np.float64) for k, v in m.params.items()}
    H = np.zeros((1, TINY.hidden))
    Hs = []
    for i, c in enumerate(text):                       # the model's own step, one by one
        H_prev = H
        H, (_, _, Z, _, _) = gru.gru_step(p, np.array([gru.VOCAB.index(c)]), H_prev)
        Hs.append(H[0])
        if i < 5:
            assert record.z_mean[i] == pytest.approx(Z.mean(), abs=1e-4)
    Hs = np.array(Hs)
    inside = np.array([a.isalpha() and b.isalpha() for a, b in zip(text, text[1:])], float)
    r = [np.corrcoef(Hs[:-1, j], inside)[0, 1] for j in range(TINY.hidden)]
    unit = record.units[0]
    assert unit.feature == 'inside a word' and unit.unit == int(np.argmax(np.abs(r)))
    assert unit.correlation == pytest.approx(r[unit.unit], abs=1e-4)
    assert unit.values[:3] == pytest.approx(Hs[:3, unit.unit], abs=1e-4)
    assert record.units[1].unit != unit.unit and not unit.runner_up
    space = np.array([a == ' ' for a in text[:-1]], float)
    r_space = np.abs([np.corrcoef(Hs[:-1, j], space)[0, 1] for j in range(TINY.hidden)])
    assert record.units[1].runner_up == (int(np.argmax(r_space)) == unit.unit)
    assert round_trips(record) and plain_values(dataclasses.asdict(record))
    printed = buf.getvalue()
    assert 'text ' in printed and record.passage[:64].replace(' ', '_') in printed
    assert '| unit' in printed


def test_inside_passage_is_wrapped_with_a_digit_under_each_character():
    record = gru.InsideRecord('ab cd' * 30, 150, [0.05, 0.95, 1.0, 0.5, 0.0] * 30,
                              [gru.UnitRecord('a space', 3, -0.5, False, [-1.0, 1.0, 0.0, -0.05, 0.99] * 30)],
                              1000)
    blocks = gru.format_inside_passage(record).split('\n\n')
    assert len(blocks) == 3                            # 150 characters, 64 per line
    text, z, unit = blocks[0].splitlines()
    assert text.startswith('text    ab_cd') and z.startswith('Z       09950')
    assert unit.startswith('unit 3  09549')
    assert len(text) == len(z) == len(unit) == len('unit 3  ') + 64


def test_report_saturation_against_an_independent_forward_pass():
    args = args_for('--saturation')
    record = gru.report_saturation(args, gru.Printer(io.StringIO()), TINY)
    assert [(g.model, g.gate) for g in record.gates] == \
        [('GRU', 'Z'), ('GRU', 'R'), ('LSTM', 'I'), ('LSTM', 'F'), ('LSTM', 'O')]
    corpus = gru.corpus_for(args, TINY)

    def sig(a):
        return 1 / (1 + np.exp(-a))
    for cell, gates in (('gru', 'zr'), ('lstm', 'ifo')):
        m = gru.train_model(corpus, gru.model_config(args, TINY, cell))
        P = {k: v.astype(np.float64) for k, v in m.params.items()}
        X = m.data.X_val
        H = np.zeros((len(X), TINY.hidden))
        C = np.zeros_like(H)
        values = {g: [] for g in gates}
        for t in range(X.shape[1]):                    # d2l's equations, written here
            x = np.eye(28)[X[:, t]]
            a = {g: sig(x @ P['W_x' + g] + H @ P['W_h' + g] + P['b_' + g])
                 for g in ('zr' if cell == 'gru' else 'ifo')}
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
            assert rec.left == pytest.approx((v < 0.1).mean(), abs=1e-9)
            assert rec.right == pytest.approx((v > 0.9).mean(), abs=1e-9)
            assert rec.unit_right == pytest.approx(list((v > 0.9).mean(axis=0)), abs=1e-4)
    assert round_trips(record) and plain_values(dataclasses.asdict(record))


def test_reports_in_one_process_train_each_model_once(monkeypatch):
    calls = []
    real = gru._train
    monkeypatch.setattr(gru, '_train', lambda *a: calls.append(a[1]) or real(*a))
    monkeypatch.setattr(gru, '_TRAINED', {})
    config = dataclasses.replace(TINY, seed=21)
    for report in (gru.report_distance, gru.report_inside, gru.report_saturation):
        report(args_for('--' + report.__name__[7:]), gru.Printer(io.StringIO()), config)
    assert sorted(c.cell for c in calls) == ['gru', 'lstm', 'rnn']


# ---------------------------------------------------------------- the command line

def test_cli_prints_what_run_writes_to_a_printer():
    """`gru.py --epochs 2` prints byte for byte what run(parse_args(argv), Printer(buf))
    writes (in a fresh process with the same single BLAS thread), but for the time line;
    and its tables are the format_* of the returned record."""
    done = run_cli('--epochs', '2')
    assert done.returncode == 0, done.stderr
    assert done.stderr == ''
    ref = run_python(LOAD + 'buf = io.StringIO(); out = g.Printer(buf); '
                     'r = g.run(g.parse_args(["--epochs", "2"]), out)["train"]; '
                     'assert out.tables["history"] == g.format_history_table(r); '
                     'assert out.tables["samples"] == g.format_samples_table(r); '
                     'sys.stdout.write(buf.getvalue())')
    assert ref.returncode == 0, ref.stderr
    assert without_times(done.stdout) == without_times(ref.stdout)
    last = done.stdout.rstrip('\n').splitlines()[-1]
    assert last.startswith('time:') and 'tokens/s' in last
    history = done.stdout[done.stdout.index('| epoch |'):]
    assert history.splitlines()[2].startswith('|     1 |')


def test_cli_compare_prints_one_row_per_model():
    done = run_cli('--compare', '--epochs', '1')
    assert done.returncode == 0, done.stderr
    rows = [line.split('|')[1].strip() for line in done.stdout.splitlines()
            if line.startswith('| ') and not line.startswith('| model')]
    assert rows == ['GRU', 'LSTM (b_f 0)', 'LSTM (b_f 1)', 'plain RNN']
    assert done.stdout.rstrip('\n').splitlines()[-1].startswith('time: GRU ')


def test_config_table_lists_d2ls_configuration(corpus):
    data = gru.make_dataset(corpus.chars, gru.Config())
    table = gru.format_config_table(gru.Config(), corpus, data)
    assert len({len(line) for line in table.splitlines()}) == 1
    for fact in ('173,501 characters after preprocessing', 'the first 15,032', '28 tokens',
                 '10,000 training and 5,000 validation windows of 32 + 1',
                 '1,024 windows', 'GRU, hidden size 32, 6,780 parameters',
                 'normal(0, 0.01), biases zero', 'learning rate 4, gradient clipped to norm 1',
                 '50 epochs', 'fast path'):
        assert fact in table, fact
    lstm = gru.format_config_table(gru.Config(cell='lstm', forget_bias=1.0), corpus, data)
    assert 'forget-gate bias b_f = 1' in lstm


def test_cli_output_is_byte_identical_across_runs_but_for_the_time():
    a, b = run_cli('--epochs', '1', '--cell', 'rnn'), run_cli('--epochs', '1', '--cell', 'rnn')
    assert a.returncode == b.returncode == 0
    assert without_times(a.stdout) == without_times(b.stdout)
    assert sum(line.startswith('time:') for line in a.stdout.splitlines()) == 1


def test_cli_unknown_flag_is_a_usage_error():
    done = run_cli('--frobnicate')
    assert done.returncode == 2
    assert 'usage:' in done.stderr and 'Traceback' not in done.stderr


@pytest.mark.parametrize('args', [('--epochs', '0'), ('--epochs', 'many'), ('--epochs', '100000'),
                                  ('--lr', '-1'), ('--lr', '0'), ('--lr', 'inf'), ('--lr', 'nan'),
                                  ('--lr', '1e30'), ('--lr', '100.5'), ('--seed', '-3'),
                                  ('--cell', 'transformer'), ('--forget-bias', 'inf'),
                                  ('--forget-bias', '50')])
def test_cli_rejects_bad_values(args):
    done = run_cli(*args)
    assert done.returncode == 2
    assert args[0] in done.stderr and 'Traceback' not in done.stderr


def test_cli_accepts_the_largest_learning_rate_and_says_it_in_help():
    assert gru.parse_args(['--lr', '100']).lr == 100.0
    assert 'at most 100' in run_cli('--help').stdout


@pytest.mark.parametrize('args', [('--gradcheck', '--epochs', '3'), ('--gradcheck', '--lr', '2'),
                                  ('--gradcheck', '--plain'), ('--gradcheck', '--corpus', 'x'),
                                  ('--gradcheck', '--forget-bias', '1'),
                                  ('--compare', '--cell', 'gru'), ('--distance', '--lr', '2'),
                                  ('--inside', '--cell', 'lstm'), ('--saturation', '--forget-bias', '1'),
                                  ('--forget-bias', '1'), ('--cell', 'rnn', '--forget-bias', '1')])
def test_cli_refuses_options_a_report_does_not_use(args):
    done = run_cli(*args)
    assert done.returncode == 2, done.stdout
    assert 'Traceback' not in done.stderr and done.stdout == ''
    assert 'forget-bias' in done.stderr or 'has no effect with' in done.stderr


def test_cli_takes_options_that_some_chosen_report_uses():
    args = gru.parse_args(['--gradcheck', '--train', '--epochs', '3', '--cell', 'lstm',
                           '--forget-bias', '1'])
    assert args.epochs == 3 and args.forget_bias == 1.0
    assert gru.parse_args(['--compare', '--forget-bias', '2']).forget_bias == 2.0


def test_cli_help_mentions_every_flag():
    done = run_cli('--help')
    assert done.returncode == 0
    for flag in ['--' + f for f in gru.REPORTS] + ['--cell', '--epochs', '--lr', '--seed',
                                                   '--corpus', '--forget-bias', '--plain',
                                                   '--help']:
        assert flag in done.stdout, flag
    for flag in gru.REPORTS:
        assert '--' + flag in gru.__doc__


def test_report_help_texts_follow_the_conventions():
    assert gru.DEFAULT == ('train',)
    for flag, (help_text, function) in gru.REPORTS.items():
        assert flag.isidentifier() and function.__name__ == 'report_' + flag
        assert help_text[0].islower() and not help_text.endswith('.') and '\n' not in help_text
    assert gru.__doc__.splitlines()[0] == \
        'gru.py: a character-level GRU language model, from scratch in numpy.'


def test_cli_diverging_training_is_one_line_and_status_1():
    code = (LOAD + 'g.LR_MAX = 1e40; '
            'sys.exit(g.main(["--epochs", "2", "--lr", "1e30"]))')
    done = run_python(code)
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
    assert lines[0].startswith('gru.py: cannot read corpus ')
    return lines[0]


def test_cli_missing_corpus(tmp_path):
    line = one_line_error(run_cli('--corpus', str(tmp_path / 'nope.txt')))
    assert 'nope.txt' in line and 'No such file' in line


def test_cli_directory_as_corpus(tmp_path):
    one_line_error(run_cli('--corpus', str(tmp_path)))


def test_cli_non_utf8_corpus(tmp_path):
    bad = tmp_path / 'latin1.txt'
    bad.write_bytes('The Time Traveller \u00e9tait l\u00e0. '.encode('latin-1') * 2000)
    line = one_line_error(run_cli('--corpus', str(bad)))
    assert 'UTF-8' in line


def test_cli_too_short_corpus(tmp_path):
    short = tmp_path / 'short.txt'
    short.write_text('The Time Machine, by H. G. Wells.\n', encoding='utf-8')
    line = one_line_error(run_cli('--corpus', str(short)))
    assert 'windows' in line


def test_cli_finds_the_corpus_next_to_itself(tmp_path):
    for f in (GRU_PY, CORPUS):
        (tmp_path / f.name).write_bytes(f.read_bytes())
    done = subprocess.run([sys.executable, 'gru.py', '--epochs', '1', '--cell', 'rnn'],
                          capture_output=True, text=True, cwd=tmp_path, timeout=300,
                          env=dict(os.environ, **ONE_THREAD))
    assert done.returncode == 0, done.stderr
    assert '|     1 |' in done.stdout


def test_cli_gradcheck_for_one_cell():
    done = run_cli('--gradcheck', '--cell', 'rnn')
    assert done.returncode == 0, done.stderr
    assert '| rnn  | W_hh' in done.stdout and '| gru ' not in done.stdout


def test_without_numpy_main_says_how_to_install_it():
    code = ('import sys, importlib.util; sys.modules["numpy"] = None; '
            f'spec = importlib.util.spec_from_file_location("g", {str(GRU_PY)!r}); '
            'g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g); '
            'sys.exit(g.main([]))')
    done = run_python(code)
    assert done.returncode == 1
    assert done.stdout == ''
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and 'pip install numpy' in lines[0]
