"""Speed of docs/code/gru.py against PyTorch, on the same work.

Trains d2l's GRU language model configuration (The Time Machine, 10,000
windows of 32 + 1 characters, batch 1,024, hidden 32, SGD lr 4, clipping at
norm 1) for a few epochs three ways, each in its own process on one thread:

  numpy         gru.py's from-scratch GRU (forward and BPTT by hand)
  d2l-scratch   d2l's GRUScratch + RNNLMScratch in PyTorch: the same
                equations, autograd for the gradient (d2l's code, minus plots)
  nn.GRU        d2l's concise model: torch.nn.GRU + a linear output layer

and prints training tokens per second (training and per-epoch validation
included in the time, as in gru.py), the ratios, and the last epoch's
perplexities so that equal work is being compared. The contenders take turns,
round after round (numpy, d2l-scratch, nn.GRU, numpy, ...), so that a busy
machine slows them alike; the table gives each one's median over the rounds.

    python3 benchmarks/gru_speed.py              # 5 epochs each, 3 rounds, about a minute
    python3 benchmarks/gru_speed.py --epochs 5 --rounds 5
    python3 benchmarks/gru_speed.py --full       # 50 epochs, 1 round: epoch-50 perplexities
    python3 benchmarks/gru_speed.py --lockstep   # same weights, same batches, side by side
    python3 benchmarks/gru_speed.py --before OLD/gru.py  # and an older gru.py, in the same turns
    python3 benchmarks/gru_speed.py --allocator  # and gru.py without keep_freed_memory()

Needs numpy and PyTorch (pip install torch==2.13.0, CPU build).
"""
import argparse
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GRU_PY = ROOT / 'docs' / 'code' / 'gru.py'
CONTENDERS = ('numpy', 'd2l-scratch', 'nn.GRU')
ONE_THREAD = {'OMP_NUM_THREADS': '1', 'OPENBLAS_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1'}


def load_gru(path=GRU_PY):
    spec = importlib.util.spec_from_file_location('gru', path)
    gru = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gru)
    return gru


# ---------------------------------------------------------------- workers (one per process)

def clocks():
    """(wall time, CPU time of this process): on a busy machine the second is steadier."""
    return time.perf_counter(), time.process_time()


def read_text(gru, path, config):
    """The preprocessed text, from this gru.py or from one before its reshaping (--before)."""
    if hasattr(gru, 'fast_loss_and_grads'):       # the gru.py with a plain and a fast path
        return gru.read_corpus(path, config.num_chars_needed)
    return gru.read_corpus(path)


def run_numpy(gru, path, config):
    # the samples gru.py writes as it learns are not part of d2l's timed loop
    gru.SAMPLE_EPOCHS, gru.predict = (), lambda *args: ''
    text = read_text(gru, path, config)
    ends = [clocks()]
    train = getattr(gru, 'compute_training', None) or (
        lambda text, config, on_epoch: gru.train_model(text, config, on_epoch).record)
    result = train(text, config, lambda row: ends.append(clocks()))
    history = [(r.epoch, r.train_ppl, r.val_ppl) for r in result.history]
    return history, [(b[0] - a[0], b[1] - a[1]) for a, b in zip(ends, ends[1:])], result.sample


