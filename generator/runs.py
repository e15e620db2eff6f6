"""Running a served script's command inside the generator, as a reader would.

``load_script("rnn.py")`` imports docs/code/rnn.py from its path (so the site
computes with exactly the bytes it serves) and checks the conventions every
script follows: a docstring whose first line is the summary, ``REPORTS``,
``DEFAULT``, ``Printer``, ``parse_args`` and ``run``.

``run_command(...)`` gives what ``python3 rnn.py --vanish`` prints (its text,
and each table by name) and what its reports return (their records), by
calling the same ``run(parse_args(argv), Printer(...))`` that the script's
``main`` calls. Results come from the run cache when the script, its data and
the flags are unchanged. This runs only in a worker process (worker.py), so a
script is imported afresh every time something it shows is recomputed.
"""

import contextlib
import dataclasses
import importlib.util
import io
import json
import platform
import re
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from .cache import FORMAT, digest, sha256
from .chapter import CODE, ROOT, GeneratorError, log
from .tables import command

REQUIRED = ("REPORTS", "DEFAULT", "OPTIONS", "estimate_seconds", "add_options", "Printer",
            "parse_args", "run", "main")
HARNESS = Path(__file__).with_name("harness.py")  # the canonical copy of the harness
HARNESS_OPEN = "# The harness: the same in every script of the site, checked when it is built."
HARNESS_END = "# ------------------------------------------------------------- end of the harness"


def harness_lines(text):
    """The harness block of a file's text, from its opening rule to its end rule, as
    (first line number, [lines]); None if the file has no opening line."""
    lines = text.split("\n")
    if HARNESS_OPEN not in lines:
        return None
    first = lines.index(HARNESS_OPEN) - 1  # the rule above it
    last = lines.index(HARNESS_END, first) if HARNESS_END in lines[first:] else len(lines) - 1
    return first + 1, lines[first:last + 1]


def check_harness(name, text):
    """GeneratorError at the first line where docs/code/<name>'s harness differs from
    generator/harness.py's (the block is the same, byte for byte, in every script)."""
    canonical_start, canonical = harness_lines(HARNESS.read_text("utf-8"))
    found = harness_lines(text)
    where = f"docs/code/{name}"
    if found is None:
        raise GeneratorError(f"{where}: has no harness: copy the block of generator/harness.py "
                             "to the end of the script, before its __main__ guard "
                             "(docs/building.md)")
    start, lines = found
    for n, want in enumerate(canonical):
        line = lines[n] if n < len(lines) else None
        if line != want:
            shown = "the end of the file" if line is None else repr(line)
            raise GeneratorError(f"{where}:{start + n}: the harness differs from "
                                 f"generator/harness.py:{canonical_start + n}: {shown}, "
                                 f"expected {want!r} (the block is the same in every script)")


class Record:
    """A script's record as the generator sees it: attribute access by field name,
    nested records and lists of records included (`vanish.example[1].survives`)."""

    def __init__(self, value, path):
        self._value, self._path = value, path

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        if isinstance(self._value, dict) and name not in self._value:
            name = self._keys_as_names().get(name, name)
        if not isinstance(self._value, dict) or name not in self._value:
            fields = ", ".join(self._value) if isinstance(self._value, dict) else "none"
            raise GeneratorError(f"{self._path} has no field {name!r} (it has: {fields})")
        return wrap(self._value[name], f"{self._path}.{name}")

    def _keys_as_names(self):
        """A dict keyed by labels ('LSTM b_f=2') is reached by the label with every run of
        other characters than letters, digits and _ written as one _: LSTM_b_f_2."""
        return {re.sub(r"\W+", "_", key): key for key in self._value if isinstance(key, str)}

    def __getitem__(self, key):
        try:
            return wrap(self._value[key], f"{self._path}[{key!r}]")
        except (KeyError, IndexError, TypeError):
            raise GeneratorError(f"{self._path} has no item {key!r}") from None

    def __len__(self):
        return len(self._value)

    def __iter__(self):
        for n, item in enumerate(self._value):
            yield wrap(item, f"{self._path}[{n}]")

    def fields(self):
        return list(self._value) if isinstance(self._value, dict) else []

    def plain(self):
        return self._value


def wrap(value, path):
    return Record(value, path) if isinstance(value, (dict, list)) else value


@dataclass
class Run:
    command: str  # python3 rnn.py --vanish
    text: str  # everything it printed
    tables: dict  # {table name: the table as printed}
    records: Record  # {report flag: its record}
    seconds: float  # how long it took when it was computed (not the cache's read)


