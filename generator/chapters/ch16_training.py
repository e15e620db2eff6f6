"""Chapter 16, training recurrent networks: the figures and the diagram of
docs/ch16-training.md, from docs/code/training.py.

Its tables and numbers need no code here: the page names them
(<!-- gen table jacobian from training.py --jacobian -->).
"""

import math
from html import escape

from generator.chapter import Chapter

CHAPTER = Chapter("ch16-training.md", "training.py", data=("timemachine.txt",))

STYLES = ("-", "--", "-.", ":", "-", "--")
MARKS = ("o", "s", "^", "D", "v", "P")


# ---------------------------------------------------------------------------
# The diagram: one LSTM step, and the two ways its gradient goes back
# ---------------------------------------------------------------------------

def _italic(ch):
    """The mathematical italic form of a Latin capital (the math font draws these)."""
    return chr(0x1D434 + ord(ch) - ord("A"))


class Drawing:
    """The parts of an inline SVG, back to front, styled by docs/assets/diagrams.css."""

    def __init__(self):
        self.back, self.lines, self.shapes, self.text = [], [], [], []

    def path(self, d, cls, style="", arrow=None, layer=None):
        extra = f' style="{style}"' if style else ""
        (layer if layer is not None else self.lines).append(
            f'<path class="{cls}" d="{d}" fill="none" stroke="currentColor"{extra}/>')
        if arrow:  # (x, y, dx, dy): a head at (x, y) pointing along (dx, dy)
            x, y, dx, dy = arrow
            norm = (dx * dx + dy * dy) ** 0.5
            ux, uy = dx / norm, dy / norm
            bx, by = x - 8 * ux, y - 8 * uy
            points = [(x, y), (bx - 4 * uy, by + 4 * ux), (bx + 4 * uy, by - 4 * ux)]
            head = "M" + " L".join(f"{px:.1f} {py:.1f}" for px, py in points) + "Z"
            fill = style.replace("stroke", "fill").split(";")[0] if style else ""
            (layer if layer is not None else self.lines).append(
                f'<path class="{cls}-head" d="{head}" fill="currentColor"'
                + (f' style="{fill}"' if fill else "") + "/>")

    def box(self, x, y, w, h, cls, rx=5):
        self.shapes.append(f'<rect class="{cls}" x="{x - w / 2:g}" y="{y - h / 2:g}" '
                           f'width="{w:g}" height="{h:g}" rx="{rx}" fill="none" '
                           'stroke="currentColor"/>')

    def node(self, x, y, op):
        """An element-wise product (a dot in a circle) or a sum (a plus in a circle)."""
        mark = (f'<circle class="dg-node-mark" cx="{x}" cy="{y}" r="2.3" fill="currentColor"/>'
                if op == "*" else
                f'<path class="dg-node-stroke" d="M{x - 5} {y} H{x + 5} M{x} {y - 5} V{y + 5}" '
                'fill="none" stroke="currentColor"/>')
        self.shapes.append(f'<circle class="dg-node" cx="{x}" cy="{y}" r="9" fill="none" '
                           f'stroke="currentColor"/>{mark}')

    def math(self, x, y, base, sub="", anchor="middle", size=15, tilde=False):
        """A variable in the math font's italic, with an upright subscript."""
        spans = f"<tspan>{escape(''.join(_italic(c) for c in base))}</tspan>"
        if sub:
            spans += (f'<tspan font-size="{size * 0.72:.1f}" dy="{size * 0.28:.1f}">'
                      f"{escape(sub)}</tspan>")
        self.text.append(f'<text class="dg-m" x="{x}" y="{y}" text-anchor="{anchor}" '
                         f'font-size="{size}">{spans}</text>')
        if tilde:  # a tilde over the letter, drawn (the subset font has no combining tilde)
            cx = x + (0.1 * size if anchor == "middle" else 0.4 * size)
            top = y - 0.86 * size
            self.text.append(f'<path class="dg-tilde" d="M{cx - 4:.1f} {top + 1:.1f} '
                             f'C{cx - 1.5:.1f} {top - 2:.1f} {cx + 1.5:.1f} {top + 3:.1f} '
                             f'{cx + 4:.1f} {top:.1f}" fill="none" stroke="currentColor"/>')

    def label(self, x, y, words, anchor="middle", cls="dg-label"):
        self.text.append(f'<text class="{cls}" x="{x}" y="{y}" text-anchor="{anchor}" '
                         f'font-size="13">{escape(words)}</text>')

    def svg(self, prefix, width, height, title, desc):
        head = (f'<svg xmlns="http://www.w3.org/2000/svg" class="dg" viewBox="0 0 {width} '
                f'{height}" width="{width}" height="{height}" role="img" '
                f'aria-labelledby="{prefix}-title" aria-describedby="{prefix}-desc">')
        return "\n".join([head, f'<title id="{prefix}-title">{escape(title)}</title>',
                          f'<desc id="{prefix}-desc">{escape(desc)}</desc>',
                          *self.back, *self.lines, *self.shapes, *self.text, "</svg>"])


