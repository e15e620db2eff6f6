"""Tests for docs/code/deeper.py: its models against an independent reference, its
gradients against finite differences of that reference, its tasks and data against
independent re-implementations, and its command line's bounds and bad input.

numpy only. The reference below is written from the equations, one sequence at a
time, with no model axis and no stacked gates; the finite differences are of it.
"""

import math
import re

import numpy as np
import pytest

from helpers import CODE, derivative_at, load_script, run_script

deeper = load_script("deeper.py")
memory = load_script("memory.py")


# -- an independent reference: d2l's GRU, one sequence, one model ---------------------

def sig(a):
    return 1 / (1 + np.exp(-a))


def gru_states(p, m, xs, H):
    """d2l's equations, model m of the script's stacked parameters, inputs xs (a list of
    vectors), from state H: the list of states H_1 .. H_T."""
    W_x, W_h, b = p["W_x"][m], p["W_h"][m], p["b"][m]
    h = W_h.shape[0]
    W_xz, W_xr, W_xh = W_x[:, :h], W_x[:, h:2 * h], W_x[:, 2 * h:]
    W_hz, W_hr, W_hh = W_h[:, :h], W_h[:, h:2 * h], W_h[:, 2 * h:]
    b_z, b_r, b_h = b[:h], b[h:2 * h], b[2 * h:]
    out = []
    for x in xs:
        Z = sig(x @ W_xz + H @ W_hz + b_z)
        R = sig(x @ W_xr + H @ W_hr + b_r)
        H_tilde = np.tanh(x @ W_xh + (R * H) @ W_hh + b_h)
        H = Z * H + (1 - Z) * H_tilde
        out.append(H)
    return out


def log_softmax(o):
    return o - o.max() - math.log(np.exp(o - o.max()).sum())


def eye(n, k):
    return np.eye(n)[k]


def reference_labeller_loss(model, m, tokens, labels, vocab):
    """Mean cross-entropy over the steps of one sequence, for model m."""
    xs = [eye(vocab, t) for t in tokens]
    for layer in model["layers"]:
        h = layer["fwd"]["W_h"].shape[-2]
        fwd = gru_states(layer["fwd"], m, xs, np.zeros(h))
        if "bwd" in layer:
            bwd = gru_states(layer["bwd"], m, xs[::-1], np.zeros(h))[::-1]
            xs = [np.concatenate([f, b]) for f, b in zip(fwd, bwd)]
        else:
            xs = fwd
    W, b = model["out"]["W"][m], model["out"]["b"][m]
    return -np.mean([log_softmax(x @ W + b)[y] for x, y in zip(xs, labels)])


def reference_readout(model, m, s, E, attention):
    """log P of one decoder state s over encoder states E (a list), model m."""
    if attention:
        scores = np.array([s @ e for e in E])
        a = np.exp(scores - scores.max())
        a /= a.sum()
    else:
        a = eye(len(E), len(E) - 1)
    c = sum(w * e for w, e in zip(a, E))
    o = np.tanh(np.concatenate([c, s]) @ model["mix"]["W"][m] + model["mix"]["b"][m])
    return log_softmax(o @ model["out"]["W"][m] + model["out"]["b"][m]), a


def reference_seq2seq_loss(model, m, source, attention):
    """Teacher forcing, the target the reversed source: mean cross-entropy, and the
    weights (a row per output step)."""
    h = model["enc"]["W_h"].shape[-2]
    E = gru_states(model["enc"], m, [eye(deeper.K, x) for x in source], np.zeros(h))
    target = source[::-1]
    previous = [deeper.BOS] + list(target[:-1])
    S = gru_states(model["dec"], m, [eye(deeper.K + 1, y) for y in previous], E[-1])
    losses, weights = [], []
    for s, y in zip(S, target):
        logp, a = reference_readout(model, m, s, E, attention)
        losses.append(-logp[y])
        weights.append(a)
    return np.mean(losses), np.array(weights)


def reference_recall_loss(model, m, tokens, answer, attention):
    h = model["enc"]["W_h"].shape[-2]
    E = gru_states(model["enc"], m, [eye(deeper.R_V, x) for x in tokens], np.zeros(h))
    logp, _ = reference_readout(model, m, E[-1], E, attention)
    return -logp[answer]


