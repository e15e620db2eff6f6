"""The plots' label check (generator/plotstyle.layout_problems), on figures made to fail.

Every figure the build draws, and its phone variant, goes through this check
(plotstyle.render); tests/test_build_failures.py breaks a chapter's plot and sees
the build refuse it. Here each kind of collision is made on purpose, in a figure
whose geometry leaves no doubt, and the check must name it; a figure laid out
with room to spare must pass.
"""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from generator import plotstyle  # noqa: E402


def laid_out(draw, size=(7.2, 3.6), **grid):
    """A figure as render makes it (constrained layout, DPI), drawn: its problems."""
    fig = plt.figure(figsize=size, dpi=plotstyle.DPI, layout="constrained")
    try:
        draw(fig.subplots(**grid) if grid else fig.subplots())
        fig.draw_without_rendering()
        return plotstyle.layout_problems(fig)
    finally:
        plt.close(fig)


def test_a_plot_with_room_to_spare_passes():
    def draw(ax):
        ax.plot([0, 1, 2], [1, 3, 2], label="a curve")
        ax.set(xlabel="steps", ylabel="value", title="A plot")
        ax.legend(loc="upper left")
    assert laid_out(draw) == []


def test_tick_labels_that_run_together_are_named():
    def draw(ax):  # seven-digit ticks every 200,000 on a 3-inch axis: no room between them
        ax.set_xlim(0, 1_600_000)
        ax.set_xticks(range(0, 1_600_001, 200_000),
                      [f"{v:,}" for v in range(0, 1_600_001, 200_000)])
    problems = laid_out(draw, size=(3.0, 2.0))
    assert any("x tick label '1,000,000' and the axes's x tick label '1,200,000'" in p
               and ("run together" in p or "overlap" in p) for p in problems), problems


def test_labels_a_few_pixels_apart_on_one_line_run_together():
    """Two panels' x ticks "1.0" and "0.0" side by side, a few pixels apart: they overlap
    nothing, but read as one sequence ("1.0 0.0"). One em apart is the least."""
    def draw(axes):
        for ax in axes:
            ax.set(xlim=(0, 1), ylim=(0, 1))
            ax.set_xticks([0, 1], ["0.0", "1.0"])
            ax.set_yticks([])
    problems = laid_out(draw, size=(4.0, 2.0), ncols=2, sharey=True)
    pair = [p for p in problems if "panel 1's x tick label '1.0'" in p
            and "panel 2's x tick label '0.0'" in p]
    assert pair and "run together" in pair[0], problems
    gap = float(pair[0].split("(")[1].split(" px")[0])
    assert 0 <= gap < plotstyle.GAP_ON_ONE_LINE, pair


def test_a_y_axis_title_beside_its_tick_labels_is_not_on_their_line():
    """The y title is turned a quarter: matplotlib sets it 4 points from the tick labels,
    which is not two labels on one line."""
    def draw(ax):
        ax.plot([0, 1], [0, 1000])
        ax.set_ylabel("a long title for the y axis")
    assert laid_out(draw) == []


def test_axis_titles_of_two_panels_that_overlap_are_named():
    def draw(axes):
        for ax in axes:
            ax.set_xlabel("a title far too long for the width of its panel")
    problems = laid_out(draw, size=(4.0, 2.5), ncols=2)
    assert any("panel 1's x-axis title" in p and "panel 2's x-axis title" in p
               and "overlap" in p for p in problems), problems


def test_a_legend_over_a_title_is_named():
    def draw(ax):
        ax.plot([0, 1], [0, 1], label="a curve with a long name")
        ax.set_title("The title")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 0.97))
    problems = laid_out(draw)
    assert any("the axes's title 'The title' and the axes's legend overlap" in p
               for p in problems), problems


def test_a_legend_that_leaves_the_figure_is_named():
    def draw(ax):
        ax.plot([0, 1], [0, 1], label="a curve")
        leg = ax.legend(loc="center left", bbox_to_anchor=(1.6, 0.5))
        leg.set_in_layout(False)  # the layout does not make room: it sticks out
    problems = laid_out(draw)
    assert "the axes's legend leaves the figure" in problems, problems


def test_the_phone_variant_may_grow_downwards_but_not_sideways():
    fig = plt.figure(figsize=(4.0, 2.6), dpi=plotstyle.DPI, layout="constrained")
    try:
        ax = fig.subplots()
        ax.plot([0, 1], [0, 1], label="a curve")
        ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.6)).set_in_layout(False)
        fig.draw_without_rendering()
        assert plotstyle.layout_problems(fig, tight=True) == []  # the tight box holds it
        assert "the axes's legend leaves the figure" in plotstyle.layout_problems(fig)
        ax.get_legend().set_bbox_to_anchor((1.8, 0.5))
        fig.draw_without_rendering()
        assert "the axes's legend leaves the figure" in plotstyle.layout_problems(fig, tight=True)
    finally:
        plt.close(fig)


