"""What several test modules need: where things are, the chapter registry, the scripts
loaded by path and run as a reader runs them, the built site's pages, copies of the
project, the browser, formulas. Fixtures and pytest's hooks are in conftest.py.

Every list of chapters, scripts and pages comes from the chapter registry
(generator/chapters/) and the pages' own markers, so a new chapter is tested
without editing a test.
"""

import hashlib
import importlib.util
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"  # hand-written pages and the served scripts
CODE = DOCS / "code"
SITE = ROOT / "site"  # the built site
CHROMIUM = Path("/usr/bin/chromium")
# A reader's run as the scripts set it up: one BLAS thread, and on x86 one BLAS kernel
# (generator.runs.blas_kernel says why; conftest sets it for the tests' own process).
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
              "OPENBLAS_CORETYPE": os.environ.get("OPENBLAS_CORETYPE", "")}

sys.path.insert(0, str(ROOT))
from generator import markers as marker_syntax  # noqa: E402
from generator.chapter import chapters  # noqa: E402

CHAPTERS = chapters()  # the registry: page, script, data of every chapter
SCRIPTS = [ch.script for ch in CHAPTERS]

HAVE_TORCH = importlib.util.find_spec("torch") is not None


def _base_path():
    """The site's base path, rnn-explainer: the path of mkdocs.yml's site_url."""
    from urllib.parse import urlparse

    import yaml

    return urlparse(yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))["site_url"]) \
        .path.strip("/")


BASE = _base_path()


# -- the scripts ---------------------------------------------------------------------

def load_script(name):
    """docs/code/<name> (or the file at an absolute path, as benchmarks/gru_profile.py)
    imported from its path, as the generator does it."""
    path = Path(name) if os.path.isabs(name) else CODE / name
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


def run_loaded(name, code, timeout=300):
    """`code` run by a fresh Python with one BLAS thread, as a reader's run has it, after
    docs/code/<name> is imported as `script` (load_script's way) and io and sys are."""
    load = ("import importlib.util, io, sys\n"
            f"spec = importlib.util.spec_from_file_location('script', {str(CODE / name)!r})\n"
            "script = importlib.util.module_from_spec(spec); spec.loader.exec_module(script)\n")
    return subprocess.run([sys.executable, "-c", load + code], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, **ONE_THREAD})


# A reader runs a command in one of two ways: the script in a folder of its own, or a cell
# of the served notebook (which writes the script and its data next to itself and calls its
# main() with the command's flags, every report in one kernel, as one process of the
# script runs several). A command that a notebook runs is taken from the notebook's run in
# a fresh kernel (test_notebooks checks that a shell prints the same), and the others are
# run alone: each command once per session.
# The notebooks of the chapters the selected tests need start in the background when the
# session starts, the costliest first, one at a time, while the other tests run. Under
# pytest-xdist (`make test` runs three workers) each notebook runs once for the session: the
# worker that claims it first runs it and leaves what it printed in SHARED_RUNS, where the
# other workers read it (claim_notebook, shared_notebook_run).

_outputs = {}  # command -> what it printed
_notebook_runs = {}  # script -> {command: printed text} of its notebook's fresh run
_pending = {}  # script -> Future of its notebook's run, started with the session
_background = ThreadPoolExecutor(max_workers=1)
_processes = set()  # the notebook runs under way, stopped if the session ends first
_lock = threading.Lock()

NOTEBOOK_RUNNER = """
import sys, nbformat
from nbclient import NotebookClient
path, folder = sys.argv[1], sys.argv[2]
nb = nbformat.read(path, as_version=4)
for cell in nb.cells:
    if cell.cell_type == "code":
        cell.outputs = []
NotebookClient(nb, timeout=1800, kernel_name="python3",
               resources={"metadata": {"path": folder}}).execute()
nbformat.write(nb, path)
"""


# The session's id, the same in every worker of one `pytest -n` run (xdist sets it), or
# this process's own where the tests run in one process.
def shared_runs(session):
    return ROOT / "build" / "test-runs" / f"notebooks-{session}"


SHARED_RUNS = shared_runs(os.environ.get("PYTEST_XDIST_TESTRUNUID") or f"pid{os.getpid()}")


