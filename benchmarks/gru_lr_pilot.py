"""The pilot that chose the learning rates of `gru.py --compare` (chapter 14.5).

Trains each cell of chapter 14 (the GRU, the LSTM with forget-gate bias 0 and 1,
the plain RNN) in d2l's configuration at a few learning rates, for one seed or
more, and prints the validation perplexity after the last epoch, the lowest one
of any epoch, and the training perplexity. `--compare` then runs each cell at
d2l's rate and at the rate that ended lowest here. The numbers it printed are in
benchmarks/gru_lr_pilot.md.

    python3 benchmarks/gru_lr_pilot.py             # seed 0: 15 runs, ~5 minutes of one core
    python3 benchmarks/gru_lr_pilot.py --seeds 0 1

Needs numpy.
"""
import argparse
import importlib.util
import os
import sys
import time
from pathlib import Path

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ.setdefault(_var, '1')

GRU_PY = Path(__file__).resolve().parent.parent / 'docs' / 'code' / 'gru.py'
RATES = {'gru': (2.0, 4.0, 8.0, 16.0), 'lstm': (2.0, 4.0, 8.0, 16.0), 'rnn': (0.5, 1.0, 2.0, 4.0)}
MODELS = (('GRU', 'gru', 0.0), ('LSTM b_f 0', 'lstm', 0.0), ('LSTM b_f 1', 'lstm', 1.0),
          ('plain RNN', 'rnn', 0.0))


def load_gru():
    spec = importlib.util.spec_from_file_location('gru', GRU_PY)
    gru = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gru)
    return gru


def main(argv=None):
    ap = argparse.ArgumentParser(prog='gru_lr_pilot.py', description=__doc__.split('\n\n')[0])
    ap.add_argument('--seeds', type=int, nargs='+', default=[0], metavar='S')
    args = ap.parse_args(argv)
    gru = load_gru()
    text = gru.read_corpus(gru.CORPUS)
    rows = []
    for name, cell, forget_bias in MODELS:
        for lr in RATES[cell]:
            for seed in args.seeds:
                config = gru.Config(cell=cell, lr=lr, forget_bias=forget_bias, seed=seed)
                start = time.process_time()
                try:
                    r = gru.train_model(text, config).record
                    cells = (f'{r.val_ppl:.2f}', f'{r.best_val:.2f}', f'{r.train_ppl:.2f}')
                except gru.Refused as e:
                    cells = ('diverged', '-', '-')
                    print(f'{name} at {lr:g}, seed {seed}: {e}', file=sys.stderr)
                rows.append((name, f'{lr:g}', str(seed), *cells,
                             f'{time.process_time() - start:.0f}'))
                print(gru.format_table(('model', 'lr', 'seed', 'val ppl, epoch 50',
                                        'lowest val ppl', 'train ppl, epoch 50', 'CPU s'),
                                       rows[-1:], 'lrrrrrr').splitlines()[-1], flush=True)
                gru._TRAINED.clear()
    print()
    print(gru.format_table(('model', 'lr', 'seed', 'val ppl, epoch 50', 'lowest val ppl',
                            'train ppl, epoch 50', 'CPU s'), rows, 'lrrrrrr'))
    return 0


if __name__ == '__main__':
    sys.exit(main())
