"""Chapter 18, recurrence returns: the figures of docs/ch18-recurrence.md, from
docs/code/recurrence.py. Its tables and numbers need no code here: the page names them
(<!-- gen table recall from recurrence.py --recall -->)."""

from generator.chapter import Chapter

CHAPTER = Chapter("ch18-recurrence.md", "recurrence.py")

MARKS = ("o", "s", "^")


@CHAPTER.figure
def scan_time(ctx):
    times = ctx.record("--scan").times
    forms = ("loop", "Blelloch scan", "log-space cumsum")
    T = [row[0] for row in times.rows]

    def draw(ax, colors):
        for k, form in enumerate(forms):
            ax.plot(T, [row[1 + k] for row in times.rows], marker=MARKS[k],
                    color=colors.series[k], label=form)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length T")
        ax.set_ylabel("CPU ms, numpy, one core")
        ax.legend(loc="upper left")

    return ctx.figure(draw, alt=(
        f"CPU time of the three forms of the linear recurrence against T, {times.units} units: "
        "all three grow in proportion to T on one core, the loop lowest or level with the "
        "scan, the log form highest"))


@CHAPTER.figure
def parity(ctx):
    e = ctx.record("--parity")

    def draw(ax, colors):
        for k, name in enumerate(e.cells):
            for s in range(e.seeds):
                ax.plot(e.test_length, [column[s] for column in e.accuracy[name]],
                        color=colors.series[k], alpha=0.35, linewidth=1)
            ax.plot(e.test_length, e.mean_accuracy[name], marker=MARKS[k],
                    color=colors.series[k], label=f"{name}, mean of {e.seeds} seeds")
        ax.axhline(0.5, color=colors.muted, linestyle=":", linewidth=1)
        ax.axvline(e.train_length[0], color=colors.muted, linestyle="--", linewidth=1)
        ax.set_xscale("log", base=2)
        ax.set_ylim(0.4, 1.02)
        ax.set_xlabel("test length (trained up to 10, dashed)")
        ax.set_ylabel("test accuracy")
        ax.legend(loc="upper right")

    return ctx.figure(draw, alt=(
        "Parity accuracy against test length for the two decay ranges, every seed: the decay "
        "in (0, 1) stays at chance at every length; the decay in (-1, 1) is near 1 at the "
        "trained length and falls towards chance as the strings grow longer"))
