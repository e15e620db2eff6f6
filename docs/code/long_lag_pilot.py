"""long_lag_pilot.py: the pilot behind chapter 15's long-lag experiment (memory.py).

Trains the plain RNN, the LSTM (forget bias b_f = 0, 1, 2) and the GRU on a
task whose answer depends on an input `lag` steps back and on nothing in
between, under several candidate designs, and prints the accuracy (or, for
the adding problem, the mean squared error) of every seed at a few points of
the budget, so that the design of memory.py is chosen from numbers, not taste.

PyTorch, one thread. Seeds (and, for the LSTM, forget biases) are trained side
by side as one batched computation: every parameter has a leading model axis.
The cells are d2l's (as in gru.py and memory.py):

    RNN   H = tanh(X W_xh + H_prev W_hh + b_h)
    LSTM  I, F, O = sigma(X W_x? + H_prev W_h? + b_?),  C~ = tanh(..c..)
          C = F * C_prev + I * C~,  H = O * tanh(C)
    GRU   Z, R = sigma(..),  H~ = tanh(X W_xh + (R * H_prev) W_hh + b_h)
          H = Z * H_prev + (1 - Z) * H~

The output layer reads only the last state: Y_hat = H_T W_hq + b_q.

    python3 long_lag_pilot.py --list          # the designs
    python3 long_lag_pilot.py site adam       # run some of them
    python3 long_lag_pilot.py --all           # every design, in order

Each design takes 3 to 11 minutes on one thread. The order they were run in,
what each gave and why memory.py uses `uadam` (every knob at PyTorch's
default: weights uniform(-1/sqrt(h), 1/sqrt(h)), Adam lr 1e-3) are in the
pilot's write-up (the site's page "The long-lag pilot"); the designs after `uadam`
turn one knob each. The budget knob was measured with memory.py itself
(`memory.py --row ... --steps 6000`).
Differences from memory.py: here the initial weights depend on the lag and
differ between the LSTM's forget biases, and the LSTM's training stream is not
the other cells'; memory.py shares both, so the numbers differ seed by seed.

Needs torch (pip install torch==2.13.0, CPU build).
"""
import argparse
import math
import sys
import time
from dataclasses import dataclass, replace

import torch

torch.set_num_threads(1)
CELLS = ('rnn', 'lstm', 'gru')
GATES = {'rnn': 1, 'lstm': 4, 'gru': 3}


@dataclass(frozen=True)
class Design:
    name: str
    what: str
    task: str = 'recall'        # recall (first symbol, then distractors, then a query) or adding
    symbols: int = 4            # K symbols to remember
    distractors: int = 4        # D distractor symbols (1: a single blank symbol)
    optimiser: str = 'sgd'      # sgd (with the gradient clipped per model) or adam
    lr: float = 1.0
    clip: float = 1.0           # max L2 norm of each model's whole gradient (sgd only)
    init: str = 'd2l'           # d2l: normal(0, 0.01); uniform: U(-1/sqrt(h), 1/sqrt(h)); orth
    sigma: float = 0.01         # d2l's init std
    hidden: int = 16
    batch: int = 32
    steps: int = 2000
    checkpoints: tuple = (500, 1000, 2000)
    seeds: int = 4
    forget_biases: tuple = (0.0, 1.0, 2.0)
    update_bias: float = 0.0    # GRU: initial b_z (Z near 1 keeps H_prev)
    lags: tuple = (5, 10, 20, 50, 100)
    cells: tuple = CELLS
    test: int = 512             # fresh test sequences per model


BASE = Design('site', "the site's own optimiser and init (SGD lr 1, clip 1, normal(0, 0.01))",
              lags=(5, 10, 20, 50, 100, 200))
CHOSEN = Design('uadam', 'framework defaults: init U(+-1/sqrt(h)) (nn.LSTM\'s rule), Adam lr 1e-3 '
                '(torch.optim.Adam\'s default)', optimiser='adam', lr=1e-3, init='uniform',
                checkpoints=(500, 1000, 1500, 2000))
