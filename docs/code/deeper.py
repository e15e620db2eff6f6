"""deeper.py: stacked and bidirectional GRUs, the encoder-decoder and attention, measured.

Companion script to chapter 17 ("Deeper, both ways, and what comes next").
Python 3.9+ and numpy. One GRU cell (d2l's equations, the notation of chapters
14 and 15: Z near 1 keeps the old state) is used four ways:

    stacked        layer 2 reads the states of layer 1 instead of the text
    bidirectional  a second GRU reads the sequence backwards; the two states
                   at step t, side by side, see the whole sequence
    encoder-decoder
                   one GRU reads a string, another writes its reversal,
                   starting from the first one's last state
    attention      at every output step the decoder takes a weighted mean of
                   all the encoder's states, weighted by how well each matches
                   its own state (Luong et al.'s dot product)

    python3 deeper.py --stacked    one GRU layer against two, The Time Machine, 3 seeds
    python3 deeper.py --layers     what each layer's state holds: linear probes
    python3 deeper.py --leak       a bidirectional GRU as a language model reads the answer
    python3 deeper.py --tagging    last letter of a word: one direction against both
    python3 deeper.py --reverse    reversing strings, without and with attention, by length
    python3 deeper.py --attention  the attention weights of a few test strings
    python3 deeper.py --exposure   teacher forcing against the decoder's own outputs
    python3 deeper.py --beam       decoding with a beam of width 1 to 8 instead of greedily
    python3 deeper.py --recall     chapter 15's recall task with an attention readout
    python3 deeper.py --gradcheck  every hand-written gradient against central differences

    options: --steps N (the training budget of the models --stacked, --layers,
             --reverse, --attention, --exposure, --beam and --recall show),
             --lags L,L,... (--recall), --string S (--attention: one more
             string to reverse), --corpus PATH (--stacked, --layers, --leak,
             --tagging: another text than timemachine.txt)

How the file reads, top to bottom:

    the model        the settings and the data; the GRU layer, forward over a
                     sequence and back through time; layers on top (stacked,
                     both directions, a softmax at every step); the
                     encoder-decoder with attention, greedy and beam decoding; Adam
                     and the training loops, each model trained once per run
    the experiments  their settings; the encoder-decoder tested; linear probes;
                     chapter 15's recall task read out by attention; the
                     gradient check; then one compute_* per flag, returning the
                     record its report prints (every number the page quotes)
    what the site prints   one report_* per flag, which only prints
    the harness      printing and the command line, the same in every script

Every model is trained for several seeds side by side: every array has a
leading model axis M, as in memory.py. Training is float32 on one BLAS thread;
the same command prints the same output, run after run, except the lines that
start with `time:`. Reports that share trained models train them once per run.
"""

import argparse
import os
import platform
import re
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

if __name__ == "__main__":  # as a script: one BLAS thread (must be set before numpy loads)
    for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_var, "1")  # threads cost more than they save on 32-unit models
    if platform.machine() in ("x86_64", "AMD64"):  # and one BLAS kernel on every x86 CPU:
        os.environ.setdefault("OPENBLAS_CORETYPE", "Haswell")  # AVX-512's round differently

try:
    import numpy as np
except ImportError:  # main() says how to install it; importing stays possible
    np = None


class Refused(Exception):
    """An input the script cannot use: main() says why in one line, exit status 1."""


# ===========================================================================
# The model: the data, the GRU layer, layers on top (stacked, both directions),
# the encoder-decoder with attention, training
# ===========================================================================

SEEDS = (0, 1, 2)  # every experiment: three models side by side, one per seed
LR = 0.01  # Adam's learning rate, every model
CLIP = 1.0  # each model's gradient is rescaled to at most this norm (d2l's clipping)

# The Time Machine, in d2l's configuration (chapter 14)
CORPUS = Path(__file__).with_name("timemachine.txt")
VOCAB = [" ", "<unk>"] + [chr(c) for c in range(ord("a"), ord("z") + 1)]  # d2l's 28 tokens
NUM_STEPS, NUM_TRAIN, NUM_VAL = 32, 10_000, 5_000  # window length; training, validation windows
LM_BATCH = 32  # windows per training step
LM_EVERY = 50  # steps between two points of a learning curve
LM_CURVE_VAL = 500  # validation windows of the curve's points (all of them at the end)

# Reversing strings (the encoder-decoder)
SYMBOLS = "abcdefghij"  # K symbols; the decoder also reads a start token
K = len(SYMBOLS)
BOS = K  # the start token's id in the decoder's vocabulary
MAX_LEN = 12  # training strings have 1 to MAX_LEN symbols
S2S_HIDDEN, S2S_BATCH, S2S_STEPS = 32, 64, 1000


def read_corpus(path=CORPUS):
    """d2l's preprocessing: every run of non-letters becomes one space, lower case; then
    the characters as token ids (positions in VOCAB). The harness's read_file refuses a
    file it cannot read or one past its size bound."""
    chars = re.sub("[^A-Za-z]+", " ", read_file(path, "the corpus")).lower()
    ids = np.array([VOCAB.index(c) for c in chars[:NUM_TRAIN + NUM_VAL + NUM_STEPS]])
    if len(ids) < NUM_TRAIN + NUM_VAL + NUM_STEPS:
        raise Refused(f"the corpus {path} is too short: {len(ids):,} characters after "
                      f"preprocessing, {NUM_TRAIN + NUM_VAL + NUM_STEPS:,} needed")
    return ids


def windows(ids):
    """d2l's windows: one of NUM_STEPS + 1 characters at every start position, the first
    NUM_TRAIN to train, the next NUM_VAL to validate. (train, val), (n, 33) each."""
    n = NUM_TRAIN + NUM_VAL
    w = ids[np.arange(n)[:, None] + np.arange(NUM_STEPS + 1)]
    return w[:NUM_TRAIN], w[NUM_TRAIN:]


def last_letter_tags(w):
    """The tagging task: for each of the first NUM_STEPS characters of a window, 1 if it is
    the last letter of its word (a letter followed by a space), else 0."""
    space = VOCAB.index(" ")
    return ((w[:, :-1] != space) & (w[:, 1:] == space)).astype(np.intp)


def reversal_batch(rng, models, n, length):
    """`n` random strings of `length` symbols for each model and their reversals, as
    time-major token ids (length, models, n)."""
    source = rng.integers(0, K, (length, models, n))
    return source, source[::-1]


def one_hot(ids, n, dtype="float32"):
    return np.eye(n, dtype=dtype)[ids]


# -------------------------------------------------------------- the GRU layer, batched over models

# Every array has a leading model axis M (after the time axis): X is (T, M, B, d),
# T steps of a batch of B sequences for each of M models. A layer's parameters
# hold its three gates side by side, in the order [z | r | h~] (as nanoGPT keeps
# q, k, v in one matrix):
#
#   W_x (M, d, 3h) = [W_xz | W_xr | W_xh],  W_h (M, h, 3h) = [W_hz | W_hr | W_hh],  b (M, 3h)
#
#   Z  = sigma(X_t W_xz + H_prev W_hz + b_z)          update gate
#   R  = sigma(X_t W_xr + H_prev W_hr + b_r)          reset gate
#   H~ = tanh(X_t W_xh + (R * H_prev) W_hh + b_h)     candidate state
#   H  = Z * H_prev + (1 - Z) * H~                    new state

def sigmoid(a):
    return 0.5 * (1 + np.tanh(0.5 * a))  # = 1 / (1 + exp(-a)), and never overflows


def gru_params(rng, d, h):
    """One layer for one model: PyTorch's rule, every weight uniform(-1/sqrt(h), 1/sqrt(h)),
    biases zero."""
    a = 1 / np.sqrt(h)
    return {"W_x": rng.uniform(-a, a, (d, 3 * h)), "W_h": rng.uniform(-a, a, (h, 3 * h)),
            "b": np.zeros(3 * h)}


def dense_params(rng, d, n):
    """An affine layer X W + b for one model, PyTorch's nn.Linear rule."""
    a = 1 / np.sqrt(d)
    return {"W": rng.uniform(-a, a, (d, n)), "b": np.zeros(n)}


def stack_models(per_model, dtype="float32"):
    """[{name: array}] for each model -> {name: (M, ...) array}; nested dicts alike."""
    first = per_model[0]
    if isinstance(first, dict):
        return {k: stack_models([p[k] for p in per_model], dtype) for k in first}
    if isinstance(first, list):
        return [stack_models([p[n] for p in per_model], dtype) for n in range(len(first))]
    return np.stack(per_model).astype(dtype)


def gru_forward(p, X, H_0):
    """Run the layer over X (T, M, B, d) from H_0 (M, B, h). Returns H_0 .. H_T as one
    array (T + 1, M, B, h) and what the backward pass needs."""
    h = H_0.shape[-1]
    G = X @ p["W_x"] + p["b"][:, None, :]  # the input part of every step in one product
    W_hzr, W_hh = p["W_h"][..., :2 * h], p["W_h"][..., 2 * h:]
    Hs = np.empty((len(X) + 1,) + H_0.shape, H_0.dtype)
    Hs[0] = H_0
    RH = np.empty((len(X),) + H_0.shape, H_0.dtype)  # R * H_prev of every step
    for t in range(len(X)):  # G[t] holds step t's pre-activations, then its gates
        H_prev = Hs[t]
        G[t, ..., :2 * h] = sigmoid(G[t, ..., :2 * h] + H_prev @ W_hzr)  # Z and R
        Z, R = G[t, ..., :h], G[t, ..., h:2 * h]
        RH[t] = R * H_prev
        G[t, ..., 2 * h:] = np.tanh(G[t, ..., 2 * h:] + RH[t] @ W_hh)  # H~
        Hs[t + 1] = Z * H_prev + (1 - Z) * G[t, ..., 2 * h:]  # H
    return Hs, (X, Hs, G, RH)


def sum_over_steps(A, B):
    """sum over t of A[t]^T B[t] for each model: (T, M, n, a), (T, M, n, b) -> (M, a, b)."""
    total = A[0].swapaxes(-1, -2) @ B[0]
    for t in range(1, len(A)):
        total += A[t].swapaxes(-1, -2) @ B[t]
    return total


def gru_backward(p, cache, dHs):
    """Backpropagation through time. dHs (T, M, B, h): dL/dH_t from outside the recurrence
    (the layer above, the output, attention) for t = 1 .. T. Returns the gradients (a dict
    like p), dL/dX (T, M, B, d) and dL/dH_0."""
    X, Hs, G, RH = cache
    h = Hs.shape[-1]
    W_h_T = p["W_h"].swapaxes(-1, -2)  # (M, 3h, h): rows [z | r | h~]
    W_hzr_T, W_hh_T = W_h_T[:, :2 * h], W_h_T[:, 2 * h:]
    dA = np.empty_like(G)  # dL/d(pre-activations) of every step, [z | r | h~]
    dH = np.zeros_like(Hs[0])  # dL/dH_t through H_{t+1}: nothing after the last step
    for t in reversed(range(len(X))):
        dH = dH + dHs[t]
        H_prev, Z, R, H_tilde = Hs[t], G[t, ..., :h], G[t, ..., h:2 * h], G[t, ..., 2 * h:]
        dA[t, ..., 2 * h:] = dH * (1 - Z) * (1 - H_tilde ** 2)  # through (1 - Z) * H~, tanh
        dRH = dA[t, ..., 2 * h:] @ W_hh_T  # dL/d(R * H_prev)
        dA[t, ..., :h] = dH * (H_prev - H_tilde) * Z * (1 - Z)  # through Z, sigma
        dA[t, ..., h:2 * h] = dRH * H_prev * R * (1 - R)  # through R, sigma
        dH = dH * Z + dRH * R + dA[t, ..., :2 * h] @ W_hzr_T  # to H_prev, every way
    grads = {"W_x": sum_over_steps(X, dA), "b": dA.sum(axis=(0, 2)),
             "W_h": np.concatenate([sum_over_steps(Hs[:-1], dA[..., :2 * h]),
                                    sum_over_steps(RH, dA[..., 2 * h:])], axis=-1)}
    return grads, dA @ p["W_x"].swapaxes(-1, -2), dH


