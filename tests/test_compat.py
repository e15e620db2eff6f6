"""The scripts on other Pythons and numpys: run by `make test-compat`, which makes a
virtualenv with the oldest supported pair (Python 3.9, numpy 1.26) and points
COMPAT_PYTHON at it. Outputs must match the main environment's, byte for byte."""

import os
import re
import subprocess

import pytest

from helpers import CODE, run_script

COMPAT_PYTHON = os.environ.get("COMPAT_PYTHON")
pytestmark = [pytest.mark.compat,
              pytest.mark.skipif(not COMPAT_PYTHON, reason="run by `make test-compat`")]

RUNS = [("rnn.py",), ("gated.py",), ("gru.py", "--gradcheck"), ("memory.py", "--gradcheck"),
        ("training.py", "--gradcheck", "--jacobian"), ("deeper.py", "--gradcheck")]


def versions(python):
    out = subprocess.run([python, "-c", "import sys, numpy; print(sys.version_info[:2], "
                          "numpy.__version__)"], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_the_compat_interpreter_is_the_oldest_supported():
    assert versions(COMPAT_PYTHON) == "(3, 9) 1.26.4"


@pytest.mark.parametrize("run", RUNS, ids=" ".join)
def test_same_output_on_python39_numpy126(run, tmp_path):
    script, *args = run
    old = subprocess.run([COMPAT_PYTHON, str(CODE / script), *args], capture_output=True,
                         text=True, cwd=tmp_path, timeout=600)
    assert old.returncode == 0, old.stderr
    new = run_script(script, *args)
    assert rounding_masked(old.stdout) == rounding_masked(new.stdout)


# A finite-difference check's relative error is round-off: its digits change with the BLAS
# and the numpy build, while the claim the page makes is that it stays under the bound.
ROUNDING = re.compile(r"\b\d\.\de-(?:0[7-9]|[1-9]\d)\b")


def rounding_masked(text):
    """The output with every relative error below 1e-6 replaced by a mark: all else must be
    byte for byte the same on both interpreters."""
    return ROUNDING.sub("<1e-6", text)


def test_gru_trains_on_python39_numpy126(tmp_path):
    """Two epochs on the oldest pair print the same per-epoch table as here (float32 sums
    may differ in the last bit between numpy builds: perplexities agree to 0.01)."""
    old = subprocess.run([COMPAT_PYTHON, str(CODE / "gru.py"), "--epochs", "2"],
                         capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert old.returncode == 0, old.stderr
    new = run_script("gru.py", "--epochs", "2")

    def epochs(text):
        table = text.split("| epoch |")[1].split("\n\n")[0].splitlines()[2:]
        return [[c.strip() for c in line.strip("|").split("|")] for line in table]

    old_rows, new_rows = epochs(old.stdout), epochs(new.stdout)
    assert [r[0] for r in old_rows] == [r[0] for r in new_rows] == ["1", "2"]
    for a, b in zip(old_rows, new_rows):
        assert abs(float(a[1]) - float(b[1])) <= 0.01 and abs(float(a[2]) - float(b[2])) <= 0.01