def random_model(params, rng):
    """Weights of size 0.5 in float64, so every path of the model matters."""
    for p in deeper.leaves(params):
        p[...] = 0.5 * rng.standard_normal(p.shape)
    return params


def labeller_case(hidden, bidirectional, seed=0, V=5, T=4, B=3):
    rng = np.random.default_rng(seed)
    model = random_model(deeper.stack_models(
        [deeper.labeller_params(s, V, hidden, V, bidirectional) for s in (0, 1)], np.float64),
        rng)
    X, Y = rng.integers(0, V, (T, 2, B)), rng.integers(0, V, (T, 2, B))
    return model, X, Y, V


LABELLERS = [((3, 2), False), ((3,), True), ((2, 3), True)]


@pytest.mark.parametrize("hidden, bidirectional", LABELLERS)
def test_the_labellers_loss_is_the_references(hidden, bidirectional):
    model, X, Y, V = labeller_case(hidden, bidirectional)
    loss, _, _, _ = deeper.labeller_loss(model, deeper.one_hot(X, V, np.float64), Y, False)
    for m in range(2):
        expected = np.mean([reference_labeller_loss(model, m, X[:, m, b], Y[:, m, b], V)
                            for b in range(X.shape[2])])
        assert loss[m] == pytest.approx(expected, rel=1e-12)


ENTRIES = 4  # entries of each parameter of each model checked, drawn at random


def numeric_gradients(model, loss_of, seed=0, eps=1e-6):
    """Central differences of the reference loss for ENTRIES entries of every parameter
    of each model: [(parameter index, entry, derivative)]."""
    rng = np.random.default_rng(seed)
    out = []
    for k, p in enumerate(deeper.leaves(model)):
        for m in range(len(p)):
            entries = [(m,) + i for i in np.ndindex(p.shape[1:])]
            for n in rng.permutation(len(entries))[:ENTRIES]:
                i = entries[n]
                out.append((k, i, derivative_at(loss_of, p, i, eps)))
    return out


def assert_gradients_match(analytic, numeric):
    grads = deeper.leaves(analytic)
    assert {k for k, _, _ in numeric} == set(range(len(grads)))  # every parameter checked
    for k, i, n in numeric:
        assert abs(grads[k][i] - n) <= 1e-7 * max(1.0, abs(n)), (k, i, grads[k][i], n)


@pytest.mark.parametrize("hidden, bidirectional", LABELLERS)
def test_the_labellers_gradients_are_finite_differences_of_the_reference(hidden, bidirectional):
    """Stacked and bidirectional: the gradient of the sum of the two models' losses."""
    model, X, Y, V = labeller_case(hidden, bidirectional, seed=1)
    _, _, _, grads = deeper.labeller_loss(model, deeper.one_hot(X, V, np.float64), Y)

    def loss_of():
        return sum(np.mean([reference_labeller_loss(model, m, X[:, m, b], Y[:, m, b], V)
                            for b in range(X.shape[2])]) for m in range(2))
    assert_gradients_match(grads, numeric_gradients(model, loss_of))


def seq2seq_case(seed=2, n=4, B=2, h=3):
    rng = np.random.default_rng(seed)
    model = random_model(deeper.stack_models(
        [deeper.seq2seq_params(s, h) for s in (0, 1)], np.float64), rng)
    return model, rng.integers(0, deeper.K, (n, 2, B))


ATTENTION = [np.array([False, True]), np.array([True, False]), np.array([True, True])]


@pytest.mark.parametrize("attention", ATTENTION, ids=str)
def test_the_encoder_decoders_loss_and_weights_are_the_references(attention):
    model, source = seq2seq_case()
    loss, _, a, _ = deeper.seq2seq_loss(model, source, source[::-1], attention, False)
    for m in range(2):
        losses, weights = zip(*[reference_seq2seq_loss(model, m, source[:, m, b], attention[m])
                                for b in range(source.shape[2])])
        assert loss[m] == pytest.approx(np.mean(losses), rel=1e-12)
        assert np.allclose(a[m], np.array(weights), atol=1e-12)