# --------------------------------------------------------- layers on top: stacked, both directions

# A sequence labeller reads X and gives a distribution at every step: the language
# model (the label is the next character) and the tagger (the label is 0 or 1).
# model = {"layers": [{"fwd": p} or {"fwd": p, "bwd": p}, ...], "out": dense}

def labeller_params(seed, vocab, hidden, classes, bidirectional=False):
    """One model: a stack of GRU layers of the given sizes (each of them two GRUs if
    bidirectional), then a softmax layer."""
    rng = np.random.default_rng([17, seed])
    layers, d = [], vocab
    for h in hidden:
        layer = {"fwd": gru_params(rng, d, h)}
        if bidirectional:
            layer["bwd"] = gru_params(rng, d, h)
        layers.append(layer)
        d = h * len(layer)
    return {"layers": layers, "out": dense_params(rng, d, classes)}


def labeller_forward(model, X):
    """X: (T, M, B, vocab) one-hot. The states of every layer, each (T, M, B, h or 2h),
    and the caches. The backward GRU reads the time axis reversed, and its states are
    put back in reading order, so that step t holds [forward H_t, backward H_t]."""
    states, caches, inputs = [], [], X
    for layer in model["layers"]:
        zero = np.zeros(X.shape[1:3] + (layer["fwd"]["W_h"].shape[-2],), X.dtype)
        Hf, cf = gru_forward(layer["fwd"], inputs, zero)
        if "bwd" in layer:
            Hb, cb = gru_forward(layer["bwd"], inputs[::-1], zero)
            inputs = np.concatenate([Hf[1:], Hb[1:][::-1]], axis=-1)
            caches.append((cf, cb))
        else:
            inputs = Hf[1:]
            caches.append((cf,))
        states.append(inputs)
    return states, caches


def softmax(a):
    e = np.exp(a - a.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def labeller_loss(model, X, Y, need_grads=True):
    """Mean cross-entropy of every step's label Y (T, M, B) per model (M,), its accuracy,
    the probabilities, and the gradients of the sum of the models' losses."""
    states, caches = labeller_forward(model, X)
    top, out = states[-1], model["out"]
    P = softmax(top @ out["W"] + out["b"][:, None, :])  # (T, M, B, classes)
    T, M, B = Y.shape
    picked = np.take_along_axis(P, Y[..., None], axis=-1)[..., 0]
    loss = -np.log(np.maximum(picked, 1e-30)).mean(axis=(0, 2))
    accuracy = (P.argmax(axis=-1) == Y).mean(axis=(0, 2))
    if not need_grads:
        return loss, accuracy, P, None
    dZ = P.copy()  # d(mean cross-entropy)/d(logits) = (softmax - one_hot) / (T B)
    np.put_along_axis(dZ, Y[..., None], np.take_along_axis(dZ, Y[..., None], -1) - 1, -1)
    dZ /= T * B
    grads = {"out": {"W": sum_over_steps(top, dZ), "b": dZ.sum(axis=(0, 2))}, "layers": []}
    d_top = dZ @ out["W"].swapaxes(-1, -2)  # dL/d(top states)
    for layer, cache in zip(reversed(model["layers"]), reversed(caches)):
        h = layer["fwd"]["W_h"].shape[-2]
        g_f, dX, _ = gru_backward(layer["fwd"], cache[0], d_top[..., :h])
        g = {"fwd": g_f}
        if "bwd" in layer:
            g["bwd"], dX_b, _ = gru_backward(layer["bwd"], cache[1], d_top[..., h:][::-1])
            dX = dX + dX_b[::-1]
        grads["layers"].insert(0, g)
        d_top = dX
    return loss, accuracy, P, grads


# -------------------------------------------------------------- the encoder-decoder, and attention

# The encoder reads the source x_1 .. x_n: states h_1 .. h_n. The decoder starts from
# s_0 = h_n and reads the previous output token (the start token first): states
# s_1 .. s_n. At every output step j a context c_j joins s_j:
#
#   without attention (Cho et al., 2014)   c_j = h_n, the same for every j
#   with attention (Luong et al., 2015)    a_ji = softmax over i of s_j . h_i,
#                                          c_j = sum over i of a_ji h_i
#
#   o_j = tanh([c_j, s_j] W_c + b_c),   P(y_j) = softmax(o_j W_o + b_o)

def seq2seq_params(seed, hidden=S2S_HIDDEN):
    rng = np.random.default_rng([18, seed])
    return {"enc": gru_params(rng, K, hidden), "dec": gru_params(rng, K + 1, hidden),
            "mix": dense_params(rng, 2 * hidden, hidden), "out": dense_params(rng, hidden, K)}


def attend(S, E, attention):
    """Queries S (M, B, m, h) against the states E (M, B, n, h): the weights a (M, B, m, n)
    and the contexts C = a E (M, B, m, h). attention (M,): whether each model attends;
    a model that does not puts every weight on the last state, h_n."""
    a = softmax(S @ E.swapaxes(-1, -2))  # a_ji = softmax over i of s_j . h_i
    last = np.zeros_like(a)
    last[..., -1] = 1
    a = np.where(attention[:, None, None, None], a, last)
    return a, a @ E


def attend_backward(S, E, a, dC, attention):
    """dL/dS and dL/dE from dL/dC, through C = a E and, where a model attends, through a."""
    da = dC @ E.swapaxes(-1, -2)
    dscores = a * (da - (da * a).sum(axis=-1, keepdims=True))  # back through the softmax
    dscores *= attention[:, None, None, None]  # a fixed weight passes no gradient to S
    return dscores @ E, a.swapaxes(-1, -2) @ dC + dscores.swapaxes(-1, -2) @ S


def readout(model, S, E, attention):
    """The output distribution of every decoder state S (M, B, m, h) over the encoder's
    states E (M, B, n, h); the weights; and the cache of readout_backward."""
    a, C = attend(S, E, attention)
    CS = np.concatenate([C, S], axis=-1)
    mix, out = model["mix"], model["out"]
    O = np.tanh(CS @ mix["W"][:, None] + mix["b"][:, None, None])
    P = softmax(O @ out["W"][:, None] + out["b"][:, None, None])
    return P, a, (S, E, a, CS, O)


def per_model(A):
    """(M, ..., a) -> (M, rows, a): every row of a model's batch, for one product."""
    return A.reshape(A.shape[0], -1, A.shape[-1])


def readout_backward(model, cache, dZ, attention):
    """dZ: dL/d(logits) (M, B, m, classes). The gradients of mix and out, dL/dS, dL/dE."""
    S, E, a, CS, O = cache
    h = S.shape[-1]
    mix, out = model["mix"], model["out"]
    g = {"out": {"W": per_model(O).swapaxes(1, 2) @ per_model(dZ), "b": dZ.sum(axis=(1, 2))}}
    dpre = (dZ @ out["W"].swapaxes(-1, -2)[:, None]) * (1 - O ** 2)  # back through tanh
    g["mix"] = {"W": per_model(CS).swapaxes(1, 2) @ per_model(dpre), "b": dpre.sum(axis=(1, 2))}
    dCS = dpre @ mix["W"].swapaxes(-1, -2)[:, None]
    dS, dE = attend_backward(S, E, a, dCS[..., :h], attention)
    return g, dS + dCS[..., h:], dE


def cross_entropy(P, Y):
    """Mean cross-entropy per model of P (M, B, m, classes) against Y (M, B, m), and
    dL/d(logits) of the sum of the models' losses."""
    M, B, m = Y.shape
    picked = np.take_along_axis(P, Y[..., None], axis=-1)[..., 0]
    dZ = P.copy()
    np.put_along_axis(dZ, Y[..., None], picked[..., None] - 1, -1)
    return -np.log(np.maximum(picked, 1e-30)).mean(axis=(1, 2)), dZ / (B * m)


def encode(model, source):
    """The encoder's states h_0 .. h_n (n + 1, M, B, h) of source ids (n, M, B)."""
    zero = np.zeros(source.shape[1:] + (model["enc"]["W_h"].shape[-2],), model["enc"]["W_h"].dtype)
    return gru_forward(model["enc"], one_hot(source, K, zero.dtype), zero)


def seq2seq_loss(model, source, target, attention, need_grads=True):
    """Teacher forcing: the decoder reads the true previous token at every step. Mean
    cross-entropy per model, the probabilities (M, B, n, K), the weights, the gradients."""
    Hs, cache_e = encode(model, source)
    previous = np.concatenate([np.full((1,) + target.shape[1:], BOS), target[:-1]])
    Ss, cache_d = gru_forward(model["dec"], one_hot(previous, K + 1, Hs.dtype), Hs[-1])
    S, E = Ss[1:].transpose(1, 2, 0, 3), Hs[1:].transpose(1, 2, 0, 3)  # (M, B, n, h)
    P, a, cache_r = readout(model, S, E, attention)
    loss, dZ = cross_entropy(P, target.transpose(1, 2, 0))
    if not need_grads:
        return loss, P, a, None
    g, dS, dE = readout_backward(model, cache_r, dZ, attention)
    g["dec"], _, dH_n = gru_backward(model["dec"], cache_d, dS.transpose(2, 0, 1, 3))
    dHs = dE.transpose(2, 0, 1, 3).copy()
    dHs[-1] += dH_n  # h_n is also the decoder's first state
    g["enc"], _, _ = gru_backward(model["enc"], cache_e, dHs)
    return loss, P, a, g


def decode(model, source, attention, target=None):
    """Greedy decoding, one step at a time: the decoder reads its own previous output
    (or, given target, the true one: teacher forcing). Outputs (n, M, B), weights."""
    Hs, _ = encode(model, source)
    E, s = Hs[1:].transpose(1, 2, 0, 3), Hs[-1]
    token = np.full(source.shape[1:], BOS)
    outputs, weights = [], []
    for j in range(len(source)):
        Ss, _ = gru_forward(model["dec"], one_hot(token[None], K + 1, Hs.dtype), s)
        s = Ss[-1]
        P, a, _ = readout(model, s[:, :, None], E, attention)
        outputs.append(P[:, :, 0].argmax(axis=-1))
        weights.append(a[:, :, 0])
        token = outputs[-1] if target is None else target[j]
    return np.stack(outputs), np.stack(weights, axis=2)  # weights (M, B, n, n)


def beam_search(model, source, attention, width, kept=None):
    """Beam search: at every output step each of the `width` best partial outputs so far
    is extended by every symbol, and the `width` extensions with the highest
    log-probability, log P(y_1 .. y_j | x) = sum of log P(y_i | y_<i, x), are kept. The
    decoder writes as many symbols as the source has. Width 1 is greedy decoding.
    Returns the best outputs (n, M, B) and their log-probabilities (M, B); given a list
    `kept`, appends to it at every step the beams kept (M, B, beams, j) and their scores."""
    Hs, _ = encode(model, source)
    n, M, B = source.shape
    h = Hs.shape[-1]
    E = Hs[1:].transpose(1, 2, 0, 3)  # (M, B, n, h)
    s = Hs[-1][:, :, None]  # the beams' decoder states (M, B, beams, h): one beam, s_0 = h_n
    score = np.zeros((M, B, 1))  # log P of each beam's output so far
    token = np.full((M, B, 1), BOS)  # each beam's last symbol
    written = np.zeros((M, B, 1, 0), np.intp)  # each beam's output so far
    for _ in range(n):
        beams = s.shape[2]
        Ss, _ = gru_forward(model["dec"], one_hot(token.reshape(1, M, B * beams), K + 1,
                                                  Hs.dtype), s.reshape(M, B * beams, h))
        s = Ss[-1].reshape(M, B, beams, h)
        P, _, _ = readout(model, s, E, attention)  # (M, B, beams, K): every beam's next symbol
        extended = (score[..., None] + np.log(np.maximum(P, 1e-30))).reshape(M, B, beams * K)
        best = np.argsort(-extended, axis=-1, kind="stable")[..., :width]
        score = np.take_along_axis(extended, best, axis=-1)
        beam, token = best // K, best % K  # which beam each survivor extends, and by what
        s = np.take_along_axis(s, beam[..., None], axis=2)
        written = np.concatenate([np.take_along_axis(written, beam[..., None], axis=2),
                                  token[..., None]], axis=-1)
        if kept is not None:
            kept.append((written, score))
    return written[:, :, 0].transpose(2, 0, 1), score[:, :, 0]


def symbol_log_probs(model, source, output, attention):
    """log P(y_j | y_<j, x) of every symbol of `output` (M, B, n), the decoder fed `output`
    as its previous symbols (teacher forcing); their sum is what a search's result scores."""
    _, P, _, _ = seq2seq_loss(model, source, output, attention, need_grads=False)
    picked = np.take_along_axis(P, output.transpose(1, 2, 0)[..., None], axis=-1)[..., 0]
    return np.log(np.maximum(picked, 1e-30))


# -------------------------------------------------------- training: Adam, every model side by side

def leaves(tree):
    """The arrays of a nested dict (or list) of parameters, in a fixed order."""
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in leaves(tree[k])]
    if isinstance(tree, list):
        return [x for item in tree for x in leaves(item)]
    return [tree]


