"""The conventions page's two-bias parameter counts against PyTorch's own modules."""

import pytest

from helpers import load_script

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

gated = load_script("gated.py")


def test_two_bias_counts_match_pytorch_modules():
    d, H = gated.PARAM_INPUT, gated.PARAM_HIDDEN
    modules = {"plain RNN": torch.nn.RNN(d, H), "GRU": torch.nn.GRU(d, H),
               "LSTM": torch.nn.LSTM(d, H)}
    counts = gated.compute_bias_vectors()
    assert sorted(c.model for c in counts) == sorted(modules)
    for c in counts:
        assert sum(p.numel() for p in modules[c.model].parameters()) == c.two
        biases = sum(p.numel() for n, p in modules[c.model].named_parameters() if "bias" in n)
        assert c.two - c.one == biases // 2  # one of the two bias vectors
