"""Where gru.py's training time goes: the fast path's phases, timed one by one.

Trains d2l's configuration (GRU unless --cell) for a few epochs on one BLAS thread,
calling the fast path's pieces one at a time with a clock around each (the cell's
forward pass, the output layer and softmax, the cell's backward pass, the output
layer's gradient, clipping and SGD, validation), and prints each phase's share.
The clock is the thread's CPU time (time.thread_time), which a busy machine
disturbs less than the wall clock.

    python3 benchmarks/gru_profile.py              # 3 epochs of the GRU
    python3 benchmarks/gru_profile.py --cell lstm --epochs 2
    python3 benchmarks/gru_profile.py --chunk 1024 # without cache blocking (FAST_CHUNK)

What it found (Intel Xeon, 2 cores shared with other work, numpy 2.4; CPU ms
per epoch of 10 batches of 1,024 windows plus validation; FAST_CHUNK 1024 is
the fast path as it was before cache blocking):

    phase              FAST_CHUNK 1024     512    what it is
    cell forward          70  (28%)     56  (24%)  per step: 2 matmuls, ~12 elementwise calls
    output + softmax      27  (11%)     26  (11%)  (32768 x 32) @ (32 x 28), ~8 passes over 3.7 MB
    output backward       18   (7%)     17   (7%)  two more products with the logits' gradient
    cell backward        100  (39%)     95  (41%)  per step: 5 matmuls, ~18 elementwise calls
    clip + SGD             1             1
    validation            38  (15%)     37  (16%)  forward only, 5,000 windows
    total                253           232

The per-step matmuls already run near the BLAS's speed for their shapes (about
65 GFLOP/s on 1024 x 32 x 32); the one-hot product X_t^T dA for dW_x is the
largest. What is left is memory and call overhead: the forward pass that keeps
every step's gates for the backward pass (12.6 MB for a batch of 1,024) took
1.3x as long as the same pass keeping none, and a batch of 1,024 took about
1.2x as long per window as a batch of 512, whose buffers stay closer to the CPU
(L2 is 2 MB per core here). Hence FAST_CHUNK = 512 (256 was no better, and
chunks double the number of numpy calls). Measured and not kept, each within
the noise or slower: the weight gradients moved out of the time loop as one
product per chunk (0.89x), an np.add.at scatter for dW_x (16x slower than the
one-hot product), one matmul per gate instead of the stacked ones, sigmoid from
a pre-halved table, R * H_prev kept from the forward pass, and a softmax shift
from a bound on the logits instead of two passes (+2%, within the noise).
Timings on a shared machine are noisy: compare variants side by side in one
run, on CPU time.
"""
import argparse
import importlib.util
import os
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


def profile(gru, cell, epochs):
    """{phase: seconds per epoch}, from the fast path's own functions called in order."""
    config = gru.Config(cell=cell)
    corpus = gru.read_corpus(gru.CORPUS, config.num_chars_needed)
    data = gru.make_dataset(corpus.chars, config)
    rng = np.random.default_rng(0)
    params = gru.init_params(cell, len(gru.VOCAB), config.hidden, rng)
    work, spent = {}, {}
    clock = [time.thread_time()]

    def lap(phase):
        now = time.thread_time()
        spent[phase] = spent.get(phase, 0.0) + now - clock[0]
        clock[0] = now

    n, B, T, h = len(data.X_train), config.batch_size, config.num_steps, config.hidden
    for _ in range(epochs):
        order = rng.permutation(n)
        for i in range(0, n, B):
            batch = order[i:i + B]
            X = np.ascontiguousarray(data.X_train[batch].T)
            Y = np.ascontiguousarray(data.Y_train[batch].T)
            grads = {}
            clock[0] = time.thread_time()
            for j in range(0, len(batch), gru.FAST_CHUNK):
                part = slice(j, j + gru.FAST_CHUNK)
                x, y = X[:, part], Y[:, part]
                state = gru.zero_state(params, cell, x.shape[1])
                lap('setup')
                Hs, cache = gru.FAST_FORWARD[cell](params, x, state, work)
                lap('cell forward')
                H = Hs[1:].reshape(-1, h)
                logits = gru.scratch(work, 'logits', (len(H), len(gru.VOCAB)), H.dtype)
                np.matmul(H, params['W_hq'], out=logits)
                logits += params['b_q']
                _, dlogits = gru.fast_softmax_cross_entropy(logits, y.ravel(), T * len(batch))
                lap('output + softmax')
                dHs = np.matmul(dlogits, params['W_hq'].T, out=gru.scratch(work, 'dHs', H.shape,
                                                                           H.dtype))
                lap('output backward')
                g, _ = gru.FAST_BACKWARD[cell](params, cache, dHs.reshape(T, -1, h))
                lap('cell backward')
                g['W_hq'] = (dlogits.T @ H).T
                g['b_q'] = np.ones(len(H), H.dtype) @ dlogits
                for name, v in g.items():
                    grads[name] = grads[name] + v if name in grads else v
                lap('output backward')
            gru.clip_gradients(grads, config.clip)
            gru.sgd(params, grads, config.lr)
            lap('clip + SGD')
        gru.evaluate(params, cell, data.X_val, data.Y_val, B, True, work)
        lap('validation')
    return {phase: seconds / epochs for phase, seconds in spent.items()}


def main(argv=None):
    ap = argparse.ArgumentParser(prog='gru_profile.py', description=__doc__.split('\n\n')[0])
    ap.add_argument('--cell', choices=('gru', 'lstm', 'rnn'), default='gru')
    ap.add_argument('--epochs', type=int, default=3, metavar='N')
    ap.add_argument('--chunk', type=int, metavar='W',
                    help="windows per chunk of a batch (default: gru.py's FAST_CHUNK)")
    args = ap.parse_args(argv)
    gru = load_gru()
    if args.chunk:
        gru.FAST_CHUNK = args.chunk
    spent = profile(gru, args.cell, args.epochs)
    total = sum(spent.values())
    print(f'{args.cell}, FAST_CHUNK {gru.FAST_CHUNK}, {args.epochs} epochs, numpy '
          f'{np.__version__}, one BLAS thread: ms per epoch\n')
    for phase, seconds in spent.items():
        print(f'{phase:18s} {1000 * seconds:8.1f} ms  {100 * seconds / total:5.1f}%')
    print(f'{"total":18s} {1000 * total:8.1f} ms  ({320000 / total:,.0f} training tokens/s)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
