"""Chapter 12, the recurrent network: the figures of docs/ch12-rnn.md, from docs/code/rnn.py.

Its tables and numbers need no code here: the page names them
(<!-- gen table decay from rnn.py --vanish -->).
"""

import math

from generator import diagrams
from generator.plotstyle import label_line
from generator.chapter import Chapter, GeneratorError

CHAPTER = Chapter("ch12-rnn.md", "rnn.py")


@CHAPTER.figure
def lead(ctx):
    decay = ctx.record("--vanish").decay
    return ctx.lead([(f"factor {f:g} per step", range(len(c)), c)
                     for f, c in zip(decay.factors, decay.curves)],
                    xlabel="steps back", ylabel="gradient left", ylog=True,
                    alt="The gradient sent back k steps, on a log scale, for per-step factors "
                        "from below 1 to above 1: straight lines that fall or rise with distance",
                    caption="The chapter in one picture: sent back through the same weights at "
                            "every step, a gradient is multiplied by about the same factor per "
                            "step, so it fades below 1 and explodes above 1 (<code>python3 "
                            "rnn.py --vanish</code>; section 12.4).")



@CHAPTER.diagram
def unrolled(ctx):
    steps = ctx.record("--unroll").steps
    return diagrams.rnn_unrolled([s.plain() for s in steps], id_prefix="rnn-unrolled")


@CHAPTER.figure
def window(ctx):
    params = ctx.record("--params")
    windows = params.windows

    def draw(ax, colors):
        contexts = [w.context for w in windows]
        ax.plot(contexts, [w.feed_forward for w in windows], marker="o",
                label="feed-forward window: context x d x H")
        ax.plot(contexts, [w.rnn for w in windows], marker="s", linestyle="--",
                label="RNN: W and U, d x H + H x H, at any length")
        ax.set_xscale("log")
        ax.set(yscale="log", xlabel="context (words)",
               ylabel="weights between words and hidden layer")
        ax.legend(loc="upper left")

    return ctx.figure(draw, alt="Weights against context length on log axes: the feed-forward "
                                "line rises with the window, the RNN line stays flat",
                      caption=f"At d = {params.embed_dim}, H = {params.hidden}.")


@CHAPTER.figure
def decay(ctx):
    vanish = ctx.record("--vanish")
    k = vanish.distance

    def draw(ax, colors):
        for f, curve, style in zip(vanish.decay.factors, vanish.decay.curves,
                                   ("-", "--", "-.", ":", "-")):
            ax.plot(range(len(curve)), list(curve), linestyle=style, label=f"factor {f:g}")
        ax.axvline(k, color=colors.muted, linestyle=":", linewidth=1.2)
        ax.annotate(f"{k} words back", (k, 1e-25), xytext=(6, 0), textcoords="offset points",
                    color=colors.fg)
        ax.set(yscale="log", xlabel="distance k (steps)", ylabel=r"$\mathrm{factor}^{\,k}$")
        ax.legend(ncols=3, loc="lower left")

    return ctx.figure(draw, alt="factor to the power distance on a log scale for factors 0.5 to "
                                "1.2: straight lines falling below 1 and rising above it",
                      caption="On a log scale a per-step factor is a straight line: down below 1, "
                              "up above 1.")


@CHAPTER.figure
def clip(ctx):
    clipping = ctx.record("--clip")

    def draw(ax, colors):
        steps = [r.step for r in clipping.rows]
        width = 0.38
        ax.bar([s - width / 2 for s in steps], [r.before for r in clipping.rows], width,
               label="norm of g before", color=colors.series[1])
        ax.bar([s + width / 2 for s in steps], [r.after for r in clipping.rows], width,
               label="norm of g after", color=colors.series[0], hatch="//", edgecolor=colors.bg)
        ax.axhline(clipping.threshold, color=colors.muted, linestyle="--", linewidth=1.2)
        label_line(ax, colors, f"threshold {clipping.threshold:g}", y=clipping.threshold,
                   end="left")  # the small first steps leave room there; the last bars do not
        ax.set_yscale("log")
        ax.set_xticks(steps)
        ax.set(xlabel="step", ylabel="gradient norm")
        ax.legend(loc="upper left")

    return ctx.figure(draw, alt="Bar chart of gradient norms before and after clipping: the three "
                                "large ones are cut to the threshold, the small ones unchanged",
                      caption=f"Clipping at {clipping.threshold:g} (dashed): long steps are cut "
                              "to the threshold, short ones pass unchanged.")


@CHAPTER.figure
def measured(ctx):
    measure = ctx.record("--measure")

    def draw(ax, colors):
        for m, color in zip(measure.measured, colors.series):
            t = range(1, len(m.norms) + 1)
            ax.plot(t, list(m.norms), color=color, label=rf"measured, $\rho$ = {m.radius:g}")
            ax.plot(t, list(m.predicted), color=color, linestyle="--", linewidth=1.2)
        ax.plot([], [], color=colors.muted, linestyle="--", linewidth=1.2, label=r"$\rho^t$")
        ax.set(yscale="log", xlabel="t (steps back)",
               ylabel=r"$\Vert\, \partial h_t / \partial h_0 \,\Vert$")
        ax.legend(ncols=2, loc="lower left")

    return ctx.figure(draw, alt="Measured Jacobian norms through a tanh RNN fall well below the "
                                "dashed rho to the t lines for every spectral radius",
                      caption="Solid: measured spectral norm of dh_t/dh_0. Dashed: rho^t, the "
                              "linearised prediction.")


