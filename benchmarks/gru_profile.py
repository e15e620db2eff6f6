"""Where gru.py's training time goes, and what each of its readable speed-ups buys.

Two measurements, on one BLAS thread, of d2l's configuration (a batch of 1,024
windows of 32 characters, hidden size 32), timed on the thread's CPU clock
(time.thread_time, which a busy machine disturbs less than the wall clock):

  phases    the served loss_and_grads taken apart: the row lookups and the steps
            forward, the output layer and softmax for every step at once, its
            gradient, the steps backward, the one-hot product for dW_x
  variants  the served code against the same model without one of its speed-ups,
            batch after batch in turns: the gates' products one per gate instead
            of stacked (`per-gate`), the input part X_t W_x as a product with the
            one-hot rows instead of a row lookup (`one-hot`), the output layer step
            by step inside the loop (`per-step output`)

Each variant computes the served model's loss and gradient (tests/test_gru.py checks
them equal in float64 to 1e-10), so only the time differs.

    python3 benchmarks/gru_profile.py                 # both, the GRU
    python3 benchmarks/gru_profile.py --cell lstm --batches 20
"""
import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')

import numpy as np  # noqa: E402  (after the thread count is set)

GRU_PY = Path(__file__).resolve().parent.parent / 'docs' / 'code' / 'gru.py'


def load_gru():
    spec = importlib.util.spec_from_file_location('gru', GRU_PY)
    gru = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gru)
    return gru


gru = load_gru()


# ---------------------------------------------------------------- the variants

def per_gate_gru_step(p, XW, state):
    """gru_step with one product per gate instead of H_prev [W_hz, W_hr] in one call."""
    (H_prev,), W_h = state, p['W_h']
    Z = gru.sigmoid(XW[0] + H_prev @ W_h[0])
    R = gru.sigmoid(XW[1] + H_prev @ W_h[1])
    H_tilde = np.tanh(XW[2] + (R * H_prev) @ W_h[2])
    return (Z * H_prev + (1 - Z) * H_tilde,), (H_prev, Z, R, H_tilde)


def per_gate_gru_step_backward(p, dstate, cache, grads):
    (dH,), (H_prev, Z, R, H_tilde), W_h = dstate, cache, p['W_h']
    dA_h = dH * (1 - Z) * (1 - H_tilde ** 2)
    dRH = dA_h @ W_h[2].T
    dA_z = dH * (H_prev - H_tilde) * Z * (1 - Z)
    dA_r = dRH * H_prev * R * (1 - R)
    grads['W_h'][0] += H_prev.T @ dA_z
    grads['W_h'][1] += H_prev.T @ dA_r
    grads['W_h'][2] += (R * H_prev).T @ dA_h
    dH_prev = dH * Z + dRH * R + dA_z @ W_h[0].T + dA_r @ W_h[1].T
    return (dH_prev,), np.stack([dA_z, dA_r, dA_h])


def one_hot_forward(params, cell, X, state):
    """gru.forward with X_t W_x + b as a product with the one-hot rows of X_t."""
    step, _ = gru.STEPS[cell]
    V = params['W_x'].shape[1]
    Hs, caches = [], []
    for x in X:
        XW = gru.one_hot(x, V, params['W_x'].dtype) @ params['W_x'] + params['b'][:, None]
        state, cache = step(params, XW, state)
        Hs.append(state[0])
        caches.append(cache)
    return np.stack(Hs), state, caches


def per_step_output_loss_and_grads(params, cell, X, Y, state=None):
    """loss_and_grads with the output layer, softmax and their gradient step by step."""
    X, Y = np.ascontiguousarray(np.transpose(X)), np.transpose(Y)
    (T, B), (h, V) = X.shape, params['W_hq'].shape
    state = gru.zero_state(params, cell, B) if state is None else state
    Hs, _, caches = gru.forward(params, cell, X, state)
    grads = {name: np.zeros_like(p) for name, p in params.items()}
    loss, dH, rows = 0.0, [], np.arange(B)
    for t in range(T):
        log_P = gru.log_softmax(Hs[t] @ params['W_hq'] + params['b_q'])
        loss -= float(log_P[rows, Y[t]].sum(dtype=np.float64))
        dlogits = np.exp(log_P)
        dlogits[rows, Y[t]] -= 1
        dlogits /= T * B
        grads['W_hq'] += Hs[t].T @ dlogits
        grads['b_q'] += dlogits.sum(axis=0)
        dH.append(dlogits @ params['W_hq'].T)
    _, step_backward = gru.STEPS[cell]
    dstate = gru.zero_state(params, cell, B)
    for t in reversed(range(T)):
        dstate = (dstate[0] + dH[t],) + dstate[1:]
        dstate, dA = step_backward(params, dstate, caches[t], grads)
        grads['W_x'] += gru.one_hot(X[t], V, Hs.dtype).T @ dA
    grads['b'] = grads['W_x'].sum(axis=1)
    return loss / (T * B), grads


