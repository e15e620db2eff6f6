"""The chapter registry: which page each generator module feeds, and its producers.

A page module creates one ``Page`` and registers producers on it::

    PAGE = Page("ch12-rnn.md", script="code/rnn.py")

    @PAGE.block
    def decay_table(ctx):
        rnn = ctx.script
        return command_table("python3 rnn.py --vanish",
                             rnn.format_decay_table(rnn.compute_decay()))

A block producer returns markdown for a marker on a line of its own; an
inline producer returns a short string (a number) for a marker inside a
sentence.
"""

import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Dict, Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent  # the repository
DOCS = ROOT / "docs"  # hand-written pages, scripts, assets
GENERATOR = Path(__file__).resolve().parent

# Every module that feeds a page, in the order of the site.
PAGE_MODULES = (
    "ch12_rnn",
    "ch13_gated",
    "ch14_gru_lm",
    "conventions",
    "code_rnn",
    "code_gated",
    "code_gru",
)


class GeneratorError(Exception):
    """A failure the user can act on; its message names the file and the cause."""


@dataclass
class Producer:
    name: str
    kind: str  # "block" or "inline"
    func: Callable


@dataclass
class Page:
    source: str  # the hand-written page, relative to docs/
    script: Optional[str] = None  # the script its numbers come from, relative to docs/
    inputs: Tuple[str, ...] = ()  # further files (relative to docs/) whose bytes key the cache
    uses_config: bool = False  # producers read mkdocs.yml's `extra` settings
    producers: Dict[str, Producer] = field(default_factory=dict)
    module: str = ""  # filled in by load_pages()

    def _register(self, kind, func):
        if func.__name__ in self.producers:
            raise GeneratorError(f"{self.source}: producer {func.__name__} registered twice")
        self.producers[func.__name__] = Producer(func.__name__, kind, func)
        return func

    def block(self, func):
        """Register a producer of a markdown block (a table, a figure, a list)."""
        return self._register("block", func)

    def inline(self, func):
        """Register a producer of a short string quoted inside a sentence."""
        return self._register("inline", func)


def load_pages(modules=PAGE_MODULES):
    """Import every page module; return {module name: Page}."""
    pages = {}
    for name in modules:
        module = importlib.import_module(f"generator.{name}")
        page = getattr(module, "PAGE", None)
        if not isinstance(page, Page):
            raise GeneratorError(f"generator/{name}.py: defines no PAGE = Page(...)")
        page.module = name
        pages[name] = page
    sources = [p.source for p in pages.values()]
    for source in set(sources):
        if sources.count(source) > 1:
            raise GeneratorError(f"docs/{source}: fed by more than one generator module")
    return pages
