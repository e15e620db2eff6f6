"""Chapter 15, long memory measured: the figures of docs/ch15-memory.md, from
docs/code/memory.py (one worker process trains every cell at every lag once)."""

import math

from generator.chapter import Chapter, GeneratorError
from generator.plotstyle import label_line

CHAPTER = Chapter("ch15-memory.md", "memory.py")


@CHAPTER.figure
def lead(ctx):
    acc = ctx.record("--accuracy")
    return ctx.lead([(name.replace("b_f=", "$b_f$ = "), acc.lags, acc.mean_accuracy[name])
                     for name in acc.models],
                    xlabel="lag (steps)", ylabel="test accuracy", xlog=True, ylim=(0, 1.05),
                    alt="Mean test accuracy against lag for each cell: high at short lags, "
                        "falling toward chance as the lag grows, at different lags per cell",
                    caption="The chapter in one picture: how far back each cell learns to "
                            "remember, as mean test accuracy over seeds against the lag "
                            "(<code>python3 memory.py --accuracy</code>; section 15.2 shows "
                            "every seed).")


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
        label_line(ax, colors, f"chance {curves_record.chance_accuracy:g}",
                   y=curves_record.chance_accuracy)
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


# -- words computed from the records: partial solutions, the exercises' answers -----------

def shown(name):
    return name.replace("b_f=", "$b_f$ = ")


def seeds_learned(accuracies):
    return sum(a >= LEARNED for a in accuracies)


def of_seeds(k, n, verb=("", "")):
    """'no seed', 'every seed', '2 seeds of 4', then verb[0] after one seed, verb[1]
    after several: of_seeds(2, 4, ("learns", "learn"))."""
    words = ("no seed" if k == 0 else "every seed" if k == n else
             f"{k} seed{'s' if k > 1 else ''} of {n}")
    return f"{words} {verb[0] if k in (0, 1, n) else verb[1]}".rstrip()


@CHAPTER.block
def partial(ctx):
    """What the accuracies between chance and 1 are, read off each seed's test loss: 0.50
    with a loss of ln 2 is four symbols sorted into two pairs; 0.75 with (ln 2) / 2 is two
    symbols told apart and two confused. Counted over every seed of the grid."""
    acc = ctx.record("--accuracy")
    pairs = dict(acc=0.5, loss=math.log(2))  # two pairs: guess within the right pair
    two_told = dict(acc=0.75, loss=math.log(2) / 2)  # two named, one pair guessed
    one_vs_three = dict(acc=0.5, loss=0.75 * math.log(3))  # one named, three guessed
    found = {"pairs": 0, "two": 0, "one": 0, "partial": 0}
    other = []  # (model, lag, accuracy, loss) of the partial seeds no kind explains
    for name in acc.models:
        for lag, seeds_a, seeds_l in zip(acc.lags, acc.accuracy[name], acc.loss[name]):
            for a, loss in zip(seeds_a, seeds_l):
                if not 0.4 <= a < LEARNED:
                    continue
                found["partial"] += 1
                kinds = [key for key, kind in (("pairs", pairs), ("two", two_told),
                                               ("one", one_vs_three))
                         if abs(a - kind["acc"]) < 0.06 and abs(loss - kind["loss"]) < 0.06]
                for key in kinds:
                    found[key] += 1
                if not kinds:
                    other.append((name, lag, a, loss))
    return (f"Accuracies near 0.50 and 0.75 are partial solutions, and the test loss says "
            f"which. Of the {found['partial']} seeds of the grid that ended between 0.40 and "
            f"{LEARNED:g}, {found['pairs']} have an accuracy near 0.50 and a loss near "
            f"ln 2 = {math.log(2):.3f}: they sorted the four symbols into two pairs and guess "
            f"within the right pair (telling one symbol from the other three would also give "
            f"0.50, with a loss of (3/4) ln 3 = {0.75 * math.log(3):.3f}: {found['one']} "
            f"seed{'' if found['one'] == 1 else 's'} here). {found['two']} are near 0.75 with a "
            f"loss near (ln 2)/2 = "
            f"{math.log(2) / 2:.3f}: they name two symbols and confuse the other two."
            + _unexplained(other))