def claim_notebook(ch):
    """Run ch's notebook if no other worker of this session has claimed it ({command:
    printed text}, also written to SHARED_RUNS), else None: the claimant's run is read
    with shared_notebook_run."""
    SHARED_RUNS.mkdir(parents=True, exist_ok=True)
    try:
        os.close(os.open(SHARED_RUNS / f"{ch.stem}.claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return None
    try:
        cells = _run_notebook(ch)
    except BaseException as error:  # the other worker fails with the same message
        _write_atomic(SHARED_RUNS / f"{ch.stem}.error", f"{ch.notebook}: {error}")
        raise
    _write_atomic(SHARED_RUNS / f"{ch.stem}.json", json.dumps(cells))
    return cells


def shared_notebook_run(ch, timeout=3600):
    """The run of ch's notebook that another worker claimed, when it has finished."""
    done, failed = SHARED_RUNS / f"{ch.stem}.json", SHARED_RUNS / f"{ch.stem}.error"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if done.is_file():
            return json.loads(done.read_text("utf-8"))
        if failed.is_file():
            raise AssertionError(f"in another worker: {failed.read_text('utf-8')}")
        time.sleep(0.5)
    raise AssertionError(f"{ch.notebook}: another worker claimed its run and has not "
                         f"finished it in {timeout} s")


def _write_atomic(path, text):
    part = path.with_name(path.name + f".{os.getpid()}.part")
    part.write_text(text, "utf-8")
    os.replace(part, path)


def run_cells(nb):
    """{command: printed text} of a notebook's run cells: each starts with the command it
    stands for (`# $ python3 rnn.py --vanish`), then calls the script's main with its flags."""
    return {c.source.split("\n", 1)[0][4:]:
            "".join(o.get("text", "") for o in c.outputs).replace("\r\n", "\n")
            for c in nb.cells if c.cell_type == "code" and c.source.startswith("# $ ")}


def recorded_seconds(ch):
    """The time the build's runs of ch's notebook took, from their `time:` lines."""
    import nbformat

    text = "".join(run_cells(nbformat.read(SITE / ch.notebook, as_version=4)).values())
    return sum(float(t) for t in re.findall(r"^time: ([0-9.]+) s", text, re.M))


def _run_notebook(ch):
    """Every cell of the served notebook, in a fresh kernel, in an empty folder (as Colab
    runs it; the kernel is this interpreter's). {command: printed text}."""
    import nbformat

    folder = ROOT / "build" / "test-runs" / f"notebook-{ch.stem}-{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    notebook = folder / Path(ch.notebook).name
    shutil.copy(SITE / ch.notebook, notebook)
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    process = subprocess.Popen([sys.executable, "-c", NOTEBOOK_RUNNER, str(notebook),
                                str(folder)], env={**os.environ, **ONE_THREAD, "PATH": path,
                                                  "PYTHONDONTWRITEBYTECODE": "1"},
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _processes.add(process)
    try:
        _, stderr = process.communicate(timeout=3600)
    finally:
        _processes.discard(process)
    assert process.returncode == 0, f"{ch.notebook} did not run:\n{stderr[-3000:]}"
    ran = sorted(p.name for p in folder.iterdir())
    cells = run_cells(nbformat.read(notebook, as_version=4))
    shutil.rmtree(folder, ignore_errors=True)
    assert ran == sorted({notebook.name, ch.script, *ch.data}), f"{ch.notebook} wrote {ran}"
    return cells


def run_alone(command):
    """The command's script (and data) copied to an empty folder and run there."""
    _, script, *args = shlex.split(command)
    ch = next(ch for ch in CHAPTERS if ch.script == script)
    folder = ROOT / "build" / "test-runs" / \
        f"{hashlib.sha256(command.encode()).hexdigest()[:12]}-{os.getpid()}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    for f in (script, *ch.data):
        shutil.copy2(CODE / f, folder / f)
    result = run_script(str(folder / script), *args, cwd=folder)
    shutil.rmtree(folder, ignore_errors=True)
    assert result.returncode == 0, f"{command} failed: {result.stderr}"
    assert result.stderr == "", f"{command} wrote to stderr: {result.stderr}"
    return result.stdout


def notebook_run(ch):
    """{command: printed text} of ch's served notebook run in a fresh kernel (once)."""
    _run_jobs([], force=[ch])
    return _notebook_runs[ch.script]


def outputs_of(commands):
    """{command: printed text} for commands such as 'python3 rnn.py --vanish', each run
    once per session as a reader runs it. A command that fails or writes to stderr (run
    alone), or a notebook that fails or leaves other files than its own, fails the test."""
    commands = list(dict.fromkeys(commands))
    _run_jobs(commands)
    return {c: _outputs[c] for c in commands}


def _run_jobs(commands, force=()):
    """Wait for the notebooks that run these commands (or force's), started with the
    session or now; then run each command no notebook runs, alone, two at a time."""
    todo = [c for c in commands if c not in _outputs]
    scripts = {shlex.split(c)[1] for c in todo} | {ch.script for ch in force}
    for ch in CHAPTERS:
        if ch.script in scripts and ch.script not in _notebook_runs \
                and (SITE / ch.notebook).is_file():
            future = _pending.get(ch.script) or _background.submit(claim_notebook, ch)
            _pending[ch.script] = future
            cells = future.result()
            if cells is None:  # another worker runs it
                cells = shared_notebook_run(ch)
            with _lock:
                _notebook_runs[ch.script] = cells
                for command, text in cells.items():
                    _outputs.setdefault(command, text)
    alone = []
    for c in todo:
        if c in _outputs:
            continue
        _, script, *args = shlex.split(c)
        built = built_run(script, *args)
        if built is not None and built["seconds"] >= TRAINS:
            _outputs[c] = built["text"]  # a training run the build made: read, not repeated
        else:
            alone.append(c)
    with ThreadPoolExecutor(max_workers=2) as pool:
        for command, text in zip(alone, pool.map(run_alone, alone)):
            with _lock:
                _outputs[command] = text


def output_of(command):
    return outputs_of([command])[command]


# A command no notebook runs is run alone, as a reader would, unless the build's run of it
# trained for this many seconds or more: then the check is of the page against that run,
# read from the run cache, and that a fresh process prints what the build's did is shown
# by each chapter's notebook (every report, run again in a fresh kernel) and the scripts'
# own determinism tests.
TRAINS = 5.0


def built_run(script, *args):
    """The build's run of `python3 <script> <args>` ({"text", "seconds", ...}), read from
    the run cache (its entry is keyed by the script's bytes, its data, the flags, Python
    and numpy, and checked by its hash), or None where the build has not run it."""
    from generator import contract, runs
    from generator.cache import RunCache

    ch = next(ch for ch in CHAPTERS if ch.script == script)
    module = _built_modules.get(script)
    if module is None:
        module = _built_modules[script] = contract.load_script(script)
    return RunCache().load(script, runs.run_key(module, ch.data, tuple(args)))


def built_output(script, *args):
    """What the build's run of `python3 <script> <args>` printed, or None where the build
    has not run that command. For checks of a page against its build, which need not
    train the model again: that the build's runs are what a reader's run prints is
    test_notebooks'."""
    value = built_run(script, *args)
    return None if value is None else value["text"]


_built_modules = {}


def without_times(text):
    """A run's output without its measured times: lines starting with 'time:', and the
    cells of measured columns in its tables (MEASURED) replaced by '~'."""
    for table in measured_tables(text):
        rows = [line.split("|") for line in table.splitlines()]
        cols = {j for j, h in enumerate(rows[0]) if MEASURED.search(h)}
        text = text.replace(table, "\n".join(
            "|".join("~" if j in cols and n > 1 else c for j, c in enumerate(row))
            for n, row in enumerate(rows)))
    return "\n".join(line for line in text.splitlines() if not line.startswith("time:"))


# -- gradients: the tests' own oracle ---------------------------------------------------

def derivative_at(f, x, index, eps=1e-6):
    """d f() / d x[index] by central differences: x[index] moved by +-eps in place, f()
    read at both ends, x[index] put back as it was."""
    keep = x[index]
    x[index] = keep + eps
    up = f()
    x[index] = keep - eps
    down = f()
    x[index] = keep
    return (up - down) / (2 * eps)


def central_differences(f, x, eps=1e-6):
    """d f() / d x, every entry of the array x (changed in place and restored)."""
    return np.array([derivative_at(f, x, i, eps) for i in np.ndindex(x.shape)],
                    dtype=float).reshape(x.shape)


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


def page_text(page):
    """The built page's text, each run of white space one space (formulas as MathML's
    text: b_f is 'b f')."""
    from bs4 import BeautifulSoup

    return " ".join(BeautifulSoup(page_html(page), "html.parser").get_text().split())


def said(pattern, page):
    """The groups of the one place in the built page's text that matches `pattern`: a
    sentence a claims test reads its numbers from."""
    found = re.findall(pattern, page_text(page))
    assert len(found) == 1, f"{pattern!r} matches {len(found)} times on {page}"
    return found[0]


def printed(script, *args):
    """What the build's run of `python3 <script> <args>` printed, on one line."""
    text = built_output(script, *args)
    assert text is not None, f"the build has not run {script} {' '.join(args)}"
    return " ".join(text.split())


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


# A column of times measured as the run ran ("CPU s", "loop (ms)", "softmax (us/token)"):
# no second run prints them again to the digit, as with `time:` lines.
MEASURED = re.compile(r"CPU ?s\b|\(ms\)|\bms\b|us/token|µs|\bseconds?\b")  # (spaces
# are dropped from a page's cells before they are compared: "CPU s" reads "CPUs")


def measured_tables(text):
    """The tables of a run with a column of measured times (MEASURED)."""
    return [t for t in table_blocks(text)
            if any(MEASURED.search(h) for h in t.splitlines()[0].split("|"))]


def masked(rows):
    """Rows of cells with the cells of measured columns (MEASURED) replaced by '~'."""
    if not rows:
        return rows
    cols = {j for j, h in enumerate(rows[0]) if MEASURED.search(h)}
    return [rows[0]] + [[("~" if j in cols else c) for j, c in enumerate(row)]
                        for row in rows[1:]]


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
    """A table cell's text as the script printed it: each typeset formula read back from
    its MathML into the scripts' ASCII notation (math_ascii), the rest as it reads."""
    for math in cell.find_all("math"):
        math.replace_with(math_ascii(math))
    return " ".join(cell.get_text().split())


# MathML back to the scripts' notation, written here independently of the rule that
# typesets it (generator/tables.py): sigma for the Greek letter, * for the element-wise
# product, C~ for a tilde accent, _x or _{t-1} for a subscript (braces where it is more
# than letters and digits), ' for a prime. Spaces inside a formula are not in the MathML,
# so cells are compared without spaces (same_cells).
ASCII = {"\u2299": "*", "\u2212": "-", "\u2032": "'", "\u00A0": " ", "\u02DC": "~"}


def math_ascii(element):
    tag = getattr(element, "name", None)
    if tag is None:  # a string
        return "".join(ASCII.get(c, _greek_name(c)) for c in str(element))
    kids = [k for k in element.children if getattr(k, "name", None) or str(k).strip()]
    if tag in ("msub", "msup", "msubsup"):
        marks = {"msub": "_", "msup": "^", "msubsup": "_^"}[tag]
        text = math_ascii(kids[0])
        for mark, kid in zip(marks, kids[1:]):  # msubsup: base, subscript, superscript
            script = math_ascii(kid)
            text += mark + (script if script.isalnum() else "{" + script + "}")
        return text
    if tag == "mover" and element.get("accent") == "true":
        return math_ascii(kids[0]) + math_ascii(kids[1])
    if tag == "msqrt":
        return "sqrt(" + "".join(map(math_ascii, kids)) + ")"
    return "".join(map(math_ascii, kids))


def _greek_name(ch):
    import unicodedata

    name = unicodedata.name(ch, "")  # GREEK SMALL LETTER SIGMA, GREEK LUNATE EPSILON SYMBOL
    if name.startswith("GREEK ") and "CAPITAL" not in name:
        return name.split()[-2 if name.endswith(" SYMBOL") else -1].lower().replace("lamda", "lambda")
    return ch


def same_cells(rows):
    """Rows of cells compared without their spaces (a formula's MathML has none)."""
    return [["".join(c.split()) for c in row] for row in rows]


def shown_cells(printed):
    """The cells of a table a script printed, as same_cells compares them with a page's."""
    return same_cells(cells_of_markdown(printed))


# -- copies of the project, built -----------------------------------------------------

PROJECT_FILES = ("docs", "generator", "overrides", "mkdocs.yml", "requirements.txt", "Makefile")
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


def copy_built(built_project, dest):
    """A copy of conftest's built_project (sources, page cache and site/) at dest."""
    shutil.copytree(built_project, dest, symlinks=True)
    return Path(dest)


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


# -- the browser ---------------------------------------------------------------------

# Flags measured on this machine: headless, no sandbox (container), and no
# background traffic of Chromium's own (component updates, sync, QUIC probes)
# that would show up as requests to other hosts.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def site_pages(site_dir):
    """URL paths of every page of the built site, from its files: '', 'ch12-rnn/', ...

    Every `index.html` under site/ is a page (use_directory_urls); 404.html is not.
    """
    site_dir = Path(site_dir)
    pages = []
    for path in sorted(site_dir.rglob("index.html")):
        rel = path.parent.relative_to(site_dir).as_posix()
        pages.append("" if rel == "." else rel + "/")
    return pages


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class StaticServer:
    """`python3 -m http.server --bind 127.0.0.1 <port> -d <root>` as a subprocess."""

    def __init__(self, root, port=None):
        self.root = Path(root)
        self.port = port or free_port()
        self.host = f"127.0.0.1:{self.port}"
        self.url = f"http://{self.host}/"
        self.proc = None

    def start(self, timeout=15.0):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "http.server", "--bind", "127.0.0.1",
             str(self.port), "-d", str(self.root)],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"http.server exited with {self.proc.returncode} "
                                   f"before answering on port {self.port}")
            try:
                with urllib.request.urlopen(self.url, timeout=1) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, ConnectionError, OSError):
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"http.server did not answer on {self.url} in {timeout} s")

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def is_local(self, url):
        """True for this server's URLs and for data:/blob: URLs (no network)."""
        if url.startswith(("data:", "blob:")):
            return True
        return url.startswith(self.url) or url == self.url.rstrip("/")


