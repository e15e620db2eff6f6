"""What a producer receives: its page's script, the site settings, and a place for files."""

import posixpath

from . import plotstyle
from .registry import GeneratorError
from .scripts import load_script


class Context:
    def __init__(self, page, config, measurements):
        self.page = page
        self.config = config  # mkdocs.yml's `extra` mapping, and its site_url
        self.measurements = measurements  # the measurement cache: training runs, notebooks
        self.script = load_script(page.script) if page.script else None
        self.files = {}  # docs-relative path -> bytes, written beside the pages
        self._memo = {}

    def memo(self, key, compute):
        """compute() once per page build: producers that show the same data share it."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def add_file(self, relpath, data):
        """Write a generated file at docs/<relpath>; return its link relative to the page."""
        if relpath in self.files:
            raise GeneratorError(f"generator/{self.page.module}.py: {relpath} written twice")
        self.files[relpath] = data
        return self.link(relpath)

    def link(self, relpath):
        """A link from this page to docs/<relpath>."""
        return posixpath.relpath(relpath, posixpath.dirname(self.page.source) or ".")

    def figure(self, name, draw, alt, caption=None, size=plotstyle.SIZE):
        """A plot in a light and a dark variant; Material shows the one matching the theme."""
        if not alt or "]" in alt or "\n" in alt:
            raise GeneratorError(f"generator/{self.page.module}.py: figure {name} needs "
                                 "a one-line alt text without ']'")
        stem = posixpath.splitext(posixpath.basename(self.page.source))[0]
        images = plotstyle.render(draw, size)
        width, height = (round(v * plotstyle.DPI) for v in size)
        lines = ['<figure markdown="span">']
        for theme, png in images.items():
            link = self.add_file(f"img/{stem}/{name}-{theme}.png", png)
            lines.append(f'![{alt}]({link}#only-{theme}){{ width="{width}" height="{height}" '
                         f'loading=lazy }}')
        if caption:
            lines.append(f"<figcaption>{caption}</figcaption>")
        lines.append("</figure>")
        return "\n".join(lines)
