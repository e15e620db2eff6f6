"""Shared fixtures and helpers: where things are, the chapter registry, the scripts
loaded by path and run as a reader runs them, the built site's pages.

Test modules do not import each other; what several of them need lives here.
Every list of chapters, scripts and pages comes from the chapter registry
(generator/chapters/) and the pages' own markers, so a new chapter is tested
without editing a test.
"""

import hashlib
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"  # hand-written pages and the served scripts
CODE = DOCS / "code"
SITE = ROOT / "site"  # the built site
CHROMIUM = Path("/usr/bin/chromium")
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}

sys.path.insert(0, str(ROOT))
from generator import markers as marker_syntax  # noqa: E402
from generator.chapter import chapters  # noqa: E402

CHAPTERS = chapters()  # the registry: page, script, data of every chapter
SCRIPTS = [ch.script for ch in CHAPTERS]

# The PyTorch checks run in their own virtualenv (`make test-torch`); where torch
# is not installed they are not collected at all, and the header says so.
HAVE_TORCH = importlib.util.find_spec("torch") is not None
collect_ignore = [] if HAVE_TORCH else ["test_gru_torch.py", "test_torch_counts.py"]


def pytest_report_header(config):
    lines = [f"browser tests: headless Chromium at {CHROMIUM}" if CHROMIUM.exists() else
             f"browser tests: SKIPPED, no Chromium at {CHROMIUM} "
             "(apt-get install chromium; .ci/run installs it)"]
    if not HAVE_TORCH:
        lines.append("PyTorch checks: not here; `make test-torch` runs them with torch 2.13.0")
    lines.append("chapters: " + ", ".join(f"{ch.page} ({ch.script})" for ch in CHAPTERS))
    return lines


# -- the scripts ---------------------------------------------------------------------

def load_script(name):
    """docs/code/<name> imported from its path, as the generator does it."""
    path = CODE / name
    spec = importlib.util.spec_from_file_location(f"test_script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run_script(name, *args, cwd=None, env=None, timeout=900):
    """`python3 <name> <args>` as a reader runs it: a subprocess, one BLAS thread
    (as the scripts set for themselves), in `cwd`."""
    script = Path(name) if os.path.isabs(name) else CODE / name
    return subprocess.run([sys.executable, str(script), *args], cwd=cwd,
                          env={**os.environ, **ONE_THREAD, **(env or {})},
                          capture_output=True, text=True, timeout=timeout)


_outputs = {}
_outputs_lock = threading.Lock()


def outputs_of(commands):
    """{command: stdout} for commands such as 'python3 rnn.py --vanish', each run once per
    session as a reader runs it (in an empty folder holding the script and its data),
    two at a time. A command that fails or writes to stderr fails the test."""
    todo = [c for c in dict.fromkeys(commands) if c not in _outputs]

    def one(command):
        _, script, *args = shlex.split(command)
        ch = next(ch for ch in CHAPTERS if ch.script == script)
        folder = Path(ROOT / "build" / "test-runs" / hashlib.sha256(command.encode()).hexdigest()[:12])
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        for f in (script, *ch.data):
            shutil.copy2(CODE / f, folder / f)
        result = run_script(str(folder / script), *args, cwd=folder)
        shutil.rmtree(folder, ignore_errors=True)
        return command, result

    with ThreadPoolExecutor(max_workers=2) as pool:
        for command, result in pool.map(one, todo):
            assert result.returncode == 0, f"{command} failed: {result.stderr}"
            assert result.stderr == "", f"{command} wrote to stderr: {result.stderr}"
            with _outputs_lock:
                _outputs[command] = result.stdout
    return {c: _outputs[c] for c in commands}


def output_of(command):
    return outputs_of([command])[command]


def without_times(text):
    """A run's output without its measured times (lines starting with 'time:')."""
    return "\n".join(line for line in text.splitlines() if not line.startswith("time:"))


# -- the pages -----------------------------------------------------------------------

def page_markers():
    """{docs-relative page: [Marker]} for every hand-written page with markers."""
    found = {}
    for path in sorted(DOCS.rglob("*.md")):
        rel = path.relative_to(DOCS).as_posix()
        markers = marker_syntax.parse(rel, path.read_text("utf-8"))
        if markers:
            found[rel] = markers
    return found


def page_html(page):
    """The built HTML of a docs-relative page (use_directory_urls)."""
    stem = page[:-3]
    path = SITE / ("index.html" if stem == "index" else f"{stem}/index.html")
    return path.read_text("utf-8")


def table_blocks(text):
    """Every markdown table in a text: runs of consecutive lines starting with '|'."""
    blocks, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            blocks.append("\n".join(current))
            current = []
    return blocks


def cells_of_markdown(table):
    rows = []
    for line in table.splitlines():
        if re.fullmatch(r"\|[-:| ]+\|", line):
            continue  # the alignment rule
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def html_command_tables(html):
    """(command, rows of cells) for each table the page shows under a command label."""
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    pairs = []
    for p in soup.select("p.command"):
        table = p.find_next(["table", "p", "h2", "h3"])
        assert table is not None and table.name == "table", \
            f"{p.get_text()} is not followed by a table"
        rows = [[cell_text(cell) for cell in tr.find_all(["th", "td"])]
                for tr in table.find_all("tr")]
        pairs.append((p.get_text(strip=True).removeprefix("$").strip(), rows))
    return pairs


def cell_text(cell):
    """A table cell's text as the script printed it: typeset math reads back as its
    source (the alttext the math hook keeps)."""
    for math in cell.find_all("math"):
        math.replace_with(math.get("data-source") or math.get("alttext") or math.get_text())
    return cell.get_text(strip=True)


# -- copies of the project, built -----------------------------------------------------

PROJECT_FILES = ("docs", "generator", "mkdocs.yml", "requirements.txt", "Makefile")
EPOCH = "1700000000"  # 2023-11-14: the sitemap's date in the copies' builds


def copy_project(dest, page_cache=True):
    """The project's sources copied to dest (plus its page cache, so that a build there
    recomputes only what a test changes). Returns dest."""
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    for name in PROJECT_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, dest / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(src, dest / name)
    if page_cache and (ROOT / "build" / "cache").is_dir():
        shutil.copytree(ROOT / "build" / "cache", dest / "build" / "cache")
    return dest


def build(project, *args, env=None, timeout=1200):
    """`python -m generator build` in a copy of the project."""
    return subprocess.run([sys.executable, "-m", "generator", "build", *args], cwd=project,
                          capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                               "PYTHONDONTWRITEBYTECODE": "1", "SOURCE_DATE_EPOCH": EPOCH,
                               **(env or {})})


def edit(path, old, new):
    text = path.read_text("utf-8")
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1), "utf-8")


def tree_digest(folder):
    """One hash over every file's path and bytes below folder."""
    h = hashlib.sha256()
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file():
            h.update(path.relative_to(folder).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def tree_files(folder):
    """{relative path: bytes} of every file below folder."""
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(Path(folder).rglob("*")) if p.is_file()}


# -- fixtures ------------------------------------------------------------------------

@pytest.fixture(scope="session")
def site():
    """The built site; `make test` builds it first."""
    if not (SITE / "index.html").is_file():
        pytest.fail("the site is not built: run `make build` (`make test` does it first)")
    return SITE


@pytest.fixture(scope="session")
def chromium_path():
    if not CHROMIUM.exists() or shutil.which("chromium") is None:
        pytest.skip(f"no Chromium at {CHROMIUM}: apt-get install chromium")
    return str(CHROMIUM)
