"""Chapter 13, LSTM and GRU: the figures of docs/ch13-gated.md, from docs/code/gated.py."""

import math

from generator import diagrams
from generator.chapter import Chapter, GeneratorError

CHAPTER = Chapter("ch13-gated.md", "gated.py")


@CHAPTER.figure
def lead(ctx):
    hw = ctx.record("--highway")
    return ctx.lead([(name, hw.curve_distances, c) for name, c in zip(hw.columns, hw.curves)],
                    xlabel="steps back", ylabel="gradient surviving", ylog=True,
                    ylim=(1e-30, 30),
                    alt="Surviving gradient against distance on a log scale: the plain RNN's "
                        "falls fastest, the forget gates' slower, the carousel's stays at 1",
                    caption="The chapter in one picture: along the LSTM's cell the gradient is "
                            "multiplied by the forget gate, a factor the network learns, "
                            "where the plain RNN's shrinks it at every step (<code>python3 "
                            "gated.py --highway</code>; section 13.2).")

LSTM_STEP, GRU_STEP = "lstm-step", "gru-step"  # the step diagrams' ids (the widget finds them)


@CHAPTER.diagram
def lstm_cell(ctx):
    return diagrams.lstm_cell(id_prefix="lstm-cell")


INPUTS = {"lstm": ("h_prev", "x_t", "C_prev"), "gru": ("h_prev", "x_t")}  # shown on each


def _step_values(step, cell):
    """What one cell's diagram shows of the --step record: its own values and its inputs."""
    return {**getattr(step, cell).plain(), **{n: list(getattr(step, n)) for n in INPUTS[cell]}}


def _paths(step, cell):
    """{diagram key: its path in the --step record}: where the widget finds each value."""
    return {**{key: f"{cell}.{key}" for key in getattr(step, cell).plain()},
            **{n: n for n in INPUTS[cell]}}


def _at(record, path):
    """The plain value at a dotted path of a record ("lstm.f")."""
    value = record
    for part in path.split("."):
        value = getattr(value, part)
    return value.plain() if hasattr(value, "plain") else value


@CHAPTER.diagram
def lstm_step(ctx):
    return diagrams.lstm_cell(_step_values(ctx.record("--step"), "lstm"), id_prefix=LSTM_STEP,
                              title="The LSTM cell, the step of the tables above")


@CHAPTER.diagram
def gru_step(ctx):
    # gated.py's GRU step is in d2l's convention (z keeps the state), the diagram's default
    return diagrams.gru_cell(_step_values(ctx.record("--step"), "gru"), id_prefix=GRU_STEP)


@CHAPTER.figure
def highway(ctx):
    hw = ctx.record("--highway")

    def draw(ax, colors):
        for name, curve, style in zip(hw.columns, hw.curves, ("-", "--", "-.", ":")):
            ax.plot(list(hw.curve_distances), list(curve), linestyle=style, label=name)
        ax.set(yscale="log", ylim=(1e-30, 30), xlabel="distance (steps)",
               ylabel="gradient surviving")
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 0.08))

    return ctx.figure(draw, alt="Surviving gradient over 500 steps on a log scale: the RNN's "
                                "falls off the chart within 100 steps, the LSTM's at f = 0.99 "
                                "stays near 1, the carousel's is exactly 1",
                      caption="Along the LSTM's cell the factor is the forget gate, which the "
                              "network learns; without a forget gate it is exactly 1.")


@CHAPTER.figure
def bias(ctx):
    rows = ctx.record("--bias").rows

    def draw(ax, colors):
        for row, style in zip(rows, ("-", "--", "-.", ":", "-")):
            ax.plot(range(len(row.curve)), list(row.curve), linestyle=style,
                    label=rf"$b_f$ = {row.b_f:g}, f = {row.f:.3f}")
        ax.set(yscale="log", xlabel="distance k (steps)", ylabel=r"$\sigma(b_f)^{\,k}$")
        ax.legend(loc="lower left", ncols=2)

    return ctx.figure(draw, alt="Curves of sigma of b_f to the power distance for b_f from 0 to "
                                "5: each unit of bias flattens the decay",
                      caption="At initialisation the forget gate is about sigma(b_f): the bias "
                              "alone sets how fast memory fades.")


