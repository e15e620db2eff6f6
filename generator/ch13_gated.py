"""Chapter 13, LSTM and GRU: docs/ch13-gated.md, from docs/code/gated.py."""

from .registry import Page
from .tables import command_table

PAGE = Page("ch13-gated.md", script="code/gated.py")


# Step 1: the highway ---------------------------------------------------------

@PAGE.block
def highway_table(ctx):
    g = ctx.script
    return command_table("python3 gated.py --highway", g.format_highway_table(g.compute_highway()))


@PAGE.inline
def survive_500(ctx):
    g = ctx.script
    value = g.compute_highway()["values"][-1][-1]
    return f"{g.sci3(value)} (about {100 * value:.2f}%)"


@PAGE.inline
def gone_by(ctx):
    return str(ctx.script.first_distance_below(0.5, 1e-14))


@PAGE.block
def highway_plot(ctx):
    g = ctx.script
    distances = list(range(0, 501, 2))

    def draw(fig, colors):
        ax = fig.subplots()
        for name, f in g.HIGHWAY_COLUMNS:
            ax.plot(distances, [f ** k for k in distances], label=name)
        ax.set_yscale("log")
        ax.set_ylim(1e-30, 3)
        ax.set_xlabel("distance (steps)")
        ax.set_ylabel("gradient surviving")
        ax.legend(loc="lower left")

    return ctx.figure("highway", draw,
                      alt="Surviving gradient over 500 steps on a log scale: the RNN's falls "
                          "off the chart within 100 steps, the LSTM's at f = 0.99 stays near 1",
                      caption="The RNN's factor is whatever its weights make it; along the "
                              "LSTM's cell it is the forget gate, which the network learns.")


# Step 2: the forget-gate bias -----------------------------------------------

@PAGE.block
def bias_table(ctx):
    g = ctx.script
    return command_table("python3 gated.py --bias", g.format_bias_table(g.compute_bias()))


@PAGE.inline
def sigma_2(ctx):
    return f"{float(ctx.script.sigmoid(2.0)):.4f}"


@PAGE.inline
def bias_ratio(ctx):
    return ctx.script.sci3(ctx.script.compute_bias_ratio())


@PAGE.block
def bias_plot(ctx):
    g = ctx.script
    distances = list(range(0, 101))

    def draw(fig, colors):
        ax = fig.subplots()
        for row in g.compute_bias():
            ax.plot(distances, [row["f"] ** k for k in distances],
                    label=rf"$b_f$ = {row['b_f']:g}, f = {row['f']:.3f}")
        ax.set_yscale("log")
        ax.set_xlabel("distance k (steps)")
        ax.set_ylabel(r"$\sigma(b_f)^{\,k}$")
        ax.legend(loc="lower left", ncols=2)

    return ctx.figure("bias", draw,
                      alt="Curves of sigma of b_f to the power distance for b_f from 0 to 5: "
                          "each unit of bias flattens the decay",
                      caption="At initialisation the forget gate is about sigma(b_f): the bias "
                              "alone sets how fast memory fades.")


# Step 3: one step ------------------------------------------------------------

def _lstm(ctx):
    return ctx.memo("lstm", ctx.script.compute_lstm_step)


@PAGE.block
def weights_table(ctx):
    return command_table("python3 gated.py --step", ctx.script.format_weights_table())


@PAGE.block
def lstm_table(ctx):
    return command_table("python3 gated.py --step", ctx.script.format_lstm_table(_lstm(ctx)))


@PAGE.block
def cell_update_table(ctx):
    return command_table("python3 gated.py --step",
                         ctx.script.format_cell_update_table(_lstm(ctx)))


@PAGE.inline
def forget_values(ctx):
    return ctx.script.vec(_lstm(ctx)["f"])


@PAGE.block
def gates_plot(ctx):
    step = _lstm(ctx)
    names = [("f", "forget f"), ("i", "input i"), ("o", "output o"), ("C_tilde", "candidate C~")]

    def draw(fig, colors):
        ax = fig.subplots()
        width = 0.38
        xs = list(range(len(names)))
        for unit in (0, 1):
            ax.bar([x + (unit - 0.5) * width for x in xs], [step[k][unit] for k, _ in names],
                   width, label=f"unit {unit + 1}", color=colors.series[unit])
        ax.set_xticks(xs, [label for _, label in names])
        ax.set_ylim(0, 1)
        ax.set_ylabel("value")
        ax.legend(loc="upper right")

    return ctx.figure("gates", draw, size=(7.2, 3.0),
                      alt="Bar chart of the LSTM step's gate values for two units: forget "
                          "gates near 0.7 to 0.8, input and output gates near 0.5",
                      caption="The step's gates, unit by unit.")


