"""docs/code/gru.py against PyTorch autograd, on the same weights, in float64; and
docs/code/gru_torch.py, the concise version, trained for 50 epochs.

Skipped where torch is not installed (pip install torch==2.13.0, CPU build).
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from helpers import CODE, load_script

torch = pytest.importorskip("torch")
F = torch.nn.functional
pytestmark = pytest.mark.torch

gru = load_script('gru.py')
SIZES = [dict(V=7, B=3, T=5, h=4, scale=0.5), dict(V=28, B=16, T=32, h=32, scale=0.2)]


def problem(cell, V, B, T, h, seed=0, scale=0.5):
    """Random float64 weights, inputs, targets and initial state."""
    rng = np.random.default_rng(seed)
    params = {k: scale * rng.standard_normal(v.shape)
              for k, v in gru.init_params(cell, V, h, rng, 'float64').items()}
    X = rng.integers(0, V, (B, T))
    Y = rng.integers(0, V, (B, T))
    H = scale * rng.standard_normal((2, B, h))
    state = (H[0], H[1]) if cell == 'lstm' else (H[0],)
    return params, X, Y, state


def tensors(params, cell):
    """The equations' matrices (W_xz, W_hz, b_z, ...) as leaf tensors."""
    return {k: torch.tensor(np.array(v), dtype=torch.float64, requires_grad=True)
            for k, v in gru.named(params, cell).items()}


def d2l_forward(cell, P, inputs, state):
    """d2l's GRUScratch / LSTMScratch / RNNScratch equations, verbatim in torch."""
    outputs = []
    if cell == 'gru':
        H = state
        for X in inputs:
            Z = torch.sigmoid(torch.matmul(X, P['W_xz']) + torch.matmul(H, P['W_hz']) + P['b_z'])
            R = torch.sigmoid(torch.matmul(X, P['W_xr']) + torch.matmul(H, P['W_hr']) + P['b_r'])
            H_tilde = torch.tanh(torch.matmul(X, P['W_xh']) +
                                 torch.matmul(R * H, P['W_hh']) + P['b_h'])
            H = Z * H + (1 - Z) * H_tilde
            outputs.append(H)
    elif cell == 'lstm':
        H, C = state
        for X in inputs:
            I = torch.sigmoid(torch.matmul(X, P['W_xi']) + torch.matmul(H, P['W_hi']) + P['b_i'])
            F_ = torch.sigmoid(torch.matmul(X, P['W_xf']) + torch.matmul(H, P['W_hf']) + P['b_f'])
            O = torch.sigmoid(torch.matmul(X, P['W_xo']) + torch.matmul(H, P['W_ho']) + P['b_o'])
            C_tilde = torch.tanh(torch.matmul(X, P['W_xc']) + torch.matmul(H, P['W_hc']) + P['b_c'])
            C = F_ * C + I * C_tilde
            H = O * torch.tanh(C)
            outputs.append(H)
    else:
        H = state
        for X in inputs:
            H = torch.tanh(torch.matmul(X, P['W_xh']) + torch.matmul(H, P['W_hh']) + P['b_h'])
            outputs.append(H)
    return outputs


def lm_loss(P, outputs, Y, V):
    """d2l's RNNLMScratch output layer and Classifier.loss (mean cross-entropy)."""
    Y_hat = torch.stack([torch.matmul(H, P['W_hq']) + P['b_q'] for H in outputs], 1)
    return F.cross_entropy(Y_hat.reshape(-1, V), torch.as_tensor(Y).reshape(-1))


def one_hot(X, V):
    return F.one_hot(torch.as_tensor(X).T, V).to(torch.float64)


def torch_state(state):
    return tuple(torch.tensor(s) for s in state) if len(state) == 2 else torch.tensor(state[0])


@pytest.mark.parametrize('size', SIZES, ids=['small', 'd2l-sized'])
@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_loss_and_every_gradient_match_autograd_on_d2l_equations(cell, size):
    params, X, Y, state = problem(cell, **size)
    loss, grads = gru.loss_and_grads(params, cell, X, Y, state)
    P = tensors(params, cell)
    expected = lm_loss(P, d2l_forward(cell, P, one_hot(X, size['V']), torch_state(state)),
                       Y, size['V'])
    expected.backward()
    assert abs(loss - expected.item()) < 1e-12
    for name, g in gru.named(grads, cell).items():
        expected_grad = P[name].grad.numpy()
        tol = 1e-10 * max(1.0, np.abs(expected_grad).max())
        assert np.abs(g - expected_grad).max() < tol, name