def variant(name, cell):
    """loss_and_grads(params, X, Y, state) of a variant ('served' for gru.py's own)."""
    def with_patches(steps=None, forward=None):
        def run(params, X, Y, state=None):
            saved = gru.STEPS[cell], gru.forward
            try:
                if steps:
                    gru.STEPS[cell] = steps
                if forward:
                    gru.forward = forward
                return gru.loss_and_grads(params, cell, X, Y, state)
            finally:
                gru.STEPS[cell], gru.forward = saved
        return run
    if name == 'served':
        return with_patches()
    if name == 'per-gate':
        return with_patches(steps=(per_gate_gru_step, per_gate_gru_step_backward))
    if name == 'one-hot':
        return with_patches(forward=one_hot_forward)
    if name == 'per-step output':
        return lambda params, X, Y, state=None: per_step_output_loss_and_grads(
            params, cell, X, Y, state)
    raise ValueError(name)


VARIANTS = ('served', 'per-gate', 'one-hot', 'per-step output')


# ---------------------------------------------------------------- the measurements

def batches(cell, n):
    config = gru.Config(cell=cell)
    data = gru.make_dataset(gru.read_corpus(gru.CORPUS), config)
    rng = np.random.default_rng(0)
    params = gru.init_params(cell, len(gru.VOCAB), config.hidden, rng)
    order = rng.permutation(len(data.X_train))
    B = config.batch_size
    return params, [(data.X_train[order[i:i + B]], data.Y_train[order[i:i + B]])
                    for i in [(k * B) % (len(order) - B) for k in range(n)]]


def phases(cell, n):
    """CPU ms per batch of each phase of the served loss_and_grads."""
    params, work = batches(cell, n)
    spent = {}
    step, step_backward = gru.STEPS[cell]
    for X, Y in work:
        clock = [time.thread_time()]

        def lap(phase):
            now = time.thread_time()
            spent[phase] = spent.get(phase, 0.0) + now - clock[0]
            clock[0] = now
        X, Y = np.ascontiguousarray(X.T), Y.T
        (T, B), (h, V) = X.shape, params['W_hq'].shape
        Hs, _, caches = gru.forward(params, cell, X, gru.zero_state(params, cell, B))
        lap('lookups and steps forward')
        H = Hs.reshape(T * B, h)
        S = gru.shifted(H @ params['W_hq'] + params['b_q'])
        P, rows, y = np.exp(S), np.arange(T * B), Y.reshape(T * B)
        sums = P.sum(axis=1)
        float(np.log(sums).sum(dtype=np.float64) - S[rows, y].sum(dtype=np.float64))
        lap('output layer and softmax')
        dlogits = P / ((T * B) * sums[:, None])
        dlogits[rows, y] -= 1 / (T * B)
        grads = {name: np.zeros_like(p) for name, p in params.items()}
        grads['W_hq'], grads['b_q'] = H.T @ dlogits, dlogits.sum(axis=0)
        dH = (dlogits @ params['W_hq'].T).reshape(T, B, h)
        lap('output layer backward')
        dstate = gru.zero_state(params, cell, B)
        for t in reversed(range(T)):
            dstate = (dstate[0] + dH[t],) + dstate[1:]
            dstate, dA = step_backward(params, dstate, caches[t], grads)
            lap('steps backward')
            grads['W_x'] += gru.one_hot(X[t], V, H.dtype).T @ dA
            lap('dW_x, one-hot product')
    return {phase: 1000 * s / n for phase, s in spent.items()}


def variants(cell, n, names):
    """CPU ms per batch of each variant, in turns batch after batch: the median."""
    params, work = batches(cell, n)
    funcs = {name: variant(name, cell) for name in names}
    times = {name: [] for name in names}
    for X, Y in work:
        for name, f in funcs.items():
            start = time.thread_time()
            f({k: v.copy() for k, v in params.items()}, X, Y)
            times[name].append(1000 * (time.thread_time() - start))
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(prog='gru_profile.py', description=__doc__.split('\n\n')[0])
    ap.add_argument('--cell', choices=('gru', 'lstm', 'rnn'), default='gru')
    ap.add_argument('--batches', type=int, default=10, metavar='N')
    args = ap.parse_args(argv)
    gru.keep_freed_memory()                       # as training does
    spent = phases(args.cell, args.batches)
    total = sum(spent.values())
    print(f'{args.cell}, numpy {np.__version__}, one BLAS thread: CPU ms per batch of 1,024 '
          f'windows, the served loss_and_grads\n')
    for phase, ms in spent.items():
        print(f'  {phase:28s} {ms:7.1f} ms  {100 * ms / total:5.1f}%')
    print(f'  {"total":28s} {total:7.1f} ms')
    names = VARIANTS if args.cell == 'gru' else ('served', 'one-hot', 'per-step output')
    medians = variants(args.cell, args.batches, names)
    print(f'\nvariants, taking turns batch after batch: median CPU ms per batch, and the '
          f'served code\'s speed-up over each\n')
    for name, ms in medians.items():
        print(f'  {name:28s} {ms:7.1f} ms  {ms / medians["served"]:5.2f}x')
    return 0


if __name__ == '__main__':
    sys.exit(main())
