"""Shared fixtures: where things are, the scripts loaded by path, the built site."""

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"  # hand-written pages and the served scripts
CODE = DOCS / "code"
BUILT = ROOT / "build" / "docs"  # the generated page tree MkDocs builds from
SITE = ROOT / "site"  # the built site
CHROMIUM = Path("/usr/bin/chromium")

# The PyTorch checks run in their own virtualenv (`make test-torch`); where torch
# is not installed they are not collected at all, and the header says so.
HAVE_TORCH = importlib.util.find_spec("torch") is not None
collect_ignore = [] if HAVE_TORCH else ["test_gru_torch.py", "test_torch_counts.py"]


def load_script(name):
    """docs/code/<name> imported from its path, as the generator does it."""
    path = CODE / name
    spec = importlib.util.spec_from_file_location(f"test_script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(name, *args, cwd=None, env=None, timeout=600):
    """`python3 <name> <args>` as a reader runs it: a subprocess in `cwd`."""
    script = Path(name) if os.path.isabs(name) else CODE / name
    return subprocess.run([sys.executable, str(script), *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="session")
def site():
    """The built site; `make test` builds it first."""
    if not (SITE / "index.html").is_file() or not (BUILT / "index.md").is_file():
        pytest.fail("the site is not built: run `make build` (`make test` does it first)")
    return SITE


@pytest.fixture(scope="session")
def built():
    if not (BUILT / "index.md").is_file():
        pytest.fail("build/docs is missing: run `make build`")
    return BUILT


def pytest_report_header(config):
    lines = [f"browser tests: headless Chromium at {CHROMIUM}" if CHROMIUM.exists() else
             f"browser tests: SKIPPED, no Chromium at {CHROMIUM} "
             "(apt-get install chromium; .ci/run installs it)"]
    if not HAVE_TORCH:
        lines.append("PyTorch checks: not here; `make test-torch` runs them with torch 2.13.0")
    return lines


@pytest.fixture(scope="session")
def chromium_path():
    if not CHROMIUM.exists() or shutil.which("chromium") is None:
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium")
    return str(CHROMIUM)
