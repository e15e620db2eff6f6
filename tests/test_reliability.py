"""The edges a reliability probe of the site broke (issue 27), each held here by a test that
calls the guard itself, in this process, wherever it can: a script's main() with its
output captured, the generator's function that decides. A few run a real subprocess, where
what is held is what a reader's shell sees (a signal, a closed output)."""

import json
import math
import os
import signal
import subprocess
import sys
import time
import tracemalloc
from types import SimpleNamespace

import pytest

from helpers import CODE, ROOT, load_script, run_script
from generator import build as build_module
from generator import contract, markers, runs, worker
from generator.__main__ import main as generator_main
from generator.cache import RunCache
from generator.chapter import GeneratorError

HARNESSED = sorted(p.name for p in CODE.glob("*.py") if contract.HARNESS_OPEN in p.read_text("utf-8"))


@pytest.fixture(scope="module")
def scripts():
    return {name: load_script(name) for name in HARNESSED}


def one_line(capsys, name):
    """What main() said on stderr, which must be one line naming the script; stdout empty."""
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{name}: "), err
    return lines[0]


# -- 1. a corpus past the size bound, in every script that reads one -----------------

@pytest.mark.parametrize("name", ["deeper.py", "gru.py"])
def test_a_corpus_past_the_bound_is_refused_after_reading_only_the_bound(name, scripts,
                                                                         tmp_path, monkeypatch):
    """`deeper.py --corpus /dev/zero` read 2.9 GB in 5 s: its read_corpus is now the
    harness's read_file, gru.py's bound, shared. With the bound at 1 MB a sparse 50 MB file
    is refused in one line, and what is read stays within the bound."""
    script = scripts[name]
    monkeypatch.setattr(script, "MAX_FILE_BYTES", 1_000_000)
    big = tmp_path / "big.txt"
    with open(big, "wb") as f:
        f.truncate(50_000_000)
    tracemalloc.start()
    with pytest.raises(script.Refused, match="larger than 1,000,000 bytes"):
        script.read_corpus(big)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert peak < 5e6, peak


