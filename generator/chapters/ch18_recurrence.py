"""Chapter 18, recurrence returns: the figures of docs/ch18-recurrence.md, from docs/code/recurrence.py."""

from generator.chapter import Chapter

CHAPTER = Chapter("ch18-recurrence.md", "recurrence.py")


@CHAPTER.figure
def growth(ctx):
    record = ctx.record("--squares")

    def draw(ax, colors):
        ax.plot(list(record.n), list(record.squares), marker="o", color=colors.series[0])
        ax.set_xlabel("n")
        ax.set_ylabel("n squared")

    return ctx.figure(draw, alt="The squares of 1 to 4 grow faster than the numbers")
