"""One chapter's generated content, computed in a fresh process.

    python -m generator.worker JOB.json OUT/

The MkDocs hook (pipeline.py) starts a worker for each script whose generated
content is not in the page cache. A fresh process imports the script, the
chapter module and the helpers as they are on disk now, so nothing it shows
can be stale. The worker runs the commands the pages name (from the run cache
when nothing they depend on changed), renders every marker of every page that
shows this script, the figures of its chapter, its code page and its
notebook, writes the files into OUT/files/ and a result into OUT/result.json:
the fragments, the files' hashes, and the hash of every file it read, which
is what the page cache checks before reusing the result.
"""

import os
import signal
import threading

from .runs import blas_kernel  # noqa: E402 (imports no numpy)

# One BLAS thread, as a reader's `python3 gru.py` uses: at these matrix sizes threads
# only cost time, and float32 sums differ in the last bits with the thread count. For the
# same reason one BLAS kernel on every x86 CPU, as the scripts choose (runs.blas_kernel).
# Both must be set before numpy loads.
for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
if blas_kernel():
    os.environ["OPENBLAS_CORETYPE"] = blas_kernel()

import json  # noqa: E402
import math  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

from . import chapter as registry  # noqa: E402
from . import codepage, contract, runs  # noqa: E402
from .cache import RunCache, sha256  # noqa: E402
from .chapter import CODE, GENERATOR, ROOT, GeneratorError, describe  # noqa: E402
from .context import Context, served_file  # noqa: E402
from .tables import command, command_table, console_block, format_value  # noqa: E402


RUN_KINDS = ("table", "value", "output")  # markers that show a command's output


def compute(job, out, doing=lambda what: None):
    """Every fragment and file the job asks for: ({marker key: markdown}, {path: sha256},
    {file a producer quoted: its sha256 as read}). doing(what) says what it does now."""
    name = job["script"]
    script = contract.load_script(name)
    cache = RunCache()  # $RNN_EXPLAINER_CACHE, inherited from the build
    chapter = registry.load(job["chapter"]) if job["chapter"] else None
    data = tuple(job["data"])
    memo = {}

    def get_run(argv):
        if argv not in memo:
            doing(f"running `{command(name, argv)}`")
            run = runs.run_command(script, name, argv, data, cache)
            for table, text in run.tables.items():
                check_numbers(name, run.command, table, text)
            check_printed(name, run.command, run.text)  # outputs, code page, notebook
            memo[argv] = run
        return memo[argv]

    files = {}
    ctx = Context(chapter, get_run, files) if chapter else None
    fragments = {}
    run_markers_first = sorted(job["markers"], key=lambda m: m["kind"] not in RUN_KINDS)
    for m in run_markers_first:
        where = f"docs/{m['page']}:{m['line']}"
        if m["kind"] in RUN_KINDS:
            try:
                run = get_run(tuple(m["argv"]))
            except GeneratorError as exc:
                raise GeneratorError(f"{where}: {exc}") from None
            fragments[m["key"]] = run_fragment(m, run, where)
        elif m["kind"] == "code":
            fragments[m["key"]] = codepage.code_quote(chapter, m["name"], m["page"], where)
        else:
            doing(f"drawing {m['kind']} {m['name']} (generator/chapters/{chapter.module}.py)")
            fragments[m["key"]] = producer_fragment(m, chapter, ctx, where)
    if chapter:
        anchored = sorted({m["name"] for m in job["markers"] if m["kind"] == "code"})
        code_page(job, chapter, script, get_run, files, anchored)
    quoted = ctx.quoted if ctx else {}
    for rel, data_bytes in files.items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data_bytes)
    return fragments, {rel: sha256(b) for rel, b in files.items()}, quoted


def run_fragment(m, run, where):
    if m["kind"] == "table":
        if m["name"] not in run.tables:
            raise GeneratorError(f"{where}: `{run.command}` prints no table {m['name']!r} "
                                 f"(it prints: {', '.join(run.tables) or 'none'})")
        return command_table(run.command, run.tables[m["name"]])
    if m["kind"] == "output":
        return console_block(run.text, prompt=run.command)
    value = lookup(run, m["name"], where)
    check_finite(value.plain() if isinstance(value, runs.Record) else value,
                 f"{where}: {m['name']} of `{run.command}`")
    return format_value(value.plain() if isinstance(value, runs.Record) else value, m["fmt"],
                        f"{where}: {m['name']}")


def _number(cell):
    """The number a table cell shows (1,234.5; -0.25; 12%; nan), or None for text."""
    text = cell.replace(",", "").replace("\u2212", "-").removesuffix("%").strip()
    try:
        return float(text)
    except ValueError:
        return None