@pytest.mark.parametrize("attention", ATTENTION, ids=str)
def test_the_encoder_decoders_gradients_are_finite_differences_of_the_reference(attention):
    model, source = seq2seq_case(seed=3)
    _, _, _, grads = deeper.seq2seq_loss(model, source, source[::-1], attention)

    def loss_of():
        return sum(np.mean([reference_seq2seq_loss(model, m, source[:, m, b], attention[m])[0]
                            for b in range(source.shape[2])]) for m in range(2))
    assert_gradients_match(grads, numeric_gradients(model, loss_of))


@pytest.mark.parametrize("attention", ATTENTION, ids=str)
def test_the_recall_readouts_loss_and_gradients_are_the_references(attention):
    rng = np.random.default_rng(4)
    model = random_model(deeper.stack_models([deeper.recall_params(s, 3) for s in (0, 1)],
                                             np.float64), rng)
    X, Y = rng.integers(0, deeper.R_V, (5, 2, 3)), rng.integers(0, deeper.R_K, (2, 3))
    loss, _, grads = deeper.recall_loss(model, X, Y, attention)

    def per_model(m):
        return np.mean([reference_recall_loss(model, m, X[:, m, b], Y[m, b], attention[m])
                        for b in range(3)])
    assert loss == pytest.approx([per_model(0), per_model(1)], rel=1e-12)
    assert_gradients_match(grads, numeric_gradients(model, lambda: per_model(0) + per_model(1)))


def test_the_scripts_own_gradcheck_passes_and_fails_when_a_backward_pass_is_wrong(monkeypatch):
    rows = deeper.compute_gradcheck().rows
    assert {r.model for r in rows} == {"stacked GRU, 2 layers", "bidirectional GRU",
                                       "encoder-decoder, without and with attention",
                                       "recall readout, without and with attention"}
    assert max(r.relative_error for r in rows) < 1e-6
    right = deeper.attend_backward

    def wrong(S, E, a, dC, attention):  # drops the gradient through the weights
        return right(S, E, a, dC, attention & False)
    monkeypatch.setattr(deeper, "attend_backward", wrong)
    broken = {(r.model, r.parameter): r.relative_error
              for r in deeper.compute_gradcheck().rows}
    assert broken[("encoder-decoder, without and with attention", "encoder W_h")] > 1e-3
    assert broken[("stacked GRU, 2 layers", "layer 1 W_h")] < 1e-6  # no attention there


def test_a_failed_gradcheck_is_a_failed_run(monkeypatch, capsys):
    row = deeper.GradcheckRow(model="m", parameter="p", entries=1, largest_gap=1e-3,
                              relative_error=1e-3)
    monkeypatch.setattr(deeper, "compute_gradcheck", lambda: deeper.Gradcheck(
        rows=[row], worst=row.relative_error, passed=False))
    assert deeper.main(["--gradcheck"]) == 1
    assert "NOT under 1e-6" in capsys.readouterr().out


# -- models side by side are independent ------------------------------------------

