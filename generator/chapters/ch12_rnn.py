"""Chapter 12, the recurrent network: the figures of docs/ch12-rnn.md, from docs/code/rnn.py.

Its tables and numbers need no code here: the page names them
(<!-- gen table decay from rnn.py --vanish -->).
"""

from generator import diagrams
from generator.chapter import Chapter

CHAPTER = Chapter("ch12-rnn.md", "rnn.py")


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
