"""Plot style: every figure in a light and a dark variant, with deterministic bytes.

A producer passes a ``draw(ax, colors)`` function; ``render`` calls it once per
theme, inside that theme's matplotlib settings, checks that a reader can read
the labels apart (``layout_problems``: no tick label, axis title, panel title or
legend overlaps another, runs into its neighbour or leaves the figure; a figure
that fails raises LayoutError, which the build reports naming the chapter
module and the figure), and returns compressed PNG bytes. The backgrounds are
Material's own (white, and slate's #1e2129), the series colours the Okabe-Ito
palette, which stays distinct for colour-blind readers, lightened where needed
for the dark theme. The type is the site's own, IBM Plex Sans, read from the very
files the pages serve (docs/assets/fonts, decoded from WOFF2 once per process), with
matplotlib's bundled DejaVu Sans for the characters outside its Latin subset (Greek,
arrows); sizes fixed, PNG metadata empty: two builds give the same bytes.
"""

import atexit
import functools
import io
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Tuple

SIZE = (7.2, 3.6)  # inches; every figure shares one width so pages line up
DPI = 144  # 1037 pixels wide: sharp on a high-density screen at the page's width
PHONE_WIDTH = 4.0  # inches: 576 pixels, shown about 360 wide on a phone, type stays legible
PHONE_SCALE = 1.15  # and its type a little larger still
LEAD_SIZE = (7.2, 2.7)  # a chapter's opening picture: low, so that it fits the first screen
LINE_STYLES = ("-", "--", "-.", ":")  # a second cue beside colour, in series order


def phone_size(size):
    """The phone variant of a figure size: narrower, a little taller for its width."""
    width, height = size
    return (PHONE_WIDTH, round(max(height * PHONE_WIDTH / width * 1.45, 2.6), 2))


@dataclass(frozen=True)
class Colors:
    bg: str  # page background
    fg: str  # text and axes
    muted: str  # grid, reference lines
    series: Tuple[str, ...]  # one colour per curve, in order


