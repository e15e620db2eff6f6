"""memory.py against PyTorch: both models' forward pass and every gradient against autograd
on the same weights (the one-network model, and the batched one with networks of two lags
side by side), and the script's Adam against torch.optim.Adam. Collected only where
PyTorch is installed (`make test-torch`)."""
import numpy as np
import pytest

from helpers import load_script

torch = pytest.importorskip("torch")
memory = load_script("memory.py")

pytestmark = pytest.mark.torch


def torch_loss(cell, P, X, Y):
    """Mean cross-entropy of one network (tensors P by d2l name) on X (B, T), Y (B,)."""
    x_all = torch.nn.functional.one_hot(torch.as_tensor(X), memory.V).double()  # (B, T, V)
    H = torch.zeros(X.shape[0], P["W_hq"].shape[0], dtype=torch.float64)
    C = torch.zeros_like(H)

    def gate(g, x, H_in):
        return x @ P["W_x" + g] + H_in @ P["W_h" + g] + P["b_" + g]

    for t in range(X.shape[1]):
        x = x_all[:, t]
        if cell == "rnn":
            H = torch.tanh(gate("h", x, H))
        elif cell == "lstm":
            I, F_, O = (torch.sigmoid(gate(g, x, H)) for g in "ifo")
            C = F_ * C + I * torch.tanh(gate("c", x, H))
            H = O * torch.tanh(C)
        else:
            Z, R = torch.sigmoid(gate("z", x, H)), torch.sigmoid(gate("r", x, H))
            H_tilde = torch.tanh(x @ P["W_xh"] + (R * H) @ P["W_hh"] + P["b_h"])
            H = Z * H + (1 - Z) * H_tilde
    logits = H @ P["W_hq"] + P["b_q"]
    return torch.nn.functional.cross_entropy(logits, torch.as_tensor(Y))


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_the_one_network_model_matches_torch_autograd(cell):
    rng = np.random.default_rng(11)
    p = {k: 0.5 * rng.standard_normal(w.shape)
         for k, w in memory.init_params(cell, 0, hidden=5).items()}
    X, Y = rng.integers(0, memory.V, (4, 7)), rng.integers(0, memory.K, 4)
    loss, _, grads, _ = memory.loss_and_grads(p, cell, X, Y)
    P = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    want = torch_loss(cell, P, X, Y)
    want.backward()
    assert loss == pytest.approx(want.item(), rel=1e-12)
    for name, w in P.items():
        assert np.allclose(grads[name], w.grad.numpy(), rtol=1e-9, atol=1e-12), name


@pytest.mark.parametrize("cell", ["rnn", "lstm", "gru"])
def test_the_batched_model_matches_torch_autograd_network_by_network(cell):
    rng = np.random.default_rng(12)
    b_f = (0.0, 1.0) if cell == "lstm" else (None, None)
    S = memory.make_stack(cell, [(b_f[0], 0, 6), (b_f[1], 1, 3)], hidden=5)
    theta, P = memory.stack_params(S, "float64")
    theta[:] = 0.5 * rng.standard_normal(theta.shape)
    X, Y = rng.integers(0, memory.V, (S.T, 2, 4)), rng.integers(0, memory.K, (2, 4))
    _, G = memory.stack_params(S, theta=np.empty_like(theta))
    losses, _ = memory.stack_loss_and_grads(S, P, X, Y, G)
    for m in range(2):
        net = {}
        for k, g in enumerate(memory.GATES[cell]):
            net["W_x" + g], net["W_h" + g], net["b_" + g] = P["W_x"][k, m], P["W_h"][k, m], P["b"][k, m]
        net["W_hq"], net["b_q"] = P["W_hq"][m], P["b_q"][m]
        T = {k: torch.tensor(v.copy(), requires_grad=True) for k, v in net.items()}
        want = torch_loss(cell, T, X[S.start[m]:, m].T, Y[m])
        want.backward()
        assert losses[m] == pytest.approx(want.item(), rel=1e-12)
        for k, g in enumerate(memory.GATES[cell]):
            for ours, name in ((G["W_x"][k, m], "W_x" + g), (G["W_h"][k, m], "W_h" + g),
                               (G["b"][k, m], "b_" + g)):
                assert np.allclose(ours, T[name].grad.numpy(), rtol=1e-9, atol=1e-12), name
        assert np.allclose(G["W_hq"][m], T["W_hq"].grad.numpy(), rtol=1e-9, atol=1e-12)


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
