"""The scripts on other Pythons and numpys: run by `make test-compat`, which makes a
virtualenv with the oldest supported pair (Python 3.9, numpy 1.26) and points
COMPAT_PYTHON at it. Outputs must match the main environment's, byte for byte."""

import os
import subprocess

import pytest

from conftest import CODE, run_script

COMPAT_PYTHON = os.environ.get("COMPAT_PYTHON")
pytestmark = [pytest.mark.compat,
              pytest.mark.skipif(not COMPAT_PYTHON, reason="run by `make test-compat`")]

RUNS = [("rnn.py",), ("gated.py",), ("gru.py", "--gradcheck")]


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
    if script == "gru.py":  # finite differences differ in the last digits between BLAS builds
        assert [l.split("|")[1:4] for l in old.stdout.splitlines() if l.startswith("| ")] == \
            [l.split("|")[1:4] for l in new.stdout.splitlines() if l.startswith("| ")]
    else:
        assert old.stdout == new.stdout


def test_gru_trains_on_python39_numpy126(tmp_path):
    result = subprocess.run([COMPAT_PYTHON, str(CODE / "gru.py"), "--epochs", "2"],
                            capture_output=True, text=True, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr
    rows = [l for l in result.stdout.splitlines() if l.startswith("|") and l[2:3].strip()]
    assert len(rows) >= 2
