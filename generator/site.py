"""What the site makes from its chapter registry: the home page's list of chapters and
each chapter's "run it yourself" lines, so that a new chapter appears in both unedited.

    <!-- gen site chapters -->   (docs/index.md) a card per chapter: its title, what it
                                  does, its script
    <!-- gen site scripts -->    (docs/index.md, in a sentence) each script's code page
    <!-- gen site run -->        (every chapter's page) download the script and its data,
                                  open the notebook in Colab, or download it

A chapter's title is its page's first heading; what it does is its page's front-matter
description, or else the first line of its script's docstring (the code page's
summary). These are made in the build's own process from the registry, the pages and
mkdocs.yml; no script runs for them. As with the chapters' markers, a site marker with
an unknown name, on a page its producer does not serve, or in the wrong place, fails
the build with the page and the line, and so does a page that lacks one it must show.
"""

import posixpath
import re
from dataclasses import dataclass
from typing import Callable, Dict

from . import contract
from . import markers as marker_syntax
from .chapter import GeneratorError
from .codepage import colab_url

HOME = "index.md"
H1 = re.compile(r"^#\s+(.+?)\s*#*\s*$", re.M)


@dataclass
class SiteProducer:
    name: str
    kind: str  # "block" (alone on its line) or "inline" (inside a sentence)
    serves: str  # "home" (docs/index.md) or "chapters" (every chapter's page)
    func: Callable


PRODUCERS: Dict[str, SiteProducer] = {}
SERVES = {"home": "docs/index.md", "chapters": "every chapter's page"}


def producer(kind, serves):
    def register(func):
        PRODUCERS[func.__name__] = SiteProducer(func.__name__, kind, serves, func)
        return func
    return register


@dataclass
class ChapterEntry:
    chapter: object  # the registry's Chapter
    title: str  # "12. The recurrent network", the page's first heading
    summary: str  # one sentence: what the chapter does


class Site:
    """The registry's chapters as the site lists them, and the site markers of every page.

    chapters: the registry, in order; colab: {"repository", "branch"} (pipeline.py reads
    them from mkdocs.yml); pages: {docs-relative path: text} of every page."""

    def __init__(self, chapters, colab, pages):
        self.colab = colab
        self.pages = pages
        self.chapters = [entry(ch, pages.get(ch.page, "")) for ch in chapters]
        self.chapter_pages = {ch.page for ch in chapters}
        self.fragments = self._check()

    def served(self, prod):
        return {HOME} if prod.serves == "home" else set(self.chapter_pages)

    def _check(self):
        """{page: {marker key: markdown}}; GeneratorError for a marker that is unknown,
        misplaced or on a page its producer does not serve, and for a page missing one."""
        fragments = {}
        have = ", ".join(PRODUCERS)
        for page, text in sorted(self.pages.items()):
            for mk in marker_syntax.parse(page, text, site=True):
                prod = PRODUCERS.get(mk.name)
                if prod is None:
                    raise GeneratorError(f"{mk.where}: unknown marker {mk.text}: generator/"
                                         f"site.py has no site producer {mk.name!r} (it has: "
                                         f"{have})")
                if page not in self.served(prod):
                    raise GeneratorError(f"{mk.where}: {mk.text} belongs on "
                                         f"{SERVES[prod.serves]}, not on docs/{page}")
                marker_syntax.check_placement(mk, prod.kind)
                fragments.setdefault(page, {})[mk.key] = prod.func(self, page)
        for prod in PRODUCERS.values():
            for page in sorted(self.served(prod)):
                if f"site {prod.name}" not in fragments.get(page, {}):
                    raise GeneratorError(f"docs/{page}: unused in the page: <!-- gen site "
                                         f"{prod.name} --> (generator/site.py makes it for "
                                         f"{SERVES[prod.serves]})")
        return fragments

    def fill(self, page, markdown):
        """The page's markdown (as MkDocs hands it over) with its site markers filled."""
        return marker_syntax.fill(page, markdown, self.fragments.get(page, {}), site=True)

    def link(self, page, target):
        """A markdown link from docs/<page> to docs/<target>."""
        return posixpath.relpath(target, posixpath.dirname(page) or ".")


def entry(chapter, text):
    """A chapter as the site lists it, from its page's text and its script."""
    meta, body = front_matter(text)
    heading = H1.search(body)
    if not heading:
        raise GeneratorError(f"docs/{chapter.page}: no title: the page starts with "
                             "`# NN. Title`, which the home page and the navigation show")
    summary = str(meta.get("description") or "").strip() or contract.docstring_summary(chapter.script)
    return ChapterEntry(chapter, heading.group(1), summary)


def front_matter(text):
    """({front matter}, the rest) of a page, as MkDocs reads them."""
    from mkdocs.utils.meta import get_data

    body, meta = get_data(text)
    return meta, body


# -- the producers -------------------------------------------------------------------

@producer("block", serves="home")
def chapters(site, page):
    """A card per chapter, in the registry's order: title, what it does, its script."""
    cards = []
    for e in site.chapters:
        ch = e.chapter
        cards.append(f"-   **[{e.title}]({site.link(page, ch.page)})**\n\n"
                     f"    ---\n\n"
                     f"    {e.summary} Script: [`{ch.script}`]({site.link(page, ch.code_page)}).")
    return '<div class="grid cards" markdown>\n\n' + "\n\n".join(cards) + "\n\n</div>"


@producer("inline", serves="home")
def scripts(site, page):
    """Each chapter's script, linked to its code page: 'a, b and c'."""
    links = [f"[{e.chapter.script}]({site.link(page, e.chapter.code_page)})"
             for e in site.chapters]
    return links[0] if len(links) == 1 else ", ".join(links[:-1]) + " and " + links[-1]


@producer("block", serves="chapters")
def run(site, page):
    """The chapter's script (and data) to download, its notebook in Colab with one click
    or to download, and its code page."""
    ch = next(e.chapter for e in site.chapters if e.chapter.page == page)
    files = [f"[{'Download ' if n == 0 else ''}{name}]({site.link(page, 'code/' + name)})"
             "{ download }" for n, name in enumerate((ch.script, *ch.data))]
    get = " and ".join(files) + (" into one folder" if ch.data else "")
    carries = "the script, its data and every run" if ch.data else "the script and every run"
    return (f"{get} and run `python3 {ch.script}`. Or run it in your browser: "
            f"[open {ch.stem}.ipynb in Colab]({colab_url(site.colab, ch.notebook)}), "
            f"the notebook that carries {carries} "
            f"([download it]({site.link(page, ch.notebook)}){{ download }}). Every command "
            f"and what it prints: [the code page]({site.link(page, ch.code_page)}).")
