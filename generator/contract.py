"""What a served script provides: the contract between docs/code/*.py and the site,
written once. Every other module reaches a script through the functions here.

A served script (rnn.py, gated.py, ...) stands alone in a reader's empty folder and
is imported by the generator from its path. It provides:

- a docstring whose first line is ``name.py: what it works through.`` (the code page's
  and the notebook's summary: ``summary``, or ``docstring_summary`` without running it);
- ``REPORTS``: {flag: (help, report)}, a flag per report, in the order the code page
  lists them; ``DEFAULT``: the flags that run with no flag; ``EXAMPLES`` (optional):
  {flag: argv} for a report that needs options to be shown (``report_commands``);
- ``OPTIONS``: {option: the reports it changes}; ``add_options(parser)``: those options,
  on argparse; ``estimate_seconds(args)``: about how long the chosen reports take;
- the harness, the block of generator/harness.py copied byte for byte (``check_harness``):
  ``Printer``, ``parse_args``, ``run`` and ``main``; the site calls ``run(parse_args(argv),
  Printer(buffer))``, what ``main`` calls for a reader (``call``);
- reports that print through the Printer and return dataclass records of plain values,
  and nothing done on import (``load_script`` refuses a script that exits or fails then).

docs/building.md says the same for a contributor, with an example.
"""

import ast
import contextlib
import dataclasses
import importlib.util
import io
import json
from pathlib import Path

from .cache import sha256
from .chapter import CODE, GeneratorError, describe
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


def docstring_summary(name):
    """The first line of docs/code/<name>'s docstring without 'name.py: ', as a
    sentence (the code page's summary), read without running the script."""
    try:
        doc = ast.get_docstring(ast.parse((CODE / name).read_text("utf-8"))) or ""
    except (OSError, SyntaxError, UnicodeDecodeError):
        doc = ""  # the build names the script's own problem elsewhere
    first = doc.strip().splitlines()[0] if doc.strip() else ""
    first = first[len(name) + 2:].strip() if first.startswith(f"{name}: ") else first
    return (first[:1].upper() + first[1:]).rstrip(".") + "." if first else ""


def report_commands(script_module, name):
    """(argv, description) for every report, in order. A report that alone runs with no
    flag (gru.py's training) is shown as the bare command; the others by their flag, or
    by the example the script gives for a report that needs options (EXAMPLES)."""
    default, reports = tuple(script_module.DEFAULT), script_module.REPORTS
    examples = getattr(script_module, "EXAMPLES", {})  # reports that need options
    runs = []
    for flag, (help_text, _) in reports.items():
        argv = () if default == (flag,) and len(reports) > 1 else (f"--{flag}",)
        argv = tuple(examples.get(flag, argv))
        runs.append((argv, help_text[:1].upper() + help_text[1:] + "."))
    return runs


def default_sentence(script_module):
    """What the script does with no flag, in words."""
    default, flags = list(script_module.DEFAULT), list(script_module.REPORTS)
    if default == flags:
        return "With no flag it prints every report below, in order; with flags, those reports."
    if len(default) == 1:
        return (f"With no flag it runs `--{default[0]}`, the first report below; each flag "
                "runs another.")
    return ("With no flag it prints " + ", ".join(f"`--{f}`" for f in default)
            + ", in order; the other reports are commands of their own.")


def call(module, name, argv, out):
    """`run(parse_args(argv), Printer(out))`, what the script's main() does for a reader,
    with stdout sent to out: the records it returns as plain data ({flag: dict}) and the
    tables it printed ({name: table}). GeneratorError, in one line, for flags the script
    refuses, a report that exits or fails, and records that are not plain values."""
    cmd = command(name, argv)
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
    printer = module.Printer(out)
    try:
        with contextlib.redirect_stdout(out):
            records = module.run(args, printer)
    except SystemExit as exc:
        raise GeneratorError(f"{where}: `{cmd}` called sys.exit({exc.code!r}); a report "
                             "returns its record and lets main() decide the exit status") from None
    except GeneratorError:
        raise
    except Exception as exc:
        raise GeneratorError(f"{where}: `{cmd}` failed: {describe(exc)}") from None
    try:
        plain = {flag: dataclasses.asdict(rec) for flag, rec in records.items()}
        json.dumps(plain, allow_nan=True)
    except (TypeError, ValueError, AttributeError) as exc:
        raise GeneratorError(f"{where}: `{cmd}` returned records that are not dataclasses of "
                             f"plain values ({exc})") from None
    return plain, dict(printer.tables)