def load_script(name):
    """docs/code/<name> as a module, checked against the scripts' conventions."""
    path = CODE / name
    where = f"docs/code/{name}"
    if not path.is_file():
        raise GeneratorError(f"{where}: script not found")
    source = path.read_bytes()  # read once: what is hashed is what runs
    spec = importlib.util.spec_from_file_location(f"site_script_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    module.site_sha256 = sha256(source)
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, str(path), "exec"), module.__dict__)
    except SystemExit as exc:
        raise GeneratorError(f"{where}: calls sys.exit({exc.code!r}) when imported; keep it "
                             "behind `if __name__ == \"__main__\":`") from None
    except Exception as exc:  # a script that fails to import is a build failure
        raise GeneratorError(f"{where}: failed to import: {describe(exc)}") from None
    doc = (module.__doc__ or "").strip()
    if not doc.startswith(f"{name}: "):
        raise GeneratorError(f"{where}: has no docstring starting '{name}: ' (its first line, "
                             f"'{name}: what it works through.', is the code page's summary)")
    missing = [attr for attr in REQUIRED if not hasattr(module, attr)]
    if missing:
        raise GeneratorError(f"{where}: defines no {', '.join(missing)} (every served script "
                             "has REPORTS, DEFAULT, OPTIONS, estimate_seconds and add_options, "
                             "and the harness; "
                             "see docs/building.md)")
    return module


def summary(module, name):
    """The first line of the docstring without 'name.py: ', capitalised, no final stop."""
    first = module.__doc__.strip().splitlines()[0][len(name) + 2:].strip().rstrip(".")
    return first[:1].upper() + first[1:]


def describe(exc, generator_too=False):
    """An exception in one line, with the deepest place in a served script or a chapter
    module where it happened (generator_too: or anywhere in generator/, for its own bugs)."""
    ours = (str(CODE), str(ROOT / "generator" / ("" if generator_too else "chapters")))
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename.startswith(ours)]
    where = ""
    if frames:
        f = frames[-1]
        where = f" (at {Path(f.filename).relative_to(ROOT).as_posix()}:{f.lineno}, in {f.name})"
    return f"{type(exc).__name__}: {exc}{where}"


def blas_kernel():
    """The OpenBLAS kernel every run uses: on x86, Haswell's, as the scripts set it when
    run (OpenBLAS would pick its AVX-512 kernels where the CPU has them, whose float32 sums
    differ in the last bits, and a chaotic training ends elsewhere); elsewhere OpenBLAS's
    own choice. The worker sets it before numpy loads; runs and pages are keyed by it."""
    return "Haswell" if platform.machine() in ("x86_64", "AMD64") else ""


def run_key(module, data, argv):
    """What a command's result depends on: the script (as loaded), its data, the flags, the
    files they name, Python, numpy."""
    from importlib.metadata import version

    key = {"format": FORMAT, "blas": blas_kernel(), "script": module.site_sha256,
           "data": {d: sha256((CODE / d).read_bytes()) for d in data},
           "argv": list(argv), "python": list(sys.version_info[:2]), "numpy": version("numpy")}
    named = files_named(argv)
    if named:  # (absent when none: the keys of every other run stay as they were)
        key["files"] = {f: sha256((ROOT / f).read_bytes()) for f in named}
    return digest(key)


def files_named(argv):
    """The files a command's flags name (`--corpus docs/code/alt.txt`, `--corpus=alt.txt`;
    relative to the repository, where the build runs): what it reads besides the script and
    its data, so part of its run's key and of its page's inputs."""
    words = {part for arg in argv for part in (arg, arg.partition("=")[2]) if part}
    return sorted(w for w in words if (ROOT / w).is_file())


def run_command(module, name, argv, data, cache):
    """The Run of `python3 <name> <argv>`, from the cache or computed here and stored."""
    cmd = command(name, argv)
    key = run_key(module, data, argv)
    value = cache.load(name, key)
    if value is None:
        value = _compute(module, name, argv, cmd)
        cache.store(name, key, value)
    return Run(cmd, value["text"], value["tables"], Record(value["records"], f"`{cmd}`"),
               value["seconds"])


def _compute(module, name, argv, cmd):
    where = f"docs/code/{name}"
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = module.parse_args(list(argv))
    except SystemExit:
        message = err.getvalue().strip().splitlines()[-1] if err.getvalue().strip() else ""
        raise GeneratorError(f"`{cmd}` is not a command {name} accepts: {message} "
                             f"(its reports: {', '.join('--' + f for f in module.REPORTS)})") \
            from None
    buf = io.StringIO()
    printer = module.Printer(buf)
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(buf):
            records = module.run(args, printer)
    except SystemExit as exc:
        raise GeneratorError(f"{where}: `{cmd}` called sys.exit({exc.code!r}); a report "
                             "returns its record and lets main() decide the exit status") from None
    except GeneratorError:
        raise
    except Exception as exc:
        raise GeneratorError(f"{where}: `{cmd}` failed: {describe(exc)}") from None
    seconds = time.perf_counter() - started
    if seconds >= 1:
        log(f"generator: ran `{cmd}` in {seconds:.1f} s")
    try:
        plain = {flag: dataclasses.asdict(rec) for flag, rec in records.items()}
        json.dumps(plain, allow_nan=True)
    except (TypeError, ValueError, AttributeError) as exc:
        raise GeneratorError(f"{where}: `{cmd}` returned records that are not dataclasses of "
                             f"plain values ({exc})") from None
    # as the run cache gives them back (JSON, keys sorted), so that a fresh run and a
    # cached one are alike to the order of their keys: what is written from them is too
    value = {"text": buf.getvalue(), "tables": dict(printer.tables), "records": plain,
             "seconds": seconds}
    return json.loads(json.dumps(value, sort_keys=True))
