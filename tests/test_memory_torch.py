"""memory.py against PyTorch: the cells' forward pass and every gradient against autograd
on the same weights, and the script's Adam against torch.optim.Adam. Collected only where
PyTorch is installed (`make test-torch`)."""
import importlib.util
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

ROOT = Path(__file__).resolve().parent.parent
spec = importlib.util.spec_from_file_location("memory_under_test", ROOT / "docs" / "code" / "memory.py")
memory = importlib.util.module_from_spec(spec)
spec.loader.exec_module(memory)

pytestmark = pytest.mark.torch


def random_problem(cell, seed=0, models=2, B=3, T=5, hidden=3, scale=0.5):
    """Random float64 weights (model axis first), tokens anywhere in the vocabulary."""
    rng = np.random.default_rng(seed)
    biases = tuple(range(models)) if cell == "lstm" else (None,)
    seeds = (0,) if cell == "lstm" else tuple(range(models))
    p = memory.init_params(cell, seeds, biases, "float64", hidden)
    p = {name: scale * rng.standard_normal(w.shape) for name, w in p.items()}
    X = rng.integers(0, memory.V, (T, models, B))
    Y = rng.integers(0, memory.K, (models, B))
    return p, X, Y


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_forward_and_backward_match_torch_autograd(cell):
    p, X, Y = random_problem(cell, seed=11, models=2, B=4, T=7, hidden=5)
    losses, _, grads = memory.loss_and_grads(cell, p, X, Y)
    P = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    T, M, B = X.shape
    onehot = torch.nn.functional.one_hot(torch.as_tensor(X), memory.V).double()  # (T, M, B, V)
    H = torch.zeros(M, B, P["W_hq"].shape[1], dtype=torch.float64)
    C = torch.zeros_like(H)

    def gate(g, x, H_in):
        return x @ P["W_x" + g] + H_in @ P["W_h" + g] + P["b_" + g][:, None, :]

    for t in range(T):
        x = onehot[t]
        if cell == "rnn":
            H = torch.tanh(gate("h", x, H))
        elif cell == "lstm":
            I, F_, O = (torch.sigmoid(gate(g, x, H)) for g in "ifo")
            C = F_ * C + I * torch.tanh(gate("c", x, H))
            H = O * torch.tanh(C)
        else:
            Z, R = torch.sigmoid(gate("z", x, H)), torch.sigmoid(gate("r", x, H))
            H_tilde = torch.tanh(x @ P["W_xh"] + (R * H) @ P["W_hh"] + P["b_h"][:, None, :])
            H = Z * H + (1 - Z) * H_tilde
    logits = H @ P["W_hq"] + P["b_q"][:, None, :]
    per_model = torch.stack([torch.nn.functional.cross_entropy(logits[m],
                                                               torch.as_tensor(Y[m]))
                             for m in range(M)])
    per_model.sum().backward()
    assert np.allclose(losses, per_model.detach().numpy(), rtol=1e-12)
    for name, w in P.items():
        assert np.allclose(grads[name], w.grad.numpy(), rtol=1e-9, atol=1e-12), name

def test_adam_matches_torch_optim_adam():
    rng = np.random.default_rng(1)
    w0 = rng.standard_normal((3, 4))
    p = {"w": w0.copy()}
    adam = memory.Adam(p)  # the script's learning rate and betas
    tw = torch.tensor(w0, requires_grad=True)
    opt = torch.optim.Adam([tw], lr=memory.LR, betas=memory.BETAS, eps=memory.EPS)
    for _ in range(5):
        g = rng.standard_normal((3, 4))
        adam.step(p, {"w": g.copy()})
        tw.grad = torch.tensor(g)
        opt.step()
    assert np.allclose(p["w"], tw.detach().numpy(), rtol=1e-12, atol=1e-15)
