"""Running a served script's command inside the generator, as a reader would.

``run_command(...)`` gives what ``python3 rnn.py --vanish`` prints (its text,
and each table by name) and what its reports return (their records), through
contract.call, the same ``run(parse_args(argv), Printer(...))`` that the script's
``main`` calls (contract.py says what a script provides). Results come from the run
cache when the script, its data, the flags and the files they name are unchanged
(``run_key``). This runs only in a worker process (worker.py), so a script is imported
afresh every time something it shows is recomputed.
"""

import io
import json
import platform
import re
import sys
import time
from dataclasses import dataclass

from . import contract
from .cache import FORMAT, digest, sha256
from .chapter import CODE, ROOT, GeneratorError, log
from .tables import command


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
    buf = io.StringIO()
    started = time.perf_counter()
    plain, tables = contract.call(module, name, argv, buf)
    seconds = time.perf_counter() - started
    if seconds >= 1:
        log(f"generator: ran `{cmd}` in {seconds:.1f} s")
    # as the run cache gives them back (JSON, keys sorted), so that a fresh run and a
    # cached one are alike to the order of their keys: what is written from them is too
    value = {"text": buf.getvalue(), "tables": tables, "records": plain, "seconds": seconds}
    return json.loads(json.dumps(value, sort_keys=True))
