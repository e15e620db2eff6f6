"""What a chapter module's producers receive: the runs of its script, and a place
for the files they draw.

    vanish = ctx.record("--vanish")          # the record of python3 rnn.py --vanish
    run = ctx.run("--compare")               # .text, .tables, .records of a command
    return ctx.figure(draw, alt="...")       # a plot, light and dark
    return ctx.widget("powers", {...})       # an interactive figure, added by JavaScript
    link, data = ctx.served("gru-trained.json")  # a record the chapter serves as a file
"""

import hashlib
import html
import json
import math
import posixpath

from . import codepage, plotstyle, tables
from .chapter import CODE, DOCS, GeneratorError

WIDGETS = DOCS / "assets" / "widgets"  # kit.js, widgets.css, and one <kind>.js per widget


class Context:
    def __init__(self, chapter, get_run, files):
        self.chapter = chapter
        self._get_run = get_run  # argv -> Run, computed once per worker
        self.files = files  # docs-relative path -> bytes, written beside the pages
        self.producer = None  # the producer being run
        self.quoted = {}  # docs-relative path -> sha256 of the files quoted, as read

    def quote(self, name, *definitions):
        """The source of the top-level functions and classes `definitions` of the served
        file docs/code/<name>, in the file's order, blank line between: the page shows
        the lines that matter and links the whole file. The file becomes an input of the
        page (an edit rebuilds it)."""
        data = (CODE / name).read_bytes()
        self.quoted[f"docs/code/{name}"] = hashlib.sha256(data).hexdigest()
        source = data.decode("utf-8")
        lines = source.splitlines()
        found = {name: "\n".join(lines[first - 1:last])
                 for name, (first, last) in codepage.definitions(source).items()
                 if name in definitions}
        missing = [d for d in definitions if d not in found]
        if missing:
            raise GeneratorError(f"{self.where}: docs/code/{name} defines no "
                                 f"{', '.join(missing)} at top level")
        return "\n\n\n".join(found[d] for d in definitions if d in found)

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

    def served(self, name):
        """The chapter's served record `name` (chapter.Served): its link from the page
        and its bytes, code/<name>, written once however many producers ask."""
        found = [s for s in self.chapter.served if s.name == name]
        if not found:
            raise GeneratorError(f"{self.where}: the chapter serves no {name} (it serves: "
                                 f"{', '.join(s.name for s in self.chapter.served) or 'none'})")
        return self.link(f"code/{name}"), served_file(found[0], self._get_run, self.files)

    def add_file(self, relpath, data):
        """A generated file at docs/<relpath>; returns the link to it from the page."""
        if relpath in self.files:
            raise GeneratorError(f"{self.where}: {relpath} written twice")
        self.files[relpath] = data
        return self.link(relpath)

    def link(self, relpath):
        """A link from this chapter's page to docs/<relpath>, for markdown (MkDocs turns
        it into the published address)."""
        return posixpath.relpath(relpath, posixpath.dirname(self.chapter.page) or ".")

    def url(self, relpath):
        """The address of docs/<relpath> relative to the published page, for raw HTML,
        which MkDocs leaves as it is (directory URLs: ch12-rnn.md is ch12-rnn/)."""
        page_dir = posixpath.splitext(self.chapter.page)[0]
        if posixpath.basename(page_dir) == "index":
            page_dir = posixpath.dirname(page_dir)
        return posixpath.relpath(relpath, page_dir or ".")

    def widget(self, kind, data):
        """An interactive figure (docs/building.md, "Interactive figures"): the code
        docs/assets/widgets/<kind>.js, fed with `data`, plain numbers and text from this
        chapter's records, written as widgets/<page>/<producer>.json. The page gets an
        empty host, so that without JavaScript it is exactly as before; the loader
        (docs/assets/widgets.js) fetches the code and the data when the host first comes
        near the screen, and the widget builds itself into it."""
        if not (WIDGETS / f"{kind}.js").is_file():
            have = sorted(p.stem for p in WIDGETS.glob("*.js") if p.stem != "kit")
            raise GeneratorError(f"{self.where}: no widget {kind!r}: docs/assets/widgets/ has "
                                 f"{', '.join(have) or 'none'}")
        bad = _not_plain(data)
        if bad:
            raise GeneratorError(f"{self.where}: the data of widget {kind!r} holds {bad}")
        stem = posixpath.splitext(posixpath.basename(self.chapter.page))[0]
        relpath = f"widgets/{stem}/{self.producer}.json"
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        self.add_file(relpath, text.encode("utf-8"))
        return (f'<div class="rw-widget" data-widget="{kind}" '
                f'data-src="{html.escape(self.url(relpath), quote=True)}"></div>')

    @property
    def where(self):
        return f"generator/chapters/{self.chapter.module}.py: {self.producer}"

    def lead(self, lines, alt, caption, xlabel, ylabel, xlog=False, ylog=False, ylim=None,
             refs=()):
        """The picture that opens a chapter (its marker right under the title, in the first
        screen at 1280 and at 390 px: tests/test_look.py): the chapter's argument as a few
        lines drawn from the script's records, low and wide, keyed above the plot. lines: (label, xs, ys) each; refs: (y, label) of each reference line, labelled
        on the line itself; caption: the argument, in a sentence."""
        def draw(ax, colors):
            from matplotlib.ticker import MaxNLocator

            for n, (label, xs, ys) in enumerate(lines):
                ax.plot(list(xs), list(ys), color=colors.series[n % len(colors.series)],
                        linestyle=plotstyle.LINE_STYLES[n % len(plotstyle.LINE_STYLES)],
                        marker="o" if len(xs) <= 12 else None, markersize=4, label=label)
            ax.set(xlabel=xlabel, ylabel=ylabel, xscale="log" if xlog else "linear",
                   yscale="log" if ylog else "linear")
            if ylim:
                ax.set_ylim(*ylim)
            for y, label in refs:
                ax.axhline(y, color=colors.muted, linestyle=":", linewidth=1.2)
                ax.annotate(label, (0.01, y), xycoords=("axes fraction", "data"),
                            xytext=(0, 3), textcoords="offset points", color=colors.fg,
                            fontsize="small", bbox=dict(facecolor=colors.bg, edgecolor="none",
                                                        pad=1.0, alpha=0.85))
            if not xlog:
                ax.xaxis.set_major_locator(MaxNLocator(nbins="auto", integer=True))
            if xlog:
                ticks = sorted({x for _, xs, _ in lines for x in xs})
                ax.set_xticks(ticks, [f"{x:g}" for x in ticks])
                ax.minorticks_off()
            ax.legend(loc="lower left", bbox_to_anchor=(0, 1.0), ncols=min(len(lines), 3),
                      borderaxespad=0.2)

        return self.figure(draw, alt=alt, caption=caption, size=plotstyle.LEAD_SIZE, lead=True)

    def figure(self, draw, alt, caption=None, size=plotstyle.SIZE, grid=None, lead=False):
        """A plot in a light and a dark variant, each at two sizes: the page shows the
        variant of its theme, the phone size on a narrow screen (where the desktop size
        would shrink its type below legibility), and links it at full size.

        draw(ax, colors) draws on the axes of a figure of either size: one matplotlib
        Axes, or the array that `fig.subplots(**grid)` returns when grid is given
        (dict(nrows=2, sharex=True)); alt describes what the plot shows (one line);
        caption (optional) sits under it. Both sizes are checked for labels that
        collide or leave the figure (plotstyle.layout_problems): the build fails naming
        the figure and the labels.
        """
        if not alt or "\n" in alt:
            raise GeneratorError(f"{self.where}: a figure needs a one-line alt text")
        alt = html.escape(alt, quote=True)
        stem = posixpath.splitext(posixpath.basename(self.chapter.page))[0]
        try:
            wide = plotstyle.render(draw, size, grid=grid)
            narrow = plotstyle.render(draw, plotstyle.phone_size(size), phone=True, grid=grid)
        except plotstyle.LayoutError as exc:  # labels a reader cannot read apart
            raise GeneratorError(f"generator/chapters/{self.chapter.module}.py: figure "
                                 f"{self.producer}: labels collide in {exc}") from None
        except plotstyle.NonFiniteError as exc:  # a point matplotlib would leave out
            raise GeneratorError(f"generator/chapters/{self.chapter.module}.py: figure "
                                 f"{self.producer} plots a number that is not finite, in "
                                 f"{exc}: the site shows finite numbers only") from None
        width, height = (round(v * plotstyle.DPI) for v in size)
        lines = [f'<figure class="plot{" lead" if lead else ""}" markdown="0">']
        # A plot further down loads lazily: the other scheme's stays unloaded. The lead
        # is the first screen's largest paint (Lighthouse's LCP): both schemes' load at once.
        loading = 'fetchpriority="high"' if lead else 'loading="lazy"'
        for theme in wide:
            big_file, small_file = (f"img/{stem}/{self.producer}-{theme}{variant}.png"
                                    for variant in ("", "-phone"))
            self.add_file(big_file, wide[theme])
            self.add_file(small_file, narrow[theme])
            big, small = self.url(big_file), self.url(small_file)
            small_w, small_h = plotstyle.png_size(narrow[theme])
            lines.append(
                f'<a class="plot-link only-{theme}" href="{big}" title="Open the plot at full '
                f'size"><picture><source media="(max-width: 44.9375em)" srcset="{small}" '
                f'width="{small_w}" height="{small_h}">'
                f'<img src="{big}#only-{theme}" alt="{alt}" width="{width}" height="{height}" '
                f'{loading}></picture></a>')
        if caption:  # its notation typeset like a table's (tables.typeset)
            lines.append(f"<figcaption>{tables.typeset(caption, html=True)}</figcaption>")
        lines.append("</figure>")
        return "\n".join(lines)