@CHAPTER.figure
def gates(ctx):
    step = ctx.record("--step").lstm
    names = [("f", "forget\nf"), ("i", "input\ni"), ("o", "output\no"),
             ("C_tilde", "candidate\nC~")]  # two lines: four fit under a phone's bars

    def draw(ax, colors):
        width = 0.38
        xs = list(range(len(names)))
        for unit, hatch in ((0, None), (1, "//")):
            ax.bar([x + (unit - 0.5) * width for x in xs],
                   [getattr(step, k)[unit] for k, _ in names], width, label=f"unit {unit + 1}",
                   color=colors.series[unit], hatch=hatch, edgecolor=colors.bg)
        ax.set_xticks(xs, [label for _, label in names])
        ax.set(ylim=(0, 1), ylabel="value")
        ax.legend(loc="upper right")

    return ctx.figure(draw, size=(7.2, 3.0),
                      alt="Bar chart of the LSTM step's gate values for two units: forget gates "
                          "near 0.7 to 0.8, input and output gates near 0.5",
                      caption="The step's gates, unit by unit.")


@CHAPTER.figure
def params(ctx):
    costs = ctx.record("--params").costs

    def draw(ax, colors):
        from matplotlib.ticker import FuncFormatter

        names = [c.model for c in costs]
        bars = ax.barh(names, [c.params for c in costs], color=colors.series[0])
        for bar, c in zip(bars, costs):
            ax.annotate(f"{c.params:,}  ({c.gates} gate block{'s' if c.gates > 1 else ''})",
                        (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                        xytext=(6, 0), textcoords="offset points", va="center", color=colors.fg)
        ax.set_xlim(0, max(c.params for c in costs) * 1.45)
        # in millions: "1,000,000" tick labels ran together at a laptop's width
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v / 1e6:g}"))
        ax.invert_yaxis()
        ax.set_xlabel("parameters of the layer (millions)")
        ax.grid(axis="y", visible=False)

    return ctx.figure(draw, size=(7.2, 2.4),
                      alt="Horizontal bars of parameter counts: plain RNN one block, GRU three, "
                          "LSTM four",
                      caption="Every gate block costs the same, so the count is the number of "
                              "blocks.")


@CHAPTER.figure
def measured(ctx):
    measure = ctx.record("--measure")

    def draw(ax, colors):
        for m, color in zip(measure.measured, colors.series):
            t = range(1, len(m.full) + 1)
            ax.plot(t, list(m.full), color=color, label=rf"full, $b_f$ = {m.b_f:g}")
            ax.plot(t, list(m.path_median), color=color, linestyle=":", linewidth=1.6)
            ax.plot(t, list(m.predicted), color=color, linestyle="--", linewidth=1.0)
        ax.plot([], [], color=colors.muted, linestyle=":", label="cell path, median unit")
        ax.plot([], [], color=colors.muted, linestyle="--", linewidth=1.0,
                label=r"$\sigma(b_f)^t$")
        ax.set(yscale="log", xlabel="t (steps back)",
               ylabel=r"$\Vert\, \partial C_t / \partial C_0 \,\Vert$")
        ax.legend(ncols=2, loc="lower left")

    return ctx.figure(draw, alt="Measured LSTM cell-state Jacobian norms for b_f 0, 1, 2: the cell "
                                "path follows sigma(b_f) to the t, the full Jacobian decays slower",
                      caption="Solid: the full Jacobian. Dotted: the cell path alone (product of "
                              "forget gates, median unit). Dashed: sigma(b_f)^t.")


# -- interactive figures (docs/building.md, "Interactive figures") ---------------------

@CHAPTER.widget
def bias_widget(ctx):
    """sigma(b_f)^k moved by hand, recomputed in the page as compute_bias does; at the
    table's biases and distances, the table's numbers."""
    bias = ctx.record("--bias")
    rows = bias.rows
    biases = [round(-2 + n / 10, 1) for n in range(81)]  # b_f = -2.0, -1.9, ..., 6.0
    distances = list(range(len(rows[0].curve)))  # the plot's: 0 .. 100
    missing = [r.b_f for r in rows if r.b_f not in biases] + \
        [k for k in bias.powers if k not in distances]
    if missing:
        raise GeneratorError(f"{ctx.where}: the sliders miss the table's {missing}")
    curves = [v for r in rows for v in r.curve]
    return ctx.widget("powers", {
        "title": "The forget-gate bias, moved by hand",
        "param": {"label": "forget-gate bias", "html": "forget-gate bias <i>b</i><sub>f</sub>",
                  "values": biases, "index": biases.index(1.0), "digits": 1},
        "sigmoid": True,
        "distance": {"label": "distance k (steps)", "values": distances,
                     "index": distances.index(bias.distance)},
        "reference": {"values": [r.b_f for r in rows],
                      "label": "the plot above: b_f = " + ", ".join(f"{r.b_f:g}" for r in rows),
                      "name": "b_f ="},
        "x": {"min": distances[0], "max": distances[-1], "label": "distance k (steps)"},
        "y": {"min": 10.0 ** (math.floor(math.log10(min(curves))) - 1), "max": 10.0, "log": True,
              "label": "\u03c3(b_f)^k"},
        "line_label": "forget-gate bias",
        "legend": "the bias you set",
        "caption": "Computed in your browser as <code>gated.py --bias</code> computes it: at "
                   "the table's biases and distances these are the table's numbers. "
                   "\u03c3(<i>b</i><sub>f</sub>) is also the forget gate of "
                   "<code>gated.py --step --forget-bias B --h-prev 0,0 --x-t 0,0</code>.",
    })