class Adam:
    """Adam (Kingma and Ba, 2015), PyTorch's betas and epsilon, after clipping each
    model's gradient to norm CLIP. Every entry is its own, so the models stay apart."""

    def __init__(self, model, lr=LR, b1=0.9, b2=0.999, eps=1e-8):
        self.params, self.lr, self.b1, self.b2, self.eps = leaves(model), lr, b1, b2, eps
        self.t = 0  # steps taken
        self.m = [np.zeros_like(p) for p in self.params]
        self.v = [np.zeros_like(p) for p in self.params]

    def step(self, grads):
        grads = leaves(grads)
        M = len(grads[0])
        norm = np.sqrt(sum((g.reshape(M, -1) ** 2).sum(axis=1) for g in grads))
        scale = np.minimum(1, CLIP / np.maximum(norm, 1e-12)).astype(grads[0].dtype)
        self.t += 1
        c1, c2 = 1 - self.b1 ** self.t, 1 - self.b2 ** self.t
        for p, g, m, v in zip(self.params, grads, self.m, self.v):
            g = g * scale.reshape((M,) + (1,) * (g.ndim - 1))
            m *= self.b1
            m += (1 - self.b1) * g
            v *= self.b2
            v += (1 - self.b2) * g * g
            p -= (self.lr / c1) * m / (np.sqrt(v / c2) + self.eps)


def labels(task, w):
    """Inputs and labels of windows w (n, 33): the language model's label is the next
    character, the tagger's whether the character is the last letter of its word."""
    return w[:, :-1], (w[:, 1:] if task == "lm" else last_letter_tags(w))


def evaluate_labeller(model, task, w, chunk=500):
    """Mean cross-entropy and accuracy at each position of the windows w, (T, M) each:
    every model reads the same windows."""
    X, Y = labels(task, w)
    M = len(model["out"]["b"])
    loss, correct = 0, 0
    for i in range(0, len(X), chunk):
        x = np.repeat(X[i:i + chunk].T[:, None], M, axis=1)  # (T, M, n)
        y = np.repeat(Y[i:i + chunk].T[:, None], M, axis=1)
        _, _, P, _ = labeller_loss(model, one_hot(x, len(VOCAB)), y, need_grads=False)
        picked = np.take_along_axis(P, y[..., None], axis=-1)[..., 0]
        loss = loss - np.log(np.maximum(picked, 1e-30)).sum(axis=2)
        correct = correct + (P.argmax(axis=-1) == y).sum(axis=2)
    return loss / len(X), correct / len(X)


@dataclass
class LabellerRun:
    name: str
    task: str  # lm or tag
    hidden: list  # units per layer (per direction)
    bidirectional: bool
    params: int  # of one model
    steps: int
    curve_steps: list  # steps at which the curve was measured
    curve: list  # per point, per seed: validation perplexity (lm) or accuracy (tag)
    train_curve: list  # the same on as many training windows: how well it fits what it reads
    position_loss: list  # per position, per seed: mean validation cross-entropy at the end
    position_accuracy: list  # per position, per seed: validation accuracy at the end
    seconds: float  # CPU time of the training


