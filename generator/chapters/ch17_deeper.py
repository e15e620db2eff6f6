"""Chapter 17, deeper and both ways: the figures and the diagram of docs/ch17-deeper.md,
from docs/code/deeper.py (one worker process trains each kind of model once)."""

import html

from generator import plotstyle
from generator.chapter import Chapter

CHAPTER = Chapter("ch17-deeper.md", "deeper.py", data=("timemachine.txt",))


@CHAPTER.figure
def lead(ctx):
    rec = ctx.record("--reverse")
    return ctx.lead([("encoder-decoder, without attention", rec.lengths, rec.mean_without),
                     ("with attention", rec.lengths, rec.mean_with)],
                    xlabel="length of the string", ylabel="reversed exactly", ylim=(-0.03, 1.05),
                    alt="Share of strings reversed exactly against their length: without "
                        "attention it falls as strings grow, with attention it stays higher",
                    caption="The chapter in one picture: an encoder-decoder must squeeze the "
                            "whole string into one state; attention lets each output step read "
                            "the input again (<code>python3 deeper.py --reverse</code>; section "
                            "17.3).")


STYLES = ("-", "--", "-.")
MARKS = ("o", "s", "^")


def mean(values):
    values = list(values)
    return sum(values) / len(values)


@CHAPTER.figure
def curves(ctx):
    stacked = ctx.record("--stacked")

    def draw(ax, colors):
        for n, (run, color) in enumerate(zip(stacked.runs, colors.series)):
            steps = list(run.curve_steps)
            seeds = [list(point) for point in run.curve]
            ax.fill_between(steps, [min(p) for p in seeds], [max(p) for p in seeds], color=color,
                            alpha=0.18, linewidth=0)
            ax.plot(steps, [mean(p) for p in seeds], color=color, linestyle=STYLES[n],
                    marker=MARKS[n], label=f"{run.name}, {run.params:,} parameters")
        ax.set(yscale="log", xlabel="training step", ylabel="validation perplexity")
        from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter
        ax.yaxis.set_major_locator(FixedLocator([6, 7, 8, 9, 10, 12]))
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_locator(NullLocator())
        ax.legend(loc="upper right")

    return ctx.figure(draw, alt="Validation perplexity against training step for one GRU layer "
                                "of 32 units and two layers of 22 and of 32: the two layers of "
                                "32 lie lowest and turn up at the end; the two layers of 22 lie "
                                "highest",
                      caption=f"Validation perplexity on {stacked.curve_windows} of the "
                              f"validation windows, every {stacked.curve_every} steps. Lines: "
                              "the mean over the seeds; bands: lowest to highest seed.")


@CHAPTER.figure
def leak(ctx):
    record = ctx.record("--leak")

    def draw(ax, colors):
        for n, (name, ppl, color) in enumerate(zip(record.names, record.position_ppl,
                                                   colors.series)):
            ax.plot(range(1, len(ppl) + 1), list(ppl), color=color, linestyle=STYLES[n],
                    marker=MARKS[n], markersize=4, label=name)
        T = len(record.position_ppl[0])
        ax.axvline(T - 0.5, color=colors.muted, linestyle=":", linewidth=1.2)
        ax.annotate("the answer is\npast the window", (T - 0.5, 2),
                    xytext=(-6, 0), textcoords="offset points", ha="right", color=colors.fg,
                    fontsize="small")
        ax.set(yscale="log", xlabel="position t (predicting character t + 1)",
               ylabel="validation perplexity")
        ax.legend(loc="center left")

    return ctx.figure(draw, alt="Validation perplexity at each position of the window: the "
                                "two one-directional GRUs between 6 and 9 everywhere but the "
                                "first positions, the bidirectional GRU near 1 at every "
                                "position but the last, where it jumps above both",
                      caption="Perplexity at each position, the mean over the seeds. "
                              "The bidirectional model is near 1 wherever its backward half "
                              "has already read the character it is asked to predict.")