@pytest.mark.parametrize("name", ["deeper.py", "gru.py"])
def test_a_corpus_at_the_bound_is_read(name, scripts, tmp_path, monkeypatch):
    script = scripts[name]
    monkeypatch.setattr(script, "MAX_FILE_BYTES", 100_000)
    exact = tmp_path / "exact.txt"
    exact.write_bytes(b"ab " * (100_000 // 3) + b"a")  # 100,000 bytes: read
    assert len(script.read_corpus(exact)) >= 15_032  # ids (deeper) or text (gru)
    exact.write_bytes(exact.read_bytes() + b"b")  # one byte more: refused
    with pytest.raises(script.Refused, match="larger than 100,000 bytes"):
        script.read_corpus(exact)


@pytest.mark.parametrize("name", ["deeper.py", "gru.py"])
def test_a_corpus_that_is_not_utf8_is_refused_with_the_offset(name, scripts, tmp_path):
    path = tmp_path / "bad.txt"
    path.write_bytes(b"abcdefgh\xe9ijk")
    with pytest.raises(scripts[name].Refused, match=r"not UTF-8 text \(byte 0xe9 at offset 8\)"):
        scripts[name].read_corpus(path)


def test_deeper_refuses_dev_zero_in_one_line():
    start = time.perf_counter()
    done = run_script("deeper.py", "--tagging", "--corpus", "/dev/zero", timeout=60)
    assert time.perf_counter() - start < 30
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "deeper.py: cannot read the corpus /dev/zero: larger than 10,000,000 bytes "
        "(cut the file down)"], done.stderr


# -- 2. Ctrl-C: one line and status 130 -------------------------------------------------

@pytest.mark.parametrize("name", HARNESSED)
def test_ctrl_c_is_one_line_and_status_130(name, scripts, capsys, monkeypatch):
    script = scripts[name]

    def interrupted(args, out):
        raise KeyboardInterrupt
    monkeypatch.setattr(script, "run", interrupted)
    try:
        status = script.main([])
    except KeyboardInterrupt:  # (it would stop pytest itself)
        pytest.fail(f"{name}: Ctrl-C escaped main() as a traceback")
    assert status == 130
    assert one_line(capsys, name) == f"{name}: interrupted"


def test_a_real_sigint_while_training(tmp_path):
    """The signal a shell's Ctrl-C sends, in the middle of gru.py's training."""
    proc = subprocess.Popen([sys.executable, str(CODE / "gru.py"), "--epochs", "50"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = proc.stdout.readline()  # it has started printing: numpy is imported, it trains
    assert out
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and err.splitlines() == ["gru.py: interrupted"], err


# -- 3. one rule for a command that would run for hours ---------------------------------

def started(args, out):
    raise AssertionError("the report started: the command was not refused")


@pytest.mark.parametrize("name, argv, hours", [
    ("memory.py", "--row --cell gru --lag 1000 --steps 100000", 5.0),
    ("deeper.py", "--recall --lags 400,399,398,397,396 --steps 20000", 2.5),
    ("gru.py", "--compare --epochs 10000", 12.1)])
def test_a_command_of_hours_is_refused_with_its_estimate(name, argv, hours, scripts, capfd,
                                                          monkeypatch):
    """The probe's three commands (7.5, 7 and 12.6 hours by its measure) are refused at
    once, saying the estimate: the harness's one rule, from each script's estimate."""
    script = scripts[name]
    for flag, (help_text, _) in script.REPORTS.items():  # none may start: it would run hours
        monkeypatch.setitem(script.REPORTS, flag, (help_text, started))
    start = time.perf_counter()
    assert scripts[name].main(argv.split()) == 1  # (main sends fd 1 to /dev/null: capfd)
    assert time.perf_counter() - start < 2
    assert one_line(capfd, name) == (
        f"{name}: this command would run for about {hours:.1f} hours (an estimate; over 1 h "
        "is refused): ask for fewer steps, epochs or lags")


@pytest.mark.parametrize("name", HARNESSED)
def test_the_commands_the_site_runs_are_under_the_limit(name, scripts):
    """What the build runs (the default reports, each report alone) is not refused."""
    script = scripts[name]
    for argv in [[]] + [[f"--{flag}"] for flag in script.REPORTS
                        if flag not in getattr(script, "EXAMPLES", {})]:
        assert script.estimate_seconds(script.parse_args(argv)) < 3600 * script.LONGEST_HOURS


def test_an_estimate_grows_with_the_work(scripts):
    memory, gru = scripts["memory.py"], scripts["gru.py"]
    row = [memory.estimate_seconds(memory.parse_args(
        ["--row", "--cell", "gru", "--lag", str(lag), "--steps", "1000"])) for lag in (10, 100)]
    assert 5 < row[1] / row[0] < 12  # (lag + 5): 105 / 15 = 7
    epochs = [gru.estimate_seconds(gru.parse_args(["--compare", "--epochs", str(n)]))
              for n in (10, 20)]
    assert epochs[1] == pytest.approx(2 * epochs[0])


# -- 4. every file a command reads is part of its run's key -----------------------------

def test_a_file_a_marker_names_is_part_of_the_run_key_and_of_the_inputs(tmp_path):
    """`--corpus docs/code/alt.txt` in a marker: editing alt.txt recomputed nothing. Now
    the file's bytes are in the run's key and among the page's inputs."""
    alt = tmp_path / "alt.txt"
    alt.write_text("one text\n")
    script = SimpleNamespace(site_sha256="0" * 64)
    argv = ("--stacked", "--corpus", str(alt))
    key = runs.run_key(script, ("timemachine.txt",), argv)
    assert runs.run_key(script, ("timemachine.txt",), argv) == key
    assert runs.run_key(script, ("timemachine.txt",), ("--stacked", f"--corpus={alt}")) != key
    job = {"script": "deeper.py", "data": ["timemachine.txt"],
           "markers": [{"kind": "table", "argv": list(argv)}]}
    before = worker.inputs(job)
    assert str(alt) in before
    alt.write_text("another text\n")
    assert runs.run_key(script, ("timemachine.txt",), argv) != key
    assert worker.inputs(job)[str(alt)] != before[str(alt)]


def test_a_command_naming_no_file_keeps_its_key():
    """Flags that name no file leave the key as it was (no cache entry is lost)."""
    from importlib.metadata import version

    from generator.cache import FORMAT, digest, sha256
    script = SimpleNamespace(site_sha256="1" * 64)
    argv = ("--vanish",)
    assert runs.run_key(script, ("timemachine.txt",), argv) == digest(
        {"format": FORMAT, "blas": runs.blas_kernel(), "script": script.site_sha256,
         "data": {"timemachine.txt": sha256((CODE / "timemachine.txt").read_bytes())},
         "argv": list(argv), "python": list(sys.version_info[:2]), "numpy": version("numpy")})


# -- 5. no non-finite number reaches the site --------------------------------------------

@pytest.mark.parametrize("text", [
    "largest singular value nan: below 1", "| 1.5 ± nan |", "(+0.1000, nan, -0.2000)",
    "gradient norm inf", "loss -inf after 3 steps", "h = (NaN, 1)"])
def test_a_printed_non_finite_number_stops_the_build(text):
    with pytest.raises(GeneratorError, match="finite numbers only"):
        worker.check_printed("rnn.py", "python3 rnn.py --vanish", f"a first line\n{text}\n")


def test_words_that_contain_nan_or_inf_are_not_numbers():
    worker.check_printed("rnn.py", "python3 rnn.py", "information: infinite, nano, "
                         "inference, financial, Nancy, 1e-5, x.inf\n")


@pytest.mark.parametrize("value", [math.nan, math.inf, [0.5, math.nan], {"a": [1.0, -math.inf]}])
def test_a_quoted_non_finite_value_stops_the_build(value):
    with pytest.raises(GeneratorError, match="finite numbers only"):
        worker.check_finite(value, "docs/ch12-rnn.md:3: radius")


def test_a_value_marker_of_nan_stops_the_build():
    run = runs.Run("python3 rnn.py --vanish", "", {},
                   runs.Record({"vanish": {"radius": math.nan}}, "`x`"), 0.0)
    marker = {"kind": "value", "name": "radius", "fmt": ".2f"}
    with pytest.raises(GeneratorError, match="radius of `python3 rnn.py --vanish` is nan"):
        worker.run_fragment(marker, run, "docs/ch12-rnn.md:3")


@pytest.mark.parametrize("text", [
    "the factor is nan per step", "<span>1.5 ± inf</span>", "<text x='3'>-inf</text>",
    '<figure><img alt="accuracy nan at lag 5"></figure>'])
def test_a_producer_that_shows_a_non_finite_number_stops_the_build(text):
    producer = SimpleNamespace(kind="block", name="summary", func=lambda ctx: text)
    chapter = SimpleNamespace(module="ch12_rnn", producers={"summary": producer})
    with pytest.raises(GeneratorError, match="block summary shows .*finite numbers only"):
        worker.producer_fragment({"kind": "block", "name": "summary"}, chapter,
                                 SimpleNamespace(producer=None), "docs/ch12-rnn.md:9")


def test_a_producer_s_words_and_markup_are_not_numbers():
    worker.check_drawn(SimpleNamespace(module="ch12_rnn"), SimpleNamespace(kind="block",
                       name="summary"), '<p class="info">information, \\infty, nano</p>')


@pytest.mark.parametrize("plot", ["line", "bar", "scatter", "heat map"])
def test_a_figure_that_plots_a_non_finite_number_stops_the_build(plot, tmp_path):
    from generator.context import Context

    def draw(ax, colors):
        values = [0.5, math.nan, 0.7]
        {"line": lambda: ax.plot([1, 2, 3], values, label="GRU"),
         "bar": lambda: ax.bar([1, 2, 3], values),
         "scatter": lambda: ax.scatter([1, 2, 3], values),
         "heat map": lambda: ax.imshow([values, values])}[plot]()

    ctx = Context(SimpleNamespace(page="ch12-rnn.md", module="ch12_rnn"), None, {})
    ctx.producer = "decay"
    with pytest.raises(GeneratorError, match="figure decay plots a number that is not finite"):
        ctx.figure(draw, alt="a plot")
    ctx.figure(lambda ax, colors: ax.plot([1, 2, 3], [0.5, 0.6, 0.7]), alt="a plot")


# -- 6. a directory where a run-cache entry should be ------------------------------------

def test_a_directory_in_place_of_a_cache_entry_is_removed_and_recomputed(tmp_path):
    cache = RunCache(tmp_path)
    entry = tmp_path / "runs" / "rnn" / "k.json"
    (entry / "inside").mkdir(parents=True)
    assert cache.load("rnn.py", "k") is None and not entry.exists()
    (entry / "inside").mkdir(parents=True)
    cache.store("rnn.py", "k", {"text": "1"})
    assert cache.load("rnn.py", "k") == {"text": "1"}


# -- 7. a failed deploy says what git said ------------------------------------------------

def test_a_push_to_a_missing_remote_says_what_git_said(tmp_path):
    subprocess.run(["git", "init", "-q", "-b", "gh-pages"], cwd=tmp_path, check=True)
    push = subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@b", "commit", "-q",
                           "--allow-empty", "-m", "x"], cwd=tmp_path, check=True)
    push = subprocess.run(["git", "push", "origin", "gh-pages", "--force"], cwd=tmp_path,
                          capture_output=True, text=True)
    assert push.returncode != 0
    assert build_module.git_said(push.stdout + push.stderr) == (
        "fatal: 'origin' does not appear to be a git repository; "
        "fatal: Could not read from remote repository.")


def test_a_rejected_push_is_said_by_its_rejected_line():
    said = (" To /tmp/origin.git\n ! [remote rejected] gh-pages -> gh-pages (pre-receive "
            "hook declined)\nerror: failed to push some refs to '/tmp/origin.git'\n")
    assert build_module.git_said(said) == \
        "! [remote rejected] gh-pages -> gh-pages (pre-receive hook declined)"


# -- 8. the build's output cannot be written ----------------------------------------------

def test_a_build_whose_output_cannot_be_written_says_so_in_one_line(tmp_path, monkeypatch,
                                                                     capsys):
    """`python -m generator build > /dev/full`: the site was built; one line on stderr
    says the output could not be written, and the status is the build's, 0."""
    import generator.build

    monkeypatch.setattr(generator.build, "build", lambda site, deploy=False: None)
    full = open("/dev/full", "w", buffering=1)  # as a shell gives it: each line written
    monkeypatch.setattr(sys, "stdout", full)
    saved = os.dup(full.fileno())
    try:
        status = generator_main(["build", "--site-dir", str(tmp_path / "site")])
    finally:
        os.dup2(saved, full.fileno())
        os.close(saved)
    err = capsys.readouterr().err
    assert status == 0
    assert err.splitlines() == ["generator: the site is built, but standard output could not "
                                "be written (No space left on device)"], err


# -- 9. an unclosed marker ------------------------------------------------------------------

def test_an_unclosed_marker_is_named_with_its_line():
    text = (ROOT / "docs" / "ch12-rnn.md").read_text("utf-8")
    marker = "<!-- gen value factor_05:sci from rnn.py --vanish -->"
    line = text[:text.index(marker)].count("\n") + 1
    broken = text.replace(marker, marker.replace("-->", "->"), 1)
    with pytest.raises(GeneratorError) as exc:
        markers.parse("ch12-rnn.md", broken)
    message = str(exc.value)
    assert message.startswith(f"docs/ch12-rnn.md:{line}: malformed marker '<!-- gen value "
                              "factor_05:sci from rnn.py --vanish ->") and "not closed" in message
    assert "\n" not in message and "makes a block" not in message


@pytest.mark.parametrize("tail, into", [("\n", "the end of the page"),
                                        ("\n\nMore prose. -->\n", "the blank line after line 1")])
def test_an_unclosed_marker_says_what_it_runs_into(tail, into):
    with pytest.raises(GeneratorError, match=f"docs/p.md:1: malformed marker .*: it is not "
                                             f"closed, no '-->' before {into}"):
        markers.parse("p.md", "A value <!-- gen value a:.2f from rnn.py --vanish" + tail)


def test_a_marker_over_two_lines_is_still_one_marker():
    found = markers.parse("p.md", "A value <!-- gen value a:.2f\n from rnn.py --vanish --> here.\n")
    assert [(m.kind, m.name, m.argv) for m in found] == [("value", "a", ("--vanish",))]


# -- 12. minus zero -------------------------------------------------------------------------

@pytest.mark.parametrize("name", HARNESSED)
def test_minus_zero_is_zero(name, scripts):
    check = scripts[name].number(float, 0, 10)
    assert math.copysign(1, check("-0")) == 1 and math.copysign(1, check("-0.0")) == 1


def test_rnn_measure_at_input_scale_minus_zero_runs(scripts, capsys):
    rnn = scripts["rnn.py"]
    args = rnn.parse_args(["--measure", "--input-scale", "-0"])
    rnn.make_measure_rnn(1.0, args.input_scale)  # numpy refused a scale of -0.0: ValueError


# -- 13. backup files are not published -----------------------------------------------------

BACKUPS = ("ch12-rnn.md.orig", "code/rnn.py.rej", "ch12-rnn.md.bak", "index.md.save",
           "code/rnn.py.tmp", "ch12-rnn.md___jb_tmp___", "ch12-rnn.md___jb_old___",
           "img/Thumbs.db", "~$notes.docx", ".ch12-rnn.md.swn", "ch12-rnn.md.swn",
           "ch12-rnn.md.swp", "ch12-rnn.md~", "#ch12-rnn.md#", "4913", "desktop.ini",
           "code/rnn.py.autosave")


def test_backup_files_are_excluded_and_the_site_s_files_are_not(tmp_path):
    """MkDocs' own file walk, with mkdocs.yml's exclude_docs, over a docs folder holding
    every kind of leftover the probe published beside the files the site serves."""
    from mkdocs.config import load_config
    from mkdocs.structure.files import InclusionLevel, get_files

    kept = ("index.md", "ch12-rnn.md", "code/rnn.py", "code/timemachine.txt", "img/a.png")
    for rel in BACKUPS + kept:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x\n", "utf-8")
    config = load_config(config_file=str(ROOT / "mkdocs.yml"), docs_dir=str(tmp_path))
    files = {f.src_uri: f.inclusion for f in get_files(config)}
    published = {uri for uri, inclusion in files.items()
                 if inclusion not in (InclusionLevel.EXCLUDED,)}
    assert sorted(published) == sorted(kept)


# -- minor: a NUL byte in a URL under `make serve` -------------------------------------------

def test_a_nul_byte_in_a_served_url_is_a_404_not_a_500(tmp_path, caplog):
    """`/%00` reached open() in MkDocs' dev server: a 500 and a traceback in the log."""
    from mkdocs.livereload import LiveReloadServer

    from generator import hook

    (tmp_path / "index.html").write_text("<p>home</p>")
    server = LiveReloadServer(builder=lambda: None, host="127.0.0.1", port=0, root=str(tmp_path))
    try:
        hook.on_serve(server, None, None)
        said = []
        for path in ("/%00", "/index.html%00.png", "/"):
            environ = {"PATH_INFO": path.replace("%00", "\0"), "REQUEST_METHOD": "GET"}
            body = server.serve_request(environ, lambda status, headers: said.append(status))
            b"".join(body)
        assert said == ["404 Not Found", "404 Not Found", "200 OK"], said
        assert "Traceback" not in caplog.text and "500" not in caplog.text
    finally:
        server.server_close()


# -- minor: a killed build's temporary folders ------------------------------------------------

def test_a_killed_build_s_temporary_folders_go_at_the_next_build(tmp_path):
    """After SIGKILL, page-cache .tmp-* folders stayed for an hour: now those of a build
    that is gone go at once; a running build's (this process's) stay."""
    from generator.cache import PageCache

    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()  # a pid that no process has now
    cache = PageCache(tmp_path)
    folder = tmp_path / "pages" / "rnn"
    killed = folder / f".tmp-{gone.pid}-abc"
    running = folder / f".tmp-{os.getpid()}-def"
    for leftover in (killed, running):
        (leftover / "files").mkdir(parents=True)
    fresh = cache.new_folder("rnn")
    assert fresh.name.startswith(f".tmp-{os.getpid()}-")
    assert not killed.exists() and running.exists() and fresh.exists()


# -- 11. a 1 MB paste into chapter 14's prompt ------------------------------------------------

@pytest.mark.browser
def test_a_huge_paste_into_the_prompt_is_cut_before_any_work(tmp_path, browser):
    """The widget alone, on a page of its own (docs/assets, a stand-in for its data): a
    1 MB paste blocked the page for 599 + 390 ms. The browser now keeps one character past
    the limit, so the prompt never holds the megabyte, and the message says "too long"."""
    from helpers import DOCS, StaticServer

    (tmp_path / "assets").symlink_to(DOCS / "assets")
    data = {"title": "t", "caption": "c", "model": {"url": "missing.json", "bytes": 1},
            "prefix": "it has", "max_length": 200,
            "temperature": {"values": [0.5, 1.0], "index": 0},
            "length": {"values": [20, 40], "index": 0}, "seed": 0, "top": 5,
            "vocab": [" ", "<unk>", *"abcdefghijklmnopqrstuvwxyz"],
            "greedy": "it has" + " the time" * 2 + "xx", "chapter": "the chapter's GRU"}
    (tmp_path / "data.json").write_text(json.dumps(data))
    (tmp_path / "index.html").write_text(
        '<!doctype html><div class="rw-widget" data-widget="textgen" data-src="data.json">'
        '</div><script src="assets/widgets.js"></script>')
    server = StaticServer(tmp_path).start()
    page = browser.new_page()
    try:
        page.goto(server.url)
        page.wait_for_selector('.rw-widget[data-state="ready"] input[data-input="prompt"]')
        prompt = page.locator('input[data-input="prompt"]')
        prompt.select_text()
        page.keyboard.insert_text("x" * 1_000_000)  # as a paste arrives: one insertion
        length = prompt.evaluate("(p) => p.value.length")
        message = page.locator(".rw-error").first.inner_text()
    finally:
        page.close()
        server.stop()
    assert length == 201, length
    assert message.startswith("prompt: too long: at most 200 characters"), message
