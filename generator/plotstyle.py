"""Plot style: every figure in a light and a dark variant, with deterministic bytes.

A producer passes a ``draw(fig, colors)`` function; ``render`` calls it once per
theme, inside that theme's matplotlib settings, and returns compressed PNG
bytes. The backgrounds are Material's own (white, and slate's #1e2129), the
series colours the Okabe-Ito palette, which stays distinct for colour-blind
readers, lightened where needed for the dark theme. Fonts are matplotlib's
bundled DejaVu Sans, sizes fixed, PNG metadata empty: two builds give the same
bytes.
"""

import io
from dataclasses import dataclass
from typing import Tuple

SIZE = (7.2, 3.6)  # inches; every figure shares one width so pages line up
DPI = 144  # 1037 pixels wide: sharp on a high-density screen at the page's width
PHONE_WIDTH = 4.0  # inches: 576 pixels, shown about 360 wide on a phone, type stays legible
PHONE_SCALE = 1.15  # and its type a little larger still


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


def _rc(colors, scale=1.0):
    return {
        "font.family": "DejaVu Sans",
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


def render(draw, size=SIZE, phone=False, grid=None):
    """{'light': png bytes, 'dark': png bytes} for one figure (phone: the larger type).

    draw(axes, colors) draws on fig.subplots(**grid): one Axes when grid is None."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    images = {}
    for theme, colors in THEMES.items():
        with plt.rc_context(_rc(colors, PHONE_SCALE if phone else 1.0)):
            fig = plt.figure(figsize=size, dpi=DPI, layout="constrained")
            try:
                draw(fig.subplots(**(grid or {})), colors)
                if phone:
                    _legends_below(fig)
                buf = io.BytesIO()
                fig.savefig(buf, format="png", dpi=DPI, metadata={"Software": None},
                            bbox_inches="tight" if phone else None, pad_inches=0.08)
            finally:
                plt.close(fig)
        images[theme] = compress_png(buf.getvalue())
    return images


def _legends_below(fig):
    """On a phone a legend inside the axes covers the curves: move each one under its
    axes, one entry per line, and let the figure grow to hold it."""
    rows = 0
    for ax in fig.axes:
        legend = ax.get_legend()
        if legend is None:
            continue
        handles, labels = legend.legend_handles, [t.get_text() for t in legend.get_texts()]
        legend.remove()
        ax.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, -0.22), ncols=1,
                  frameon=False, borderaxespad=0.0)
        rows = max(rows, len(labels))
    if rows:
        width, height = fig.get_size_inches()
        fig.set_size_inches(width, height + 0.26 * rows + 0.2)


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