def launch_chromium(playwright, executable_path):
    return playwright.chromium.launch(executable_path=executable_path, args=CHROMIUM_ARGS)


# axe-core, the accessibility engine the browser tests inject into a page: pinned in
# package.json and package-lock.json, installed by `make test` (`npm ci`) into
# node_modules/, which MkDocs never sees (docs_dir is docs/): the site does not serve it.
AXE_PACKAGE = ROOT / "node_modules" / "axe-core"
AXE_VERSION = "4.14"  # the series package.json pins; axe_source() refuses any other
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"]


def axe_source():
    """The text of axe.min.js, after checking that it is the pinned series."""
    import json

    try:
        meta = json.loads((AXE_PACKAGE / "package.json").read_text("utf-8"))
        source = (AXE_PACKAGE / "axe.min.js").read_text("utf-8")
    except FileNotFoundError:
        raise RuntimeError(f"no axe-core in {AXE_PACKAGE}: run `npm ci` "
                           "(`make test` does it)") from None
    if not meta["version"].startswith(AXE_VERSION + "."):
        raise RuntimeError(f"{AXE_PACKAGE} is axe-core {meta['version']}, not {AXE_VERSION}.x: "
                           "run `npm ci`")
    return source


def run_axe(page, context="document", rules=()):
    """axe-core's WCAG 2.1 A and AA rules (and `rules`, enabled too) on `page`, in
    `context` (a JavaScript expression: document, or an {include: ...} object); the
    result as axe returns it, with the version that ran it checked. Only violations list
    every node (resultTypes): passes and the rest name their rules with one node each,
    which saves a fifth of each run (about 0.3 s on a chapter)."""
    if not page.evaluate("typeof window.axe === 'object'"):
        page.add_script_tag(content=axe_source())
    enabled = ", ".join(f"'{rule}': {{enabled: true}}" for rule in rules)
    result = page.evaluate(f"""async () => await axe.run({context}, {{runOnly: {{type: 'tag',
      values: {WCAG_TAGS!r}}}, rules: {{{enabled}}}, resultTypes: ['violations']}})""")
    assert result["testEngine"]["version"].startswith(AXE_VERSION + "."), result["testEngine"]
    return result