@pytest.mark.parametrize('cell', ['gru', 'lstm', 'rnn'])
def test_forward_states_match(cell):
    params, X, _, state = problem(cell, V=9, B=4, T=6, h=5, seed=3)
    Hs, final, _ = gru.forward(params, cell, np.ascontiguousarray(X.T), state)
    P = tensors(params, cell)
    with torch.no_grad():
        outputs = d2l_forward(cell, P, one_hot(X, 9), torch_state(state))
    assert Hs.shape == (6, 4, 5)
    assert np.abs(Hs - torch.stack(outputs).numpy()).max() < 1e-12
    assert np.abs(final[0] - outputs[-1].numpy()).max() < 1e-12


def test_float32_training_loss_matches_float64_autograd():
    params, X, Y, state = problem('gru', V=28, B=64, T=32, h=32, seed=5, scale=0.1)
    p32 = {k: v.astype(np.float32) for k, v in params.items()}
    loss32, _ = gru.loss_and_grads(p32, 'gru', X, Y, (state[0].astype(np.float32),))
    P = tensors(params, 'gru')
    expected = lm_loss(P, d2l_forward('gru', P, one_hot(X, 28), torch_state(state)), Y, 28)
    assert loss32 == pytest.approx(expected.item(), rel=1e-5)


# ---------------------------------------------------------------- torch's own layers

def nn_loss(module, P, X, Y, V, state):
    outputs, _ = module(one_hot(X, V), state)
    return F.cross_entropy((outputs @ P['W_hq'] + P['b_q']).swapaxes(0, 1).reshape(-1, V),
                           torch.as_tensor(Y).reshape(-1))


def test_lstm_matches_torch_nn_lstm():
    """nn.LSTM computes d2l's LSTM equations; its gate blocks are ordered i, f, g (= C~), o."""
    V, B, T, h = 7, 3, 5, 4
    params, X, Y, (H0, C0) = problem('lstm', V, B, T, h, seed=1)
    loss, grads = gru.loss_and_grads(params, 'lstm', X, Y, (H0, C0))
    params, grads = gru.named(params, 'lstm'), gru.named(grads, 'lstm')
    lstm = torch.nn.LSTM(V, h).double()
    order = 'ifco'
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(torch.tensor(np.concatenate([params[f'W_x{g}'].T for g in order])))
        lstm.weight_hh_l0.copy_(torch.tensor(np.concatenate([params[f'W_h{g}'].T for g in order])))
        lstm.bias_ih_l0.copy_(torch.tensor(np.concatenate([params[f'b_{g}'] for g in order])))
        lstm.bias_hh_l0.zero_()
    P = {k: torch.tensor(params[k], requires_grad=True) for k in ('W_hq', 'b_q')}
    expected = nn_loss(lstm, P, X, Y, V, (torch.tensor(H0)[None], torch.tensor(C0)[None]))
    expected.backward()
    assert abs(loss - expected.item()) < 1e-12
    for k, g in enumerate(order):
        rows = slice(k * h, (k + 1) * h)
        assert np.abs(grads[f'W_x{g}'] - lstm.weight_ih_l0.grad[rows].numpy().T).max() < 1e-10
        assert np.abs(grads[f'W_h{g}'] - lstm.weight_hh_l0.grad[rows].numpy().T).max() < 1e-10
        assert np.abs(grads[f'b_{g}'] - lstm.bias_ih_l0.grad[rows].numpy()).max() < 1e-10
    for name in ('W_hq', 'b_q'):
        assert np.abs(grads[name] - P[name].grad.numpy()).max() < 1e-10


