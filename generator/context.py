"""What a chapter module's producers receive: the runs of its script, and a place
for the files they draw.

    vanish = ctx.record("--vanish")          # the record of python3 rnn.py --vanish
    run = ctx.run("--compare")               # .text, .tables, .records of a command
    return ctx.figure(draw, alt="...")       # a plot, light and dark
"""

import posixpath

from . import plotstyle
from .chapter import GeneratorError


class Context:
    def __init__(self, chapter, get_run, files):
        self.chapter = chapter
        self._get_run = get_run  # argv -> Run, computed once per worker
        self.files = files  # docs-relative path -> bytes, written beside the pages
        self.producer = None  # the producer being run

    def run(self, *argv):
        """The Run of `python3 <script> <argv>`: its text, tables and records."""
        try:
            return self._get_run(tuple(argv))
        except GeneratorError as exc:
            message = str(exc)  # a failing script names itself; a bad command needs a place
            raise GeneratorError(message if message.startswith("docs/")
                                 else f"{self.where}: {message}") from None

    def record(self, *argv):
        """The record of the one report that `python3 <script> <argv>` prints."""
        run = self.run(*argv)
        flags = run.records.fields()
        where = self.where
        if len(flags) != 1:
            raise GeneratorError(f"{where}: `{run.command}` prints {len(flags)} reports "
                                 f"({', '.join(flags)}): ask for one with its flag")
        return run.records[flags[0]]

    def add_file(self, relpath, data):
        """A generated file at docs/<relpath>; returns the link to it from the page."""
        if relpath in self.files:
            raise GeneratorError(f"{self.where}: {relpath} written twice")
        self.files[relpath] = data
        return self.link(relpath)

    def link(self, relpath):
        """A link from this chapter's page to docs/<relpath>."""
        return posixpath.relpath(relpath, posixpath.dirname(self.chapter.page) or ".")

    @property
    def where(self):
        return f"generator/chapters/{self.chapter.module}.py: {self.producer}"

    def figure(self, draw, alt, caption=None, size=plotstyle.SIZE):
        """A plot in a light and a dark variant; the page shows the one of its theme.

        draw(fig, colors) draws on a matplotlib figure; alt describes what the plot
        shows (one line), caption (optional) sits under it.
        """
        if not alt or "]" in alt or "\n" in alt:
            raise GeneratorError(f"{self.where}: a figure needs a one-line alt text without ']'")
        stem = posixpath.splitext(posixpath.basename(self.chapter.page))[0]
        images = plotstyle.render(draw, size)
        width, height = (round(v * plotstyle.DPI) for v in size)
        lines = ['<figure markdown="span">']
        for theme, png in images.items():
            link = self.add_file(f"img/{stem}/{self.producer}-{theme}.png", png)
            lines.append(f'![{alt}]({link}#only-{theme}){{ width="{width}" height="{height}" '
                         f'loading=lazy }}')
        if caption:
            lines.append(f"<figcaption>{caption}</figcaption>")
        lines.append("</figure>")
        return "\n".join(lines)
