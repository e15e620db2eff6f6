"""Chapter 18, recurrence returns: the figures of docs/ch18-recurrence.md, from
docs/code/recurrence.py. Its tables and numbers need no code here: the page names them
(<!-- gen table recall from recurrence.py --recall -->)."""

from generator.chapter import Chapter
from generator.plotstyle import label_line

CHAPTER = Chapter("ch18-recurrence.md", "recurrence.py", data=("timemachine.txt",))

MARKS = ("o", "s", "^")


@CHAPTER.figure
def lead(ctx):
    e = ctx.record("--recall").experiment
    return ctx.lead([(name, e.test_length, e.mean_accuracy[name]) for name in e.cells],
                    xlabel="lag (steps)", ylabel="test accuracy", xlog=True, ylim=(0, 1.05),
                    alt="Mean test accuracy against lag on chapter 15's recall task for the "
                        "minGRU, the minLSTM and the minGRU with an update-gate bias: each "
                        "holds the short lags and falls to chance further back, the biased "
                        "minGRU furthest",
                    caption="The chapter in one picture: recurrences linear in their state, "
                            "trainable with a parallel scan, on chapter 15's recall task, as "
                            "mean test accuracy over seeds against the lag "
                            "(<code>python3 recurrence.py --recall</code>; section 18.3 shows "
                            "every seed).")


@CHAPTER.figure
def scan_time(ctx):
    times = ctx.record("--scan").times
    forms = ("loop", "Blelloch scan", "log-space cumsum")
    rows = [list(row) for row in times.rows]
    T = [row[0] for row in rows]

    def draw(ax, colors):
        for k, form in enumerate(forms):
            ax.plot(T, [row[1 + k] for row in rows], marker=MARKS[k],
                    color=colors.series[k], label=form)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length T")
        ax.set_ylabel("CPU ms, numpy, one core")
        ax.legend(loc="upper left")

    return ctx.figure(draw, alt=(
        f"CPU time of the three forms of the linear recurrence against T, {times.units} units: "
        "all three grow roughly in proportion to T on one core, the loop and the scan within "
        "a small factor of each other, the log form the highest"))


@CHAPTER.figure
def parity(ctx):
    e = ctx.record("--parity")
    lengths = list(e.test_length)

    def draw(ax, colors):
        for k, name in enumerate(e.cells):
            for s in range(e.seeds):
                ax.plot(lengths, [column[s] for column in e.accuracy[name]],
                        color=colors.series[k], alpha=0.35, linewidth=1)
            ax.plot(lengths, list(e.mean_accuracy[name]), marker=MARKS[k],
                    color=colors.series[k], label=f"{name}, mean of {e.seeds} seeds")
        chance = 0.5  # a parity guessed: right half the time
        ax.axhline(chance, color=colors.muted, linestyle=":", linewidth=1)
        label_line(ax, colors, f"chance {chance:g}", y=chance)
        ax.axvline(e.train_length[0], color=colors.muted, linestyle="--", linewidth=1)
        label_line(ax, colors, f"trained up to {e.train_length[0]}", x=e.train_length[0],
                   end="bottom")
        ax.set_xscale("log", base=2)
        ax.set_ylim(0.4, 1.02)
        ax.set_xlabel("test length (trained up to 10, dashed)")
        ax.set_ylabel("test accuracy")
        ax.legend(loc="center left")  # below the GRU, above the decay in (0, 1)

    return ctx.figure(draw, alt=(
        "Parity accuracy against test length for the two decay ranges and chapter 14's GRU, "
        "every seed: the decay in (0, 1) stays at chance at every length; the decay in "
        "(-1, 1) is near 1 at the trained length and falls towards chance as the strings "
        "grow longer; the GRU is near 1 at the trained length and falls more slowly"))


@CHAPTER.widget
def scan_widget(ctx):
    """The scan round by round (docs/assets/widgets/scan.js): the pairs recurrence.py's
    compute_scan_trace recorded, looked up, never recomputed. The rows of B it shows are
    the printed table's (`python3 recurrence.py --scan`, 'trace'): checked here."""
    trace = ctx.record("--scan").trace
    printed = [line.split("|")[3:-1] for line in ctx.run("--scan").tables["trace"].splitlines()[2:]]
    for (_, _, _, B), shown in zip(trace.stages, printed):
        assert [f"{x:+.4f}" for x in B] == [c.strip() for c in shown], "trace table and record differ"
    return ctx.widget("scan", {
        "title": f"Blelloch's scan over {len(trace.b)} steps, one round at a time",
        "caption": "Each round composes pairs of steps, <em>(a<sub>1</sub>, b<sub>1</sub>) then "
                   "(a<sub>2</sub>, b<sub>2</sub>) = (a<sub>1</sub>a<sub>2</sub>, "
                   "a<sub>2</sub>b<sub>1</sub> + b<sub>2</sub>)</em>, at the marked positions "
                   "only; all of a round's compositions could run at once. After the last round "
                   "B<sub>t</sub> is h<sub>t&minus;1</sub>, and a<sub>t</sub>B<sub>t</sub> + "
                   "b<sub>t</sub> is the loop's h<sub>t</sub>. The numbers are "
                   "<code>recurrence.py</code>'s (<code>compute_scan_trace</code>).",
        "T": len(trace.b), "a": floats(trace.a), "b": floats(trace.b),
        "h_loop": floats(trace.h_loop), "h_scan": floats(trace.h_scan),
        "stages": [{"name": name, "changed": [int(t) for t in changed], "A": floats(A),
                    "B": floats(B)} for name, changed, A, B in trace.stages]})


def floats(values):
    return [float(x) for x in values]
