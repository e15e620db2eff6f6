"""Tests for docs/code/gru.py: data pipeline, gradients, clipping, command line.

numpy only; the whole file runs in well under a minute (no 50-epoch run here).
"""
import hashlib
import importlib.util
import io
import json
import math
import os
import re
import subprocess
import sys
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


ONE_THREAD = {'OPENBLAS_NUM_THREADS': '1', 'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1'}


def run_cli(*args, cwd=None):
    # one BLAS thread, as gru.py uses when run as a script: results depend on the count
    return subprocess.run([sys.executable, str(GRU_PY), *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120, env=dict(os.environ, **ONE_THREAD))


def run_python(code):
    return subprocess.run([sys.executable, '-c', code], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, **ONE_THREAD))


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
    assert len(vocab) == 28
    assert vocab == [' ', '<unk>'] + [chr(c) for c in range(ord('a'), ord('z') + 1)]


def test_windows_and_split_match_an_independent_count(text):
    chars = re.sub('[^A-Za-z]+', ' ', text).lower()
    data = gru.make_dataset(text, gru.Config())
    assert data.num_chars == len(chars)
    assert len(chars) - 32 >= 15000                    # windows available
    assert data.X_train.shape == data.Y_train.shape == (10000, 32)
    assert data.X_val.shape == data.Y_val.shape == (5000, 32)
    vocab = data.vocab

    def decode(ids):
        return ''.join(vocab[i] for i in ids)
    for i in (0, 1, 4567, 9999):
        assert decode(data.X_train[i]) == chars[i:i + 32]
        assert decode(data.Y_train[i]) == chars[i + 1:i + 33]
    for i in (0, 2500, 4999):
        assert decode(data.X_val[i]) == chars[10000 + i:10000 + i + 32]
        assert decode(data.Y_val[i]) == chars[10000 + i + 1:10000 + i + 33]


def test_too_short_corpus_is_a_corpus_error():
    with pytest.raises(gru.CorpusError, match='windows'):
        gru.make_dataset('just a few words', gru.Config())


def test_param_counts():
    assert dict(gru.compute_param_counts()) == {
        'gru': 3 * (28 * 32 + 32 * 32 + 32) + 32 * 28 + 28,
        'lstm': 4 * (28 * 32 + 32 * 32 + 32) + 32 * 28 + 28,
        'rnn': 28 * 32 + 32 * 32 + 32 + 32 * 28 + 28}


def test_config_defaults_are_d2ls():
    c = gru.Config()
    assert (c.cell, c.hidden, c.num_steps, c.batch_size, c.lr, c.clip, c.epochs) == \
        ('gru', 32, 32, 1024, 4.0, 1.0, 50)
    assert (c.num_train, c.num_val, c.init_sigma, c.prefix, c.num_preds) == \
        (10000, 5000, 0.01, 'it has', 20)
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


# ---------------------------------------------------------------- gradients

def small_problem(cell, seed=1, V=5, B=2, T=4, h=3, scale=0.5):
    rng = np.random.default_rng(seed)
    params = {k: scale * rng.standard_normal(v.shape)
              for k, v in gru.init_params(cell, V, h, rng, 'float64').items()}
    X = rng.integers(0, V, (B, T))
    Y = rng.integers(0, V, (B, T))
    H = scale * rng.standard_normal((2, B, h))
    state = (H[0], H[1]) if cell == 'lstm' else H[0]
    return params, X, Y, state


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_every_gradient_matches_central_differences(cell):
    params, X, Y, state = small_problem(cell)
    loss, grads = gru.loss_and_grads(params, cell, X, Y, state)
    assert set(grads) == set(params)

    def f():
        return gru.loss_and_grads(params, cell, X, Y, state, need_grads=False)[0]
    assert f() == loss
    eps = 1e-5
    for name, p in params.items():
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
        a = grads[name]
        assert a.shape == p.shape
        rel = np.abs(a - numeric).max() / (np.abs(a) + np.abs(numeric)).max()
        assert rel < 1e-6, (cell, name, rel)
        assert np.all(np.abs(a - numeric) <= 1e-6 * np.abs(numeric) + 1e-9), (cell, name)


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_float32_gradients_agree_with_float64(cell):
    params, X, Y, state = small_problem(cell, seed=2)
    _, g64 = gru.loss_and_grads(params, cell, X, Y, state)
    p32 = {k: v.astype(np.float32) for k, v in params.items()}
    s32 = tuple(s.astype(np.float32) for s in state) if cell == 'lstm' else state.astype(np.float32)
    _, g32 = gru.loss_and_grads(p32, cell, X, Y, s32)
    for k in params:
        assert g32[k].dtype == np.float32
        assert np.abs(g32[k] - g64[k]).max() <= 1e-5 * max(1.0, np.abs(g64[k]).max())