@CHAPTER.diagram
def gradient_paths(ctx):
    jac = ctx.record("--jacobian")
    row = jac.rows[0]  # b_f = 0: the live numbers of the table's first row
    forget, route = f"{row.forget:.2f}", f"{row.route:.2f}"
    d = Drawing()
    C, Hy, gates, bus = 72, 258, 180, 224  # the lanes of C and H, the gates, the input bus
    F, I, Ct, O, T = 130, 188, 242, 300, 344  # x of the gates and of tanh(C)
    d.box(222, 160, 332, 232, "dg-cell-outline", rx=10)
    d.back.append(d.shapes.pop())  # the cell behind everything
    d.path(f"M52 {C - 1} H410", "dg-highway-band", layer=d.back)
    # forward: the cell lane, the gates' inputs and outputs, the output lane
    d.path(f"M52 {C} H{F - 9}", "dg-wire", arrow=(F - 9, C, 1, 0))
    d.path(f"M{F + 9} {C} H206", "dg-wire", arrow=(206, C, 1, 0))
    d.path(f"M224 {C} H408", "dg-wire", arrow=(408, C, 1, 0))
    d.path(f"M52 {Hy} H92 V{bus} H{O}", "dg-wire")
    d.path(f"M92 304 V{bus}", "dg-wire")
    for x in (F, I, Ct, O):
        d.path(f"M{x} {bus} V{gates + 13}", "dg-wire", arrow=(x, gates + 13, 0, -1))
    d.path(f"M{F} {gates - 13} V{C + 9}", "dg-wire", arrow=(F, C + 9, 0, -1))
    d.path(f"M{I} {gates - 13} V126 H206", "dg-wire", arrow=(206, 126, 1, 0))
    d.path(f"M{Ct} {gates - 13} V126 H224", "dg-wire", arrow=(224, 126, -1, 0))
    d.path(f"M215 117 V{C + 9}", "dg-wire", arrow=(215, C + 9, 0, -1))
    d.path(f"M{T} {C} V108", "dg-wire", arrow=(T, 108, 0, 1))
    d.path(f"M{T} 132 V{gates - 9}", "dg-wire", arrow=(T, gates - 9, 0, 1))
    d.path(f"M{O + 17} {gates} H{T - 9}", "dg-wire", arrow=(T - 9, gates, 1, 0))
    d.path(f"M{T} {gates + 9} V{Hy} H408", "dg-wire", arrow=(408, Hy, 1, 0))
    # backward: the cell path, and the second route through the gates into H_{t-1}
    d.path(f"M404 {C - 16} H56", "dg-highway", arrow=(52, C - 16, -1, 0))
    dashed = "stroke: var(--dg-o); stroke-dasharray: 5 4"
    d.path(f"M226 {C + 11} H270 V206 H106 V{Hy - 9} H58", "dg-wire", style=dashed,
           arrow=(54, Hy - 9, -1, 0))
    d.path(f"M40 {Hy - 12} C8 {Hy - 50} 8 {C + 50} 40 {C + 12}", "dg-wire", style=dashed,
           arrow=(44, C + 9, 0.8, -1))
    # shapes
    for x, name, cls in ((F, "F", "dg-f"), (I, "I", "dg-i"), (Ct, "C", "dg-c"), (O, "O", "dg-o")):
        d.box(x, gates, 34, 26, f"dg-gate {cls}")
        d.math(x, gates + 5, name, tilde=name == "C")
    for x, y, op in ((F, C, "*"), (215, C, "+"), (215, 126, "*"), (T, gates, "*")):
        d.node(x, y, op)
    d.box(T, 120, 40, 22, "dg-gate")
    d.label(T, 124.5, "tanh")
    # the variables, and what the two ways multiply by
    d.math(48, C + 5, "C", "t−1", anchor="end")
    d.math(48, Hy + 5, "H", "t−1", anchor="end")
    d.math(92, 322, "X", "t")
    d.math(412, C + 5, "C", "t", anchor="start")
    d.math(412, Hy + 5, "H", "t", anchor="start")
    d.label(222, 26, f"the cell path: one forget gate per unit, about {forget} here")
    d.label(398, 300, "dashed: the second route, back through the", anchor="end",
            cls="dg-label dg-muted")
    d.label(398, 316, f"gates and the last output; ρ(R) ≈ {route} here", anchor="end",
            cls="dg-label dg-muted")
    title = "Backwards through one LSTM step: the cell path and the second route"
    desc = ("An LSTM cell. Forward: C sub t minus 1 is multiplied by the forget gate F sub t "
            "and added to I sub t times C tilde sub t, giving C sub t; tanh of C sub t times "
            "the output gate O sub t gives H sub t; all four gates read H sub t minus 1 and "
            "X sub t. Backward, two ways. Along the top, the cell path: the gradient of C sub "
            "t reaches C sub t minus 1 multiplied by F sub t alone, one number per unit, "
            f"about {forget} at forget bias 0. Dashed, the second route: from C sub t back "
            "through the forget gate, the input gate and the input node and the recurrent "
            "weights into H sub t minus 1, which the step before made from C sub t minus 1 "
            "(the dashed curve outside the cell); its matrix R sub t has spectral radius "
            f"about {route}.")
    svg = d.svg("gradient-paths", 440, 332, title, desc)
    caption = ("Backwards through one step. Amber, bold: the cell path, "
               "∂C<sub>t</sub>/∂C<sub>t−1</sub> = diag(F<sub>t</sub>). Dashed: the second "
               "route, R<sub>t</sub>, through the gates into H<sub>t−1</sub>, which the step "
               "before made from C<sub>t−1</sub> (the curve on the left). Numbers: chapter "
               "13's random LSTM with b<sub>f</sub> = 0, from the table in 16.2.")
    return (f'<figure class="diagram" id="gradient-paths" data-search-exclude>\n{svg}\n'
            f"<figcaption>{caption}</figcaption>\n</figure>")