def _unexplained(other):
    """The partial seeds no pattern explains, each named with its numbers."""
    if not other:
        return ""
    said = "; ".join(f"the {name.replace('b_f=', '$b_f$ = ')} at lag {lag}, an accuracy of "
                     f"{a:.3f} with a loss of {loss:.2f}" for name, lag, a, loss in other)
    return (f" {'The other one fits' if len(other) == 1 else f'The other {len(other)} fit'} "
            f"neither pattern: {said}.")


def row_runs(ctx, *argv):
    row = ctx.record("--row", *argv)
    return row, [r.accuracy for r in row.runs]


def grid_mean(acc, name, lag):
    return acc.mean_accuracy[name][list(acc.lags).index(lag)]


@CHAPTER.block
def answer_gru_30(ctx):
    """Exercise 1: does the GRU learn lag 30? Its mean against its lag-20 and lag-50 means
    and against chance, in words that follow from the three numbers."""
    acc = ctx.record("--accuracy")
    row, accs = row_runs(ctx, "--cell", "gru", "--lag", "30")
    k, mean = seeds_learned(accs), row.mean_accuracy
    at20, at50 = grid_mean(acc, "GRU", 20), grid_mean(acc, "GRU", 50)
    verdict = "No" if k == 0 else "Yes" if k == len(accs) else "In some seeds"
    where = ("below both" if mean < min(at20, at50) else "above both" if mean > max(at20, at50)
             else "between them")
    chance = acc.chance_accuracy
    level = ("at chance" if max(accs) < chance + 0.1 else "above chance")
    every20 = seeds_learned(acc.accuracy["GRU"][list(acc.lags).index(20)]) == len(accs)
    reach = (" The GRU's reach ends between lag 20 and lag 30." if k == 0 and every20 else "")
    return (f"**{verdict}**: {of_seeds(k, len(accs), ('reaches', 'reach'))} {LEARNED:g}, and the mean test "
            f"accuracy, {mean:.2f}, is {where} of the GRU's {at20:.2f} at lag 20 and {at50:.2f} "
            f"at lag 50 in 15.2, and {level} ({chance:.2f}).{reach}")


@CHAPTER.block
def answer_bias_3(ctx):
    """Exercise 2: does b_f = 3 reach further than b_f = 2 at lag 100?"""
    acc = ctx.record("--accuracy")
    row, accs = row_runs(ctx, "--cell", "lstm", "--forget-bias", "3", "--lag", "100")
    k3 = seeds_learned(accs)
    k2 = seeds_learned(acc.accuracy["LSTM b_f=2"][list(acc.lags).index(100)])
    verdict = "Yes" if k3 > k2 else "No" if k3 < k2 else "Not in this budget"
    return (f"**{verdict}**: with $b_f$ = 3, {of_seeds(k3, len(accs), ('learns', 'learn'))} lag 100 (mean "
            f"{row.mean_accuracy:.2f}); with $b_f$ = 2, {of_seeds(k2, len(accs))} did (mean "
            f"{grid_mean(acc, 'LSTM b_f=2', 100):.2f}, 15.2).")


@CHAPTER.block
def answer_budget(ctx):
    """Exercise 3: do four times the steps rescue the plain RNN at lag 20?"""
    acc = ctx.record("--accuracy")
    row, accs = row_runs(ctx, "--cell", "rnn", "--lag", "20", "--steps", "6000")
    k_long = seeds_learned(accs)
    k_grid = seeds_learned(acc.accuracy["plain RNN"][list(acc.lags).index(20)])
    pairs = sum(abs(r.accuracy - 0.5) < 0.06 and abs(r.loss - math.log(2)) < 0.06
                for r in row.runs)
    verdict = ("Partly" if 0 < k_long < len(accs) else "Yes" if k_long == len(accs) else "No")
    rest = (f" {pairs} of the others {'sits' if pairs == 1 else 'sit'} at 0.50 with a loss of "
            f"ln 2: two pairs (15.2)." if pairs else "")
    return (f"**{verdict}**: after {row.steps:,} steps {of_seeds(k_long, len(accs), ('has', 'have'))} learned "
            f"lag 20 (after {acc.curve_steps[-1]:,}, {of_seeds(k_grid, len(accs))}); mean test "
            f"accuracy {row.mean_accuracy:.2f} against {grid_mean(acc, 'plain RNN', 20):.2f}."
            f"{rest}")