def check_numbers(name, cmd, table, text):
    """GeneratorError at the first cell of a printed table that is not a finite number
    (nan, inf) in a column that holds numbers: a column with a finite number in it, or
    one whose every cell is a number. Text columns ("4 x 4", a verdict) are left alone."""
    rows = [[c.strip() for c in line.strip().strip("|").split("|")]
            for line in text.split("\n") if line.startswith("|")]
    header, body = rows[0], rows[2:]  # rows[1] is the alignment rule
    for j, title in enumerate(header):
        cells = [(n, row[j]) for n, row in enumerate(body, 1) if j < len(row) and row[j]]
        values = [(n, cell, _number(cell)) for n, cell in cells]
        numbers = [v for _, _, v in values if v is not None]
        if not (any(math.isfinite(v) for v in numbers) or len(numbers) == len(values)):
            continue
        for n, cell, value in values:
            if value is not None and not math.isfinite(value):
                row = f"row {n}" + (f" ({header[0]} {body[n - 1][0]})" if j else "")
                raise GeneratorError(
                    f"docs/code/{name}: `{cmd}` prints table {table!r} with {cell!r} in column "
                    f"{title!r}, {row}: a table on the site shows finite numbers only")


NON_FINITE = re.compile(r"(?<![\w.])[-+]?(?:nan|inf(?:inity)?)(?!\w)", re.I)  # nan, -inf


def check_printed(name, cmd, text):
    """GeneratorError at the first non-finite number a command prints (a vector's cell,
    "1.5 ± nan", a line of prose): the site shows its whole output, on the page, the code
    page and in the notebook, and shows finite numbers only."""
    m = NON_FINITE.search(text)
    if m:
        line = text.count("\n", 0, m.start()) + 1
        shown = text.split("\n")[line - 1].strip()
        raise GeneratorError(f"docs/code/{name}: `{cmd}` prints {m.group(0)!r} on line {line} of "
                             f"its output ({shown!r}): the site shows finite numbers only")


def check_finite(value, where):
    """GeneratorError if a value a page quotes is, or holds, a number that is not finite."""
    items = value.values() if isinstance(value, dict) else \
        value if isinstance(value, list) else [value]
    for item in items:
        if isinstance(item, (dict, list)):
            check_finite(item, where)
        elif isinstance(item, float) and not math.isfinite(item):
            raise GeneratorError(f"{where} is {value!r}: the site shows finite numbers only")


def lookup(run, dotted, where):
    """A value of a run's records by its dotted name. With one report the names are that
    report's fields; with several, the first part names the report."""
    flags = run.records.fields()
    if len(flags) == 1:
        value = runs.Record(run.records.plain()[flags[0]], f"`{run.command}`")
    else:
        value = run.records
    for part in dotted.split("."):
        if not isinstance(value, runs.Record):
            raise GeneratorError(f"{where}: {dotted}: {part!r} is past the end of a value")
        try:
            value = value[int(part)] if part.isdigit() else getattr(value, part)
        except GeneratorError as exc:
            raise GeneratorError(f"{where}: {exc}") from None
    return value


def producer_fragment(m, chapter, ctx, where):
    producer = chapter.producers[m["name"]]
    ctx.producer = producer.name
    try:
        text = producer.func(ctx)
    except GeneratorError:
        raise  # it names its place already
    except ImportError as exc:
        raise GeneratorError(f"generator/chapters/{chapter.module}.py: {producer.name} needs the "
                             f"Python package {exc.name or exc}, which is not installed: make "
                             "build installs the pinned requirements into .venv") from None
    except Exception as exc:
        raise GeneratorError(f"generator/chapters/{chapter.module}.py: {producer.kind} "
                             f"{producer.name} failed: {describe(exc)}") from None
    if not isinstance(text, str) or not text.strip():
        raise GeneratorError(f"generator/chapters/{chapter.module}.py: {producer.name} "
                             "returned no text")
    if m["kind"] == "inline" and "\n" in text:
        raise GeneratorError(f"generator/chapters/{chapter.module}.py: {producer.name} is "
                             "inline but returned several lines")
    check_drawn(chapter, producer, text)
    return text


def check_drawn(chapter, producer, text):
    """GeneratorError at the first non-finite number in what a chapter module's producer
    put on the page: a block's or an inline's text, a diagram's labels, a figure's alt
    text and caption, a widget's data (NaN and Infinity in its JSON)."""
    shown = " ".join([re.sub(r"<[^>]*>", " ", text),  # the words and numbers, not the
                      *re.findall(r'\b(?:alt|title|aria-label)="([^"]*)"', text)])  # markup
    m = NON_FINITE.search(shown)
    if m:
        near = " ".join(shown[max(0, m.start() - 40):m.end() + 40].split())
        raise GeneratorError(f"generator/chapters/{chapter.module}.py: {producer.kind} "
                             f"{producer.name} shows {m.group(0)!r} ({near!r}): the site "
                             "shows finite numbers only")


def code_page(job, chapter, script, get_run, files, anchored=()):
    """The script's code page and notebook, from the same runs the chapter shows, and
    the records it serves as files, with what their usage prints; anchored: the
    definitions the pages quote (code markers), each with an anchor on the code page."""
    name = chapter.script
    listed = [(command(name, argv), description, get_run(argv))
              for argv, description in contract.report_commands(script, name)]
    summary = contract.summary(script, name)
    served = [(s, len(data), run_usage(chapter, s, data))
              for s in chapter.served for data in [served_file(s, get_run, files)]]
    files[chapter.code_page] = codepage.page(chapter, job["title"], summary, listed,
                                             job["colab"], contract.default_sentence(script),
                                             served, anchored).encode("utf-8")
    files[chapter.notebook] = codepage.notebook(chapter, summary, listed, job["page_url"],
                                                job["colab"])