@CHAPTER.figure
def reverse(ctx):
    record = ctx.record("--reverse")
    lengths = list(record.lengths)

    def draw(ax, colors):
        for n, (name, means, per_length, color) in enumerate(
                (("without attention", record.mean_without, record.without, colors.series[0]),
                 ("with attention", record.mean_with, record.with_attention,
                  colors.series[1]))):
            offset = (n - 0.5) * 0.16
            ax.plot(lengths, list(means), color=color, linestyle=STYLES[n], marker=MARKS[n],
                    label=name)
            for x, seeds in zip(lengths, per_length):
                ax.scatter([x + offset] * len(seeds), list(seeds), color=color, s=10,
                           alpha=0.6, linewidths=0)
        ax.set(ylim=(-0.03, 1.05), xlabel="length of the string (symbols)",
               ylabel="strings reversed without an error")
        phone = ax.figure.get_size_inches()[0] < plotstyle.SIZE[0] / 1.5
        ax.set_xticks(lengths[1::2] if phone else lengths)  # a phone: every other length
        ax.legend(loc="lower left")

    return ctx.figure(draw, alt="The share of test strings reversed exactly against their "
                                "length: without attention it falls from 1 at the shortest "
                                "strings to near 0 at the longest; with attention it stays at 1",
                      caption="Lines: the mean over the seeds; dots: each seed. Both models "
                              "have the same parameters; only where the context comes from "
                              "differs.")


@CHAPTER.figure
def heatmaps(ctx):
    record = ctx.record("--attention")
    strings = [list(s) for s in record.strings]

    def draw(axes, colors):
        from matplotlib.colors import LinearSegmentedColormap

        fig = axes[0].figure
        phone = fig.get_size_inches()[0] < plotstyle.SIZE[0] / 1.5
        if phone:  # the phone's: too narrow for three maps side by side; one a row
            for ax in axes:
                ax.remove()
            fig.set_size_inches(plotstyle.PHONE_WIDTH, 0.3 * sum(widths) + 2.4)
            grid = fig.add_gridspec(len(widths), max(widths), height_ratios=widths)
            axes = [fig.add_subplot(grid[n, :w]) for n, w in enumerate(widths)]
        cmap = LinearSegmentedColormap.from_list("weights", [colors.bg, colors.series[0]])
        for ax, (source, written, weights) in zip(axes, strings):
            rows = [list(r) for r in weights]
            image = ax.imshow(rows, cmap=cmap, vmin=0, vmax=1, aspect="equal")
            ax.set_xticks(range(len(source)), list(source))
            for k, tick in enumerate(ax.xaxis.get_major_ticks()):  # every other letter a
                tick.set_pad(tick.get_pad() + (12 if k % 2 else 0))  # line lower, or they
                # read as words: the columns are narrower than a letter and an em
            ax.set_yticks(range(len(written)), list(written))
            ax.tick_params(length=0, labelsize=9 if phone else None)  # the site's face
            ax.grid(False)  # is taller than DejaVu: a phone's rows are a letter apart
            for spine in ax.spines.values():
                spine.set_visible(False)
            ax.set_xlabel("reads")
        for ax in axes:
            if ax.get_subplotspec().is_first_col():
                ax.set_ylabel("writes")
        cbar = axes[-1].figure.colorbar(image, ax=list(axes), shrink=0.8, pad=0.02)
        cbar.outline.set_visible(False)
        cbar.set_label("weight")

    widths = [len(s[0]) for s in strings]
    return ctx.figure(draw, size=(7.2, 3.6), grid=dict(ncols=len(strings), width_ratios=widths),
                      alt="Three heat maps of attention weights, one per test string: each "
                          "output symbol's weight sits on the input symbol it copies, an "
                          "anti-diagonal from top right to bottom left",
                      caption="The weights of the model with attention (seed 0): a row per "
                              "output step, a column per input symbol, the stronger the colour "
                              "the more weight. "
                              "The first map's numbers are in the table below.")