# ---------------------------------------------------------------------------
# The plots
# ---------------------------------------------------------------------------

@CHAPTER.figure
def eigenvalues(ctx):
    jac = ctx.record("--jacobian")
    k = jac.distance

    def draw(ax, colors):
        for row, color, mark in zip(jac.rows, colors.series, MARKS):
            path = list(row.eig_path)
            step = [list(z) for z in row.eig_step]
            ax.scatter(path, [0] * len(path), color=color, marker="|", s=60, linewidths=1.2)
            ax.scatter([z[0] for z in step], [z[1] for z in step], color=color, marker=mark,
                       s=14, alpha=0.8, linewidths=0, label=f"$b_f$ = {row.b_f:g}")
            ax.axvline(row.predicted, color=color, linestyle=":", linewidth=1.1)
        angles = [(i / 200 - 0.5) * math.pi for i in range(201)]
        ax.plot([math.cos(a) for a in angles], [math.sin(a) for a in angles],
                color=colors.muted, linewidth=1.0, linestyle="--")
        ax.annotate("|λ| = 1", (0.985, 0.16), ha="right", color=colors.fg, fontsize="small")
        ax.set(xlim=(0.2, 1.1), ylim=(-0.2, 0.2), xlabel="real part", ylabel="imaginary part")
        ax.legend(loc="upper left", title=f"step {k}")

    return ctx.figure(draw, alt=f"Eigenvalues of one step's full dC/dC at step {k} for forget "
                                "biases 0, 1 and 2: each a cloud centred on the forget gate's "
                                "value, reaching about rho(R) further right; the forget gates "
                                "alone sit on the real axis",
                      caption="Dots: the eigenvalues of diag(F<sub>t</sub>) + R<sub>t</sub>, "
                              "one step's full Jacobian. Ticks on the axis: F<sub>t</sub> alone, "
                              "the cell path. Dotted: mean F<sub>t</sub> + ρ(R<sub>t</sub>), the "
                              "predicted factor per step.")


