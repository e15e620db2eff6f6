"""Chapter 13, LSTM and GRU: the figures of docs/ch13-gated.md, from docs/code/gated.py."""

from generator import diagrams
from generator.chapter import Chapter

CHAPTER = Chapter("ch13-gated.md", "gated.py")


@CHAPTER.diagram
def lstm_cell(ctx):
    return diagrams.lstm_cell(id_prefix="lstm-cell")


def _step(ctx):
    step = ctx.record("--step")
    inputs = {"h_prev": list(step.h_prev), "x_t": list(step.x_t), "C_prev": list(step.C_prev)}
    return step, inputs


@CHAPTER.diagram
def lstm_step(ctx):
    step, inputs = _step(ctx)
    return diagrams.lstm_cell({**step.lstm.plain(), **inputs}, id_prefix="lstm-step",
                              title="The LSTM cell, the step of the tables above")


@CHAPTER.diagram
def gru_step(ctx):
    step, inputs = _step(ctx)
    # gated.py's GRU step is in d2l's convention (z keeps the state), the diagram's default
    return diagrams.gru_cell({**step.gru.plain(), "h_prev": inputs["h_prev"],
                              "x_t": inputs["x_t"]}, id_prefix="gru-step")


@CHAPTER.figure
def highway(ctx):
    hw = ctx.record("--highway").highway

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
    names = [("f", "forget f"), ("i", "input i"), ("o", "output o"),
             ("C_tilde", "candidate C~")]

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
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.invert_yaxis()
        ax.set_xlabel("parameters in the recurrent layer")
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