def first_model(tree):
    """Model 0 of a stack of models, as a stack of one."""
    if isinstance(tree, dict):
        return {k: first_model(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [first_model(v) for v in tree]
    return tree[:1].copy()


def test_models_side_by_side_compute_what_each_computes_alone():
    model, X, Y, V = labeller_case((3, 2), True, seed=5)
    both = deeper.labeller_loss(model, deeper.one_hot(X, V, np.float64), Y)
    one = deeper.labeller_loss(first_model(model), deeper.one_hot(X[:, :1], V, np.float64),
                               Y[:, :1])
    assert one[0][0] == pytest.approx(both[0][0], rel=1e-13)
    for g1, g2 in zip(deeper.leaves(one[3]), deeper.leaves(both[3])):
        assert np.allclose(g1[0], g2[0], rtol=1e-12, atol=1e-15)


def test_clipping_and_adam_treat_each_model_on_its_own():
    """A model with a huge gradient is clipped to norm CLIP; the other's step is Adam's
    first step, lr * sign(g), whatever its neighbour's gradient."""
    params = {"w": np.zeros((2, 3))}
    adam = deeper.Adam(params, lr=0.1)
    g = np.array([[1e6, 0, 0], [1e-3, -2e-3, 0]])
    adam.step({"w": g.copy()})
    assert np.allclose(params["w"][0], [-0.1, 0, 0], atol=1e-6)
    assert np.allclose(params["w"][1], [-0.1, 0.1, 0], atol=1e-4)


# -- the data and the tasks, against independent re-implementations ------------------

def test_the_corpus_is_d2ls_preprocessing_and_vocabulary():
    text = (CODE / "timemachine.txt").read_text("utf-8")
    chars, last_was_letter = [], True
    for c in text:  # every run of non-letters is one space; lower case
        if c.isascii() and c.isalpha():
            chars.append(c.lower())
            last_was_letter = True
        elif last_was_letter:
            chars.append(" ")
            last_was_letter = False
    vocab = [" ", "<unk>"] + [chr(c) for c in range(97, 123)]
    ids = deeper.read_corpus()
    n = deeper.NUM_TRAIN + deeper.NUM_VAL + deeper.NUM_STEPS
    assert len(ids) == n
    assert [vocab[i] for i in ids] == chars[:n]


def test_windows_start_at_every_position_train_first():
    ids = np.arange(20_000) % 28
    train, val = deeper.windows(ids)
    assert train.shape == (10_000, 33) and val.shape == (5_000, 33)
    for k in (0, 1, 9_999):
        assert list(train[k]) == list(ids[k:k + 33])
    assert list(val[0]) == list(ids[10_000:10_033]) and list(val[-1]) == list(ids[14_999:15_032])


def test_last_letter_tags_mark_a_letter_followed_by_a_space():
    text = "the cat  sat on a mat and the dog ran off"  # (two spaces: a space is no letter)
    ids = np.array([deeper.VOCAB.index(c) for c in text])
    tags = deeper.last_letter_tags(ids[None, :33])[0]
    expected = [1 if text[i] != " " and text[i + 1] == " " else 0 for i in range(32)]
    assert list(tags) == expected
    words = text[:33].split()[:-1]  # the words whose next character is in the window
    assert [text[i] for i in range(32) if tags[i]] == [w[-1] for w in words]


def test_reversal_batches_are_reversed_and_the_test_set_is_fixed():
    rng = np.random.default_rng(0)
    source, target = deeper.reversal_batch(rng, 3, 5, 7)
    assert source.shape == (7, 3, 5) and (target == source[::-1]).all()
    assert source.min() >= 0 and source.max() < deeper.K
    assert (deeper.reversal_test(6) == deeper.reversal_test(6)).all()
    assert not (deeper.reversal_test(6)[:5] == deeper.reversal_test(5)).all()


@pytest.mark.parametrize("lag", [1, 5, 50])
def test_recall_sequences_are_memory_pys(lag):
    """Chapter 15's task, its sequences exactly as memory.py makes them, stream by stream."""
    for key in (deeper.R_DATA_KEY, deeper.R_TEST_KEY):
        mine = deeper.recall_batch([np.random.default_rng([key, s, lag]) for s in (0, 1, 2)],
                                   7, lag)
        theirs = [memory.make_sequences(np.random.default_rng([key, s, lag]), 7, lag)
                  for s in (0, 1, 2)]  # memory.py's sequences of each seed's stream, (n, T)
        assert (mine[0] == np.stack([x.T for x, _ in theirs], axis=1)).all()  # (T, S, n)
        assert (mine[1] == np.stack([y for _, y in theirs])).all()  # (S, n)
    assert (deeper.R_K, deeper.R_D, deeper.R_QUERY, deeper.R_V) == \
        (memory.K, memory.D, memory.QUERY, memory.V)
    assert (deeper.R_DATA_KEY, deeper.R_TEST_KEY) == (memory.DATA_KEY, memory.TEST_KEY)


def test_probe_targets_are_the_characters_around_and_the_letters_so_far():
    text = "a tale of two cities "
    ids = np.array([deeper.VOCAB.index(c) for c in (text * 3)])
    current, before, after, run = deeper.probe_targets(ids, np.array([0, 5]))
    for row, start in enumerate((0, 5)):
        for t in range(1, deeper.NUM_STEPS):
            i = start + t
            assert current[row, t - 1] == ids[i] and before[row, t - 1] == ids[i - 1]
            assert after[row, t - 1] == ids[i + 1]
            word = (text * 3)[:i + 1].split(" ")[-1]
            assert run[row, t - 1] == min(len(word), 5)


def test_a_linear_probe_decodes_what_is_linearly_there_and_not_what_is_not():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 4, 2000)
    F = np.eye(4)[y] + 0.1 * rng.standard_normal((2000, 4))
    assert deeper.ridge_probe(F[:1000], y[:1000], F[1000:], y[1000:], 4) > 0.99
    noise = rng.standard_normal((2000, 4))
    assert deeper.ridge_probe(noise[:1000], y[:1000], noise[1000:], y[1000:], 4) < 0.35


def test_without_attention_the_context_is_the_last_state():
    rng = np.random.default_rng(0)
    S, E = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 6, 5))
    a, C = deeper.attend(S, E, np.array([False, True]))
    assert (a[0, ..., -1] == 1).all() and np.allclose(C[0], E[0, :, -1:, :])
    assert np.allclose(a[1].sum(axis=-1), 1) and not np.allclose(C[1], E[1, :, -1:, :])