# -- formulas ------------------------------------------------------------------------

def markdown_converter():
    """Python-Markdown with the extensions mkdocs.yml lists, as MkDocs builds pages."""
    import markdown
    import yaml

    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
    names, settings = [], {}
    for entry in config["markdown_extensions"]:
        if isinstance(entry, dict):
            (name, options), = entry.items()
            names.append(name)
            settings[name] = options or {}
        else:
            names.append(entry)
    return markdown.Markdown(extensions=names, extension_configs=settings)


FONT = DOCS / "assets" / "fonts" / "stix-two-math.woff2"
CSS = """@font-face { font-family: "STIX Two Math"; src: url("/font.woff2") format("woff2"); }
body { font: 16px/1.6 sans-serif; margin: 2em; }
math { font-family: "STIX Two Math", math; font-size: 20px; }"""

# id -> (LaTeX, display). Chosen for what can go wrong: accents, stretchy bars, fences.
TRICKY = {
    "bar": (r"\bar{A}^h_t", False),
    "bartilde": (r"\bar{\tilde{H}}_t", False),
    "hat": (r"\hat{Y}_t", False),
    "norm_inline": (r"\frac{\theta}{\lVert g \rVert}\, g \quad \text{if } \lVert g \rVert > \theta", False),
    "norm_display": (r"g \leftarrow \frac{\theta}{\lVert g \rVert}\, g \quad \text{if } \lVert g \rVert > \theta .", True),
    "abs": (r"\lvert V \rvert \times H", False),
    "left_right": (r"\left( \frac{\partial h_t}{\partial h_k} \right)", True),
    "prod": (r"\frac{\partial h_t}{\partial h_k} = \prod_{j=k+1}^{t} \operatorname{diag}\!\left(\tanh'(a_j)\right) U,", True),
    "gru": (r"\bar{Z}_t = \bar{H}_t \odot (H_{t-1} - \tilde{H}_t), \qquad \bar{A}^h_t = \bar{\tilde{H}}_t \odot (1 - \tilde{H}_t^2),", True),
}