def test_reused_buffers_give_the_same_result():
    params, X, Y, state = small_problem('gru', seed=3)
    work = {}
    a = gru.loss_and_grads(params, 'gru', X, Y, state, work=work)
    gru.loss_and_grads(params, 'gru', X[:1], Y[:1], work=work)   # other shapes in between
    b = gru.loss_and_grads(params, 'gru', X, Y, state, work=work)
    c = gru.loss_and_grads(params, 'gru', X, Y, state)
    assert a[0] == b[0] == c[0]
    for k in params:
        assert np.array_equal(a[1][k], b[1][k]) and np.array_equal(a[1][k], c[1][k])


def test_forward_logits_give_the_same_loss():
    params, X, Y, state = small_problem('lstm', seed=4)
    logits, _ = gru.forward(params, 'lstm', X, state)
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -np.take_along_axis(logp, Y[..., None], -1).mean()
    assert gru.loss_and_grads(params, 'lstm', X, Y, state, need_grads=False)[0] == \
        pytest.approx(expected, rel=1e-12)


def test_state_carries_over_between_calls():
    params, X, _, state = small_problem('gru', seed=5)
    whole, _ = gru.forward(params, 'gru', X, state)
    first, mid = gru.forward(params, 'gru', X[:, :2], state)
    second, _ = gru.forward(params, 'gru', X[:, 2:], mid)
    assert np.allclose(np.concatenate([first, second], axis=1), whole, atol=1e-14)


def test_scripts_own_gradcheck_passes():
    rows = gru.compute_gradcheck()
    assert len(rows) == 11 + 14 + 5
    assert max(err for *_, err in rows) < 1e-6
    table = gru.format_gradcheck_table(rows)
    assert '| gru  | W_xz' in table and table.startswith('relative error max abs(a - n)')


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


# ---------------------------------------------------------------- tables and results

def test_format_table_pads_every_row_to_the_same_widths():
    table = gru.format_table(('name', 'value'), [('a', '1.00'), ('longer name', '12345.67')], 'lr')
    lines = table.splitlines()
    assert len({len(line) for line in lines}) == 1
    assert lines[1].replace(' ', '').split('|')[1:3] == ['-' * 11, '-' * 7 + ':']
    assert lines[2].endswith('     1.00 |')


def test_result_round_trips_through_json():
    config = gru.Config(epochs=2, seed=3)
    result = gru.TrainResult(config, [(1, 20.123456789012345, 17.5), (2, 1 / 3, math.pi)],
                             'it has a sample ', 1.2345678901234567, 265432.1098765432,
                             6780, 28, 173501)
    back = gru.TrainResult.from_dict(json.loads(json.dumps(result.to_dict())))
    assert back == result


# ---------------------------------------------------------------- training and the command line

SMALL = dict(num_train=2048, num_val=1024, epochs=2)   # a quick run for in-process checks


def test_training_runs_and_is_deterministic(text):
    r = gru.compute_training(text, gru.Config(**SMALL))
    assert [e for e, *_ in r.history] == [1, 2]
    assert all(1 < ppl < 28 for _, *ppls in r.history for ppl in ppls)
    assert r.history[1][2] < r.history[0][2]           # it learns something
    assert r.sample.startswith('it has') and len(r.sample) == len('it has') + 20
    assert r.num_params == 6780 and r.vocab_size == 28
    assert r.tokens_per_second > 0 and r.seconds > 0
    again = gru.compute_training(text, gru.Config(**SMALL))
    assert again.history == r.history and again.sample == r.sample
    other = gru.compute_training(text, gru.Config(**dict(SMALL, seed=1)))
    assert other.history != r.history