@PAGE.block
def gru_table(ctx):
    g = ctx.script
    return command_table("python3 gated.py --step", g.format_gru_table(g.compute_gru_step()))


# Step 4: parameters ----------------------------------------------------------

def _params(ctx):
    return ctx.memo("params", ctx.script.compute_params)


@PAGE.block
def params_table(ctx):
    return command_table("python3 gated.py --params", ctx.script.format_params_table(_params(ctx)))


@PAGE.inline
def param_sizes(ctx):
    return f"d = {ctx.script.PARAM_INPUT}, H = {ctx.script.PARAM_HIDDEN}"


@PAGE.inline
def gru_share(ctx):
    rows = _params(ctx)
    gru, lstm = rows[1][2], rows[2][2]
    return f"{100 * gru / lstm:.0f}%, {lstm - gru:,} parameters fewer"


@PAGE.block
def params_plot(ctx):
    rows = _params(ctx)

    def draw(fig, colors):
        ax = fig.subplots()
        names = [name for name, *_ in rows]
        bars = ax.barh(names, [n for _, _, n, _, _ in rows], color=colors.series[0])
        for bar, (_, gates, n, _, _) in zip(bars, rows):
            ax.annotate(f"{n:,}  ({gates} gate block{'s' if gates > 1 else ''})",
                        (bar.get_width(), bar.get_y() + bar.get_height() / 2),
                        xytext=(6, 0), textcoords="offset points", va="center",
                        color=colors.fg)
        ax.set_xlim(0, max(n for _, _, n, _, _ in rows) * 1.45)
        ax.invert_yaxis()
        ax.set_xlabel("parameters in the recurrent layer")
        ax.grid(axis="y", visible=False)

    return ctx.figure("params", draw, size=(7.2, 2.4),
                      alt="Horizontal bars of parameter counts: plain RNN one block, GRU three, "
                          "LSTM four",
                      caption="Every gate block costs the same, so the count is the number of "
                              "blocks.")


# Step 5: measured ------------------------------------------------------------

def _measured(ctx):
    return ctx.memo("measure", ctx.script.compute_measure)


@PAGE.block
def measure_table(ctx):
    return command_table("python3 gated.py --measure",
                         ctx.script.format_measure_table(_measured(ctx)))


@PAGE.inline
def measure_setup(ctx):
    g = ctx.script
    return (f"H = {g.MEASURE_HIDDEN} units, d = {g.MEASURE_INPUT} inputs, "
            f"T = {g.MEASURE_STEPS} steps, seed {g.MEASURE_SEED}")


@PAGE.inline
def measure_full_vs_path(ctx):
    """At the largest bias and the last step: the full norm against the best unit's path."""
    m = _measured(ctx)[-1]
    return (f"b_f = {m['b_f']:g}, after {len(m['full'])} steps: {m['full'][-1]:.1e} in full, "
            f"{m['path_max'][-1]:.1e} along the best unit's cell path")


@PAGE.block
def measure_plot(ctx):
    measured = _measured(ctx)

    def draw(fig, colors):
        ax = fig.subplots()
        for m, color in zip(measured, colors.series):
            t = range(1, len(m["full"]) + 1)
            ax.plot(t, m["full"], color=color, label=rf"full, $b_f$ = {m['b_f']:g}")
            ax.plot(t, m["path_median"], color=color, linestyle=":", linewidth=1.6)
            ax.plot(t, [m["sigma"] ** k for k in t], color=color, linestyle="--", linewidth=1.0)
        ax.plot([], [], color=colors.muted, linestyle=":", label="cell path, median unit")
        ax.plot([], [], color=colors.muted, linestyle="--", linewidth=1.0,
                label=r"$\sigma(b_f)^t$")
        ax.set_yscale("log")
        ax.set_xlabel("t (steps back)")
        ax.set_ylabel(r"$\Vert\, \partial C_t / \partial C_0 \,\Vert$")
        ax.legend(ncols=2, loc="lower left")

    return ctx.figure("measured", draw,
                      alt="Measured LSTM cell-state Jacobian norms for b_f 0, 1, 2: the cell "
                          "path follows sigma(b_f) to the t, the full Jacobian decays slower",
                      caption="Solid: the full Jacobian. Dotted: the cell path alone (product of "
                              "forget gates, median unit). Dashed: sigma(b_f)^t.")