def served_file(served, get_run, files):
    """The bytes of code/<served.name>, the record of `served.argv` as JSON, put in
    `files` once (the chapter's producers and its code page share them)."""
    rel = f"code/{served.name}"
    if rel not in files:
        run = get_run(tuple(served.argv))
        flags = run.records.fields()
        if len(flags) != 1:
            raise GeneratorError(f"code/{served.name}: `{run.command}` prints {len(flags)} "
                                 f"reports ({', '.join(flags)}): serve the record of one")
        record = run.records[flags[0]].plain()
        bad = _not_plain(record, "record")
        if bad:
            raise GeneratorError(f"code/{served.name}: `{run.command}`'s {bad}")
        files[rel] = json.dumps(record, separators=(",", ":")).encode("utf-8")
    return files[rel]


def _not_plain(value, path="data"):
    """What in a widget's data JSON cannot carry exactly ('data.cells[2]: nan'), or ''."""
    if isinstance(value, bool) or value is None or isinstance(value, (int, str)):
        return ""
    if isinstance(value, float):
        return "" if math.isfinite(value) else f"{path}: {value!r}"
    if isinstance(value, dict):
        return next((bad for k, v in value.items() for bad in [_not_plain(v, f"{path}.{k}")]
                     if bad), "") if all(isinstance(k, str) for k in value) else f"{path}: a key"
    if isinstance(value, (list, tuple)):
        return next((bad for n, v in enumerate(value) for bad in [_not_plain(v, f"{path}[{n}]")]
                     if bad), "")
    return f"{path}: a {type(value).__name__}"