def test_rnn_matches_torch_nn_rnn():
    V, B, T, h = 7, 3, 5, 4
    params, X, Y, (H0,) = problem('rnn', V, B, T, h, seed=2)
    loss, grads = gru.loss_and_grads(params, 'rnn', X, Y, (H0,))
    params, grads = gru.named(params, 'rnn'), gru.named(grads, 'rnn')
    rnn = torch.nn.RNN(V, h, nonlinearity='tanh').double()
    with torch.no_grad():
        rnn.weight_ih_l0.copy_(torch.tensor(params['W_xh'].T))
        rnn.weight_hh_l0.copy_(torch.tensor(params['W_hh'].T))
        rnn.bias_ih_l0.copy_(torch.tensor(params['b_h']))
        rnn.bias_hh_l0.zero_()
    P = {k: torch.tensor(params[k], requires_grad=True) for k in ('W_hq', 'b_q')}
    expected = nn_loss(rnn, P, X, Y, V, torch.tensor(H0)[None])
    expected.backward()
    assert abs(loss - expected.item()) < 1e-12
    assert np.abs(grads['W_xh'] - rnn.weight_ih_l0.grad.numpy().T).max() < 1e-10
    assert np.abs(grads['W_hh'] - rnn.weight_hh_l0.grad.numpy().T).max() < 1e-10
    assert np.abs(grads['b_h'] - rnn.bias_ih_l0.grad.numpy()).max() < 1e-10


def gru_as_nn_gru(params, V, h):
    """nn.GRU with d2l's weights: blocks r, z, n; bias_hh zero."""
    params = gru.named(params, 'gru')
    module = torch.nn.GRU(V, h).double()
    with torch.no_grad():
        module.weight_ih_l0.copy_(torch.tensor(
            np.concatenate([params['W_xr'].T, params['W_xz'].T, params['W_xh'].T])))
        module.weight_hh_l0.copy_(torch.tensor(
            np.concatenate([params['W_hr'].T, params['W_hz'].T, params['W_hh'].T])))
        module.bias_ih_l0.copy_(torch.tensor(
            np.concatenate([params['b_r'], params['b_z'], params['b_h']])))
        module.bias_hh_l0.zero_()
    return module


def test_nn_gru_differs_only_where_the_reset_gate_applies():
    """gru.py implements d2l's GRU, H~ = tanh(X W_xh + (R * H) W_hh + b_h); nn.GRU
    applies the reset after the product, r * (H W_hn). With a diagonal W_hh the two
    coincide, which also confirms the update-gate convention H = Z H + (1 - Z) H~.
    gru.py does not implement nn.GRU's variant, so there is nothing more to match."""
    V, B, T, h = 7, 3, 5, 4
    params, X, Y, (H0,) = problem('gru', V, B, T, h, seed=4)
    P = {k: torch.tensor(params[k]) for k in ('W_hq', 'b_q')}
    general, _ = gru.loss_and_grads(params, 'gru', X, Y, (H0,))
    with torch.no_grad():
        torch_general = nn_loss(gru_as_nn_gru(params, V, h), P, X, Y, V, torch.tensor(H0)[None])
    assert abs(general - torch_general.item()) > 1e-6
    params['W_h'][2] = np.diag(np.diag(params['W_h'][2]))  # W_hh
    diagonal, _ = gru.loss_and_grads(params, 'gru', X, Y, (H0,))
    with torch.no_grad():
        torch_diagonal = nn_loss(gru_as_nn_gru(params, V, h), P, X, Y, V, torch.tensor(H0)[None])
    assert abs(diagonal - torch_diagonal.item()) < 1e-12


# ---------------------------------------------------------------- the concise version

@pytest.mark.slow
def test_concise_torch_version_trains_to_d2ls_perplexity(tmp_path):
    """docs/code/gru_torch.py (torch.nn.GRU, d2l's concise implementation), run as a
    reader runs it, next to the corpus: 50 rows, validation perplexity at most 7.0 at
    epoch 50, then a sample."""
    for name in ('gru_torch.py', 'timemachine.txt'):
        (tmp_path / name).write_bytes((CODE / name).read_bytes())
    env = dict(os.environ, OMP_NUM_THREADS='1', MKL_NUM_THREADS='1', OPENBLAS_NUM_THREADS='1')
    done = subprocess.run([sys.executable, 'gru_torch.py'], cwd=tmp_path, capture_output=True,
                          text=True, timeout=1800, env=env)
    assert done.returncode == 0, done.stderr
    rows = [line.split('|')[1:4] for line in done.stdout.splitlines()
            if line.startswith('|') and line.split('|')[1].strip().isdigit()]
    assert [int(r[0]) for r in rows] == list(range(1, 51))
    assert float(rows[-1][2]) <= 7.0
    assert float(rows[-1][2]) < float(rows[0][2])
    samples = [line for line in done.stdout.splitlines() if line.startswith('sample')]
    assert len(samples) == 1 and '"it has' in samples[0]