def d2l_torch():
    """d2l's PyTorch code for this section: GRUScratch, RNNLMScratch, the concise
    RNNLM around nn.GRU, Classifier.loss and Trainer.clip_gradients (plots left out)."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class GRUScratch(nn.Module):
        def __init__(self, num_inputs, num_hiddens, sigma=0.01):
            super().__init__()
            self.num_hiddens, self.sigma = num_hiddens, sigma
            init_weight = lambda *shape: nn.Parameter(torch.randn(*shape) * sigma)
            triple = lambda: (init_weight(num_inputs, num_hiddens),
                              init_weight(num_hiddens, num_hiddens),
                              nn.Parameter(torch.zeros(num_hiddens)))
            self.W_xz, self.W_hz, self.b_z = triple()  # Update gate
            self.W_xr, self.W_hr, self.b_r = triple()  # Reset gate
            self.W_xh, self.W_hh, self.b_h = triple()  # Candidate hidden state

        def forward(self, inputs, H=None):
            if H is None:
                H = torch.zeros((inputs.shape[1], self.num_hiddens), device=inputs.device)
            outputs = []
            for X in inputs:
                Z = torch.sigmoid(torch.matmul(X, self.W_xz) + torch.matmul(H, self.W_hz) + self.b_z)
                R = torch.sigmoid(torch.matmul(X, self.W_xr) + torch.matmul(H, self.W_hr) + self.b_r)
                H_tilde = torch.tanh(torch.matmul(X, self.W_xh) +
                                     torch.matmul(R * H, self.W_hh) + self.b_h)
                H = Z * H + (1 - Z) * H_tilde
                outputs.append(H)
            return outputs, H

    class RNNLMScratch(nn.Module):
        def __init__(self, rnn, vocab_size):
            super().__init__()
            self.rnn, self.vocab_size = rnn, vocab_size
            self.W_hq = nn.Parameter(torch.randn(rnn.num_hiddens, vocab_size) * rnn.sigma)
            self.b_q = nn.Parameter(torch.zeros(vocab_size))

        def one_hot(self, X):
            return F.one_hot(X.T, self.vocab_size).type(torch.float32)

        def output_layer(self, rnn_outputs):
            return torch.stack([torch.matmul(H, self.W_hq) + self.b_q for H in rnn_outputs], 1)

        def forward(self, X, state=None):
            rnn_outputs, _ = self.rnn(self.one_hot(X), state)
            return self.output_layer(rnn_outputs)

    class RNNLM(RNNLMScratch):  # the concise model: nn.GRU, then a linear layer
        def __init__(self, num_hiddens, vocab_size):
            nn.Module.__init__(self)
            self.vocab_size = vocab_size
            self.rnn = nn.GRU(vocab_size, num_hiddens)
            self.linear = nn.Linear(num_hiddens, vocab_size)

        def forward(self, X, state=None):
            rnn_outputs, _ = self.rnn(self.one_hot(X), state)
            return self.linear(rnn_outputs).swapaxes(0, 1)

    def loss(Y_hat, Y):
        return F.cross_entropy(Y_hat.reshape((-1, Y_hat.shape[-1])), Y.reshape((-1,)))

    def clip_gradients(grad_clip_val, model):
        params = [p for p in model.parameters() if p.requires_grad]
        norm = torch.sqrt(sum(torch.sum((p.grad ** 2)) for p in params))
        if norm > grad_clip_val:
            for param in params:
                param.grad[:] *= grad_clip_val / norm

    return GRUScratch, RNNLMScratch, RNNLM, loss, clip_gradients


def run_torch(gru, corpus, config, model_kind):
    """d2l's Trainer.fit_epoch loop with gradient_clip_val=1, without the plotting."""
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    GRUScratch, RNNLMScratch, RNNLM, loss, clip_gradients = d2l_torch()
    data = gru.make_dataset(corpus, config)
    V = len(gru.VOCAB)
    tensors = [torch.from_numpy(a.astype('int64')) for a in
               (data.X_train, data.Y_train, data.X_val, data.Y_val)]
    train = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*tensors[:2]),
                                        config.batch_size, shuffle=True)
    val = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(*tensors[2:]),
                                      config.batch_size, shuffle=False)
    if model_kind == 'd2l-scratch':
        model = RNNLMScratch(GRUScratch(V, config.hidden, config.init_sigma), V)
    else:
        model = RNNLM(config.hidden, V)
    optim = torch.optim.SGD(model.parameters(), lr=config.lr)
    history, times = [], []
    for epoch in range(1, config.epochs + 1):
        start = clocks()
        model.train()
        total = 0.0
        for X, Y in train:
            l = loss(model(X), Y)
            optim.zero_grad()
            with torch.no_grad():
                l.backward()
                clip_gradients(config.clip, model)
                optim.step()
            total += l.item() * len(X)
        model.eval()
        val_total = 0.0
        for X, Y in val:
            with torch.no_grad():
                val_total += loss(model(X), Y).item() * len(X)
        end = clocks()
        times.append((end[0] - start[0], end[1] - start[1]))
        history.append((epoch, math.exp(total / len(data.X_train)),
                        math.exp(val_total / len(data.X_val))))
    return history, times, ''