# -- interactive figures (docs/building.md, "Interactive figures") ---------------------

def _decades(values, pad=1):
    """{min, max}: whole powers of ten around the positive values, `pad` decades beyond."""
    positive = [v for v in values if v > 0]
    return {"min": 10.0 ** (math.floor(math.log10(min(positive))) - pad),
            "max": 10.0 ** (math.ceil(math.log10(max(positive))) + pad)}


def _rounded(curve):
    """A curve for drawing only: three significant digits (the numbers shown are exact)."""
    return [float(f"{v:.3g}") for v in curve]


@CHAPTER.widget
def decay_widget(ctx):
    """The decay figure moved by hand: factor^k, recomputed in the page as
    compute_decay does; at the table's factors and distances, the table's numbers."""
    vanish = ctx.record("--vanish")
    decay = vanish.decay
    factors = [n / 100 for n in range(1, 151)]  # 0.01 .. 1.50
    distances = list(range(len(decay.curves[0])))  # the plot's: 0 .. 100
    missing = [f for f in decay.factors if f not in factors] + \
        [k for k in decay.distances if k not in distances]
    if missing:
        raise GeneratorError(f"{ctx.where}: the sliders miss the table's {missing}")
    shown = ", ".join(f"{f:g}" for f in decay.factors)
    return ctx.widget("powers", {
        "title": "The decay, moved by hand",
        "param": {"label": "per-step factor", "values": factors,
                  "index": factors.index(vanish.example[1].factor), "digits": 2},
        "sigmoid": False,
        "distance": {"label": "distance k (steps)", "values": distances,
                     "index": distances.index(vanish.distance)},
        "reference": {"values": list(decay.factors), "label": f"the plot above: factors {shown}",
                      "name": "factor"},
        "x": {"min": distances[0], "max": distances[-1], "label": "distance k (steps)"},
        "y": {**_decades([v for curve in decay.curves for v in curve]), "log": True,
              "label": "factor^k"},
        "line_label": "factor",
        "legend": "the factor you set",
        "caption": "Computed in your browser as <code>rnn.py --vanish</code> computes it: at the "
                   "table's factors and distances these are the table's numbers. At k = "
                   f"{vanish.distance} it is the 47-word example.",
    })


@CHAPTER.widget
def scales_widget(ctx):
    """The measured Jacobian over rnn.py --scales's grid: every position of the sliders is
    a cell of that table, and the curve over t is the record's."""
    scales, measure = ctx.record("--scales"), ctx.record("--measure")
    radii, inputs, k = list(scales.radii), list(scales.input_scales), scales.distance
    grid = scales.grid
    # The figure above is --measure: these radii at its input scale, the same networks.
    j0 = inputs.index(measure.input_scale)
    context = [radii.index(m.radius) for m in measure.measured]
    for m, i in zip(measure.measured, context):
        if list(grid[i][j0].norms) != list(m.norms):
            raise GeneratorError(f"{ctx.where}: --scales and --measure disagree at rho = "
                                 f"{m.radius:g}: the widget would not start at the figure")
    columns = [_decades([v for row in grid for v in row[j].norms], pad=0)
               for j in range(len(inputs))]
    cells = [[{"lines": [_rounded(m.norms)],
               "numbers": [m.norms[k - 1], m.predicted[k - 1]],  # the table's two columns
               "y": columns[j]} for j, m in enumerate(row)] for row in grid]
    return ctx.widget("grid", {
        "title": "The measured Jacobian, at every radius and input scale",
        "command": "python3 rnn.py --scales",
        "axes": [{"label": "spectral radius \u03c1 of U", "name": "\u03c1",
                  "name_spoken": "spectral radius", "values": radii,
                  "index": radii.index(measure.top_radius)},
                 {"label": "input scale", "name": "input scale", "name_spoken": "input scale",
                  "values": inputs, "index": j0}],
        "cells": cells,
        "rows": [{"lines": [_rounded(row[0].predicted)]} for row in grid],
        "styles": {"cell": ["rw-main"], "row": ["rw-dash"]},
        "numbers": [{"html": f"measured \u2016\u2202<i>h</i><sub>{k}</sub>/\u2202<i>h</i>"
                             "<sub>0</sub>\u2016",
                     "spoken": f"measured norm of the Jacobian after {k} steps"},
                    {"html": f"\u03c1<sup>{k}</sup>", "spoken": f"rho to the {k}"}],
        "context": {"indices": context},
        "mark": k,
        "x": {"min": 1, "max": len(grid[0][0].norms), "label": "t (steps back)"},
        "y": {"log": True, "label": "\u2016\u2202h_t / \u2202h_0\u2016"},
        "chart_label": "Measured norm of dh_t/dh_0 over t on a log scale, with rho to the t "
                       "dashed; at",
        "legend": [{"cls": "rw-main", "text": "measured"},
                   {"cls": "rw-dash", "html": "\u03c1<sup><i>t</i></sup>, the linear prediction"},
                   {"cls": "rw-mark", "text": f"t = {k}, the table's column"},
                   {"cls": "rw-ref", "text": "measured at \u03c1 = "
                    + ", ".join(f"{m.radius:g}" for m in measure.measured)
                    + " (the plot above), at this input scale"}],
        "caption": "Looked up, not computed: each position of the two sliders is a cell of "
                   "the table above, printed by <code>python3 rnn.py --scales</code>; the "
                   "curves are that run's record. The vertical axis follows the input scale.",
    })
