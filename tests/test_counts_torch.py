"""The conventions page's two-bias parameter counts against PyTorch's own modules."""

import pytest

from conftest import load_script

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.torch

gated = load_script("gated.py")


def test_two_bias_counts_match_pytorch_modules():
    d, H = gated.PARAM_INPUT, gated.PARAM_HIDDEN
    modules = {"plain RNN": torch.nn.RNN(d, H), "GRU": torch.nn.GRU(d, H),
               "LSTM": torch.nn.LSTM(d, H)}
    for name, one_bias, two_biases in gated.compute_bias_vector_counts():
        assert sum(p.numel() for p in modules[name].parameters()) == two_biases
        biases = sum(p.numel() for n, p in modules[name].named_parameters() if "bias" in n)
        assert two_biases - one_bias == biases // 2  # one of the two bias vectors
