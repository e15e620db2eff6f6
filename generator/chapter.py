"""The chapter registry: one declaration per chapter.

A chapter is a page, the script behind it and the data files the script reads.
Each module in ``generator/chapters/`` declares exactly one, named after its
page, and registers the figures and other blocks it draws::

    CHAPTER = Chapter("ch12-rnn.md", "rnn.py")

    @CHAPTER.figure
    def decay(ctx):
        vanish = ctx.record("--vanish")
        ...
        return ctx.figure(draw, alt="...", caption="...")

Tables and numbers need no code at all: the page names the script's output
(``<!-- gen table decay from rnn.py --vanish -->``, see markers.py). A record a reader
(or a page's script) can use elsewhere is served beside the script as JSON, declared
with the chapter: ``served=(Served("gru-trained.json", ("--export",), about, usage),)``.

Everything that lists chapters reads this registry: the code page and the
notebook of every script, the navigation's Code section, and the tests.
"""

import importlib
import re
import sys
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Tuple

ROOT = Path(__file__).resolve().parent.parent  # the repository
DOCS = ROOT / "docs"  # hand-written pages, scripts, data, assets
CODE = DOCS / "code"  # the served scripts and their data
GENERATOR = Path(__file__).resolve().parent
CHAPTERS = GENERATOR / "chapters"

# What a chapter module may register, and where its marker may stand.
PRODUCER_KINDS = {"figure": "block", "diagram": "block", "widget": "block", "block": "block",
                  "inline": "inline"}


class GeneratorError(Exception):
    """A failure the user can act on; its message names the file and the cause."""


@dataclass(frozen=True)
class Served:
    """A file the build serves beside the script, code/<name>: the record of one of its
    commands as JSON. The script's code page offers it, says what it holds, and shows
    `usage`, a few lines of Python (numpy only) that read it, with what they print: the
    build runs them beside the file, in a fresh process, and fails if they fail."""
    name: str  # code/<name>: gru-trained.json
    argv: Tuple[str, ...]  # the command whose record it is: ("--export",)
    about: str  # what it holds, markdown, one paragraph
    usage: str  # Python run beside the file; what it prints is shown under it


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


def log(message):
    """A line on stderr, in one write: the lines of parallel workers do not interleave."""
    sys.stderr.write(message + "\n")
    sys.stderr.flush()


@dataclass
class Producer:
    name: str
    kind: str  # a key of PRODUCER_KINDS
    func: Callable


@dataclass
class Chapter:
    page: str  # the hand-written page, relative to docs/
    script: str  # its script, a file name in docs/code/
    data: Tuple[str, ...] = ()  # files in docs/code/ the script reads
    served: Tuple[Served, ...] = ()  # records served beside the script as JSON
    producers: Dict[str, Producer] = field(default_factory=dict)
    module: str = ""  # filled in by the registry: ch12_rnn

    @property
    def stem(self):
        """rnn for rnn.py: the code page is code/rnn.md, the notebook code/rnn.ipynb."""
        return Path(self.script).stem

    @property
    def code_page(self):
        return f"code/{self.stem}.md"

    @property
    def notebook(self):
        return f"code/{self.stem}.ipynb"

    def _register(self, kind, func):
        if func.__name__ in self.producers:
            raise GeneratorError(f"{self.page}: {func.__name__} registered twice")
        self.producers[func.__name__] = Producer(func.__name__, kind, func)
        return func

    def figure(self, func):
        """A plot, light and dark: the function returns ctx.figure(...)."""
        return self._register("figure", func)

    def diagram(self, func):
        """A drawing of a cell, inline SVG that follows the theme."""
        return self._register("diagram", func)

    def widget(self, func):
        """An interactive figure: the function returns ctx.widget(kind, data)
        (docs/building.md, "Interactive figures")."""
        return self._register("widget", func)

    def block(self, func):
        """Any other block of markdown."""
        return self._register("block", func)

    def inline(self, func):
        """A short string quoted inside a sentence."""
        return self._register("inline", func)


def module_names():
    """Every chapter module, in the order of the site (their names sort by number)."""
    return sorted(p.stem for p in CHAPTERS.glob("*.py") if p.stem != "__init__")


def load(name):
    """Import generator/chapters/<name>.py and return its CHAPTER."""
    where = f"generator/chapters/{name}.py"
    try:
        module = importlib.import_module(f"generator.chapters.{name}")
    except Exception as exc:
        line = next((f.lineno for f in reversed(traceback.extract_tb(exc.__traceback__))
                     if f.filename.endswith(f"{name}.py")), None)
        at = f":{line}" if line else ""
        raise GeneratorError(f"{where}{at}: failed to import: {type(exc).__name__}: {exc}") \
            from None
    chapter = getattr(module, "CHAPTER", None)
    if not isinstance(chapter, Chapter):
        raise GeneratorError(f"{where} declares no CHAPTER = Chapter(page, script)")
    expected = re.sub(r"[^a-z0-9]+", "_", Path(chapter.page).stem.lower())
    if name != expected:
        raise GeneratorError(f"{where} feeds docs/{chapter.page}: name the module after its "
                             f"page, generator/chapters/{expected}.py")
    chapter.module = name
    for rel in (chapter.page, f"code/{chapter.script}", *(f"code/{d}" for d in chapter.data)):
        if not (DOCS / rel).is_file():
            raise GeneratorError(f"{where} names docs/{rel}, which does not exist")
    for served in chapter.served:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_-]*\.json", served.name) \
                or (CODE / served.name).exists():
            raise GeneratorError(f"{where} serves code/{served.name}: a served record is a new "
                                 "file name ending .json, not a file of docs/code/")
    return chapter


def chapters():
    """Every declared chapter, in order."""
    found = [load(name) for name in module_names()]
    for attr in ("page", "script"):
        seen = {}
        for ch in found:
            value = getattr(ch, attr)
            if value in seen:
                raise GeneratorError(f"generator/chapters/{ch.module}.py and "
                                     f"generator/chapters/{seen[value]}.py both declare "
                                     f"{attr} {value}")
            seen[value] = ch.module
    return found
