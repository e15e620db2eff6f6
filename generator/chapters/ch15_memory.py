"""Chapter 15, long memory measured: the figures of docs/ch15-memory.md, from
docs/code/memory.py (one worker process trains every cell at every lag once)."""

from generator.chapter import Chapter

CHAPTER = Chapter("ch15-memory.md", "memory.py")

STYLES = ("-", "--", "-.", ":", "-")  # one per model, in the records' order
MARKS = ("o", "s", "^", "D", "v")
LEARNED = 0.95  # a seed whose test accuracy is at least this has learned the lag


@CHAPTER.figure
def accuracy(ctx):
    acc = ctx.record("--accuracy")
    lags = list(acc.lags)

    def draw(ax, colors):
        for n, (name, color) in enumerate(zip(acc.models, colors.series)):
            per_lag = acc.accuracy[name]
            offset = (n - 2) * 0.035  # spread the models' seeds apart on the log axis
            xs = [lag * 10 ** offset for lag in lags]
            ax.plot(xs, list(acc.mean_accuracy[name]), color=color, linestyle=STYLES[n],
                    marker=MARKS[n], label=name.replace("b_f=", "$b_f$ = "))
            for x, seeds in zip(xs, per_lag):
                ax.scatter([x] * len(seeds), list(seeds), color=color, s=10, alpha=0.55,
                           linewidths=0)
        ax.axhline(acc.chance_accuracy, color=colors.muted, linestyle=":", linewidth=1.2)
        ax.annotate("chance", (lags[0], acc.chance_accuracy), xytext=(0, 4),
                    textcoords="offset points", color=colors.fg, fontsize="small")
        ax.set_xscale("log")
        ax.set_xticks(lags, [str(lag) for lag in lags])
        ax.minorticks_off()
        ax.set(ylim=(0, 1.05), xlabel="lag (steps from the symbol to the query)",
               ylabel="test accuracy")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))

    return ctx.figure(draw, alt="Test accuracy against lag 5, 10, 20, 50 and 100 for the plain "
                                "RNN, the LSTM with forget-gate bias 0, 1 and 2, and the GRU, "
                                "every seed a dot and the mean a line, chance at 0.25",
                      caption="Lines: the mean over the seeds; dots: each seed. Dotted: chance.")


@CHAPTER.figure
def curves(ctx):
    curves_record = ctx.record("--curves")
    steps = list(curves_record.steps)
    models = list(ctx.record("--accuracy").models)  # the order of the other figures

    def draw(ax, colors):
        for n, (name, color) in enumerate(zip(models, colors.series)):
            seeds = [list(s) for s in curves_record.accuracy[name]]
            mean = [sum(col) / len(col) for col in zip(*seeds)]
            low = [min(col) for col in zip(*seeds)]
            high = [max(col) for col in zip(*seeds)]
            ax.fill_between(steps, low, high, color=color, alpha=0.15, linewidth=0)
            ax.plot(steps, mean, color=color, linestyle=STYLES[n],
                    label=name.replace("b_f=", "$b_f$ = "))
        ax.axhline(curves_record.chance_accuracy, color=colors.muted, linestyle=":",
                   linewidth=1.2)
        ax.set(ylim=(0, 1.05), xlabel="training step", ylabel="test accuracy")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))

    return ctx.figure(draw, alt=f"Learning curves at lag {curves_record.lag}: test accuracy "
                                "against training step for each model, the band spanning its "
                                "seeds; only the LSTM with forget-gate bias 2 rises far above "
                                "chance, within the first few hundred steps",
                      caption=f"Lag {curves_record.lag}. Lines: mean over the seeds; bands: "
                              "lowest to highest seed. Dotted: chance.")


@CHAPTER.figure
def gradient(ctx):
    grad = ctx.record("--gradient")
    lags = list(grad.lags)

    def draw(ax, colors):
        for n, (name, color) in enumerate(zip(grad.models, colors.series)):
            ax.plot(lags, list(grad.g1_init_median[name]), color=color, linestyle=STYLES[n],
                    marker=MARKS[n], label=name.replace("b_f=", "$b_f$ = "))
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xticks(lags, [str(lag) for lag in lags])
        ax.minorticks_off()
        ax.set(xlabel="lag",
               ylabel=r"$g_1 = \Vert \partial l / \partial x_1 \Vert$ before training")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))

    return ctx.figure(draw, alt="The gradient reaching the first input before training, against "
                                "lag on log axes: it falls by orders of magnitude with lag for "
                                "every model but the LSTM with forget-gate bias 2, which stays "
                                "near 1e-2 at lag 100",
                      caption="Median over the seeds, before any training: how much of the "
                              "loss's gradient reaches the symbol the answer depends on.")


@CHAPTER.block
def reach(ctx):
    """Who learned what, in words, from the accuracy record: for each model the longest lag
    every seed learned, and where some but not all seeds did."""
    acc = ctx.record("--accuracy")
    lines = []
    for name in acc.models:
        every, some = [], []
        for lag, seeds in zip(acc.lags, acc.accuracy[name]):
            learned = sum(a >= LEARNED for a in seeds)
            if learned == len(seeds):
                every.append(lag)
            elif learned:
                some.append(f"lag {lag} in {learned} seed{'s' if learned > 1 else ''} of "
                            f"{len(seeds)}")
        shown = name.replace("b_f=", "$b_f$ = ")
        all_text = (f"every seed at lag{'s' if len(every) > 1 else ''} "
                    f"{', '.join(map(str, every))}" if every else "no lag in every seed")
        lines.append(f"- **{shown}**: {all_text}" + (f"; {', '.join(some)}" if some else "")
                     + ".")
    return (f"Counting a seed as having learned a lag when its test accuracy is at least "
            f"{LEARNED:g}:\n\n" + "\n".join(lines))