def train_labeller(ids, name, task, hidden, bidirectional, steps, seeds=SEEDS):
    """Train one kind of labeller for every seed side by side (memoised)."""
    key = ("labeller", ids.tobytes(), task, tuple(hidden), bidirectional, steps, tuple(seeds))

    def train():
        train_w, val_w = windows(ids)
        classes = len(VOCAB) if task == "lm" else 2
        model = stack_models([labeller_params(s, len(VOCAB), hidden, classes, bidirectional)
                              for s in seeds])
        adam = Adam(model)
        rngs = [np.random.default_rng([20, s]) for s in seeds]
        X_all, Y_all = labels(task, train_w)
        curve_w = val_w[::len(val_w) // LM_CURVE_VAL]
        fit_w = train_w[::len(train_w) // LM_CURVE_VAL]  # as many training windows
        curve_steps, curve, train_curve = [], [], []
        for step in range(1, steps + 1):
            idx = np.stack([rng.integers(0, len(X_all), LM_BATCH) for rng in rngs])  # (M, B)
            X, Y = X_all[idx].transpose(2, 0, 1), Y_all[idx].transpose(2, 0, 1)  # (T, M, B)
            _, _, _, grads = labeller_loss(model, one_hot(X, len(VOCAB)), Y)
            adam.step(grads)
            if step % LM_EVERY == 0 or step == steps:
                curve_steps.append(step)
                for w, points in ((curve_w, curve), (fit_w, train_curve)):
                    loss, acc = evaluate_labeller(model, task, w)
                    points.append((np.exp(loss.mean(axis=0)) if task == "lm"
                                   else acc.mean(axis=0)).tolist())
        loss, acc = evaluate_labeller(model, task, val_w)
        return model, (curve_steps, curve, train_curve, loss.tolist(), acc.tolist())

    (model, (curve_steps, curve, train_curve, loss, acc)), seconds = memoised(key, train)
    return model, LabellerRun(
        name=name, task=task, hidden=list(hidden), bidirectional=bidirectional,
        params=count_params(model), steps=steps, curve_steps=curve_steps, curve=curve,
        train_curve=train_curve, position_loss=loss, position_accuracy=acc, seconds=seconds)


def with_and_without(seeds):
    """The models side by side: for each seed one without attention, then one with.
    The (M,) booleans that say which attend."""
    return np.repeat([False, True], len(seeds))


def twice(X, axis=1):
    """The same data for the model without attention and the model with it."""
    return np.concatenate([X, X], axis=axis)


def train_seq2seq(steps, seeds=SEEDS):
    """The encoder-decoder of every seed, without and with attention, side by side
    (memoised). The two models of a seed start from the same weights and read the same
    strings: each step S2S_BATCH strings of one length, drawn from 1 .. MAX_LEN."""
    def train():
        model = stack_models([seq2seq_params(s) for s in seeds] * 2)
        attention = with_and_without(seeds)
        adam = Adam(model)
        rng = np.random.default_rng([22, len(seeds)])
        for step in range(steps):
            length = int(rng.integers(1, MAX_LEN + 1))
            source, target = reversal_batch(rng, len(seeds), S2S_BATCH, length)
            _, _, _, grads = seq2seq_loss(model, twice(source), twice(target), attention)
            adam.step(grads)
        return model

    return memoised(("seq2seq", steps, tuple(seeds)), train)


# --------------------------------------------------- each model trained once per run, and its size

_TRAINED = {}  # what a training run returns, by its settings: each is trained once per run


def memoised(key, train):
    if key not in _TRAINED:
        start = time.process_time()
        _TRAINED[key] = (train(), time.process_time() - start)
    return _TRAINED[key]


def count_params(model):
    """Parameters of one of the models side by side."""
    return int(sum(p[0].size for p in leaves(model)))


# ===========================================================================
# The experiments: the settings of those that need no code beyond training, then
# what the others measure
# ===========================================================================

LM_STEPS = 300  # the budget, the same for every model of --stacked
STACKS = (  # name, hidden sizes of the layers from the bottom
    ("1 layer, h = 32", (32,)),
    ("2 layers, h = 22", (22, 22)),  # about the parameters of one layer of 32
    ("2 layers, h = 32", (32, 32)),  # the width of one layer of 32
)
BI_HIDDEN = 16  # units per direction of the bidirectional GRU (32 in all)
LEAK_STEPS = 150  # its budget as a language model
TAG_STEPS = 150  # the budget of both taggers
S2S_TEST = 200  # fixed test strings per length
SHOWN_LENGTHS = (5, 8, 12)  # --attention prints the weights of the first test string of each
EXPOSURE_LENGTH = 8  # the length --exposure quotes in its text
BEAM_WIDTHS = tuple(range(1, 9))  # --beam: width 1 is greedy
BEAM_SHOWN = (8, 12)  # --beam: the lengths it prints a column for, beside all lengths
BEAM_TRACED = (1, 2)  # --beam: the widths, beside the widest, whose every step it prints
MAX_STEPS = 20_000  # the largest --steps accepted (--stacked then takes about 15 minutes)


def mean_over_seeds(per_seed):
    """[per seed] per row -> the mean of each row, as plain floats."""
    return [float(np.mean(v)) for v in per_seed]


# ----------------------------------------------------- the encoder-decoder tested on fixed strings

def reversal_test(length, n=S2S_TEST):
    """The fixed test strings of one length, the same for every model: (length, n)."""
    return np.random.default_rng([21, length]).integers(0, K, (length, n))


def test_seq2seq(model, length, teacher_forcing=False):
    """On the fixed test strings of one length: per model, the share of strings reversed
    without an error, the share of symbols right, the outputs and the weights."""
    source = reversal_test(length)
    M = len(model["out"]["b"])
    source = np.ascontiguousarray(np.broadcast_to(source[:, None], (length, M, source.shape[1])))
    target = source[::-1]
    attention = with_and_without(range(M // 2))
    output, weights = decode(model, source, attention, target if teacher_forcing else None)
    right = output == target
    return right.all(axis=0).mean(axis=-1), right.mean(axis=(0, 2)), output, weights


# ------------------------------------------------------------- decoding with a beam, by width

def select_models(tree, idx):
    """The models idx of models side by side (every array's first axis)."""
    if isinstance(tree, dict):
        return {k: select_models(v, idx) for k, v in tree.items()}
    if isinstance(tree, list):
        return [select_models(v, idx) for v in tree]
    return tree[idx]


def beam_steps(n, width):
    """Decoder steps a beam search of `width` takes on a string of n symbols: step j runs
    one step for each beam alive, at most width and at most K^(j-1)."""
    return sum(min(width, K ** j) for j in range(n))


@dataclass
class BeamTest:
    width: int
    right: list  # per length, per seed: share of the test strings reversed exactly
    log_prob: list  # per length, per seed: mean log P(output | source) of the chosen outputs
    outputs: list  # per length: the outputs (n, seeds, strings)
    scores: list  # per length: their log-probabilities (seeds, strings)
    steps: float  # decoder steps per string, mean over the test strings of every length
    seconds: float  # CPU time of the search over every test string of every seed


def test_beam(model, width, lengths):
    """Beam search of one width on the fixed test strings of every length: the models of
    `model` without attention (the first half)."""
    M = len(model["out"]["b"]) // 2
    plain = select_models(model, slice(0, M))
    start = time.process_time()
    right, log_prob, outputs, scores = [], [], [], []
    for n in lengths:
        source = np.ascontiguousarray(np.broadcast_to(reversal_test(n)[:, None],
                                                      (n, M, S2S_TEST)))
        output, score = beam_search(plain, source, np.zeros(M, bool), width)
        right.append((output == source[::-1]).all(axis=0).mean(axis=-1).tolist())
        log_prob.append(score.mean(axis=-1).tolist())
        outputs.append(output)
        scores.append(score)
    steps = float(np.mean([beam_steps(n, width) for n in lengths]))
    return BeamTest(width=width, right=right, log_prob=log_prob, outputs=outputs, scores=scores,
                    steps=steps, seconds=time.process_time() - start)


@dataclass
class BeamTrace:
    source: str
    target: str  # the source reversed
    widths: list
    steps: list  # per width, per decoder step j: [output so far, log P] of every beam kept
    outputs: list  # per width: the output the beam ends with


def beam_trace(model, text, widths):
    """The beams a search of each width keeps at every step, on one string, for the
    first of the models `model` (without attention)."""
    source = np.array([SYMBOLS.index(c) for c in text])[:, None, None]
    steps, outputs = [], []
    for width in widths:
        kept = []
        output, _ = beam_search(select_models(model, slice(0, 1)), source, np.zeros(1, bool),
                                width, kept)
        steps.append([[["".join(SYMBOLS[c] for c in beam), float(lp)]
                       for beam, lp in zip(written[0, 0], score[0, 0])]
                      for written, score in kept])
        outputs.append("".join(SYMBOLS[c] for c in output[:, 0, 0]))
    return BeamTrace(source=text, target=text[::-1], widths=list(widths), steps=steps,
                     outputs=outputs)


def beam_example(lengths, greedy, beam, seed=0):
    """The first test string (shortest first) that greedy decoding gets wrong and the
    beam gets right, for the model of `seed`'s index: (length, index) or None."""
    for k, n in enumerate(lengths):
        target = reversal_test(n)[::-1]
        wrong = (greedy.outputs[k][:, seed] != target).any(axis=0)
        right = (beam.outputs[k][:, seed] == target).all(axis=0)
        found = np.flatnonzero(wrong & right)
        if len(found):
            return n, int(found[0])
    return None


# ------------------------------------------------------- what a layer's state holds: linear probes

PROBE_WINDOWS = 500  # windows whose states fit each probe, and as many that test it
PROBES = ("the character just read", "the one before it", "the next one, to be predicted",
          "letters of the word so far")


def probe_targets(ids, starts):
    """For the windows starting at `starts`, positions 1 .. NUM_STEPS - 1: the classes
    each probe decodes, one array (n, NUM_STEPS - 1) per probe."""
    space = VOCAB.index(" ")
    run = np.zeros(len(ids), np.intp)  # letters of the current word up to and with ids[i]
    for i in range(1, len(ids)):
        run[i] = 0 if ids[i] == space else run[i - 1] + 1
    at = starts[:, None] + np.arange(1, NUM_STEPS)
    return [ids[at], ids[at - 1], ids[at + 1], np.minimum(run[at], 5)]  # 0 .. 4 letters, 5+


def ridge_probe(F_train, y_train, F_test, y_test, classes):
    """A linear least-squares classifier on the features F (n, h) and a bias, fitted to
    one-hot targets: the share of the test rows whose largest output is the right class."""
    F_train, F_test = (np.hstack([F, np.ones((len(F), 1))]) for F in (F_train, F_test))
    A = F_train.T @ F_train + 1e-3 * len(F_train) * np.eye(F_train.shape[1])
    W = np.linalg.solve(A, F_train.T @ np.eye(classes)[y_train])
    return float(((F_test @ W).argmax(axis=1) == y_test).mean())


@dataclass
class Probes:
    probes: list  # what each probe decodes
    columns: list  # the layers probed
    accuracy: list  # per column, per probe, per seed
    mean: list  # per column, per probe: the mean over the seeds
    majority: list  # per probe: the share of the most common class
    windows: int  # windows fitted, and as many tested


def compute_probes(ids, models):
    """models: {name: trained labeller (M models)}. For every probe and every layer of
    every model: the probe's test accuracy per seed; and the majority class's."""
    train_w, val_w = windows(ids)
    n = PROBE_WINDOWS
    fit = np.arange(0, NUM_TRAIN, NUM_TRAIN // n)[:n]
    test = NUM_TRAIN + np.arange(0, NUM_VAL, NUM_VAL // n)[:n]
    targets = [(a.ravel(), b.ravel()) for a, b in
               zip(probe_targets(ids, fit), probe_targets(ids, test))]
    columns, accuracy = [], []
    for name, model in models.items():
        M = len(model["out"]["b"])
        states = []
        for starts in (fit, test):
            x = ids[starts[:, None] + np.arange(NUM_STEPS)].T  # (T, n)
            layers, _ = labeller_forward(model, one_hot(np.broadcast_to(
                x[:, None], (NUM_STEPS, M, n)), len(VOCAB)))
            states.append(layers)
        for k in range(len(model["layers"])):
            columns.append(name if len(model["layers"]) == 1 else f"{name}: layer {k + 1}")
            per_probe = []
            for y_fit, y_test in targets:
                classes = max(y_fit.max(), y_test.max()) + 1
                per_seed = []
                for m in range(M):
                    F_fit, F_test = (s[k][1:, m].transpose(1, 0, 2).reshape(-1, s[k].shape[-1])
                                     .astype(np.float64) for s in states)
                    per_seed.append(ridge_probe(F_fit, y_fit, F_test, y_test, classes))
                per_probe.append(per_seed)
            accuracy.append(per_probe)
    majority = [float((y_test == np.bincount(y_fit).argmax()).mean()) for y_fit, y_test in targets]
    return Probes(probes=list(PROBES), columns=columns, accuracy=accuracy,
                  mean=[mean_over_seeds(column) for column in accuracy], majority=majority,
                  windows=PROBE_WINDOWS)


# ------------------------------------------------- chapter 15's recall task, read out by attention

# Its sequences exactly as memory.py makes them. The query state h_T attends over
# every state h_1 .. h_T; without attention the context is h_T itself.
R_K, R_D = 4, 4  # symbols to remember, distractor symbols
R_QUERY, R_V = R_K + R_D, R_K + R_D + 1  # the query's token id; the vocabulary's size
R_DATA_KEY, R_TEST_KEY = 16, 17  # memory.py's seed-sequence prefixes for training and test
R_SEEDS = SEEDS  # three of memory.py's four seeds
R_LAGS = (10, 20, 50)  # chapter 15's GRU learned lag 20 in 1,500 steps, and lag 50 in none
R_HIDDEN, R_BATCH, R_STEPS, R_TEST = 16, 32, 300, 512  # memory.py's h, batch and test size
MAX_LAG = 400  # the largest lag --recall accepts (about half a minute, at 300 steps)
R_SHOWN = "ABCDwxyz?"  # how a token is printed, as memory.py prints it: symbols, distractors, query
R_EXAMPLES = 3  # --recall prints the weights of the first test sequences of seed 0, per lag


def recall_weights(model, X, attention):
    """The weights a_t (M, B, T) the query put on h_1 .. h_T and the answers given (M, B),
    of the models side by side on tokens X (T, M, B)."""
    P, a, _, _ = recall_forward(model, X, attention)
    return a[:, :, 0], P[:, :, 0].argmax(axis=-1)


def recall_batch(rngs, n, lag):
    """n sequences per seed, drawn from each seed's generator as memory.py's
    make_sequences draws them: tokens (lag + 1, seeds, n), time first, and the answers
    (seeds, n). A sequence is a symbol, lag - 1 distractors, the query."""
    X = np.empty((lag + 1, len(rngs), n), dtype=np.intp)
    for s, rng in enumerate(rngs):
        X[0, s] = rng.integers(0, R_K, n)  # the symbol to remember, which is the answer
        X[1:lag, s] = rng.integers(R_K, R_K + R_D, (n, lag - 1)).T  # the distractors
    X[lag] = R_QUERY
    return X, X[0].copy()


def recall_params(seed, hidden=R_HIDDEN):
    rng = np.random.default_rng([19, seed])
    return {"enc": gru_params(rng, R_V, hidden), "mix": dense_params(rng, 2 * hidden, hidden),
            "out": dense_params(rng, hidden, R_K)}


def recall_forward(model, X, attention):
    """X (T, M, B) token ids: the answer's distribution P (M, B, 1, R_K) read at the
    query, the weights a_t (M, B, 1, T) it read h_1 .. h_T with, and the caches."""
    zero = np.zeros(X.shape[1:] + (model["enc"]["W_h"].shape[-2],), model["enc"]["W_h"].dtype)
    Hs, cache_e = gru_forward(model["enc"], one_hot(X, R_V, zero.dtype), zero)
    q, E = Hs[-1][:, :, None], Hs[1:].transpose(1, 2, 0, 3)  # the query h_T (M, B, 1, h)
    P, a, cache_r = readout(model, q, E, attention)  # a_t = softmax over t of h_T . h_t
    return P, a, cache_e, cache_r


def recall_loss(model, X, Y, attention, need_grads=True):
    """X (T, M, B) token ids, Y (M, B) answers. Loss and accuracy per model, gradients."""
    P, a, cache_e, cache_r = recall_forward(model, X, attention)
    loss, dZ = cross_entropy(P, Y[:, :, None])
    accuracy = (P[:, :, 0].argmax(axis=-1) == Y).mean(axis=1)
    if not need_grads:
        return loss, accuracy, None
    g, dq, dE = readout_backward(model, cache_r, dZ, attention)
    dHs = dE.transpose(2, 0, 1, 3).copy()
    dHs[-1] += dq[:, :, 0]
    g["enc"], _, _ = gru_backward(model["enc"], cache_e, dHs)
    return loss, accuracy, g


def recall_test(lag, seeds=R_SEEDS):
    """memory.py's test set for `lag`: tokens (lag + 1, seeds, R_TEST), answers (seeds, R_TEST)."""
    return recall_batch([np.random.default_rng([R_TEST_KEY, s, lag]) for s in seeds], R_TEST, lag)


def train_recall(lag, steps, seeds=R_SEEDS):
    """The GRU with a readout, on memory.py's training streams and test set for `lag`:
    for each seed one model without attention and one with, side by side. Test accuracy
    per model, and the models (memoised)."""
    def train():
        model = stack_models([recall_params(s) for s in seeds] * 2)
        attention = with_and_without(seeds)
        adam = Adam(model)
        data = [np.random.default_rng([R_DATA_KEY, s, lag]) for s in seeds]
        for step in range(steps):
            X, Y = recall_batch(data, R_BATCH, lag)
            _, _, grads = recall_loss(model, twice(X), twice(Y, 0), attention)
            adam.step(grads)
        X, Y = recall_test(lag, seeds)
        _, accuracy, _ = recall_loss(model, twice(X), twice(Y, 0), attention, need_grads=False)
        return accuracy.tolist(), model

    return memoised(("recall", lag, steps, tuple(seeds)), train)


# ----------------------------------------- every hand-written gradient against central differences

GRADCHECK = dict(steps=4, batch=3, hidden=3, vocab=6, eps=1e-5)  # a small float64 problem


@dataclass
class GradcheckRow:
    model: str
    parameter: str  # as the chapter writes it: encoder W_h
    entries: int  # of the two models together, every one checked
    largest_gap: float  # max |a - n| over the entries, a analytic and n numeric
    relative_error: float  # largest_gap / max(|a| + |n|)


def named_leaves(tree, prefix=""):
    """(path, array) of every parameter, in the order of leaves(): 'layers.0.fwd.W_x'."""
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in named_leaves(tree[k], f"{prefix}{k}.")]
    if isinstance(tree, list):
        return [x for n, item in enumerate(tree) for x in named_leaves(item, f"{prefix}{n}.")]
    return [(prefix[:-1], tree)]


READOUT_NAMES = {"mix.W": "W_c", "mix.b": "b_c", "out.W": "W_o", "out.b": "b_o"}
LABELLER_NAMES = {"out.W": "W_hq", "out.b": "b_q"}  # the output layer of 17.1's equation


def parameter_name(path, gru="encoder"):
    """A parameter's path as the chapter writes it: 'layers.1.bwd.W_h' is 'layer 2
    backward W_h', 'dec.b' 'decoder b', 'mix.W' 'W_c'. gru: what 'enc' is called."""
    parts = path.split(".")
    if parts[0] == "layers":
        return f"layer {int(parts[1]) + 1}{' backward' if parts[2] == 'bwd' else ''} {parts[3]}"
    if parts[0] in ("enc", "dec"):
        return f"{gru if parts[0] == 'enc' else 'decoder'} {parts[1]}"
    return {**READOUT_NAMES, **(LABELLER_NAMES if gru is None else {})}[path]


def gradcheck_problems(seed=0):
    """(name, model, loss(model, need_grads) -> (summed loss, gradients), what its first
    GRU is called) for each kind of model, two models side by side, in float64 with random
    data."""
    c = GRADCHECK
    rng = np.random.default_rng(seed)
    T, B, h, V = c["steps"], c["batch"], c["hidden"], c["vocab"]
    pair = np.array([False, True])
    problems = []
    for name, hidden, bidirectional in (("stacked GRU, 2 layers", (h, h - 1), False),
                                        ("bidirectional GRU", (h,), True)):
        model = stack_models([labeller_params(s, V, hidden, V, bidirectional) for s in (0, 1)],
                             np.float64)
        X, Y = rng.integers(0, V, (T, 2, B)), rng.integers(0, V, (T, 2, B))

        def loss(m, need, X=X, Y=Y):
            value, _, _, grads = labeller_loss(m, one_hot(X, V, np.float64), Y, need)
            return value.sum(), grads
        problems.append((name, model, loss, None))
    model = stack_models([seq2seq_params(s, h) for s in (0, 1)], np.float64)
    source = rng.integers(0, K, (T, 2, B))

    def loss(m, need, source=source):
        value, _, _, grads = seq2seq_loss(m, source, source[::-1], pair, need)
        return value.sum(), grads
    problems.append(("encoder-decoder, without and with attention", model, loss, "encoder"))
    model = stack_models([recall_params(s, h) for s in (0, 1)], np.float64)
    X, Y = rng.integers(0, R_V, (T + 1, 2, B)), rng.integers(0, R_K, (2, B))

    def loss(m, need, X=X, Y=Y):
        value, _, grads = recall_loss(m, X, Y, pair, need)
        return value.sum(), grads
    problems.append(("recall readout, without and with attention", model, loss, "GRU"))
    for _, model, _, _ in problems:  # weights larger than the initial ones: every path matters
        for p in leaves(model):
            p[...] = 0.5 * rng.standard_normal(p.shape)
    return problems


def central_difference(loss, model, p, i, eps=GRADCHECK["eps"]):
    """(loss(p[i] + eps) - loss(p[i] - eps)) / 2 eps, p[i] put back as it was."""
    values = []
    for shift in (eps, -2 * eps):
        p[i] += shift
        values.append(loss(model, False)[0])
    p[i] += eps
    return (values[0] - values[1]) / (2 * eps)


@dataclass
class Gradcheck:
    rows: list  # GradcheckRow per parameter of every model
    worst: float  # the largest relative error of all
    passed: bool  # worst < 1e-6


def compute_gradcheck(seed=0):
    """Every analytic gradient against central differences: one row per parameter."""
    rows = []
    for name, model, loss, gru in gradcheck_problems(seed):
        _, grads = loss(model, True)
        for (path, p), analytic in zip(named_leaves(model), leaves(grads)):
            numeric = np.array([central_difference(loss, model, p, i)
                                for i in np.ndindex(p.shape)]).reshape(p.shape)
            gap = float(np.abs(analytic - numeric).max())
            scale = float((np.abs(analytic) + np.abs(numeric)).max())
            rows.append(GradcheckRow(model=name, parameter=parameter_name(path, gru),
                                     entries=p.size, largest_gap=gap,
                                     relative_error=gap / max(scale, 1e-300)))
    worst = max(row.relative_error for row in rows)
    return Gradcheck(rows=rows, worst=worst, passed=worst < 1e-6)


# ---------------------------------------- what each report shows: one compute_* per flag

# Each returns the record its report prints and returns: every number the page quotes,
# computed here from the trained models; the reports below only print.

def stacked_runs(ids, steps):
    """The models of STACKS as language models, trained once per run: [(model, run)]."""
    return [train_labeller(ids, name, "lm", hidden, False, steps) for name, hidden in STACKS]


@dataclass
class Stacked:
    steps: int
    seeds: list
    batch: int
    lr: float
    runs: list  # LabellerRun per model: curves, per-position loss at the end
    names: list  # the models, in the table's order
    params: list  # per model: parameters of one
    val_ppl: list  # per model, per seed: validation perplexity at the end
    mean_ppl: list  # per model: its mean over the seeds
    best_step: list  # per model: the step of the curve's lowest mean
    best_ppl: list  # per model: that lowest mean (on the curve's windows)
    curve_every: int  # steps between two points of the curves
    curve_windows: int  # the validation windows of the curves' points (as many training ones)
    val_windows: int  # the validation windows of the table: all of them
    train_chars: int  # the characters the training windows are cut from
    reads: float  # how many times a step's windows read each of them, in all steps
    curve_mean: list  # per model, per point: mean validation perplexity of the curve
    train_mean: list  # per model, per point: mean training perplexity, as many windows
    last_curve: list  # per model: the curve's mean at the last step
    best_train: list  # per model: the training perplexity at the curve's lowest point
    last_train: list  # ... and at the last step
    clip: float  # each model's gradient is clipped to this norm, in every experiment
    seed_count: int  # seeds of every experiment


def compute_stacked(ids, steps):
    """One GRU layer against two as language models: perplexity at the end and along the
    way, and where each curve is lowest."""
    runs = [run for _, run in stacked_runs(ids, steps)]
    val = [np.exp(np.mean(r.position_loss, axis=0)).tolist() for r in runs]
    curve_mean = [mean_over_seeds(r.curve) for r in runs]
    train_mean = [mean_over_seeds(r.train_curve) for r in runs]
    best = [int(np.argmin(c)) for c in curve_mean]
    train_chars = NUM_TRAIN + NUM_STEPS
    return Stacked(
        steps=steps, seeds=list(SEEDS), batch=LM_BATCH, lr=LR, runs=runs,
        names=[r.name for r in runs], params=[r.params for r in runs], val_ppl=val,
        mean_ppl=mean_over_seeds(val), best_step=[runs[0].curve_steps[b] for b in best],
        best_ppl=[c[b] for c, b in zip(curve_mean, best)], curve_every=LM_EVERY,
        curve_windows=LM_CURVE_VAL, val_windows=NUM_VAL, train_chars=train_chars,
        reads=steps * LM_BATCH * NUM_STEPS / train_chars, curve_mean=curve_mean,
        train_mean=train_mean, last_curve=[c[-1] for c in curve_mean],
        best_train=[t[b] for t, b in zip(train_mean, best)],
        last_train=[t[-1] for t in train_mean], clip=CLIP, seed_count=len(SEEDS))


@dataclass
class Leak:
    runs: list  # the one-layer model of --stacked, one with either direction's budget, both
    names: list
    inside_ppl: list  # per model, per seed: validation perplexity at t = 1 .. T - 1
    last_ppl: list  # per model, per seed: at t = T
    inside_mean: list  # per model: the mean over the seeds
    last_mean: list
    position_ppl: list  # per model, per position t = 1 .. T: the mean over the seeds
    steps: int  # the bidirectional model's, and the one-directional control's
    hidden: list  # per model: units per direction
    model_steps: list  # per model: its training steps


def ppl_at(run, at):
    """Per seed: the validation perplexity of `run` over the positions `at` (0-based)."""
    return np.exp(np.mean(np.array(run.position_loss)[at], axis=0)).tolist()


def compute_leak(ids, steps):
    """A bidirectional GRU as a language model against two one-directional ones:
    perplexity by position, inside the window and at its last step."""
    one = stacked_runs(ids, steps)[0][1]
    _, fair = train_labeller(ids, f"one direction, {BI_HIDDEN} units, {LEAK_STEPS} steps", "lm",
                             (BI_HIDDEN,), False, LEAK_STEPS)
    _, both = train_labeller(ids, f"both directions, 2 x {BI_HIDDEN} units, {LEAK_STEPS} steps",
                             "lm", (BI_HIDDEN,), True, LEAK_STEPS)
    one.name = f"one direction, {one.hidden[0]} units, {one.steps} steps"
    runs, T = [one, fair, both], NUM_STEPS
    inside = [ppl_at(r, list(range(T - 1))) for r in runs]
    last = [ppl_at(r, [T - 1]) for r in runs]
    return Leak(runs=runs, names=[r.name for r in runs], inside_ppl=inside, last_ppl=last,
                inside_mean=mean_over_seeds(inside), last_mean=mean_over_seeds(last),
                position_ppl=[np.exp(r.position_loss).mean(axis=1).tolist() for r in runs],
                steps=LEAK_STEPS, hidden=[r.hidden[0] for r in runs],
                model_steps=[r.steps for r in runs])


@dataclass
class Tagging:
    runs: list
    names: list
    inside_accuracy: list  # per model, per seed: at t = 1 .. T - 1
    last_accuracy: list  # per model, per seed: at t = T
    inside_mean: list  # per model: the mean over the seeds
    last_mean: list
    all_mean: list  # every position
    majority: list  # accuracy of always "no", per row of the table (the last: every position)
    steps: int
    bi_hidden: int  # units per direction of the bidirectional tagger


def accuracy_at(run, at):
    """Per seed: the validation accuracy of `run` over the positions `at` (0-based)."""
    return np.mean(np.array(run.position_accuracy)[at], axis=0).tolist()


TABLE_POSITIONS = (1, 2, 8, 16, 31)  # the rows of --leak's and --tagging's tables, then T, all


def compute_tagging(ids):
    """The last letter of a word, tagged by one direction and by both: accuracy by
    position, and that of always saying no."""
    _, one = train_labeller(ids, "one direction, h = 32", "tag", (32,), False, TAG_STEPS)
    _, both = train_labeller(ids, f"both directions, 2 x {BI_HIDDEN}", "tag", (BI_HIDDEN,), True,
                             TAG_STEPS)
    runs, T = [one, both], NUM_STEPS
    tags = last_letter_tags(windows(ids)[1])
    always_no = [float((tags[:, t - 1] == 0).mean()) for t in TABLE_POSITIONS + (T,)]
    inside = [accuracy_at(r, list(range(T - 1))) for r in runs]
    last = [accuracy_at(r, [T - 1]) for r in runs]
    return Tagging(runs=runs, names=[r.name for r in runs], inside_accuracy=inside,
                   last_accuracy=last, inside_mean=mean_over_seeds(inside),
                   last_mean=mean_over_seeds(last),
                   all_mean=[float(np.mean(accuracy_at(r, list(range(T))))) for r in runs],
                   majority=always_no + [float((tags == 0).mean())], steps=TAG_STEPS,
                   bi_hidden=BI_HIDDEN)


@dataclass
class Reverse:
    steps: int
    lengths: list
    without: list  # per length, per seed: share of the test strings reversed exactly
    with_attention: list
    mean_without: list  # per length: the mean over the seeds
    mean_with: list
    params: int  # of one model, with attention or without (attention adds none)
    hidden: int  # units of the encoder and of the decoder
    max_len: int  # the longest strings
    symbols: int  # the alphabet's size
    batch: int  # strings per training step
    test_strings: int  # per length
    seconds: float


def compute_reverse(steps):
    """The encoder-decoder without and with attention on the test strings of every length:
    the share reversed exactly."""
    model, seconds = train_seq2seq(steps)
    S, lengths = len(SEEDS), list(range(1, MAX_LEN + 1))
    exact = [test_seq2seq(model, n)[0] for n in lengths]
    without, with_ = [e[:S].tolist() for e in exact], [e[S:].tolist() for e in exact]
    return Reverse(steps=steps, lengths=lengths, without=without, with_attention=with_,
                   mean_without=mean_over_seeds(without), mean_with=mean_over_seeds(with_),
                   params=count_params(model), hidden=S2S_HIDDEN, max_len=MAX_LEN, symbols=K,
                   batch=S2S_BATCH, test_strings=S2S_TEST, seconds=seconds)


@dataclass
class Attention:
    strings: list  # [source, output, weights (rows: output steps)] of seed 0's model
    lengths: list
    mirror: list  # per length, per seed: mean weight on x_{n+1-j}
    near: list  # per length, per seed: mean weight on x_{n+1-j} and its neighbours
    mirror_mean: list  # per length: the mean over the seeds
    near_mean: list


def compute_attention(steps, extra=None):
    """The weights of seed 0's model with attention on the first test string of each of
    SHOWN_LENGTHS (and on `extra`), and on every test string how much of them falls on
    the symbol each output step must write."""
    model, _ = train_seq2seq(steps)
    S = len(SEEDS)
    shown = ["".join(SYMBOLS[i] for i in reversal_test(n)[:, 0]) for n in SHOWN_LENGTHS]
    strings = []
    for text in shown + ([extra] if extra is not None else []):
        source = np.array([SYMBOLS.index(c) for c in text])
        batch = np.ascontiguousarray(np.broadcast_to(source[:, None, None], (len(text), 2 * S, 1)))
        output, weights = decode(model, batch, with_and_without(SEEDS))
        written = "".join(SYMBOLS[i] for i in output[:, S, 0])  # seed 0, with attention
        strings.append([text, written, weights[S, 0].tolist()])
    lengths = list(range(2, MAX_LEN + 1))
    mirror, near = [], []
    for n in lengths:
        w = test_seq2seq(model, n)[3][S:]  # (S, strings, n, n): the models with attention
        j = np.arange(n)
        mirror.append(w[:, :, j, n - 1 - j].mean(axis=(1, 2)).tolist())
        close = np.abs((n - 1 - j)[:, None] - j[None, :]) <= 1  # the mirror and its neighbours
        near.append((w * close).sum(axis=-1).mean(axis=(1, 2)).tolist())
    return Attention(strings=strings, lengths=lengths, mirror=mirror, near=near,
                     mirror_mean=mean_over_seeds(mirror), near_mean=mean_over_seeds(near))


@dataclass
class Exposure:
    lengths: list
    forced: list  # per length, per seed: share of symbols right when fed the truth
    free: list  # ... fed its own outputs
    forced_strings: list  # per length, per seed: share of whole strings right, fed the truth
    free_strings: list  # ... fed its own outputs
    length: int  # the one the text quotes
    forced_at: float  # mean over seeds at that length: symbols
    free_at: float
    forced_strings_at: float  # ... and whole strings
    free_strings_at: float


def compute_exposure(steps):
    """The models without attention decoded fed the true symbols and fed their own:
    symbols and whole strings right, by length."""
    model, _ = train_seq2seq(steps)
    S = len(SEEDS)
    lengths = list(range(2, MAX_LEN + 1, 2))
    fed_truth = [test_seq2seq(model, n, True) for n in lengths]
    fed_own = [test_seq2seq(model, n) for n in lengths]
    forced, free = ([t[1][:S].tolist() for t in tested] for tested in (fed_truth, fed_own))
    forced_strings, free_strings = ([t[0][:S].tolist() for t in tested]
                                    for tested in (fed_truth, fed_own))
    at = lengths.index(EXPOSURE_LENGTH)
    return Exposure(lengths=lengths, forced=forced, free=free, forced_strings=forced_strings,
                    free_strings=free_strings, length=EXPOSURE_LENGTH,
                    forced_at=float(np.mean(forced[at])), free_at=float(np.mean(free[at])),
                    forced_strings_at=float(np.mean(forced_strings[at])),
                    free_strings_at=float(np.mean(free_strings[at])))


@dataclass
class Beam:
    widths: list
    lengths: list
    right: list  # per width, per seed: share of every test string reversed exactly
    right_at: list  # per width, per length, per seed
    log_prob: list  # per width, per seed: mean log P(output | source) over every test string
    mean_right: list  # per width: the mean over the seeds
    mean_log_prob: list
    steps: list  # per width: decoder steps per string
    seconds: list  # per width: CPU time of the search
    greedy_same: bool  # width 1 wrote what greedy decoding (decode) writes, every string
    example: list  # [source, target, [how, written, right, per-symbol log P] per decoding]
    example_width: int  # the beam shown in the example
    model_steps: int  # the models' training steps (those of --reverse)
    traces: list  # BeamTrace per string: what each width keeps at every step


def compute_beam(steps):
    """Beam search of every width of BEAM_WIDTHS on the models without attention: strings
    right, log-probability and cost; the first string the widest beam gets right and
    greedy decoding wrong, symbol by symbol; and every step of a few widths."""
    model, _ = train_seq2seq(steps)
    S, lengths = len(SEEDS), list(range(1, MAX_LEN + 1))
    tests = [test_beam(model, w, lengths) for w in BEAM_WIDTHS]
    plain = select_models(model, slice(0, S))
    greedy_same = all(np.array_equal(decode(plain, np.ascontiguousarray(np.broadcast_to(
        reversal_test(n)[:, None], (n, S, S2S_TEST))), np.zeros(S, bool))[0], out_n)
        for n, out_n in zip(lengths, tests[0].outputs))
    widest = tests[-1]
    found = beam_example(lengths, tests[0], widest)
    example = []
    if found is not None:
        n, i = found
        source = reversal_test(n)[:, i]
        rows = []
        for how, test in (("greedy", tests[0]), (f"beam, width {widest.width}", widest)):
            written = test.outputs[lengths.index(n)][:, 0, i]
            lp = symbol_log_probs(select_models(plain, slice(0, 1)), source[:, None, None],
                                  written[:, None, None], np.zeros(1, bool))[0, 0]
            rows.append([how, "".join(SYMBOLS[c] for c in written),
                         bool((written == source[::-1]).all()), lp.tolist()])
        text = "".join(SYMBOLS[c] for c in source)
        example = [text, text[::-1], rows]
    traced = ([example[0]] if example else []) + [
        "".join(SYMBOLS[c] for c in reversal_test(BEAM_SHOWN[0])[:, 0])]
    right = [np.mean(t.right, axis=0).tolist() for t in tests]
    log_prob = [np.mean(t.log_prob, axis=0).tolist() for t in tests]
    return Beam(widths=list(BEAM_WIDTHS), lengths=lengths, right=right,
                right_at=[t.right for t in tests], log_prob=log_prob,
                mean_right=mean_over_seeds(right), mean_log_prob=mean_over_seeds(log_prob),
                steps=[t.steps for t in tests], seconds=[t.seconds for t in tests],
                greedy_same=greedy_same, example=example, example_width=widest.width,
                model_steps=steps,
                traces=[beam_trace(plain, text, BEAM_TRACED + (widest.width,))
                        for text in traced])


@dataclass
class Recall:
    lags: list
    steps: int
    without: list  # per lag, per seed: test accuracy
    with_attention: list
    mean_without: list  # per lag: the mean over the seeds
    mean_with: list
    chance: float
    hidden: int
    seconds: float
    first: list  # per lag, per seed: mean weight a_1 on h_1, over the test sequences
    largest: list  # per lag, per seed: mean of the largest weight of a sequence
    last: list  # per lag, per seed: mean weight a_T on h_T, the query's own state
    half: list  # per lag, per seed: mean number of states that hold half the weight
    first_mean: list  # per lag: a_1's mean over the seeds
    half_mean: list  # per lag: the states holding half the weight, the mean over the seeds
    examples: list  # RecallExample per lag and sequence shown


@dataclass
class RecallExample:
    lag: int
    sequence: int  # 1 .. R_EXAMPLES: its place in seed 0's test set
    tokens: str  # x_1 .. x_T as memory.py prints them: 'B', distractors 'w'-'z', '?'
    answer: str
    given: str  # the answer of seed 0's model with attention
    weights: list  # a_1 .. a_T


def compute_recall(lags, steps):
    """The recall task at each lag without and with attention: test accuracy, where the
    models with attention read, and seed 0's first test sequences with their weights."""
    S = len(R_SEEDS)
    trained = [train_recall(lag, steps) for lag in lags]  # ((accuracy, model), seconds)
    where = {"first": [], "largest": [], "last": [], "half": []}
    examples = []
    for lag, ((_, model), _) in zip(lags, trained):
        X, Y = recall_test(lag)
        a, given = recall_weights(model, twice(X), with_and_without(R_SEEDS))
        a, given = a[S:], given[S:]  # the models with attention: (seeds, sequences, T)
        share = np.cumsum(-np.sort(-a, axis=-1), axis=-1)  # the largest weights first
        for name, value in (("first", a[..., 0]), ("largest", a.max(axis=-1)),
                            ("last", a[..., -1]), ("half", 1 + (share < 0.5).sum(axis=-1))):
            where[name].append(value.mean(axis=-1).tolist())
        for b in range(R_EXAMPLES):
            examples.append(RecallExample(
                lag=lag, sequence=b + 1, tokens="".join(R_SHOWN[x] for x in X[:, 0, b]),
                answer=R_SHOWN[Y[0, b]], given=R_SHOWN[given[0, b]],
                weights=a[0, b].astype(float).tolist()))
    without = [accuracy[:S] for (accuracy, _), _ in trained]
    with_ = [accuracy[S:] for (accuracy, _), _ in trained]
    return Recall(lags=list(lags), steps=steps, without=without, with_attention=with_,
                  mean_without=mean_over_seeds(without), mean_with=mean_over_seeds(with_),
                  chance=1 / R_K, hidden=R_HIDDEN, seconds=sum(s for _, s in trained),
                  first=where["first"], largest=where["largest"], last=where["last"],
                  half=where["half"], first_mean=mean_over_seeds(where["first"]),
                  half_mean=mean_over_seeds(where["half"]), examples=examples)


# ===========================================================================
# What the site prints: the reports, one per flag, and the command line.
# Everything above computes; everything below only formats and prints.
# ===========================================================================

def spread(values, digits=2):
    """'6.52 (6.48-6.57)': the mean, then the lowest and highest, over seeds."""
    return (f"{np.mean(values):.{digits}f} ({min(values):.{digits}f}-"
            f"{max(values):.{digits}f})")


def format_curve_table(runs, curve="curve"):
    """Perplexity along training: on validation windows (curve) or training windows
    (train_curve)."""
    rows = [(f"{step:,}",) + tuple(spread(getattr(r, curve)[k]) for r in runs)
            for k, step in enumerate(runs[0].curve_steps)]
    return format_table(("step",) + tuple(r.name for r in runs), rows, "r" * (len(runs) + 1))


def position_rows(runs, value, before=lambda n: ()):
    """--leak's and --tagging's tables: a row per position of TABLE_POSITIONS, then the
    last one, then all; value(run, positions) per seed; before(n): cells of row n."""
    T = len(runs[0].position_loss)
    rows = [(f"t = {t}", "in the window") for t in TABLE_POSITIONS]
    rows += [(f"t = {T}", "after the window"), ("all", "")]
    at = [[t - 1] for t in TABLE_POSITIONS] + [[T - 1], list(range(T))]
    return [row + before(n) + tuple(spread(value(r, a)) for r in runs)
            for n, (row, a) in enumerate(zip(rows, at))]


def format_weights_table(source, output, weights):
    """One string's weights: a row per output step j and the symbol y_j it writes, a
    column per input symbol and its position."""
    header = ("j: y_j",) + tuple(f"{c} ({i})" for i, c in enumerate(source, 1))
    rows = [(f"{j}: {output[j - 1]}",) + tuple(f"{w:.2f}" for w in row)
            for j, row in enumerate(weights, 1)]
    return format_table(header, rows, "l" + "r" * len(source))


def format_beam_trace(trace):
    """Every step of every width: the beams kept, likeliest first, and which of them lead
    to greedy decoding's output and to the beam's own."""
    rows = []
    for width, steps, final in zip(trace.widths, trace.steps, trace.outputs):
        for j, beams in enumerate(steps, 1):
            for written, lp in beams:
                marks = [name for name, whole in (("greedy", trace.outputs[0]), ("final", final))
                         if whole.startswith(written)]
                rows.append((width, j, written, f"{lp:.2f}", ", ".join(marks)))
    return format_table(("width", "step j", "kept: y_1 .. y_j", "log P", "leads to"), rows,
                        "rrlrl")


def format_recall_weights(examples):
    """The weights of one lag's sequences: a row per step t, each sequence's x_t and a_t."""
    header = ("t",) + tuple(f"{c} ({e.sequence})" for e in examples for c in ("x_t", "a_t"))
    rows = [(t,) + tuple(cell for e in examples for cell in (e.tokens[t - 1],
                                                              f"{e.weights[t - 1]:.3f}"))
            for t in range(1, len(examples[0].tokens) + 1)]
    return format_table(header, rows, "r" + "lr" * len(examples))


def format_recall_table(lags, without, with_, widths=None):
    rows = [(lag, spread(a), spread(b)) for lag, a, b in zip(lags, without, with_)]
    return format_table(("lag", "without attention", "with attention"), rows, "rrr", widths)


# ----------------------------------------------------------------------- the reports, one per flag

def corpus_of(args):
    return read_corpus(args.corpus or CORPUS)


def steps_of(args, default):
    return args.steps if args.steps is not None else default


def report_stacked(args, out):
    r = compute_stacked(corpus_of(args), steps_of(args, LM_STEPS))
    out.text(f"One GRU layer against two, as language models of The Time Machine: d2l's "
             f"windows ({NUM_TRAIN:,} training and {NUM_VAL:,} validation windows of "
             f"{NUM_STEPS} characters), {r.steps:,} steps of Adam (learning rate {LR:g}, "
             f"batches of {LM_BATCH}, gradients clipped to norm {CLIP:g}), seeds "
             f"{', '.join(map(str, SEEDS))}. Validation perplexity on all {NUM_VAL:,} windows "
             f"after the last step: mean (lowest-highest) over the seeds.")
    out.table("stacked", format_table(
        ("model", "parameters", f"val ppl, step {r.steps:,}"),
        [(name, f"{params:,}", spread(val)) for name, params, val
         in zip(r.names, r.params, r.val_ppl)], "lrr"))
    out.text(f"Along the way, every {LM_EVERY} steps, on {LM_CURVE_VAL} of the validation "
             f"windows (every {NUM_VAL // LM_CURVE_VAL}th):")
    out.table("curve", format_curve_table(r.runs))
    out.text(f"Training perplexity at the same steps, on {LM_CURVE_VAL} of the training windows "
             f"(every {NUM_TRAIN // LM_CURVE_VAL}th): how well each model fits the text it "
             f"trains on.")
    out.table("fit", format_curve_table(r.runs, "train_curve"))
    out.text("time: " + ", ".join(f"{run.name} {run.seconds:.1f} s" for run in r.runs)
             + " of CPU for the three seeds")
    return r


def report_layers(args, out):
    ids = corpus_of(args)
    trained = stacked_runs(ids, steps_of(args, LM_STEPS))
    r = compute_probes(ids, {"1 layer": trained[0][0], "2 layers": trained[2][0]})
    out.text(f"What each layer's state holds: a linear probe (least squares on the state, "
             f"one output per class) fitted on {PROBE_WINDOWS} training windows and tested on "
             f"{PROBE_WINDOWS} validation windows, at positions 2 to {NUM_STEPS}; the models "
             f"of --stacked with h = 32. Test accuracy, mean (lowest-highest) over the seeds; "
             f"the letters of the word so far count 0 (a space) to 5 or more.")
    rows = [(probe, f"{r.majority[k]:.2f}") + tuple(spread(column[k]) for column in r.accuracy)
            for k, probe in enumerate(r.probes)]
    out.table("probes", format_table(("decoded from the state", "majority class")
                                     + tuple(r.columns), rows, "lr" + "r" * len(r.columns)))
    return r


def report_leak(args, out):
    r = compute_leak(corpus_of(args), steps_of(args, LM_STEPS))
    one, _, both = r.runs
    out.text(f"A bidirectional GRU ({BI_HIDDEN} units each way, {both.params:,} parameters) "
             f"trained as a language model for {LEAK_STEPS} steps, against two one-directional "
             f"GRUs: the one-layer GRU of --stacked ({one.hidden[0]} units, {one.steps} steps) and "
             f"one with the budget of either direction ({BI_HIDDEN} units, {LEAK_STEPS} steps). "
             f"All three: Adam (learning rate {LR:g}), batches of {LM_BATCH}, seeds "
             f"{', '.join(map(str, SEEDS))}. At step t each predicts x_{{t+1}}; the backward "
             f"GRU has read x_{NUM_STEPS} .. x_t, which holds x_{{t+1}} for every t but the "
             f"last. Validation perplexity by position, mean (lowest-highest) over the seeds:")
    out.table("leak", format_table(("position", "the answer x_{t+1} is") + tuple(r.names),
                                   position_rows(r.runs, ppl_at),
                                   "ll" + "r" * len(r.runs)))
    return r


def report_tagging(args, out):
    r = compute_tagging(corpus_of(args))
    one, both = r.runs
    out.text(f"Tagging each character of d2l's windows: 1 if it is the last letter of its word "
             f"(the next character is a space), else 0. A one-directional GRU ({one.params:,} "
             f"parameters) against a bidirectional one ({both.params:,}), {TAG_STEPS} steps "
             f"each, as in --stacked. Validation accuracy by position, mean (lowest-highest) "
             f"over the seeds; 'always no' is the share of 0 tags:")
    rows = position_rows(r.runs, accuracy_at, lambda n: (f"{r.majority[n]:.2f}",))
    rows.append(("parameters", "", "") + tuple(f"{run.params:,}" for run in r.runs))
    out.table("tagging", format_table(("position", "the next character is", "always no")
                                      + tuple(r.names), rows, "llr" + "r" * len(r.runs)))
    return r


def report_reverse(args, out):
    r = compute_reverse(steps_of(args, S2S_STEPS))
    out.text(f"Reversing strings of 1 to {MAX_LEN} symbols from {K} ('{SYMBOLS}'): a GRU "
             f"encoder and a GRU decoder of {S2S_HIDDEN} units ({r.params:,} parameters), "
             f"trained with teacher forcing, {r.steps:,} steps of {S2S_BATCH} strings of one "
             f"length; the same models with attention (the same parameters: attention adds "
             f"none). Tested on {S2S_TEST} fixed strings per length, greedy, the decoder "
             f"reading its own outputs: the share reversed without an error, mean "
             f"(lowest-highest) over seeds {', '.join(map(str, SEEDS))}.")
    rows = [(n, spread(a), spread(b)) for n, a, b in zip(r.lengths, r.without, r.with_attention)]
    out.table("reverse", format_table(("length", "without attention", "with attention"), rows,
                                      "rrr"))
    out.text(f"time: {r.seconds:.1f} s of CPU for the {2 * len(SEEDS)} models")
    return r


def report_attention(args, out):
    r = compute_attention(steps_of(args, S2S_STEPS), args.string)
    for number, (text, written, weights) in enumerate(r.strings, start=1):
        if number in (2, 3):  # drawn as heat maps beside the first; a table is too wide
            out.text(f"String {number}: '{text}', written back as '{written}' (its weights "
                     f"are drawn in the chapter's heat maps).")
        else:  # the first test string, and the one --string gives
            out.text(f"String {number}: '{text}', written back as '{written}' by the model "
                     f"with attention (seed {SEEDS[0]}). Its weights a_ji, a row per output "
                     f"step:")
            out.table(f"weights_{number}", format_weights_table(text, written, weights))
    out.text(f"On all {S2S_TEST} test strings of each length: the mean weight that output step "
             f"j puts on x_{{n+1-j}}, the symbol it must write, and on it and the symbols beside "
             f"it; mean (lowest-highest) over the seeds:")
    rows = [(n, spread(m), spread(x)) for n, m, x in zip(r.lengths, r.mirror, r.near)]
    out.table("alignment", format_table(("length", "weight on x_{n+1-j}",
                                         "on it and its neighbours"), rows, "rrr"))
    return r


def report_exposure(args, out):
    r = compute_exposure(steps_of(args, S2S_STEPS))
    out.text("Teacher forcing: in training the decoder reads the true previous symbol; at test "
             "time it reads its own. The models without attention of --reverse, on its test "
             "strings, decoded both ways: the share of the symbols right, mean "
             "(lowest-highest) over the seeds.")
    rows = [(n, spread(a), spread(b)) for n, a, b in zip(r.lengths, r.forced, r.free)]
    out.table("exposure", format_table(("length", "fed the true symbols", "fed its own outputs"),
                                       rows, "rrr"))
    out.text(f"At length {r.length}: {r.forced_at:.2f} of the symbols right when fed the truth, "
             f"{r.free_at:.2f} when fed its own outputs. Whole strings right at that length: "
             f"{r.forced_strings_at:.2f} fed the truth, {r.free_strings_at:.2f} fed its own "
             f"outputs.")
    return r


def report_beam(args, out):
    r = compute_beam(steps_of(args, S2S_STEPS))
    out.text(f"Beam search on the models without attention of --reverse ({r.model_steps:,} "
             f"steps), on its {S2S_TEST} test strings of each length 1 to {MAX_LEN}: the "
             f"decoder keeps the width likeliest partial outputs, extends each by every symbol "
             f"and keeps the width likeliest of those; width 1 is greedy decoding"
             f"{'' if r.greedy_same else ' (NOT the same outputs as decode)'}. Share of the "
             f"strings reversed exactly and the mean log-probability of the output chosen, "
             f"mean (lowest-highest) over seeds {', '.join(map(str, SEEDS))}; the search's cost "
             f"in decoder steps per string and CPU time for all seeds.")
    at = [r.lengths.index(n) for n in BEAM_SHOWN]
    header = ("width", "strings right, all lengths", *(f"at length {n}" for n in BEAM_SHOWN),
              "mean log P(output)", "decoder steps per string", "CPU s")
    rows = [(width, spread(right), *(spread(right_at[k]) for k in at), spread(log_prob),
             f"{steps:.1f}", f"{seconds:.2f}") for width, right, right_at, log_prob, steps,
            seconds in zip(r.widths, r.right, r.right_at, r.log_prob, r.steps, r.seconds)]
    out.table("beam", format_table(header, rows, "r" * len(header)))
    if not r.example:
        out.text(f"No test string that greedy decoding gets wrong is right at width "
                 f"{r.example_width} for seed {SEEDS[0]}.")
    else:
        text, target, decodings = r.example
        out.text(f"The first test string greedy decoding gets wrong and the beam of width "
                 f"{r.example_width} gets right (seed {SEEDS[0]}): '{text}', to be written "
                 f"'{target}'.")
        rows = [(how, written, "yes" if right else "no", f"{sum(lp):.2f}",
                 " ".join(f"{x:.2f}" for x in lp)) for how, written, right, lp in decodings]
        out.table("beam_example", format_table(
            ("decoding", "written", "right", "log P(output)",
             "log P of each symbol, given those before"), rows, "llrrl"))
    for number, trace in enumerate(r.traces, start=1):
        out.text(f"Step by step (seed {SEEDS[0]}), '{trace.source}', to be written "
                 f"'{trace.target}': the beams each width keeps after every step, likeliest "
                 f"first, their log P(y_1 .. y_j), and whether they lead to greedy "
                 f"decoding's output ('{trace.outputs[0]}') or to the beam's own.")
        out.table(f"beam_steps_{number}", format_beam_trace(trace))
    return r


def report_recall(args, out):
    lags = args.lags or list(R_LAGS)
    steps = steps_of(args, R_STEPS)
    S = len(R_SEEDS)
    out.text(f"Chapter 15's recall task (memory.py's sequences and test sets: {R_K} symbols, "
             f"{R_D} distractors, seeds {', '.join(map(str, R_SEEDS))}): a GRU of {R_HIDDEN} "
             f"units, {steps:,} steps of Adam (learning rate {LR:g}, batches of {R_BATCH}). Its "
             f"answer is read from o = tanh([c, h_T] W_c + b_c): without attention c = h_T, "
             f"with attention c is the mean of h_1 .. h_T weighted by softmax of h_T . h_t. Test "
             f"accuracy on {R_TEST} sequences per seed, mean (lowest-highest); chance is "
             f"{1 / R_K:.2f}.")
    widths = [4, 16, 16]
    out.table("recall", format_recall_table([], [], [], widths))
    for lag in lags:  # a row as each lag is trained; compute_recall reads the same models
        (accuracy, _), _ = train_recall(lag, steps)
        out.row("recall", format_recall_table([lag], [accuracy[:S]], [accuracy[S:]],
                                              widths).splitlines()[-1])
    r = compute_recall(lags, steps)
    out.text(f"time: {r.seconds:.1f} s of CPU")
    out.text(f"Where the models with attention read: the weight a_t = softmax over t of "
             f"h_T . h_t on the state h_1 after the symbol, the largest weight of a sequence, "
             f"the weight on the query's own state h_T, and how many states, the heaviest "
             f"first, hold half the weight. Means over the {R_TEST} test sequences, mean "
             f"(lowest-highest) over the seeds.")
    rows = [(lag, spread(a, 3), spread(b, 3), spread(c, 3), spread(d, 1))
            for lag, a, b, c, d in zip(r.lags, r.first, r.largest, r.last, r.half)]
    out.table("recall_where", format_table(("lag", "a_1, on h_1", "largest a_t", "a_T, on h_T",
                                            "states holding half"), rows, "rrrrr"))
    out.text(f"The first {R_EXAMPLES} test sequences of seed {R_SEEDS[0]} at each lag ("
             f"{R_SHOWN[:R_K]} the symbols, {R_SHOWN[R_K:R_QUERY]} the distractors, "
             f"{R_SHOWN[R_QUERY]} the query) and the answer of its model with attention; "
             f"then the weights a_t on every state, a table per lag.")
    rows = [(e.lag, e.sequence, e.tokens, e.answer, e.given) for e in r.examples]
    out.table("recall_examples", format_table(("lag", "sequence", "x_1 .. x_T", "answer",
                                               "model's answer"), rows, "rrlll"))
    for lag in lags:
        out.table(f"recall_weights_{lag}",
                  format_recall_weights([e for e in r.examples if e.lag == lag]))
    return r


def report_gradcheck(args, out):
    r = compute_gradcheck()
    c = GRADCHECK
    out.text(f"Each hand-written gradient a against central differences n (step {c['eps']:g}) "
             f"of the loss, entry by entry, in float64: {c['steps']} steps, {c['batch']} "
             f"sequences, {c['hidden']} units, random weights, two models side by side (in the "
             f"encoder-decoder and the recall readout the first without attention, the second "
             f"with). A parameter's relative error is the largest abs(a - n) over its "
             f"entries, over the largest abs(a) + abs(n).")
    models = {}  # one row per backward pass: its parameters, their entries, the worst error
    for row in r.rows:
        models.setdefault(row.model, []).append(row)
    rows = [(m, len(rs), sum(x.entries for x in rs), f"{max(x.relative_error for x in rs):.1e}")
            for m, rs in models.items()]
    out.table("gradcheck_models", format_table(
        ("model", "parameters", "entries", "worst relative error"), rows, "lrrr"))
    out.text(f"worst: {r.worst:.1e} ({'under' if r.passed else 'NOT under'} 1e-6)")
    return r


REPORTS = {  # flag -> (what it prints, the function), in the order of the chapter
    "stacked": ("one GRU layer against two on The Time Machine, three seeds", report_stacked),
    "layers": ("what each layer's state holds: linear probes", report_layers),
    "leak": ("a bidirectional GRU as a language model reads the answer", report_leak),
    "tagging": ("the last letter of a word: one direction against both", report_tagging),
    "reverse": ("reversing strings: the encoder-decoder without and with attention",
                report_reverse),
    "attention": ("the attention weights of a few test strings", report_attention),
    "exposure": ("teacher forcing against the decoder's own outputs", report_exposure),
    "beam": ("decoding with a beam of width 1 to 8: exact match, log-probability, cost",
             report_beam),
    "recall": ("chapter 15's recall task with an attention readout", report_recall),
    "gradcheck": ("every hand-written gradient against central differences", report_gradcheck),
}
DEFAULT = tuple(REPORTS)  # with no flag: every report, in order
OPTIONS = {  # option -> the reports that use it; given to no chosen one, it is an error
    "steps": ("stacked", "layers", "reverse", "attention", "exposure", "beam", "recall"),
    "lags": ("recall",),
    "string": ("attention",),
    "corpus": ("stacked", "layers", "leak", "tagging"),
}


def lag_list(text):
    """An argparse type: up to five lags, comma-separated, each from 1 to MAX_LAG."""
    try:
        lags = [int(x) for x in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a list of whole numbers: {text!r}") from None
    if not 1 <= len(lags) <= 5 or not all(1 <= x <= MAX_LAG for x in lags):
        raise argparse.ArgumentTypeError(f"one to five lags from 1 to {MAX_LAG}, got {text}")
    return lags


def symbol_string(text):
    if not 1 <= len(text) <= MAX_LEN or any(c not in SYMBOLS for c in text):
        raise argparse.ArgumentTypeError(f"1 to {MAX_LEN} of the symbols {SYMBOLS}, got {text!r}")
    return text


SHARED_TRAINING = (  # (reports that share their models, default steps, seconds a step)
    (("stacked", "layers"), LM_STEPS, 0.04),  # on one core, measured
    (("reverse", "attention", "exposure"), S2S_STEPS, 0.015))
RECALL_SECONDS = 2.2e-4  # one --recall step, per step of the sequence (lag + 10): measured


def estimate_seconds(args):
    """About how long the chosen reports train for (the harness refuses a command past an
    hour); models that reports share are trained once."""
    seconds = sum(per_step * steps_of(args, default) for flags, default, per_step
                  in SHARED_TRAINING if set(flags) & set(args.chosen))
    if "recall" in args.chosen:
        lags = args.lags or R_LAGS
        seconds += RECALL_SECONDS * steps_of(args, R_STEPS) * sum(lag + 10 for lag in lags)
    return seconds


def add_options(parser):
    parser.add_argument("--steps", metavar="N", type=number(int, 1, MAX_STEPS),
                        help=f"the training steps of the models shown, 1 to {MAX_STEPS:,} "
                             f"(defaults: {LM_STEPS} for --stacked and --layers, {S2S_STEPS:,} "
                             f"for --reverse, --attention, --exposure and --beam, {R_STEPS} for --recall)")
    parser.add_argument("--lags", metavar="L,L", type=lag_list,
                        help=f"--recall: the lags, up to five (default "
                             f"{','.join(map(str, R_LAGS))})")
    parser.add_argument("--string", metavar="S", type=symbol_string,
                        help=f"--attention: one more string to reverse, of the symbols {SYMBOLS}")
    parser.add_argument("--corpus", metavar="PATH",
                        help="--stacked, --layers, --leak, --tagging: another text (default: "
                             f"timemachine.txt next to deeper.py), at most {MAX_FILE_BYTES:,} "
                             "bytes")


# ---------------------------------------------------------------------------
# The harness: the same in every script of the site, checked when it is built.
# Printing, the command line, main(). Above it: this script's own code.
# ---------------------------------------------------------------------------

NAME = os.path.basename(__file__)  # rnn.py, as the command line names it
MAX_FILE_BYTES = 10_000_000  # a file named on the command line: a larger one is refused
LONGEST_HOURS = 1  # a command estimate_seconds(args) puts past this is refused


class Printer:
    """Prints paragraphs and tables, a blank line between; keeps each table by name."""

    def __init__(self, stream=None):
        self.stream, self.tables, self.gap = stream or sys.stdout, {}, ""

    def text(self, paragraph):  # lines over 78 characters wrapped, but not a `time:` line
        self.block("\n".join(textwrap.fill(line, 78, break_on_hyphens=False)
                             if len(line) > 78 and not line.startswith("time:") else line
                             for line in paragraph.split("\n")))

    def table(self, name, table):  # the table can grow: row(name, line) prints one more row
        assert name not in self.tables, f"table {name!r} printed twice"
        self.tables[name] = table
        self.block(table)

    def row(self, name, line):
        self.tables[name] += "\n" + line
        print(line, file=self.stream, flush=True)

    def block(self, text):  # a blank line before every block but the first
        print(self.gap + text, file=self.stream, flush=True)
        self.gap = "\n"


def format_table(header, rows, align, min_widths=None):
    """A markdown table; align: 'l' or 'r' per column; min_widths: to print row by row."""
    cells = [[str(c) for c in row] for row in (header, *rows)]
    widths = [max(3, (min_widths or [0] * len(header))[j], *(len(row[j]) for row in cells))
              for j in range(len(header))]
    lines = ["| " + " | ".join(c.rjust(w) if a == "r" else c.ljust(w)
                               for c, w, a in zip(row, widths, align)) + " |" for row in cells]
    rule = "|" + "|".join("-" * (w + 1) + ":-"[a != "r"] for w, a in zip(widths, align)) + "|"
    return "\n".join([lines[0], rule, *lines[1:]])


def number(kind, low, high):  # an argparse type: a number of kind (int or float), low to high
    def check(text):  # not a number: kind raises ValueError, "invalid int value: 'x'"
        if not low <= kind(text) <= high:  # (nan fails it too)
            raise argparse.ArgumentTypeError(f"must be from {low:g} to {high:g}, got {text}")
        return kind(text) + 0  # -0.0 becomes 0.0 (numpy refuses a scale of -0.0)
    check.__name__ = kind.__name__
    return check


def read_file(path, what):
    """The text of a file named on the command line (what: "the corpus"), or Refused in one
    line. At most MAX_FILE_BYTES + 1 bytes are read, so /dev/zero stops there."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) <= MAX_FILE_BYTES:
            return data.decode("utf-8")
        why = f"larger than {MAX_FILE_BYTES:,} bytes (cut the file down)"
    except OSError as exc:
        why = exc.strerror or exc
    except UnicodeDecodeError as exc:
        why = f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start})"
    raise Refused(f"cannot read {what} {path}: {why}")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog=NAME, description=__doc__.split("\n")[0])
    for flag, (help_text, _) in REPORTS.items():
        parser.add_argument(f"--{flag}", action="store_true", help=help_text)
    add_options(parser)
    args = parser.parse_args(argv)
    args.chosen = [flag for flag in REPORTS if getattr(args, flag)] or list(DEFAULT)
    for option, users in OPTIONS.items():  # an option no chosen report uses is an error
        if getattr(args, option) not in (None, False) and not set(users) & set(args.chosen):
            parser.error(f"--{option.replace('_', '-')} has no effect without --"
                         + " or --".join(users))
    return args


def run(args, out):
    """Prints the chosen reports to out (a Printer), two blank lines apart; {flag: record}.
    Refuses first, with its estimate, a command estimate_seconds puts past LONGEST_HOURS."""
    hours = estimate_seconds(args) / 3600
    if hours > LONGEST_HOURS:
        raise Refused(f"this command would run for about {hours:.1f} hours (an estimate; over "
                      f"{LONGEST_HOURS:g} h is refused): ask for fewer steps, epochs or lags")
    records = {}
    for flag in args.chosen:
        out.gap = "\n\n" if records else ""
        records[flag] = REPORTS[flag][1](args, out)
    return records


def main(argv=None):
    try:
        args = parse_args(argv)
        if np is None:
            raise Refused("needs numpy: pip install numpy")
        records = run(args, Printer())
    except KeyboardInterrupt:  # Ctrl-C: one line, and the status a shell expects (128 + 2)
        print(f"{NAME}: interrupted", file=sys.stderr)
        return 130
    except (Refused, OSError) as exc:  # bad input; stdout closed early (`| head`) or full
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # drop what is left
        if isinstance(exc, BrokenPipeError):
            return 0  # the reader stopped reading: not an error
        why = exc if isinstance(exc, Refused) else f"cannot write the output: {exc.strerror}"
        print(f"{NAME}: {why}", file=sys.stderr)
        return 1
    return 1 if any(getattr(r, "passed", True) is False for r in records.values()) else 0

# ------------------------------------------------------------- end of the harness


if __name__ == "__main__":
    sys.exit(main())