# ---------------------------------------------------------------------------
# The diagram: the encoder-decoder with attention, on a real string
# ---------------------------------------------------------------------------
# Drawn as docs/assets/diagrams.css styles the site's cell diagrams: lines and boxes in
# SVG, each symbol and number TeX in a foreignObject, which the math hook typesets like
# the page's formulas (same look, same font).

def _n(v):
    text = f"{v:.1f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _fo(x, y, w, h, inner):
    """HTML centred on (x, y) in a w x h box."""
    return (f'<foreignObject x="{_n(x - w / 2)}" y="{_n(y - h / 2)}" width="{_n(w)}" '
            f'height="{_n(h)}"><div class="dg-fo">{inner}</div></foreignObject>')


def _tex(tex):
    return f'<span class="arithmatex">\\({html.escape(tex)}\\)</span>'


def _arrow(prefix, x1, y1, x2, y2, cls="dg-wire"):
    return (f'<path class="{cls}" d="M{_n(x1)} {_n(y1)}L{_n(x2)} {_n(y2)}" '
            f'marker-end="url(#{prefix}-{cls})"/>')


def _label(x, y, text, anchor="start"):
    return (f'<text class="dg-label dg-muted" x="{_n(x)}" y="{_n(y)}" '
            f'text-anchor="{anchor}">{html.escape(text)}</text>')