# The tables of --step whose numbers the widget recomputes: {table: [(row, path)]}, the
# value column of gated.py's format_*_table, row by row. The build checks each against
# the printed table, so a change of gated.py's tables fails here, not in the reader's page.
STEP_TABLES = {
    "weights": [(0, "h_prev"), (1, "C_prev"), (2, "x_t"), (7, "b_f")],
    "lstm": [(0, "lstm.f"), (1, "lstm.i"), (2, "lstm.C_tilde"), (3, "lstm.o"),
             (4, "lstm.C_t"), (5, "lstm.h_t")],
    "cell_update": [(0, "lstm.kept"), (1, "lstm.added"), (2, "lstm.C_t")],
    "gru": [(0, "gru.z"), (1, "gru.r"), (2, "gru.h_tilde"), (3, "gru.h_t")],
    "gru_chung": [(0, "gru.z_chung"), (1, "gru.r"), (2, "gru.h_tilde"), (3, "gru.h_t")],
}
STEP_LIMITS = {"min": -10, "max": 10, "maxLength": 12}  # what gated.py's --x-t etc. accept


@CHAPTER.widget
def step_widget(ctx):
    """The LSTM and GRU steps of 13.4 and 13.5 with inputs the reader types: the page
    computes the step from the record's weights, and its tables, diagrams and command
    labels follow."""
    run, step = ctx.run("--step"), ctx.record("--step")
    tables = []
    for name, rows in STEP_TABLES.items():
        printed = [line.strip().strip("|").split("|")[-1].strip()
                   for line in run.tables[name].splitlines()[2:]]
        spec = []
        for row, path in rows:
            shown = diagrams.fmt_vec(_at(step, path))
            if not printed[row].startswith(shown):
                raise GeneratorError(f"{ctx.where}: row {row} of table {name} of `{run.command}` "
                                     f"is {printed[row]!r}, not {path} = {shown}")
            spec.append({"row": row, "value": path, "suffix": printed[row][len(shown):]})
        tables.append({"cells": printed, "rows": spec})
    inputs = [("x_t", "<i>x</i><sub><i>t</i></sub>", "x_t", "--x-t", list(step.x_t)),
              ("h_prev", "<i>h</i><sub><i>t</i>\u22121</sub>", "h_(t-1)", "--h-prev",
               list(step.h_prev)),
              ("C_prev", "<i>C</i><sub><i>t</i>\u22121</sub>", "C_(t-1)", "--c-prev",
               list(step.C_prev)),
              ("b_f", "forget bias <i>b</i><sub>f</sub>", "b_f", "--forget-bias", [step.b_f[0]])]
    return ctx.widget("cellstep", {
        "title": "The cell step, editable",
        "intro": "Type other inputs: your browser computes the step from the weights below, "
                 "with the equations above, and the tables and diagrams of 13.4 and 13.5 "
                 "follow, each under the command that prints the same numbers.",
        "note": "The bar chart of the gates and the exercises keep the page\u2019s step.",
        "prints": "prints these numbers.",
        "command": run.command,
        "weights": step.weights.plain(),
        "inputs": [{"name": n, "html": h, "label": label, "flag": flag, "default": d}
                   for n, h, label, flag, d in inputs],
        "limits": STEP_LIMITS,
        "tables": tables,
        "diagrams": [{"id": LSTM_STEP, "keys": _paths(step, "lstm")},
                     {"id": GRU_STEP, "keys": _paths(step, "gru")}],
    })