def test_greedy_decoding_fed_the_truth_is_teacher_forcing():
    """decode(..., target) reads the true previous symbols: its outputs are the argmax of
    the teacher-forced probabilities of seq2seq_loss."""
    model, source = seq2seq_case(seed=6, n=5, B=3)
    attention = np.array([False, True])
    _, P, _, _ = deeper.seq2seq_loss(model, source, source[::-1], attention, False)
    outputs, _ = deeper.decode(model, source, attention, source[::-1])
    assert (outputs == P.argmax(axis=-1).transpose(2, 0, 1)).all()


# -- beam search against an exhaustive search of the reference -----------------------

def reference_scores(model, m, source, attention):
    """log P(y | x) of every output y of len(source) symbols, for model m, by walking the
    tree of every prefix with the reference GRU: {output tuple: log-probability}."""
    h = model["enc"]["W_h"].shape[-2]
    E = gru_states(model["enc"], m, [eye(deeper.K, x) for x in source], np.zeros(h))
    scores = {}

    def walk(prefix, s, previous, logp):
        if len(prefix) == len(source):
            scores[tuple(prefix)] = logp
            return
        s = gru_states(model["dec"], m, [eye(deeper.K + 1, previous)], s)[0]
        step, _ = reference_readout(model, m, s, E, attention)
        for y in range(deeper.K):
            walk(prefix + [y], s, y, logp + step[y])

    walk([], E[-1], deeper.BOS, 0.0)
    return scores


@pytest.fixture(scope="module")
def beam_case():
    """Two random models (without and with attention), three strings of 3 symbols, and
    the reference's score of every one of the 10^3 outputs of each."""
    model, source = seq2seq_case(seed=7, n=3, B=3)
    attention = np.array([False, True])
    scores = [[reference_scores(model, m, source[:, m, b], attention[m])
               for b in range(source.shape[2])] for m in range(2)]
    return model, source, attention, scores


def test_a_beam_as_wide_as_every_prefix_finds_the_exhaustive_searchs_best(beam_case):
    model, source, attention, scores = beam_case
    output, score = deeper.beam_search(model, source, attention, deeper.K ** 2)
    for m in range(2):
        for b, every in enumerate(scores[m]):
            best = max(every, key=every.get)
            assert tuple(output[:, m, b]) == best
            assert score[m, b] == pytest.approx(every[best], abs=1e-9)


@pytest.mark.parametrize("width", [1, 2, 3, 5, 8])
def test_every_beam_scores_its_output_as_the_reference_does_and_no_higher_than_the_best(
        beam_case, width):
    model, source, attention, scores = beam_case
    output, score = deeper.beam_search(model, source, attention, width)
    for m in range(2):
        for b, every in enumerate(scores[m]):
            assert score[m, b] == pytest.approx(every[tuple(output[:, m, b])], abs=1e-9)
            assert score[m, b] <= max(every.values()) + 1e-12


def test_a_beam_of_width_1_is_greedy_decoding(beam_case):
    model, source, attention, _ = beam_case
    output, _ = deeper.beam_search(model, source, attention, 1)
    greedy, _ = deeper.decode(model, source, attention)
    assert (output == greedy).all()