def seq2seq_svg(source, written, weights, prefix="seq2seq-attention"):
    """The encoder reading `source`, the decoder writing `written`, and a line from every
    encoder state to every decoder step, as thick and as opaque as its weight; the
    largest weight of each step is written beside the step's output."""
    n = len(source)
    width, left, right = 440, 96, 356  # the first and the last cell's centre
    xs = [left + (right - left) * k / max(n - 1, 1) for k in range(n)]
    y_out, y_dec, y_enc, y_in = 18, 64, 222, 266
    cell_w, cell_h = 40, 30
    tops = [max(range(n), key=lambda i: row[i]) for row in weights]
    parts = [_label(4, y_out + 4.5, "writes"), _label(4, y_in + 4.5, "reads"),
             _label(right + cell_w / 2 + 8, y_dec + 4.5, "decoder"),
             _label(right + cell_w / 2 + 8, y_enc + 4.5, "encoder")]
    for j, row in enumerate(weights):  # attention: every encoder state to every decoder step
        for i, a in enumerate(row):
            if a >= 0.005:
                parts.append(f'<path class="dg-o" d="M{_n(xs[i])} {_n(y_enc - cell_h / 2)}'
                             f'L{_n(xs[j])} {_n(y_dec + cell_h / 2)}" fill="none" '
                             f'stroke-width="{0.6 + 4.4 * a:.2f}" '
                             f'stroke-opacity="{0.25 + 0.75 * a:.2f}"/>')
    for y in (y_enc, y_dec):  # the states, left to right
        for k in range(n - 1):
            parts.append(_arrow(prefix, xs[k] + cell_w / 2, y, xs[k + 1] - cell_w / 2, y,
                                "dg-hw"))
    parts.append(_arrow(prefix, left - cell_w / 2 - 40, y_dec, left - cell_w / 2, y_dec,
                        "dg-hw"))
    parts.append(_fo(left - cell_w / 2 - 20, y_dec - 13, 40, 22, _tex(f"h_{n}")))
    for k in range(n):
        x = xs[k]
        parts += [f'<rect class="dg-cell" x="{_n(x - cell_w / 2)}" y="{_n(y_enc - cell_h / 2)}" '
                  f'width="{cell_w}" height="{cell_h}" rx="5"/>',
                  _fo(x, y_enc, cell_w, cell_h, _tex(f"h_{k + 1}")),
                  _arrow(prefix, x, y_in - 11, x, y_enc + cell_h / 2),
                  _fo(x, y_in, 30, 24, f'<code class="dg-word">{html.escape(source[k])}</code>'),
                  f'<rect class="dg-cell" x="{_n(x - cell_w / 2)}" y="{_n(y_dec - cell_h / 2)}" '
                  f'width="{cell_w}" height="{cell_h}" rx="5"/>',
                  _fo(x, y_dec, cell_w, cell_h, _tex(f"s_{k + 1}")),
                  _arrow(prefix, x, y_dec - cell_h / 2, x, y_out + 11),
                  _fo(x, y_out, 30, 24, f'<code class="dg-word">{html.escape(written[k])}</code>'),
                  _fo(x + 25, y_dec - cell_h / 2 - 14, 36, 18,
                      _tex(f"{weights[k][tops[k]]:.2f}"))]
    height = y_in + 16
    markers = "".join(
        f'<marker id="{prefix}-{cls}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="{size}" '
        f'markerHeight="{size}" orient="auto-start-reverse"><path class="{cls}-head" '
        f'd="M0 0L10 5L0 10z"/></marker>' for cls, size in (("dg-wire", 5), ("dg-hw", 3.5)))
    steps = "; ".join(f"step {j + 1} writes {written[j]}, with its largest weight, "
                      f"{weights[j][i]:.2f}, on h sub {i + 1}, which read {source[i]}"
                      for j, i in enumerate(tops))
    title = f"The encoder-decoder with attention reversing “{source}”"
    desc = (f"Diagram: {n} encoder cells, h sub 1 to h sub {n}, read the symbols "
            f"{', '.join(source)} from left to right, each state passed to the next. The "
            f"decoder starts from the encoder's last state, h sub {n}. Its {n} cells, s sub 1 "
            f"to s sub {n}, write {', '.join(written)}. A line runs from every encoder state "
            f"to every decoder step, as thick as the attention weight between them: {steps}.")
    svg = "\n".join([
        f'<svg xmlns="http://www.w3.org/2000/svg" class="dg" viewBox="0 0 {width} {height}" '
        f'width="{width}" height="{height}" role="img" aria-labelledby="{prefix}-title" '
        f'aria-describedby="{prefix}-desc">',
        f'<title id="{prefix}-title">{html.escape(title)}</title>',
        f'<desc id="{prefix}-desc">{html.escape(desc)}</desc>', f"<defs>{markers}</defs>",
        *parts, "</svg>"])
    caption = (f"The model with attention (seed 0) reversing the test string "
               f"<code>{html.escape(source)}</code>. A line joins each encoder state "
               f"<em>h<sub>i</sub></em> to each decoder step, as thick as its weight "
               f"<em>a<sub>ji</sub></em>; the number beside each output is its step's largest "
               f"weight. The decoder starts from <em>h</em><sub>{n}</sub>, the encoder's last "
               f"state. The lines cross: the first output reads the last input.")
    return (f'<figure class="diagram" id="{prefix}" data-search-exclude>\n{svg}\n'
            f"<figcaption>{caption}</figcaption>\n</figure>")


@CHAPTER.diagram
def seq2seq(ctx):
    source, written, weights = ctx.record("--attention").strings[0]
    return seq2seq_svg(source, written, [list(r) for r in weights])