def fixture_html(formulas=TRICKY):
    """A page with each formula in a paragraph of its own, as MathML."""
    from generator import mathml

    body = "\n".join(f'<p id="p-{key}">Text before {mathml.to_mathml(tex, display)} and after.</p>'
                     for key, (tex, display) in formulas.items())
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Formulas</title>'
            f"<style>{CSS}</style></head><body><main><h1>Formulas</h1>{body}</main></body></html>")


def open_fixture(browser, page_html, font_bytes):
    """A page at http://fixture.test/ served from memory: no server, no network."""
    page = browser.new_page()

    def handle(route):
        url = route.request.url
        if url == "http://fixture.test/":
            route.fulfill(body=page_html, content_type="text/html; charset=utf-8")
        elif url == "http://fixture.test/font.woff2" and font_bytes is not None:
            route.fulfill(body=font_bytes, content_type="font/woff2")
        elif url.startswith("http://fixture.test/"):
            route.fulfill(status=404, body="")
        else:
            route.abort()

    page.route("**/*", handle)
    page.goto("http://fixture.test/")
    page.evaluate("document.fonts.ready")
    return page


BOXES_JS = """() => {
  const box = (el) => { const r = el.getBoundingClientRect();
    return {x: r.x, y: r.y, w: r.width, h: r.height, top: r.top, bottom: r.bottom, left: r.left, right: r.right}; };
  const out = {};
  for (const p of document.querySelectorAll('p[id^="p-"]')) {
    const math = p.querySelector('math');
    out[p.id.slice(2)] = {
      math: box(math),
      movers: [...math.querySelectorAll('mover')].map((m) => ({
        base: box(m.children[0]), mark: box(m.children[1]), char: m.children[1].textContent,
        sizes: [m.children[0], m.children[1]].map((e) => parseFloat(getComputedStyle(e).fontSize))})),
      bars: [...math.querySelectorAll('mo')].filter((m) => ['\\u2016', '|'].includes(m.textContent)).map(box),
      fences: [...math.querySelectorAll('mo[fence="true"]')].map(box),
      names: [...math.querySelectorAll('mi')].filter((m) => m.textContent === 'diag').map(box),
      all: [...math.querySelectorAll('*')].map(box),
      fontSize: parseFloat(getComputedStyle(math).fontSize),
    };
  }
  return {boxes: out, loaded: document.fonts.check('20px "STIX Two Math"'),
          faces: [...document.fonts].map((f) => f.family + ':' + f.status)};
}"""