def test_the_steps_a_beam_takes_are_counted_as_it_takes_them():
    """beam_steps: step j runs one decoder step per beam alive, min(width, K^(j-1))."""
    assert deeper.beam_steps(4, 1) == 4
    assert deeper.beam_steps(3, 8) == 1 + 8 + 8
    assert deeper.beam_steps(3, 100) == 1 + 10 + 100


# -- the command line ---------------------------------------------------------------

@pytest.mark.parametrize("args", [
    ["--steps", "0"], ["--stacked", "--steps", "20001"], ["--recall", "--lags", "0"],
    ["--recall", "--lags", "401"], ["--recall", "--lags", "a,b"],
    ["--recall", "--lags", "1,2,3,4,5,6"], ["--attention", "--string", "xyz"],
    ["--attention", "--string", "a" * 13], ["--stacked", "--lags", "10"],
    ["--recall", "--string", "abc"], ["--reverse", "--corpus", "x.txt"], ["--nope"]])
def test_bad_or_unused_options_are_argparse_errors(args, tmp_path):
    result = run_script("deeper.py", *args, cwd=tmp_path)
    assert result.returncode == 2 and result.stdout == ""
    assert "usage:" in result.stderr and "Traceback" not in result.stderr


def test_a_corpus_that_cannot_be_used_is_one_line_and_status_1(tmp_path):
    short = tmp_path / "short.txt"
    short.write_text("far too short\n")
    binary = tmp_path / "binary.txt"
    binary.write_bytes(b"\xff\xfe" * 100)
    for path, message in ((tmp_path / "missing.txt", "cannot read the corpus"),
                          (binary, "cannot read the corpus"), (short, "is too short")):
        result = run_script("deeper.py", "--tagging", "--corpus", str(path), cwd=tmp_path)
        assert result.returncode == 1 and result.stdout == ""
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("deeper.py: ") and message in lines[0]