@pytest.mark.parametrize('cell', ['lstm', 'rnn'])
def test_other_cells_train(text, cell):
    rows = []
    r = gru.compute_training(text, gru.Config(cell=cell, **SMALL), lambda *row: rows.append(row))
    assert rows == r.history
    assert r.history[1][2] < r.history[0][2] < 28


def test_cli_prints_exactly_the_history_table():
    """The table `gru.py --epochs 2` prints row by row is format_history_table of
    compute_training for the same config (computed in a fresh process with the
    same single BLAS thread: float32 results depend on the thread count)."""
    done = run_cli('--epochs', '2')
    assert done.returncode == 0, done.stderr
    assert done.stderr == ''
    ref = run_python(
        'import importlib.util; '
        f'spec = importlib.util.spec_from_file_location("g", {str(GRU_PY)!r}); '
        'g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g); '
        'r = g.compute_training(g.load_corpus(g.CORPUS), g.Config(epochs=2)); '
        'print(g.format_history_table(r)); print(g.format_sample(r))')
    assert ref.returncode == 0, ref.stderr
    table, sample = ref.stdout.rstrip('\n').rsplit('\n', 1)
    assert table.count('\n') == 3                       # header, rule, two rows
    assert table in done.stdout
    assert sample in done.stdout
    last = done.stdout.rstrip('\n').splitlines()[-1]
    assert last.startswith('time:') and 'tokens/s' in last
    assert done.stdout.index(table) < done.stdout.index(sample) < done.stdout.index('time:')


def test_cli_compare_prints_exactly_the_comparison_table():
    done = run_cli('--compare', '--epochs', '1')
    assert done.returncode == 0, done.stderr
    ref = run_python(
        'import importlib.util; '
        f'spec = importlib.util.spec_from_file_location("g", {str(GRU_PY)!r}); '
        'g = importlib.util.module_from_spec(spec); spec.loader.exec_module(g); '
        'text = g.load_corpus(g.CORPUS); '
        'rs = [g.compute_training(text, g.Config(cell=c, epochs=1)) for c in g.CELLS]; '
        'print(g.format_comparison_table(rs))')
    assert ref.returncode == 0, ref.stderr
    table = ref.stdout.rstrip('\n')
    assert table in done.stdout
    assert [line.split('|')[1].strip() for line in table.splitlines()[2:]] == \
        ['GRU', 'LSTM', 'plain RNN']
    assert done.stdout.rstrip('\n').splitlines()[-1].startswith('time: GRU ')


def test_config_table_lists_d2ls_configuration(text):
    table = gru.format_config_table(gru.Config(), gru.make_dataset(text, gru.Config()))
    assert len({len(line) for line in table.splitlines()}) == 1
    for fact in ('28 tokens', '10,000 training and 5,000 validation windows of 32 + 1',
                 '1,024 windows', 'GRU, hidden size 32, 6,780 parameters',
                 'normal(0, 0.01), biases zero', 'learning rate 4, gradient clipped to norm 1',
                 '50 epochs'):
        assert fact in table, fact


def test_cli_output_is_byte_identical_across_runs_but_for_the_time():
    a, b = run_cli('--epochs', '1', '--cell', 'rnn'), run_cli('--epochs', '1', '--cell', 'rnn')
    assert a.returncode == b.returncode == 0
    assert a.stdout.rsplit('time:', 1)[0] == b.stdout.rsplit('time:', 1)[0]


def test_cli_unknown_flag_is_a_usage_error():
    done = run_cli('--frobnicate')
    assert done.returncode == 2
    assert 'usage:' in done.stderr and 'Traceback' not in done.stderr


@pytest.mark.parametrize('args', [('--epochs', '0'), ('--epochs', 'many'), ('--lr', '-1'),
                                  ('--seed', '-3'), ('--cell', 'transformer')])
def test_cli_rejects_bad_values(args):
    done = run_cli(*args)
    assert done.returncode == 2
    assert args[0] in done.stderr and 'Traceback' not in done.stderr


def test_cli_help_mentions_every_flag():
    done = run_cli('--help')
    assert done.returncode == 0
    for flag in ('--cell', '--epochs', '--lr', '--seed', '--corpus', '--compare', '--gradcheck',
                 '--help'):
        assert flag in done.stdout


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
                          capture_output=True, text=True, cwd=tmp_path, timeout=120,
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