def run_usage(chapter, served, data):
    """What served.usage prints, run as a reader runs it: a fresh Python process in an
    empty folder holding the script, its data and the served file. A failure stops the
    build, naming the file and the error's last line."""
    with tempfile.TemporaryDirectory() as tmp:
        for name in (chapter.script, *chapter.data):
            shutil.copyfile(CODE / name, Path(tmp) / name)
        (Path(tmp) / served.name).write_bytes(data)
        try:
            proc = subprocess.run([sys.executable, "-c", served.usage], cwd=tmp, timeout=120,
                                  capture_output=True, text=True,
                                  env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
        except subprocess.TimeoutExpired:
            proc = None
    if proc is None or proc.returncode != 0:
        why = "it ran for over 120 s" if proc is None else \
            ((proc.stderr.strip().splitlines() or [f"status {proc.returncode}"])[-1])
        raise GeneratorError(f"generator/chapters/{chapter.module}.py: the usage of "
                             f"code/{served.name} failed: {why}")
    return proc.stdout


def named_by(job):
    """The files the markers' commands name in their flags (`--corpus docs/code/alt.txt`)."""
    return runs.files_named([a for m in job["markers"] if m["kind"] in RUN_KINDS
                             for a in m["argv"]])


def inputs(job):
    """The hashes of the files a job starts from: requirements, script, data, and every
    generator module as it is before any is imported (one edited while the worker runs
    would otherwise be recorded with its new hash beside output from its old code)."""
    files = ["requirements.txt", f"docs/code/{job['script']}", *named_by(job)]
    files += [f"docs/code/{d}" for d in job["data"]]
    files += sorted(p.relative_to(ROOT).as_posix() for p in GENERATOR.rglob("*.py"))
    return {rel: sha256((ROOT / rel).read_bytes()) for rel in files}


def dependencies(job, started_with, quoted):
    """Every file this process read that decides its output, with its hash; an error if a
    file it started from or quoted changed meanwhile (the result would mix two versions)."""
    started_with = {**started_with, **quoted}
    deps = {"requirements.txt": (ROOT / "requirements.txt")}
    for rel in quoted:
        deps[rel] = ROOT / rel
    deps[f"docs/code/{job['script']}"] = ROOT / "docs" / "code" / job["script"]
    for d in job["data"]:
        deps[f"docs/code/{d}"] = ROOT / "docs" / "code" / d
    for rel in named_by(job):
        deps[rel] = ROOT / rel
    for module in list(sys.modules.values()):
        path = getattr(module, "__file__", None)
        if path and Path(path).resolve().is_relative_to(GENERATOR):
            deps[Path(path).resolve().relative_to(ROOT).as_posix()] = Path(path)
    hashes = {rel: sha256(path.read_bytes()) for rel, path in sorted(deps.items())}
    changed = [rel for rel, sha in started_with.items() if rel in hashes and hashes[rel] != sha]
    if changed:
        raise GeneratorError(f"{', '.join(changed)} changed while its pages were computed: "
                             "build again")
    return hashes


def watch_the_build(fd):
    """Stop this process as soon as the build that started it is gone: the build alone
    holds the pipe's write end, so reading gives end-of-file when it ends (SIGKILL too)."""
    def watch():
        while os.read(fd, 1):
            pass
        os._exit(143)
    threading.Thread(target=watch, daemon=True).start()


def main(argv=None):
    job_path, out, watched = (list(argv or sys.argv[1:]) + [None])[:3]
    if watched is not None:
        watch_the_build(int(watched))
    out = Path(out)
    job = json.loads(Path(job_path).read_text("utf-8"))
    started = time.perf_counter()
    try:
        # The build starts a worker with Ctrl-C and SIGTERM held back (so that none is left
        # running unseen); from here they stop the worker, and one sent meanwhile lands now.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
        started_with = inputs(job)
        fragments, files, quoted = compute(
            job, out / "files", lambda what: (out / "doing").write_text(what, "utf-8"))
        result = {"fragments": fragments, "files": files,
                  "deps": dependencies(job, started_with, quoted),
                  "seconds": round(time.perf_counter() - started, 3)}
        status = 0
    except GeneratorError as exc:
        result, status = {"error": str(exc)}, 1
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the build says so
        return 130
    except Exception as exc:  # a bug in the generator itself: one line, with where
        result = {"error": f"the worker for docs/code/{job['script']} failed in the generator "
                           f"itself: {describe(exc, generator_too=True)}"}
        status = 1
    (out / "result.json").write_text(json.dumps(result), "utf-8")
    return status


if __name__ == "__main__":
    sys.exit(main())