VARIANT = dict(lags=(10, 20, 50, 100), checkpoints=(500, 1000, 1500, 2000))  # knobs on CHOSEN
DESIGNS = {d.name: d for d in [
    BASE,  # the first run was stopped after the LSTM at lag 50; site_gru completes it
    replace(BASE, name='site_gru', what='site, the GRU only', cells=('gru',), lags=(5, 10, 20, 50)),
    replace(BASE, name='adam', what='Adam lr 1e-2 (the first probe), everything else as site',
            optimiser='adam', lr=1e-2, lags=(5, 10, 20, 50, 100)),
    replace(BASE, name='uniform', what='PyTorch-default init U(+-1/sqrt(h)), SGD lr 1 clip 1',
            init='uniform', lags=(5, 10, 20, 50, 100)),
    replace(CHOSEN, lags=(5, 10, 20, 50, 100)),
    replace(CHOSEN, name='uadam_lr2', what='chosen, but Adam lr 1e-2', lr=1e-2, **VARIANT),
    replace(CHOSEN, name='uadam_blank', what='chosen, but one blank distractor symbol (D = 1)',
            distractors=1, **VARIANT),
    replace(CHOSEN, name='uadam_bz1', what='chosen, but the GRU starts with update bias b_z = 1 '
            '(Z = 0.73: keep H_prev), the GRU\'s analogue of b_f = 1', update_bias=1.0,
            cells=('gru',), **VARIANT),
    replace(CHOSEN, name='uadam_adding', what='adding problem (values in [0, 1], markers at step '
            '1 and at the query), chosen optimiser and init; MSE, predict-1 baseline 1/6',
            task='adding', **VARIANT),
    replace(CHOSEN, name='uadam_long', what='chosen with 4x the budget (8,000 steps), 3 seeds',
            steps=8000, checkpoints=(2000, 4000, 8000), lags=(50, 100), seeds=3),
    replace(CHOSEN, name='uadam_200', what='chosen at lag 200', lags=(200,),
            checkpoints=(1000, 2000)),
    replace(CHOSEN, name='big', what='chosen, but hidden 32, batch 128, 1,500 steps (the size '
            'of the two earlier probes)', hidden=32, batch=128, steps=1500,
            checkpoints=(500, 1500), seeds=2, lags=(20, 50, 100)),
]}


# ---------------------------------------------------------------- task

def make_batch(design, lag, M, B, gen):
    """Inputs (M, B, T) token ids (or (M, B, T, 2) values for adding) and targets."""
    T = lag + 1
    if design.task == 'recall':
        K, D = design.symbols, design.distractors
        first = torch.randint(0, K, (M, B), generator=gen)
        middle = torch.randint(K, K + D, (M, B, T - 2), generator=gen)
        query = torch.full((M, B, 1), K + D)
        X = torch.cat([first[..., None], middle, query], dim=2)
        return X, first
    values = torch.rand((M, B, T), generator=gen, dtype=torch.float64)
    marks = torch.zeros((M, B, T), dtype=torch.float64)
    marks[..., 0] = 1
    marks[..., -1] = 1
    return torch.stack([values, marks], -1), values[..., 0] + values[..., -1]


def input_size(design):
    return design.symbols + design.distractors + 1 if design.task == 'recall' else 2


# ---------------------------------------------------------------- model