def run_lockstep(gru, corpus, config):
    """gru.py and d2l's scratch GRU in PyTorch from the same initial weights, on the
    same batches in the same order: any difference is float32 rounding."""
    import numpy as np
    import torch
    torch.set_num_threads(1)
    GRUScratch, RNNLMScratch, _, loss, clip_gradients = d2l_torch()
    data = gru.make_dataset(corpus, config)
    V, n, B = len(gru.VOCAB), len(data.X_train), config.batch_size
    rng = np.random.default_rng(config.seed)
    params = gru.init_params('gru', V, config.hidden, rng, 'float32', config.init_sigma)
    model = RNNLMScratch(GRUScratch(V, config.hidden, config.init_sigma), V)
    named = dict(model.rnn.named_parameters(), W_hq=model.W_hq, b_q=model.b_q)
    with torch.no_grad():
        for name, p in gru.named(params, 'gru').items():
            named[name].copy_(torch.from_numpy(np.ascontiguousarray(p)))
    optim = torch.optim.SGD(model.parameters(), lr=config.lr)
    tX = torch.from_numpy(data.X_train.astype('int64'))
    tY = torch.from_numpy(data.Y_train.astype('int64'))
    rows = []
    for epoch in range(1, config.epochs + 1):
        order = rng.permutation(n)
        total_np = total_t = 0.0
        for i in range(0, n, B):
            batch = order[i:i + B]
            l_np, grads = gru.loss_and_grads(params, 'gru', data.X_train[batch],
                                             data.Y_train[batch])
            gru.clip_gradients(grads, config.clip)
            for k, p in params.items():
                p -= config.lr * grads[k]
            l = loss(model(tX[batch]), tY[batch])
            optim.zero_grad()
            with torch.no_grad():
                l.backward()
                clip_gradients(config.clip, model)
                optim.step()
            total_np += l_np * len(batch)
            total_t += l.item() * len(batch)
        val_np = gru.evaluate(params, 'gru', data.X_val, data.Y_val, B)
        with torch.no_grad():
            val_t = sum(loss(model(torch.from_numpy(data.X_val[i:i + B].astype('int64'))),
                             torch.from_numpy(data.Y_val[i:i + B].astype('int64'))).item()
                        * len(data.X_val[i:i + B]) for i in range(0, len(data.X_val), B))
        diff = max(float(np.abs(p - named[k].detach().numpy()).max())
                   for k, p in gru.named(params, 'gru').items())
        rows.append((epoch, math.exp(total_np / n), math.exp(total_t / n),
                     math.exp(val_np), math.exp(val_t / len(data.X_val)), diff))
        print(json.dumps(rows[-1]), flush=True)
    return rows


def format_table(header, rows, align, min_widths=None):
    """A markdown table (the harness's format_table, borrowed from the loaded gru.py)."""
    return load_gru().format_table(header, rows, align, min_widths)


def worker(name, epochs, seed, path, before):
    gru = load_gru(before if name == 'numpy-before' else GRU_PY)
    if name == 'numpy-freeing':                   # the C library's default: freed memory returned
        gru.keep_freed_memory = lambda: None
    config = gru.Config(epochs=epochs, seed=seed)
    if name.startswith('numpy'):
        history, times, _ = run_numpy(gru, path, config)
    else:
        corpus = gru.read_corpus(path)
        if name == 'lockstep':
            run_lockstep(gru, corpus, config)
            return
        history, times, _ = run_torch(gru, corpus, config, name)
    print(json.dumps({'history': history, 'times': times,
                      'tokens_per_epoch': config.num_train * config.num_steps}))


# ---------------------------------------------------------------- the comparison

def measure(name, args):
    env = dict(os.environ, **ONE_THREAD)
    cmd = [sys.executable, __file__, '--worker', name, '--epochs', str(args.epochs),
           '--seed', str(args.seed), '--corpus', str(args.corpus)]
    if args.before:
        cmd += ['--before', str(args.before)]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f'gru_speed.py: the {name} run failed:\n{done.stderr.strip()}')
    r = json.loads(done.stdout.strip().splitlines()[-1])
    wall = [w for w, _ in r['times']]
    seconds = sum(wall)
    r['tokens_per_second'] = r['tokens_per_epoch'] * len(wall) / seconds
    r['median_tokens_per_second'] = r['tokens_per_epoch'] / statistics.median(wall)
    r['cpu_tokens_per_second'] = r['tokens_per_epoch'] * len(wall) / sum(c for _, c in r['times'])
    r['seconds'] = seconds
    return r


def lockstep(gru, args):
    print(f'gru.py and d2l\'s GRUScratch in PyTorch, same initial weights (seed {args.seed}), '
          f'same batches, float32, one thread each\n', flush=True)
    header = ('epoch', 'train ppl numpy', 'train ppl torch', 'val ppl numpy', 'val ppl torch',
              'max param diff')
    widths = [5, 15, 15, 13, 13, 14]
    print(format_table(header, [], 'rrrrrr', widths), flush=True)
    env = dict(os.environ, **ONE_THREAD)
    cmd = [sys.executable, __file__, '--worker', 'lockstep', '--epochs', str(args.epochs),
           '--seed', str(args.seed), '--corpus', str(args.corpus)]
    with subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, text=True) as proc:
        for line in proc.stdout:
            e, tn, tt, vn, vt, d = json.loads(line)
            row = (e, f'{tn:.4f}', f'{tt:.4f}', f'{vn:.4f}', f'{vt:.4f}', f'{d:.1e}')
            print(format_table(header, [row], 'rrrrrr', widths).splitlines()[-1], flush=True)
    return proc.returncode