@CHAPTER.inline
def runtime(ctx):
    """How long `python3 memory.py` trains, from the build's own run, in minutes."""
    minutes = max(1, round(ctx.record("--accuracy").cpu_seconds / 60))
    return f"about {minutes} minute{'s' if minutes > 1 else ''}"


# -- the experiment, explored: one cell at one lag, every seed --------------------------

ROW_ARGS = {"plain RNN": "--cell rnn", "GRU": "--cell gru"}  # what follows --row, per model


def row_args(name):
    """'--cell lstm --forget-bias 2' for 'LSTM b_f=2': the --row command of one model."""
    if name.startswith("LSTM b_f="):
        return f"--cell lstm --forget-bias {name[len('LSTM b_f='):]}"
    if name not in ROW_ARGS:
        raise GeneratorError(f"generator/chapters/ch15_memory.py: no --row for model {name!r}")
    return ROW_ARGS[name]


@CHAPTER.widget
def memory_widget(ctx):
    """Chapter 15's grid, one cell and lag at a time: every seed's learning curve (the
    accuracy record holds them for every lag) and its g_1 before and after training (the
    gradient record), from the runs the build already makes. It starts at the curves
    figure's lag; its faint lines there are that figure's means."""
    acc, curves, grad = ctx.record("--accuracy"), ctx.record("--curves"), ctx.record("--gradient")
    lags, models = list(acc.lags), list(acc.models)
    if list(grad.models) != models or list(grad.lags) != lags or \
            list(curves.steps) != list(acc.curve_steps):
        raise GeneratorError(f"{ctx.where}: --accuracy, --curves and --gradient disagree on "
                             "the models, lags or steps")
    at = lags.index(curves.lag)
    for name in models:
        if [list(c) for c in acc.curves[name][at]] != [list(c) for c in curves.accuracy[name]]:
            raise GeneratorError(f"{ctx.where}: {name}'s curves at lag {curves.lag} are not "
                                 "--curves': the widget would not start at the figure")
    runs = [[[{"seed": s, "accuracy": acc.accuracy[name][l][s], "loss": acc.loss[name][l][s],
               "g1_init": grad.g1_init[name][l][s], "g1_trained": grad.g1_trained[name][l][s],
               "curve": list(acc.curves[name][l][s])}
              for s in range(len(acc.accuracy[name][l]))] for l in range(len(lags))]
            for name in models]
    steps = list(acc.curve_steps)
    if any(b - a != steps[1] - steps[0] for a, b in zip(steps, steps[1:])):
        raise GeneratorError(f"{ctx.where}: the curves' steps are not evenly spaced")
    start = next(n for n, name in enumerate(models) if name == "LSTM b_f=2")
    return ctx.widget("seeds", {
        "title": "The experiment, one cell and lag at a time",
        "models": [{"name": name, "args": row_args(name),
                    "html": name.replace("b_f=", "<i>b</i><sub>f</sub>\u00a0=\u00a0"),
                    "spoken": name.replace("b_f=", "with forget-gate bias ")} for name in models],
        "lags": lags, "model": start, "lag": at, "steps": steps, "runs": runs,
        "learned": LEARNED, "chance": acc.chance_accuracy,
        "reference": "the mean of each model at this lag",
        "x": {"min": steps[0], "max": steps[-1], "label": "training step"},
        "y": {"min": 0, "max": 1.05, "label": "test accuracy"},
        "caption": "Looked up, not computed: every seed's curve, accuracy, loss and "
                   "<i>g</i><sub>1</sub> are what <code>memory.py</code> recorded while it trained "
                   f"the grid of 15.2 for this page; at lag {curves.lag} the faint lines are "
                   "the means of the figure above. A seed learns when its test accuracy is at "
                   f"least {LEARNED:g}; the mean and range are the table of 15.2's, the medians "
                   "those of 15.4.",
    })