@CHAPTER.block
def command_away(ctx):
    """17.8's larger runs, each beside the build's own run of its report: the budget and
    the CPU seconds that run took, from the records (nothing typed by hand)."""
    stacked, reverse, recall = (ctx.record(f) for f in ("--stacked", "--reverse", "--recall"))
    lags = ", ".join(str(lag) for lag in recall.lags)
    items = [
        ("python3 deeper.py --reverse --steps 4000",
         f"{4000 / reverse.steps:g} times the encoder-decoder's training (the build's "
         f"{reverse.steps:,} steps took {reverse.seconds:.0f} s). How far does the limit "
         f"without attention move?"),
        ("python3 deeper.py --stacked --steps 1000",
         f"the three stacks for {1000 / stacked.steps:.1f} times the build's {stacked.steps:,} "
         f"steps ({sum(r.seconds for r in stacked.runs):.0f} s). Do the two layers of 32 stay "
         f"ahead once they overfit?"),
        ("python3 deeper.py --recall --lags 100,200",
         f"the recall task at chapter 15's longest lag and twice it (the build's lags {lags} "
         f"took {recall.seconds:.0f} s)."),
    ]
    return "\n".join(f"- `{command}`: {words}" for command, words in items)


ATTENTION_EXTRA = ("abcab",)  # the widget's strings besides --attention's: --string S runs


@CHAPTER.widget
def attention_widget(ctx):
    """The weights of the model with attention, read one output step at a time
    (docs/assets/widgets/attention.js): the strings of `deeper.py --attention` and of
    `--attention --string S`, from their records."""
    strings = []
    for extra in ((),) + tuple(("--string", s) for s in ATTENTION_EXTRA):
        run = ctx.run("--attention", *extra)
        shown = ctx.record("--attention", *extra).plain()["strings"]
        for source, output, weights in (shown if not extra else shown[-1:]):
            strings.append({"source": source, "output": output, "weights": weights,
                            "command": run.command})
    return ctx.widget("attention", {
        "title": "Attention, read: point at a symbol the model wrote",
        "caption": (
            "Seed 0's encoder-decoder with attention reversing test strings. For the output "
            "step under the pointer (or the cursor the arrow keys move), the symbols it read "
            "are shaded by the weight <i>a</i><sub><i>ji</i></sub> it put on the encoder's "
            "state after each, in ten levels of a tenth. The weights are the record of the "
            "command under the table, which prints the same table for the strings it shows."),
        "strings": strings,
        "index": 0,
    })


@CHAPTER.widget
def recall_widget(ctx):
    """Where the recall model with attention reads (docs/assets/widgets/recall.js): the
    weights a_t of seed 0's first test sequences at each lag, the record of
    `deeper.py --recall`."""
    run = ctx.run("--recall")
    record = ctx.record("--recall")
    return ctx.widget("recall", {
        "title": "The recall task, read by attention: where the query looks",
        "caption": (
            "Seed 0's recall model with attention on the first test sequences of each lag. "
            "A bar per state <i>h<sub>t</sub></i>, as tall as the weight "
            "<i>a<sub>t</sub></i> the query put on it, drawn against the sequence's largest "
            "weight (the bars of one sequence share a scale, not those of two). The weights "
            "are the record of the command named above, which prints them, a table per lag."),
        "command": run.command,
        "lags": list(record.lags),
        "examples": [{"lag": e.lag, "sequence": e.sequence, "tokens": e.tokens,
                      "answer": e.answer, "given": e.given, "weights": list(e.weights)}
                     for e in record.examples],
    })


@CHAPTER.widget
def beam_widget(ctx):
    """The beam at each step (docs/assets/widgets/beam.js): what each width keeps after
    every decoder step, from the record of `deeper.py --beam`."""
    run = ctx.run("--beam")
    traces = ctx.record("--beam").plain()["traces"]
    return ctx.widget("beam", {
        "title": "The beam at each step",
        "caption": (
            "Seed 0's encoder-decoder without attention. After decoder step <i>j</i> the "
            "beam keeps its <i>width</i> likeliest partial outputs, listed likeliest first "
            "with log <i>P</i>(<i>y</i><sub>1</sub> .. <i>y<sub>j</sub></i>); a row is marked "
            "if it leads to greedy decoding's output (width 1's) or to the output this width "
            "ends with. The numbers are the record of the command named above, which prints "
            "every step of every width."),
        "command": run.command,
        "traces": traces,
    })