@CHAPTER.figure
def clip_norms(ctx):
    clip = ctx.record("--clip")

    def draw(ax, colors):
        for n, (row, color) in enumerate(zip(clip.rows, colors.series)):
            norms = [list(seeds) for seeds in row.norms]
            median = [sorted(s)[len(s) // 2] for s in norms]
            ax.plot(range(1, len(median) + 1), median, color=color, linestyle=STYLES[n],
                    label=f"ρ = {row.radius:g}, " + ("clipped" if row.clipped else "not clipped"))
        ax.axhline(clip.threshold, color=colors.muted, linestyle=":", linewidth=1.2)
        ax.annotate("threshold", (2, clip.threshold * 1.15), color=colors.fg, fontsize="small")
        ax.set(yscale="log", xlabel="training step", ylabel="raw gradient norm (median seed)")
        ax.legend(loc="center left", bbox_to_anchor=(1.0, 0.5))

    return ctx.figure(draw, alt="Gradient norm per training step, log scale: the runs from "
                                "rho = 2 start near 10 and stay above the threshold, the runs "
                                "from rho = 0.5 stay below it throughout, the two lying on "
                                "top of each other",
                      caption="The raw norm, before clipping, of the median seed at each step. "
                              "Dotted: the threshold.")


@CHAPTER.figure
def truncation(ctx):
    trunc = ctx.record("--truncation")
    ks = list(trunc.ks)
    width = 0.36

    def draw(ax, colors):
        for n, (name, color) in enumerate(zip(trunc.models, colors.series)):
            xs = [j + (n - 0.5) * width for j in range(len(ks))]
            ax.bar(xs, list(trunc.mean_accuracy[name]), width * 0.9, color=color,
                   hatch="//" if n else None, edgecolor=colors.bg,
                   label=name.replace("b_f=", "$b_f$ = "))
            for x, seeds in zip(xs, trunc.accuracy[name]):
                ax.scatter([x] * len(seeds), list(seeds), color=colors.fg, s=10, zorder=3,
                           linewidths=0)
        ax.axhline(0.25, color=colors.muted, linestyle="--", linewidth=1.0)
        ax.annotate("chance", (len(ks) - 0.5, 0.27), ha="right", color=colors.fg,
                    fontsize="small")
        labels = [f"k = {k}" + (": all the steps" if k > trunc.lag else
                                ": the query's step" if k == 1 else "") for k in ks]
        ax.set_xticks(range(len(ks)), labels)
        ax.set(ylim=(0, 1.05), ylabel="test accuracy")
        ax.legend(loc="center")

    return ctx.figure(draw, alt=f"Bars of test accuracy at lag {trunc.lag} for the backward "
                                "pass over the query's step only and over all the steps: the "
                                "LSTM with forget bias 2 near 1 in both, the GRU at chance with "
                                "the query's step only and at 1 with all the steps",
                      caption=f"Lag {trunc.lag}. Bars: mean over the seeds; dots: each seed. "
                              "Dashed: chance.")


@CHAPTER.figure
def text(ctx):
    rec = ctx.record("--text")

    def draw(ax, colors):
        for n, (name, color) in enumerate(zip(rec.settings, colors.series)):
            runs = [r for r in rec.runs if r.setting == name]
            curves = [list(r.curve) for r in runs]
            mean = [sum(c) / len(c) for c in zip(*curves)]
            ax.plot(list(rec.checkpoints), mean, color=color, linestyle=STYLES[n],
                    marker=MARKS[n], label=name)
        ax.set(xlabel="updates", ylabel="validation perplexity")
        ax.legend(loc="upper right")

    return ctx.figure(draw, alt="Validation perplexity against updates for six ways of "
                                "truncating and partitioning: all fall together, the shortest "
                                "truncation a little ahead",
                      caption="Mean over the seeds, the validation text read through.")


@CHAPTER.figure
def adding(ctx):
    rec = ctx.record("--adding")

    def draw(ax, colors):
        for n, (r, color) in enumerate(zip(rec.runs, colors.series)):
            xs = [(i + 1) * rec.curve_every for i in range(len(r.curve))]
            ax.plot(xs, list(r.curve), color=color, linestyle=STYLES[n], linewidth=1.3,
                    label=f"seed {r.seed}")
            if r.solved_after:
                ax.axvline(r.solved_after, color=color, linestyle=STYLES[n], linewidth=0.9)
        ax.axhline(rec.chance_mse, color=colors.muted, linestyle="--", linewidth=1.2)
        ax.annotate("predicting the mean", (rec.curve_every, rec.chance_mse * 1.3),
                    color=colors.fg, fontsize="small")
        ax.axhline(0.01, color=colors.muted, linestyle=":", linewidth=1.0)
        ax.annotate("0.01", (rec.curve_every, 0.01 * 1.3), color=colors.fg, fontsize="small")
        ax.set(yscale="log", xlabel="training sequences", ylabel="training mean squared error")
        ax.legend(loc="lower left", title=rec.model.replace("b_i=", "$b_i$ = "))

    return ctx.figure(draw, alt="Training mean squared error against sequences on a log "
                                "scale for each seed: every run starts at the dashed chance "
                                "line and falls two orders of magnitude below it; vertical "
                                "lines mark where a seed met the paper's criterion",
                      caption="Each line one seed: the mean squared error over each block of "
                              f"{rec.curve_every:,} training sequences. Dashed: predicting the "
                              "mean. Dotted: 0.01, the paper's bound on the mean error. Vertical "
                              "lines: where a seed met the paper's criterion.")


def _solved_phrase(rec):
    """'all 3 seeds met it, after 24,672 to 29,024 sequences' or '2 of 3 seeds met it,
    after 37,888 and 38,624 sequences; seed 1 had not by 50,000': words from the record."""
    runs = list(rec.runs)
    done = sorted(r.solved_after for r in runs if r.solved_after)
    late = [str(r.seed) for r in runs if not r.solved_after]
    if not done:
        return f"no seed of {len(runs)} met it within {rec.budget:,} sequences"
    counts = (f"{done[0]:,}" if len(done) == 1 else f"{done[0]:,} and {done[1]:,}"
              if len(done) == 2 else f"{done[0]:,} to {done[-1]:,}")
    if not late:
        return f"all {len(runs)} seeds met it, after {counts} sequences"
    return (f"{len(done)} of {len(runs)} seeds met it, after {counts} sequences; seed "
            f"{' and '.join(late)} had not by {rec.budget:,}")


@CHAPTER.block
def adding_summary(ctx):
    rec = ctx.record("--adding")
    runs = list(rec.runs)
    done = [r.solved_after for r in runs if r.solved_after]
    wrong = sorted(r.wrong for r in runs)
    model = ("the GRU" if rec.cell == "gru" else
             f"the LSTM with $b_i = {rec.input_bias:g}$")
    text = (f"The paper's criterion asks for the last 2,000 training sequences to be "
            f"answered within 0.04, every one, and for their mean squared error to be below "
            f"0.01. With {model}, {_solved_phrase(rec)}; the paper's LSTM needed "
            f"{rec.paper_sequences:,} on average.")
    if done:
        ratio = rec.paper_sequences / (sum(done) / len(done))
        text += (f" Those that met it needed {ratio:.1f} times fewer sequences, on average, "
                 "than the paper reports" + (" (the seeds that had not are not counted)."
                                             if len(done) < len(runs) else "."))
    text += (f" On {rec.test:,} fresh test sequences afterwards, {wrong[0]} to {wrong[-1]} "
             "answers were off by 0.04 or more (the paper's LSTM: 1 of 2,560).")
    late = [r for r in runs if not r.solved_after]
    if late and min(runs, key=lambda r: r.test_mse) in late:
        text += (" The seed that had not met the criterion has the lowest test error of the "
                 f"{len(runs)}: the criterion is strict, 2,000 right in a row, and one slip "
                 "starts the count again.")
    return text


@CHAPTER.block
def adding_short(ctx):
    short = ctx.record("--adding", "--length", "20")
    full = ctx.record("--adding")
    return (f"At T = {short.length}, {_solved_phrase(short)}; at T = {full.length}, "
            f"{_solved_phrase(full)}.")
