"""Chapter 12, the recurrent network: docs/ch12-rnn.md, from docs/code/rnn.py."""

from .registry import Page
from .tables import command_table

PAGE = Page("ch12-rnn.md", script="code/rnn.py")


# Step 1: unrolling -----------------------------------------------------------

def _steps(ctx):
    return ctx.memo("unroll", ctx.script.compute_unroll)


@PAGE.block
def model_table(ctx):
    return command_table("python3 rnn.py --unroll", ctx.script.format_model_table())


@PAGE.block
def unroll_table(ctx):
    return command_table("python3 rnn.py --unroll", ctx.script.format_unroll_table(_steps(ctx)))


@PAGE.block
def prediction_table(ctx):
    return command_table("python3 rnn.py --unroll",
                         ctx.script.format_prediction_table(_steps(ctx)))


@PAGE.inline
def h1(ctx):
    return ctx.script.vec(_steps(ctx)[0]["h"])


@PAGE.inline
def a1(ctx):
    return ctx.script.vec(_steps(ctx)[0]["a"])


# Step 2: parameters ----------------------------------------------------------

@PAGE.block
def params_table(ctx):
    rnn = ctx.script
    return command_table("python3 rnn.py --params", rnn.format_params_table(rnn.compute_params()))


@PAGE.block
def window_table(ctx):
    rnn = ctx.script
    return command_table("python3 rnn.py --params",
                         rnn.format_window_table(rnn.compute_window_params()))


@PAGE.inline
def total_params(ctx):
    return ctx.script.count(ctx.script.compute_params()[-1][2])


@PAGE.inline
def model_size(ctx):
    rnn = ctx.script
    return f"|V| = {rnn.VOCAB_SIZE:,}, d = {rnn.EMBED_DIM}, H = {rnn.HIDDEN}"


@PAGE.block
def window_plot(ctx):
    rnn = ctx.script
    rows = rnn.compute_window_params(contexts=range(1, 501))

    def draw(fig, colors):
        ax = fig.subplots()
        ax.plot([c for c, _, _ in rows], [ff for _, ff, _ in rows],
                label="feed-forward window: context x d x H")
        ax.plot([c for c, _, _ in rows], [u for _, _, u in rows],
                label="RNN: U is H x H at any length")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("context (words)")
        ax.set_ylabel("hidden weights")
        ax.legend(loc="upper left")

    return ctx.figure("window", draw,
                      alt="Hidden weights against context length on log axes: the "
                          "feed-forward line rises with the window, the RNN line stays flat",
                      caption=f"Hidden weights at d = {rnn.EMBED_DIM}, H = {rnn.HIDDEN}.")


# Step 3: vanishing and exploding ---------------------------------------------

@PAGE.block
def decay_table(ctx):
    rnn = ctx.script
    return command_table("python3 rnn.py --vanish", rnn.format_decay_table(rnn.compute_decay()))


@PAGE.block
def example_table(ctx):
    rnn = ctx.script
    return command_table("python3 rnn.py --vanish",
                         rnn.format_example_table(rnn.compute_example()))


@PAGE.inline
def factor_047(ctx):
    """0.5 ** 47 as the example table prints it."""
    rnn = ctx.script
    return rnn.sci6(0.5 ** rnn.EXAMPLE_DISTANCE)


@PAGE.inline
def factor_12_47(ctx):
    """1.2 ** 47 as the example table prints it."""
    rnn = ctx.script
    return rnn.sci6(1.2 ** rnn.EXAMPLE_DISTANCE)


@PAGE.inline
def spectral_radius(ctx):
    return f"{ctx.script.compute_spectral_radius():.4f}"


@PAGE.block
def decay_plot(ctx):
    rnn = ctx.script
    distances = list(range(0, 101))

    def draw(fig, colors):
        ax = fig.subplots()
        for f in rnn.FACTORS:
            ax.plot(distances, [f ** k for k in distances], label=f"factor {f:g}")
        ax.axvline(rnn.EXAMPLE_DISTANCE, color=colors.muted, linestyle=":", linewidth=1.2)
        ax.annotate(f"{rnn.EXAMPLE_DISTANCE} words back", (rnn.EXAMPLE_DISTANCE, 1e-25),
                    xytext=(6, 0), textcoords="offset points", color=colors.fg)
        ax.set_yscale("log")
        ax.set_xlabel("distance k (steps)")
        ax.set_ylabel(r"$\mathrm{factor}^{\,k}$")
        ax.legend(ncols=5, loc="lower left")

    return ctx.figure("decay", draw,
                      alt="factor to the power distance on a log scale for factors 0.5 to "
                          "1.2: straight lines falling below 1 and rising above it",
                      caption="On a log scale a per-step factor is a straight line: "
                              "down below 1, up above 1.")