def main(argv=None):
    ap = argparse.ArgumentParser(prog='gru_speed.py', description=__doc__.split('\n\n')[0])
    ap.add_argument('--epochs', type=int, default=5, metavar='N',
                    help='epochs per contender (default %(default)s)')
    ap.add_argument('--full', action='store_true',
                    help='50 epochs each, to compare epoch-50 perplexities (takes minutes)')
    ap.add_argument('--rounds', type=int, default=3, metavar='R',
                    help='runs per contender, taking turns (default %(default)s)')
    ap.add_argument('--seed', type=int, default=0, metavar='S', help='seed (default %(default)s)')
    ap.add_argument('--corpus', type=Path, default=GRU_PY.with_name('timemachine.txt'),
                    metavar='PATH', help='the corpus (default: the one next to gru.py)')
    ap.add_argument('--lockstep', action='store_true',
                    help='instead of timing: train gru.py and d2l\'s scratch GRU in PyTorch '
                         'from the same weights on the same batches, and print both per epoch')
    ap.add_argument('--before', type=Path, metavar='PATH',
                    help='another gru.py to time as a fourth contender, numpy-before, taking '
                         'turns with the others (the one with a fast path works too)')
    ap.add_argument('--allocator', action='store_true',
                    help="also gru.py without keep_freed_memory() (numpy-freeing): what the "
                         "C library's default costs")
    ap.add_argument('--worker', choices=CONTENDERS + ('numpy-before', 'numpy-freeing', 'lockstep'),
                    help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.full:
        args.epochs, args.rounds = 50, 1
    if args.epochs < 1 or args.rounds < 1:
        ap.error('--epochs and --rounds must be at least 1')
    if args.worker:
        worker(args.worker, args.epochs, args.seed, args.corpus, args.before)
        return 0
    if importlib.util.find_spec('torch') is None:
        print('gru_speed.py: needs PyTorch for the comparison: pip install torch==2.13.0',
              file=sys.stderr)
        return 1
    import torch
    import numpy
    gru = load_gru()
    if args.lockstep:
        return lockstep(gru, args)
    print(f'd2l GRU language model, {args.epochs} epoch(s) per run, {args.rounds} round(s), '
          f'seed {args.seed}, one thread per run (numpy {numpy.__version__}, torch '
          f'{torch.__version__}, {os.cpu_count()} CPUs)'
          + (f'; numpy-before is {args.before}' if args.before else '') + '\n', flush=True)
    contenders = (CONTENDERS[:1] + ('numpy-before',) * bool(args.before)
                  + ('numpy-freeing',) * args.allocator + CONTENDERS[1:])
    runs = {name: [] for name in contenders}
    for _ in range(args.rounds):                  # taking turns: a busy spell slows all alike
        for name in contenders:
            runs[name].append(measure(name, args))
    rows = []
    for name, rs in runs.items():
        epoch, train_ppl, val_ppl = rs[0]['history'][-1]  # the same in every round (same seed)
        rows.append((name, f'{statistics.median(r["seconds"] for r in rs):.2f}',
                     f'{statistics.median(r["tokens_per_second"] for r in rs):,.0f}',
                     f'{statistics.median(r["median_tokens_per_second"] for r in rs):,.0f}',
                     f'{statistics.median(r["cpu_tokens_per_second"] for r in rs):,.0f}',
                     f'{train_ppl:.2f}', f'{val_ppl:.2f}'))
    print(format_table(('model', 'seconds', 'tokens/s', 'tokens/s, median epoch',
                            'tokens/s, CPU time', f'train ppl, epoch {args.epochs}',
                            f'val ppl, epoch {args.epochs}'), rows, 'lrrrrrr'))
    print()
    pairs = [('numpy', other) for other in contenders[1:]]
    if args.allocator:
        pairs += [('numpy-freeing', other) for other in CONTENDERS[1:]]
    if args.before:
        pairs += [('numpy-before', other) for other in CONTENDERS[1:]]
    for mine, other in pairs:
        n, o = runs[mine], runs[other]

        def ratio(key):
            return (statistics.median(r[key] for r in n) / statistics.median(r[key] for r in o))
        per_round = [a['tokens_per_second'] / b['tokens_per_second'] for a, b in zip(n, o)]
        print(f'{mine} / {other}: {ratio("tokens_per_second"):.2f}x (median epoch: '
              f'{ratio("median_tokens_per_second"):.2f}x; CPU time: '
              f'{ratio("cpu_tokens_per_second"):.2f}x; round by round: '
              + ', '.join(f'{x:.2f}x' for x in per_round) + ')')
    n = runs['numpy']
    print(f'\ntokens/s: {n[0]["tokens_per_epoch"]:,} training tokens per epoch over the wall '
          f'time of the epochs (training and validation), the median over the rounds; the '
          f'median epoch, and the process\'s CPU time (all its threads) over the same epochs, '
          f'are steadier figures on a busy machine. Each contender has its own random '
          f'initialisation and batch order.')
    return 0


if __name__ == '__main__':
    sys.exit(main())