def init_params(design, cell, biases, gen):
    """Parameters with a leading model axis: one model per (bias, seed)."""
    S, h, V = design.seeds, design.hidden, input_size(design)
    M = len(biases) * S
    g = GATES[cell]
    out = design.symbols if design.task == 'recall' else 1

    def weight(shape):
        if design.init == 'd2l':
            return torch.randn(shape, generator=gen, dtype=torch.float64) * design.sigma
        if design.init == 'uniform':
            a = 1 / math.sqrt(h)
            return (torch.rand(shape, generator=gen, dtype=torch.float64) * 2 - 1) * a
        raise ValueError(design.init)

    p = {'W_x': weight((M, V, g * h)), 'W_h': weight((M, h, g * h)),
         'b': torch.zeros((M, 1, g * h), dtype=torch.float64),
         'W_hq': weight((M, h, out)), 'b_q': torch.zeros((M, 1, out), dtype=torch.float64)}
    for m in range(M):
        bias = biases[m // S]
        if cell == 'lstm':
            p['b'][m, 0, h:2 * h] = bias          # gates stacked [I, F, O, C~]
        if cell == 'gru':
            p['b'][m, 0, :h] = bias               # gates stacked [Z, R, H~]
    return {k: v.float().requires_grad_() for k, v in p.items()}


def forward(design, cell, p, X):
    M, B, T = X.shape[:3]
    h = p['W_h'].shape[1]
    H = torch.zeros((M, B, h))
    C = torch.zeros((M, B, h))
    if design.task == 'recall':
        idx = torch.arange(M)[:, None]
        XW = [p['W_x'][idx, X[:, :, t]] for t in range(T)]   # one-hot X W_x: a row lookup
    else:
        XW = [torch.matmul(X[:, :, t].float(), p['W_x']) for t in range(T)]
    for t in range(T):
        if cell == 'rnn':
            H = torch.tanh(XW[t] + H @ p['W_h'] + p['b'])
        elif cell == 'lstm':
            a = XW[t] + H @ p['W_h'] + p['b']
            I, F, O = torch.sigmoid(a[..., :3 * h]).split(h, -1)
            C = F * C + I * torch.tanh(a[..., 3 * h:])
            H = O * torch.tanh(C)
        else:
            a = XW[t][..., :2 * h] + H @ p['W_h'][..., :2 * h] + p['b'][..., :2 * h]
            Z, R = torch.sigmoid(a).split(h, -1)
            Ht = torch.tanh(XW[t][..., 2 * h:] + (R * H) @ p['W_h'][..., 2 * h:]
                            + p['b'][..., 2 * h:])
            H = Z * H + (1 - Z) * Ht
    return H @ p['W_hq'] + p['b_q']               # (M, B, out)


def losses(design, Y_hat, Y):
    """Per-model mean loss (M,) and per-model accuracy (M,)."""
    if design.task == 'recall':
        logp = torch.log_softmax(Y_hat, -1)
        loss = -logp.gather(-1, Y[..., None])[..., 0].mean(1)
        acc = (Y_hat.argmax(-1) == Y).float().mean(1)
        return loss, acc
    err = Y_hat[..., 0] - Y.float()
    return (err ** 2).mean(1), (err.abs() < 0.04).float().mean(1)


def train(design, cell, lag, biases, seed=0):
    gen = torch.Generator().manual_seed(1000 * seed + lag)
    p = init_params(design, cell, biases, gen)
    M = len(biases) * design.seeds
    data_gen = torch.Generator().manual_seed(7 + lag)
    Xt, Yt = make_batch(design, lag, M, design.test, torch.Generator().manual_seed(99 + lag))
    if design.optimiser == 'adam':
        opt = torch.optim.Adam(p.values(), lr=design.lr)
    results = {}
    for step in range(1, design.steps + 1):
        X, Y = make_batch(design, lag, M, design.batch, data_gen)
        loss, _ = losses(design, forward(design, cell, p, X), Y)
        for v in p.values():
            v.grad = None
        loss.sum().backward()                     # the models are independent: sum = each its own
        with torch.no_grad():
            if design.optimiser == 'sgd':
                norm = torch.sqrt(sum((v.grad ** 2).flatten(1).sum(1) for v in p.values()))
                scale = torch.clamp(design.clip / (norm + 1e-12), max=1.0)  # per-model clipping
                for v in p.values():
                    v -= design.lr * scale.view(-1, *[1] * (v.dim() - 1)) * v.grad
            else:
                opt.step()
        if step in design.checkpoints:
            with torch.no_grad():
                test_loss, acc = losses(design, forward(design, cell, p, Xt), Yt)
            results[step] = (test_loss.tolist(), acc.tolist())
    return results


# ---------------------------------------------------------------- printing

def run(design):
    print(f'## {design.name}: {design.what}\n')
    print(f'task {design.task}, K={design.symbols} symbols, D={design.distractors} distractors, '
          f'{design.optimiser} lr {design.lr:g}'
          + (f' clip {design.clip:g}' if design.optimiser == 'sgd' else '')
          + f', init {design.init}' + (f' sigma {design.sigma:g}' if design.init == 'd2l' else '')
          + f', hidden {design.hidden}, batch {design.batch}, {design.steps} steps, '
          f'{design.seeds} seeds; GRU b_z {design.update_bias:g}\n')
    metric = 'accuracy' if design.task == 'recall' else 'test MSE (acc: |err|<0.04)'
    chance = (f'chance accuracy {1 / design.symbols:.2f}, loss {math.log(design.symbols):.3f}'
              if design.task == 'recall' else 'predict-1 baseline MSE 0.167')
    print(f'{metric} per seed at steps {", ".join(map(str, design.checkpoints))}; {chance}\n')
    print('| cell | lag | ' + ' | '.join(f'step {c}' for c in design.checkpoints) + ' |')
    print('|---|--:|' + '---|' * len(design.checkpoints))
    t0 = time.perf_counter()
    for cell in design.cells:
        variants = ([(f'lstm b_f={b:g}', b) for b in design.forget_biases] if cell == 'lstm'
                    else [(cell if cell == 'rnn' or design.update_bias == 0
                           else f'gru b_z={design.update_bias:g}', design.update_bias)])
        biases = tuple(b for _, b in variants)
        for lag in design.lags:
            res = train(design, cell, lag, biases)
            for v, (label, _) in enumerate(variants):
                cols = []
                for c in design.checkpoints:
                    loss, acc = res[c]
                    sl = slice(v * design.seeds, (v + 1) * design.seeds)
                    if design.task == 'recall':
                        cols.append(' '.join(f'{a:.2f}' for a in acc[sl]))
                    else:
                        cols.append(' '.join(f'{x:.3f}' for x in loss[sl]))
                print(f'| {label} | {lag} | ' + ' | '.join(cols) + ' |', flush=True)
    print(f'\ntime: {time.perf_counter() - t0:.0f} s\n', flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('designs', nargs='*', metavar='DESIGN', help='designs to run (--list)')
    ap.add_argument('--all', action='store_true')
    ap.add_argument('--list', action='store_true')
    args = ap.parse_args(argv)
    if args.list:
        for d in DESIGNS.values():
            print(f'{d.name:8} {d.what}')
        return 0
    names = list(DESIGNS) if args.all else args.designs
    for n in names:
        if n not in DESIGNS:
            ap.error(f'unknown design {n!r}; --list shows them')
    for n in names:
        run(DESIGNS[n])
    return 0


if __name__ == '__main__':
    sys.exit(main())