THEMES = {
    "light": Colors("#ffffff", "#1f2329", "#8a8f99",
                    ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9")),
    "dark": Colors("#1e2129", "#e2e4e9", "#7d8290",
                   ("#56B4E9", "#E69F00", "#3CC79B", "#E08BC0", "#F0E442", "#7FA8FF")),
}


FONTS = Path(__file__).resolve().parent.parent / "docs" / "assets" / "fonts"
TEXT_FONT = "IBM Plex Sans"  # site.css's @font-face: the pages, diagrams and widgets
TEXT_FONT_FILES = ("ibm-plex-sans-latin-400-normal.woff2", "ibm-plex-sans-latin-400-italic.woff2",
                   "ibm-plex-sans-latin-700-normal.woff2")


@functools.lru_cache(maxsize=None)
def register_text_font():
    """Make the site's text face known to matplotlib (once per process): its served WOFF2
    files decoded to TrueType in a folder of this process's own, removed at exit."""
    from matplotlib import font_manager

    from .mathfont import decode_font

    folder = Path(tempfile.mkdtemp(prefix="rnn-explainer-fonts-"))
    atexit.register(shutil.rmtree, folder, True)
    for name in TEXT_FONT_FILES:
        path = folder / (Path(name).stem + ".ttf")
        path.write_bytes(decode_font((FONTS / name).read_bytes()))
        font_manager.fontManager.addfont(str(path))
    return TEXT_FONT


def _rc(colors, scale=1.0):
    return {
        "font.family": [register_text_font(), "DejaVu Sans"],
        "font.size": 10 * scale,
        "axes.titlesize": 11 * scale,
        "axes.labelsize": 10 * scale,
        "legend.fontsize": 9 * scale,
        "xtick.labelsize": 10 * scale,
        "ytick.labelsize": 10 * scale,
        "figure.facecolor": colors.bg,
        "axes.facecolor": colors.bg,
        "savefig.facecolor": colors.bg,
        "text.color": colors.fg,
        "axes.labelcolor": colors.fg,
        "axes.edgecolor": colors.muted,
        "xtick.color": colors.fg,
        "ytick.color": colors.fg,
        "grid.color": colors.muted,
        "grid.alpha": 0.35,
        "axes.grid": True,
        "axes.spines.top": False,
        "axes.spines.right": False,
        "legend.frameon": False,
        "lines.linewidth": 2.0,
        "axes.prop_cycle": _cycler(colors.series),
        "svg.hashsalt": "rnn-explainer",
        "path.simplify": True,
    }


def _cycler(series):
    from cycler import cycler

    return cycler(color=list(series))


LINE_LABEL = "line-label"  # the gid of a reference line's label (label_line)


def label_line(ax, colors, text, y=None, x=None, end=None):
    """Write a reference line's label on the plot at the line's end, what the widgets'
    charts do (kit.chart's line labels): a horizontal line at y labelled just above its
    right end (end="left": its left end), a vertical one at x just right of its top
    (end="bottom": its bottom), in the text's colour on a halo of the background. text
    says what the line stands for, its value from the record. layout_problems checks it
    against the tick labels, titles and legends like any label."""
    style = dict(color=colors.fg, fontsize="small", annotation_clip=False,
                 bbox=dict(facecolor=colors.bg, edgecolor="none", pad=1.0, alpha=0.85))
    if (y is None) == (x is None):
        raise ValueError("label_line: a horizontal line (y) or a vertical one (x)")
    if y is not None:
        left = end == "left"
        label = ax.annotate(text, (0 if left else 1, y), xycoords=("axes fraction", "data"),
                            xytext=(3 if left else -3, 3), textcoords="offset points",
                            ha="left" if left else "right", va="bottom", **style)
    else:
        bottom = end == "bottom"
        label = ax.annotate(text, (x, 0 if bottom else 1), xycoords=("data", "axes fraction"),
                            xytext=(3, 3 if bottom else -3), textcoords="offset points",
                            ha="left", va="bottom" if bottom else "top", **style)
    label.set_gid(LINE_LABEL)
    return label


class LayoutError(ValueError):
    """A figure whose labels collide or leave it; the message says which, and where."""


class NonFiniteError(ValueError):
    """A figure that plots a number that is not finite; the message says what and where."""


def non_finite_data(fig):
    """The first artist of fig whose data holds nan or inf, described ('line "GRU",
    point 3: (40.0, nan)'), or ''. Matplotlib leaves such a point out without a word,
    so a figure would show less than its record holds."""
    import numpy as np

    for k, ax in enumerate(fig.axes):
        where = f"axes {k}" if len(fig.axes) > 1 else "the axes"
        for line in ax.lines:
            xy = np.asarray(line.get_xydata(), dtype=float)
            bad = np.argwhere(~np.isfinite(xy))
            if len(bad):
                i = bad[0][0]
                return (f"{where}, line {line.get_label()!r}, point {i}: "
                        f"({xy[i][0]!r}, {xy[i][1]!r})")
        for patch in ax.patches:
            if hasattr(patch, "get_height"):
                values = (patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height())
                if not all(np.isfinite(values)):
                    return f"{where}, bar {patch.get_label()!r}: {values!r}"
        for collection in ax.collections:
            offsets = np.asarray(collection.get_offsets(), dtype=float)
            bad = np.argwhere(~np.isfinite(offsets))
            if len(bad):
                return f"{where}, points {collection.get_label()!r}, point {bad[0][0]}"
        for image in ax.images:
            if not np.isfinite(np.asarray(image.get_array(), dtype=float)).all():
                return f"{where}, an image (a heat map) with a cell that is not finite"
    return ""


def render(draw, size=SIZE, phone=False, grid=None):
    """{'light': png bytes, 'dark': png bytes} for one figure (phone: the larger type).

    draw(axes, colors) draws on fig.subplots(**grid): one Axes when grid is None.
    LayoutError if a label collides with another or leaves the figure (layout_problems);
    NonFiniteError if it plots a number that is not finite (non_finite_data)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = {}
    for theme, colors in THEMES.items():
        with plt.rc_context(_rc(colors, PHONE_SCALE if phone else 1.0)):
            fig = plt.figure(figsize=size, dpi=DPI, layout="constrained")
            try:
                draw(fig.subplots(**(grid or {})), colors)
                bad = non_finite_data(fig)
                if bad:
                    raise NonFiniteError(bad)
                if phone:
                    _legends_below(fig)
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None},
                            bbox_inches="tight" if phone else None, pad_inches=0.08)
                # checked as saved: the draw has laid the labels out in their final boxes
                problems = layout_problems(fig, tight=phone)
                if problems:
                    variant = "phone" if phone else "desktop"
                    width = round(fig.get_size_inches()[0] * DPI)
                    raise LayoutError(f"the {variant} variant ({width} px wide, {theme}): "
                                      + "; ".join(problems))
            finally:
                plt.close(fig)
        images[theme] = compress_png(buf.getvalue())
    return images


# How far apart two labels must be, in pixels. On one line of reading (two horizontal
# labels side by side, or two vertical ones) a reader takes labels less than an em apart
# for one ("1,000,0001,200,000"; "1.0 0.0" across two panels reads as a sequence); any
# other two need a thin gap.
EM = 10 * DPI / 72  # 10 points: the labels' type
GAP_ON_ONE_LINE = EM
GAP = 2.0


def _labels(fig):
    """(name, box, direction) of every label a reader must read apart: the tick labels matplotlib
    draws, the axis titles, the panel titles, the legends and the reference lines' labels
    (label_line), then the figure's own titles. Boxes in pixels; direction "h" (horizontal text, and legends), "v" (turned
    a quarter) or "" (at another angle); empty or hidden labels left out."""
    found = []

    def add(name, artist):
        if artist is None or not artist.get_visible():
            return
        if hasattr(artist, "get_text") and not artist.get_text().strip():
            return
        box = artist.get_window_extent()
        angle = round(artist.get_rotation()) % 180 if hasattr(artist, "get_rotation") else 0
        if box.width > 0 and box.height > 0:
            found.append((name, box, {0: "h", 90: "v"}.get(angle, "")))

    for n, ax in enumerate(fig.axes, start=1):
        if not ax.get_visible():
            continue
        panel = f"panel {n}" if len(fig.axes) > 1 else "the axes"
        for which, axis in (("x", ax.xaxis), ("y", ax.yaxis)):
            # the ticks matplotlib draws: those inside the view (the call its draw makes)
            for tick in axis._update_ticks():
                for label in (tick.label1, tick.label2):
                    add(f"{panel}'s {which} tick label {label.get_text()!r}", label)
            add(f"{panel}'s {which}-axis title {axis.label.get_text()!r}", axis.label)
        for title in (ax.title, ax._left_title, ax._right_title):
            add(f"{panel}'s title {title.get_text()!r}", title)
        add(f"{panel}'s legend", ax.get_legend())
        for text in ax.texts:  # the reference lines' labels (label_line)
            if text.get_gid() == LINE_LABEL:
                add(f"{panel}'s line label {text.get_text()!r}", text)
    for which in ("suptitle", "supxlabel", "supylabel"):
        text = getattr(fig, f"_{which}", None)
        if text is not None:
            add(f"the figure's {which} {text.get_text()!r}", text)
    for legend in fig.legends:
        add("the figure's legend", legend)
    return found


def layout_problems(fig, tight=False):
    """What a reader could not read in a laid-out figure, in words: two labels (tick
    labels, axis titles, panel titles, legends, line labels) that overlap, stand on one line of
    reading less than GAP_ON_ONE_LINE apart or are otherwise less than GAP apart, a
    reference line's label or a legend over a bar or a point, and a
    label that leaves the figure, where saving would cut it off (tight: the phone
    variant is saved to its tight bounding box, which grows to hold what reaches above
    or below the figure; only at the sides, where it would make the picture wider and
    so smaller on the screen, is leaving a problem)."""
    labels = _labels(fig)
    problems = []
    for i, (name_a, a, dir_a) in enumerate(labels):
        for name_b, b, dir_b in labels[i + 1:]:
            apart_x = max(b.x0 - a.x1, a.x0 - b.x1)  # negative: their columns overlap
            apart_y = max(b.y0 - a.y1, a.y0 - b.y1)  # negative: their rows overlap
            if apart_x < 0 and apart_y < 0:
                problems.append(f"{name_a} and {name_b} overlap")
                continue
            along = {"h": apart_x if apart_y < 0 else None,
                     "v": apart_y if apart_x < 0 else None}.get(dir_a if dir_a == dir_b else "")
            if along is not None and along < GAP_ON_ONE_LINE:
                problems.append(f"{name_a} and {name_b} run together ({along:.0f} px apart "
                                f"on one line, at least {GAP_ON_ONE_LINE:.0f} needed)")
            elif max(apart_x, apart_y) < GAP:
                problems.append(f"{name_a} and {name_b} touch ({max(apart_x, apart_y):.0f} "
                                "px apart)")
    problems += _labels_over_data(fig)
    width, height = fig.bbox.width, fig.bbox.height
    for name, box, _ in labels:
        if (box.x0 < -0.5 or box.x1 > width + 0.5
                or (not tight and (box.y0 < -0.5 or box.y1 > height + 0.5))):
            problems.append(f"{name} leaves the figure")
    return problems


def _labels_over_data(fig):
    """A reference line's label (label_line) over a bar or a point, or a legend inside the
    axes over one: its halo or box hides the bar's top or the point, and a reader cannot
    tell where it is (chapter 16's chance label and legend did)."""
    from matplotlib.patches import Rectangle
    from matplotlib.transforms import Bbox

    problems = []
    for n, ax in enumerate(fig.axes, start=1):
        panel = f"panel {n}" if len(fig.axes) > 1 else "the axes"
        inside = ax.bbox  # what is drawn: a bar from 0 on a log axis reaches to -inf
        bars = [Bbox.intersection(p.get_window_extent(), inside) for p in ax.patches
                if isinstance(p, Rectangle) and p.get_visible() and p.get_height() != 0]
        bars = [bar for bar in bars if bar is not None]
        points = [xy for c in ax.collections if c.get_visible() and len(c.get_offsets())
                  for xy in c.get_offset_transform().transform(c.get_offsets())
                  if inside.contains(*xy)]
        covers = [(f"line label {t.get_text()!r}", t) for t in ax.texts
                  if t.get_gid() == LINE_LABEL and t.get_visible()]
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            covers.append(("legend", legend))
        for name, artist in covers:
            box = artist.get_window_extent()
            if any(box.overlaps(bar) for bar in bars):
                problems.append(f"{panel}'s {name} covers a bar")
            elif any(box.contains(x, y) for x, y in points):
                problems.append(f"{panel}'s {name} covers a point")
    return problems


def _legends_below(fig):
    """On a phone a legend inside the axes covers the curves: move each one under its
    axes, below the axis's tick labels and title, one entry per line, and let the
    figure grow to hold it."""
    from matplotlib.transforms import ScaledTranslation, blended_transform_factory

    moved, rows = [], 0
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        moved.append((ax, legend.legend_handles, [t.get_text() for t in legend.get_texts()]))
        legend.remove()
        rows = max(rows, len(moved[-1][2]))
    if not moved:
        return
    width, height = fig.get_size_inches()
    fig.set_size_inches(width, height + 0.26 * rows + 0.2)
    fig.draw_without_rendering()  # the x axes' labels, laid out: how far they reach down
    for ax, handles, labels in moved:
        # The distance from the axes' bottom to the lowest of its x labels, in inches,
        # stays the same when the layout then shrinks the axes to make room.
        # A legend under axes as wide as the figure is centred on the figure (the y axis's
        # labels push the axes right); under one of several columns, on its axes.
        decorations = ax.xaxis.get_tightbbox()
        reach = (ax.bbox.y0 - decorations.y0) / fig.dpi if decorations is not None else 0.0
        spec = ax.get_subplotspec()
        whole_width = spec is None or len(spec.colspan) == spec.get_gridspec().ncols
        across = blended_transform_factory(fig.transFigure if whole_width else ax.transAxes,
                                           ax.transAxes)
        below = ScaledTranslation(0, -(reach + 0.08), fig.dpi_scale_trans)
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0),
                  bbox_transform=across + below, ncols=1, frameon=False, borderaxespad=0.0)


def png_size(png):
    """(width, height) in pixels of a PNG."""
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def compress_png(png):
    """Quantise to a 256-colour palette without dithering and let zlib work hard.

    Plots hold a few flat colours plus anti-aliased edges, so a palette keeps them
    legible at a third to a quarter of the bytes; the result is deterministic.
    """
    from PIL import Image

    image = Image.open(io.BytesIO(png)).convert("RGB")
    paletted = image.quantize(colors=256, method=Image.Quantize.MEDIANCUT,
                              dither=Image.Dither.NONE)
    out = io.BytesIO()
    paletted.save(out, format="PNG", optimize=True)
    return out.getvalue()
