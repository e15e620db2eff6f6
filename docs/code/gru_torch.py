"""gru_torch.py: the same GRU language model in PyTorch, with torch.nn.GRU (d2l's concise version).

gru.py builds the model from scratch in numpy; this is d2l.ai's "concise
implementation" of the same experiment: PyTorch's own GRU layer and a linear
output layer, trained on The Time Machine in d2l's configuration (windows of
32 + 1 characters, the first 10,000 train and the next 5,000 validate, batch
1,024, hidden size 32, SGD at learning rate 4, gradient clipped to norm 1,
50 epochs). It prints a row per epoch, then a greedy sample after "it has": a
plain PyTorch script, with none of gru.py's report machinery.

    python3 gru_torch.py             # 50 epochs, about a minute on one CPU thread
    python3 gru_torch.py --epochs 5 --seed 1

Needs PyTorch (pip install torch). Reads timemachine.txt from next to this file.
Note that nn.GRU applies the reset gate after the product by W_hh, r * (H W_hh + b),
where d2l's from-scratch GRU (and gru.py) computes (r * H) W_hh: a slightly
different model, with two bias vectors per gate and PyTorch's default
initialisation.
"""
import argparse
import math
import os
import re
import sys
from pathlib import Path

try:
    import torch
    from torch import nn
    from torch.nn import functional as F
except ImportError:  # main() says how to install it; importing stays possible
    torch = None

CORPUS = Path(__file__).with_name('timemachine.txt')
VOCAB = [' ', '<unk>'] + [chr(c) for c in range(ord('a'), ord('z') + 1)]  # d2l's 28 tokens
NUM_STEPS, NUM_TRAIN, NUM_VAL = 32, 10000, 5000  # window length T, training and validation windows
BATCH_SIZE, HIDDEN, LR, CLIP = 1024, 32, 4.0, 1.0  # d2l's configuration
EPOCHS, SEED = 50, 0
PREFIX, NUM_PREDS = 'it has', 20


def load_windows(path=CORPUS):
    """d2l's data: runs of non-letters become one space, lower case, one token per
    character; every window of NUM_STEPS + 1 characters; the first NUM_TRAIN train."""
    text = re.sub('[^A-Za-z]+', ' ', Path(path).read_text(encoding='utf-8')).lower()
    ids = torch.tensor([VOCAB.index(c) for c in text[:NUM_TRAIN + NUM_VAL + NUM_STEPS]])
    windows = ids.unfold(0, NUM_STEPS + 1, 1)[:NUM_TRAIN + NUM_VAL]  # ids[i:i+33] for each i
    X, Y = windows[:, :-1], windows[:, 1:]
    return (X[:NUM_TRAIN], Y[:NUM_TRAIN]), (X[NUM_TRAIN:], Y[NUM_TRAIN:])


class RNNLM(nn.Module):
    """d2l's concise RNNLM: one-hot inputs, nn.GRU, a linear output layer."""

    def __init__(self, vocab_size, num_hiddens):
        super().__init__()
        self.vocab_size = vocab_size
        self.rnn = nn.GRU(vocab_size, num_hiddens)
        self.linear = nn.Linear(num_hiddens, vocab_size)

    def forward(self, X, state=None):             # X: (batch, steps) token ids
        inputs = F.one_hot(X.T, self.vocab_size).float()  # (steps, batch, vocab), time-major
        outputs, state = self.rnn(inputs, state)
        return self.linear(outputs).swapaxes(0, 1), state  # logits (batch, steps, vocab)


def loss_fn(logits, Y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), Y.reshape(-1))


def clip_gradients(model, max_norm):
    """d2l's clipping: the whole gradient rescaled to norm max_norm if it is longer."""
    grads = [p.grad for p in model.parameters()]
    norm = torch.sqrt(sum((g ** 2).sum() for g in grads))
    if norm > max_norm:
        for g in grads:
            g *= max_norm / norm


def predict(model, prefix, num_preds):
    """Warm up on the prefix, then num_preds greedy (argmax) characters."""
    ids = [VOCAB.index(c) for c in prefix]
    with torch.no_grad():
        logits, state = model(torch.tensor([ids]))
        for _ in range(num_preds):
            ids.append(int(logits[0, -1].argmax()))
            logits, state = model(torch.tensor([[ids[-1]]]), state)
    return ''.join(VOCAB[i] for i in ids)


def compute_training(epochs=EPOCHS, seed=SEED, on_epoch=print):
    """Train d2l's concise model; on_epoch(epoch, train perplexity, validation perplexity)
    after each epoch. Returns the greedy sample after the last."""
    torch.manual_seed(seed)
    (X_train, Y_train), (X_val, Y_val) = load_windows()
    model = RNNLM(len(VOCAB), HIDDEN)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR)
    for epoch in range(1, epochs + 1):
        total = 0.0
        for batch in torch.randperm(NUM_TRAIN).split(BATCH_SIZE):  # reshuffled every epoch
            loss = loss_fn(model(X_train[batch])[0], Y_train[batch])
            optimizer.zero_grad()
            loss.backward()
            clip_gradients(model, CLIP)
            optimizer.step()
            total += loss.item() * len(batch)     # measured during the epoch, as d2l does
        with torch.no_grad():
            val = sum(loss_fn(model(X)[0], Y).item() * len(X)
                      for X, Y in zip(X_val.split(BATCH_SIZE), Y_val.split(BATCH_SIZE)))
        on_epoch(epoch, math.exp(total / NUM_TRAIN), math.exp(val / NUM_VAL))
    return predict(model, PREFIX, NUM_PREDS)


def count(low, high):
    """An argparse type: a whole number from low to high."""
    def parse(s):
        if not (s.isdigit() and low <= int(s) <= high):
            raise argparse.ArgumentTypeError(f'must be a whole number from {low} to {high}, got {s!r}')
        return int(s)
    return parse


def main(argv=None):
    ap = argparse.ArgumentParser(prog='gru_torch.py', description=__doc__.splitlines()[0])
    ap.add_argument('--epochs', type=count(1, 10000), default=EPOCHS, metavar='N',
                    help=f'training epochs, 1 to 10000 (default {EPOCHS})')
    ap.add_argument('--seed', type=count(0, 2 ** 32 - 1), default=SEED, metavar='S',
                    help=f'seed for initialisation and shuffling (default {SEED})')
    args = ap.parse_args(argv)
    if torch is None:
        print('gru_torch.py: needs PyTorch: pip install torch', file=sys.stderr)
        return 1
    torch.set_num_threads(1)  # as gru.py: threads cost more than they save at this size
    try:
        print("GRU language model, PyTorch nn.GRU (d2l's concise version)\n")
        print('| epoch | train ppl |   val ppl |\n|------:|----------:|----------:|', flush=True)
        sample = compute_training(args.epochs, args.seed, lambda epoch, train, val: print(
            f'| {epoch:5d} | {train:9.2f} | {val:9.2f} |', flush=True))
        print(f'\nsample (prefix "{PREFIX}", then {NUM_PREDS} greedy characters): "{sample}"')
    except BrokenPipeError:  # piped into `head`, which stopped reading: not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == '__main__':
    sys.exit(main())