def test_the_gradcheck_command_passes_and_sums_up_every_parameter(tmp_path):
    result = run_script("deeper.py", "--gradcheck", cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    totals = [[c.strip() for c in line.strip("|").split("|")]
              for line in result.stdout.splitlines() if re.match(r"\| \w", line)][1:]
    rows = deeper.compute_gradcheck().rows
    model = deeper.stack_models([deeper.seq2seq_params(0, 3)], np.float64)
    assert sum("encoder-decoder" in r.model for r in rows) == len(deeper.leaves(model))
    # the table (the page's) adds up the parameters' checks, backward pass by pass
    assert [t[0] for t in totals] == list(dict.fromkeys(r.model for r in rows))
    for name, parameters, entries, worst in totals:
        mine = [r for r in rows if r.model == name]
        assert int(parameters) == len(mine)
        assert int(entries) == sum(r.entries for r in mine)
        assert float(worst) == float(f"{max(r.relative_error for r in mine):.1e}")
    assert re.search(r"^worst: \S+ \(under 1e-6\)$", result.stdout, re.M)


def test_records_are_plain_and_runs_are_memoised():
    args = deeper.parse_args(["--recall", "--lags", "3", "--steps", "2"])
    out = deeper.Printer(stream=open("/dev/null", "w"))
    first = deeper.report_recall(args, out)
    assert deeper._TRAINED, "the run was not kept"
    start = len(deeper._TRAINED)
    second = deeper.report_recall(args, deeper.Printer(stream=open("/dev/null", "w")))
    assert len(deeper._TRAINED) == start and first.with_attention == second.with_attention
    import dataclasses
    import json
    json.dumps(dataclasses.asdict(first))


# -- what --recall and --beam record: the weights, and the beam at every step ----------

def test_the_recall_weights_are_softmax_of_h_T_dot_h_t_of_the_reference_states():
    """recall_weights on two random models (without and with attention): the weights sum
    to 1 and, with attention, are softmax over t of h_T . h_t of the reference GRU's
    states; without, all on h_T."""
    rng = np.random.default_rng(5)
    model = random_model(deeper.stack_models([deeper.recall_params(s, 3) for s in (0, 1)],
                                             np.float64), rng)
    X = rng.integers(0, deeper.R_V, (7, 2, 4))
    a, given = deeper.recall_weights(model, X, np.array([False, True]))
    assert np.allclose(a.sum(axis=-1), 1, atol=1e-12)
    for b in range(4):
        h = gru_states(model["enc"], 1, [eye(deeper.R_V, x) for x in X[:, 1, b]], np.zeros(3))
        scores = np.array([h[-1] @ h_t for h_t in h])
        expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
        assert a[1, b] == pytest.approx(expected, abs=1e-12)
        assert a[0, b] == pytest.approx(eye(7, 6))
        assert given[1, b] == np.argmax(reference_readout(model, 1, h[-1], h, True)[0])


def test_the_recorded_recall_weights_are_those_of_the_trained_models_states():
    """--recall's record, in process (lag 5, 30 steps): each example's weights sum to 1
    and are softmax(h_T . h_t) of the reference GRU run on its tokens with the trained
    weights of seed 0's model with attention; its tokens are seed 0's first test sequences."""
    args = deeper.parse_args(["--recall", "--lags", "5", "--steps", "30"])
    record = deeper.report_recall(args, deeper.Printer(open("/dev/null", "w")))
    (_, model), _ = deeper.train_recall(5, 30)
    X, Y = deeper.recall_test(5)
    S = len(deeper.R_SEEDS)
    assert len(record.examples) == deeper.R_EXAMPLES
    for k, e in enumerate(record.examples):
        tokens = [deeper.R_SHOWN.index(c) for c in e.tokens]
        assert tokens == X[:, 0, k].tolist() and e.answer == deeper.R_SHOWN[Y[0, k]]
        assert sum(e.weights) == pytest.approx(1, abs=1e-5)
        h = gru_states({key: v.astype(np.float64) for key, v in model["enc"].items()}, S,
                       [eye(deeper.R_V, x) for x in tokens], np.zeros(deeper.R_HIDDEN))
        scores = np.array([h[-1] @ h_t for h_t in h])
        expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
        assert e.weights == pytest.approx(expected, abs=1e-5)


def reference_prefix_scores(model, m, source, attention):
    """log P(y_1 .. y_j | x) of every prefix of every length 1 .. n, by walking the tree
    with the reference GRU: {prefix tuple: log-probability}."""
    h = model["enc"]["W_h"].shape[-2]
    E = gru_states(model["enc"], m, [eye(deeper.K, x) for x in source], np.zeros(h))
    scores = {}

    def walk(prefix, s, previous, logp):
        if len(prefix) == len(source):
            return
        s = gru_states(model["dec"], m, [eye(deeper.K + 1, previous)], s)[0]
        step, _ = reference_readout(model, m, s, E, attention)
        for y in range(deeper.K):
            scores[tuple(prefix + [y])] = logp + step[y]
            walk(prefix + [y], s, y, logp + step[y])

    walk([], E[-1], deeper.BOS, 0.0)
    return scores


@pytest.mark.parametrize("width", [1, 2, 4])
def test_each_step_keeps_the_top_width_extensions_of_the_beams_before(beam_case, width):
    """The beams beam_search keeps at step j are, by brute force over the reference's
    log-probability of every prefix, the `width` likeliest one-symbol extensions of
    those kept at step j - 1, likeliest first; width 1's are greedy decoding's prefixes."""
    model, source, attention, _ = beam_case
    kept = []
    deeper.beam_search(model, source, attention, width, kept)
    greedy, _ = deeper.decode(model, source, attention)
    assert len(kept) == len(source)
    for m in range(2):
        for b in range(source.shape[2]):
            prefixes = reference_prefix_scores(model, m, source[:, m, b], attention[m])
            before = [()]
            for j, (written, score) in enumerate(kept, 1):
                extensions = sorted((p + (y,) for p in before for y in range(deeper.K)),
                                    key=lambda p: -prefixes[p])
                expected = extensions[:width]
                got = [tuple(w) for w in written[m, b]]
                assert got == expected, (m, b, j)
                assert score[m, b] == pytest.approx([prefixes[p] for p in expected], abs=1e-9)
                if width == 1:
                    assert got[0] == tuple(greedy[:j, m, b])
                before = got