def test_render_refuses_a_plot_whose_labels_collide_and_says_which_variant():
    def draw(ax, colors):  # fine at 7.2 inches, too long for the phone's 4
        names = ["forget gate f", "input gate i", "output gate o", "candidate C~"]
        ax.bar(range(4), [0.8, 0.5, 0.5, 0.1], color=colors.series[0])
        ax.set_xticks(range(4), names)
    plotstyle.render(draw)
    with pytest.raises(plotstyle.LayoutError) as caught:
        plotstyle.render(draw, plotstyle.phone_size(plotstyle.SIZE), phone=True)
    assert str(caught.value).startswith("the phone variant (576 px wide, light): ")
    assert "x tick label" in str(caught.value)


def test_on_a_phone_legends_move_under_the_axis_title():
    """_legends_below: the legend of a panel sits under its x-axis title, however short
    the panel (the lower of two stacked panels once had its title under its legend)."""
    def draw(axes, colors):
        for ax in axes:
            ax.plot(range(50), range(50), label="a curve with a long legend entry")
            ax.legend(loc="upper right")
        axes[1].set_xlabel("epoch")
    images = plotstyle.render(draw, plotstyle.phone_size((7.2, 4.2)), phone=True,
                              grid=dict(nrows=2, sharex=True))  # raises if they collide
    assert set(images) == {"light", "dark"}


# -- a reference line's label (plotstyle.label_line) -------------------------------------

COLORS = plotstyle.THEMES["light"]


def test_a_reference_lines_label_sits_at_its_end_beside_it():
    """A horizontal line's label just above its right end; a vertical line's just right
    of its bottom (end="bottom"): on the plot, clear of the line, in the text's colour."""
    fig = plt.figure(figsize=(7.2, 3.6), dpi=plotstyle.DPI, layout="constrained")
    try:
        ax = fig.subplots()
        ax.plot([0, 10], [0, 1])
        ax.axhline(0.25)
        ax.axvline(3)
        flat = plotstyle.label_line(ax, COLORS, "chance 0.25", y=0.25)
        upright = plotstyle.label_line(ax, COLORS, "trained up to 3", x=3, end="bottom")
        fig.draw_without_rendering()
        axes, to_px = ax.get_window_extent(), ax.transData.transform
        box = flat.get_window_extent()
        assert flat.get_text() == "chance 0.25" and flat.get_color() == COLORS.fg
        assert axes.x1 - 10 <= box.x1 <= axes.x1 and to_px((0, 0.25))[1] < box.y0 < to_px((0, 0.25))[1] + 10
        box = upright.get_window_extent()
        assert to_px((3, 0))[0] < box.x0 < to_px((3, 0))[0] + 10 and axes.y0 <= box.y0 <= axes.y0 + 10
        assert plotstyle.layout_problems(fig) == []
    finally:
        plt.close(fig)


def test_a_reference_lines_label_under_a_legend_is_named():
    """label_line's labels are checked like the others: one under the legend is named."""
    def draw(ax):
        ax.plot([0, 1], [0, 1], label="a curve with a long name")
        ax.axhline(0.97)
        ax.legend(loc="upper right")
        plotstyle.label_line(ax, COLORS, "the threshold, 0.97", y=0.97)
    problems = laid_out(draw)
    assert any("the axes's legend and the axes's line label 'the threshold, 0.97' overlap" in p
               for p in problems), problems


def test_a_figure_with_line_labels_renders_to_the_same_bytes_twice():
    def draw(ax, colors):
        ax.plot([1, 2, 3], [0.2, 0.6, 0.9], label="a curve")
        ax.axhline(0.25, color=colors.muted, linestyle=":")
        plotstyle.label_line(ax, colors, "chance 0.25", y=0.25)
        ax.legend(loc="upper left")
    assert plotstyle.render(draw) == plotstyle.render(draw)


def test_a_line_label_over_a_bar_is_named():
    """The chance label at the right end of its line, with a bar under that end (chapter
    16's truncation plot on a phone did this); the same plot with room right of the last
    bar passes."""
    def plot(right):
        def draw(ax):
            ax.bar([0, 1, 2], [0.9, 0.3, 1.0], 0.6)
            ax.axhline(0.25, linestyle="--")
            plotstyle.label_line(ax, COLORS, "chance 0.25", y=0.25)
            ax.set(xlim=(-0.5, right), ylim=(0, 1.05))
        return laid_out(draw, size=(3.0, 2.4))
    assert any("line label 'chance 0.25' covers a bar" in p for p in plot(2.4)), plot(2.4)
    assert plot(4.0) == []


def test_a_legend_over_a_bar_or_a_point_is_named():
    """A legend inside the axes, upper right, over a bar that reaches the top (chapter
    16's initialisation plot did this on the desktop), and over a point; above the axes
    it passes."""
    def plot(what, inside):
        def draw(ax):
            if what == "bar":
                ax.bar([0, 1, 2], [0.3, 0.5, 1.0], 0.6, label="a bar")
            else:
                ax.scatter([0, 1, 2], [0.3, 0.5, 1.0], label="a point")
            ax.set(xlim=(-0.5, 2.5), ylim=(0, 1.05))
            ax.legend(**(dict(loc="upper right") if inside else
                         dict(loc="lower center", bbox_to_anchor=(0.5, 1.0))))
        return laid_out(draw, size=(3.0, 2.4))
    assert any("legend covers a bar" in p for p in plot("bar", True)), plot("bar", True)
    assert any("legend covers a point" in p for p in plot("point", True)), plot("point", True)
    assert plot("bar", False) == [] and plot("point", False) == []