# Step 4: clipping ------------------------------------------------------------

def _clipping(ctx):
    return ctx.memo("clip", ctx.script.compute_clipping)


@PAGE.block
def clipping_table(ctx):
    return command_table("python3 rnn.py --clip", ctx.script.format_clipping_table(_clipping(ctx)))


@PAGE.inline
def clip_threshold(ctx):
    return f"{ctx.script.CLIP_THRESHOLD:g}"


@PAGE.block
def clip_plot(ctx):
    rnn = ctx.script
    rows = _clipping(ctx)

    def draw(fig, colors):
        ax = fig.subplots()
        steps = [s for s, _, _, _ in rows]
        width = 0.38
        ax.bar([s - width / 2 for s in steps], [b for _, b, _, _ in rows], width,
               label="norm of g before", color=colors.series[1])
        ax.bar([s + width / 2 for s in steps], [a for _, _, a, _ in rows], width,
               label="norm of g after", color=colors.series[0])
        ax.axhline(rnn.CLIP_THRESHOLD, color=colors.muted, linestyle="--", linewidth=1.2)
        ax.set_yscale("log")
        ax.set_xticks(steps)
        ax.set_xlabel("step")
        ax.set_ylabel("gradient norm")
        ax.legend(loc="upper left")

    return ctx.figure("clip", draw,
                      alt="Bar chart of gradient norms before and after clipping: the three "
                          "large ones are cut to the threshold, the small ones unchanged",
                      caption=f"Clipping at {rnn.CLIP_THRESHOLD:g} (dashed): long steps are "
                              "cut to the threshold, short ones pass unchanged.")


# Step 5: measured ------------------------------------------------------------

def _measured(ctx):
    return ctx.memo("measure", ctx.script.compute_measure)


@PAGE.block
def measure_table(ctx):
    return command_table("python3 rnn.py --measure",
                         ctx.script.format_measure_table(_measured(ctx)))


@PAGE.inline
def measure_setup(ctx):
    rnn = ctx.script
    return (f"H = {rnn.MEASURE_HIDDEN} units, d = {rnn.MEASURE_INPUT} inputs, "
            f"T = {rnn.MEASURE_STEPS} steps, seed {rnn.MEASURE_SEED}")


@PAGE.inline
def measure_first_step(ctx):
    """The measured norm after one step, for the largest radius, and rho itself."""
    m = _measured(ctx)[-1]
    return f"{m['norms'][0]:.3f} against rho = {m['radius']:g}"


@PAGE.inline
def measure_tanh_range(ctx):
    values = [m["mean_tanh_prime"] for m in _measured(ctx)]
    return f"{min(values):.2f} to {max(values):.2f}"


@PAGE.inline
def measure_last_radius(ctx):
    m = _measured(ctx)[-1]
    return f"rho = {m['radius']:g}: {m['norms'][-1]:.1e} after {len(m['norms'])} steps"


@PAGE.block
def measure_plot(ctx):
    measured = _measured(ctx)

    def draw(fig, colors):
        ax = fig.subplots()
        for m, color in zip(measured, colors.series):
            t = range(1, len(m["norms"]) + 1)
            ax.plot(t, m["norms"], color=color, label=rf"measured, $\rho$ = {m['radius']:g}")
            ax.plot(t, [m["radius"] ** k for k in t], color=color, linestyle="--",
                    linewidth=1.2)
        ax.plot([], [], color=colors.muted, linestyle="--", linewidth=1.2, label=r"$\rho^t$")
        ax.set_yscale("log")
        ax.set_xlabel("t (steps back)")
        ax.set_ylabel(r"$\Vert\, \partial h_t / \partial h_0 \,\Vert$")
        ax.legend(ncols=2, loc="lower left")

    return ctx.figure("measured", draw,
                      alt="Measured Jacobian norms through a tanh RNN fall well below the "
                          "dashed rho to the t lines for every spectral radius",
                      caption="Solid: measured spectral norm of dh_t/dh_0. Dashed: rho^t, "
                              "the linearised prediction.")
