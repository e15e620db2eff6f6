"""Chapter 16, training recurrent networks: the figures and the diagram of
docs/ch16-training.md, from docs/code/training.py.

Its tables and numbers need no code here: the page names them
(<!-- gen table jacobian from training.py --jacobian -->).
"""

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
    row = jac.rows[0]  # b_f = 0: the live numbers of the first row of the table
    forget, route = f"{row.forget:.2f}", f"{row.route:.2f}"
    d = Drawing()
    C_lane, H_lane, gates, bus = 70, 270, 190, 232
    # the cell, and the forward wires
    d.box(330, 165, 440, 250, "dg-cell-outline", rx=10)
    d.path(f"M62 {C_lane} H201", "dg-wire", arrow=(201, C_lane, 1, 0))  # C_{t-1} to x F
    d.path(f"M219 {C_lane} H311", "dg-wire", arrow=(311, C_lane, 1, 0))  # on to the sum
    d.path(f"M329 {C_lane} H598", "dg-wire", arrow=(598, C_lane, 1, 0))  # C_t out
    d.path(f"M62 {H_lane} H150 V{bus} H450", "dg-wire")  # H_{t-1}, then the bus
    d.path(f"M150 318 V{bus}", "dg-wire")  # X_t joins it
    for x in (210, 290, 350, 450):  # the bus into every gate
        d.path(f"M{x} {bus} V{gates + 17}", "dg-wire", arrow=(x, gates + 17, 0, -1))
    d.path(f"M210 {gates - 15} V{C_lane + 10}", "dg-wire", arrow=(210, C_lane + 10, 0, -1))
    d.path(f"M290 {gates - 15} V130 H310", "dg-wire", arrow=(310, 130, 1, 0))
    d.path(f"M350 {gates - 15} V130 H330", "dg-wire", arrow=(330, 130, -1, 0))
    d.path(f"M320 121 V{C_lane + 10}", "dg-wire", arrow=(320, C_lane + 10, 0, -1))
    d.path(f"M510 {C_lane} V115", "dg-wire", arrow=(510, 115, 0, 1))  # C_t to tanh
    d.path(f"M510 145 V{gates - 9}", "dg-wire", arrow=(510, gates - 9, 0, 1))
    d.path(f"M472 {gates} H501", "dg-wire", arrow=(501, gates, 1, 0))  # O to the product
    d.path(f"M510 {gates + 9} V{H_lane} H598", "dg-wire", arrow=(598, H_lane, 1, 0))
    # the gradient's two ways back, drawn over the forward wires
    d.path(f"M600 {C_lane - 1} H64", "dg-highway-band", layer=d.back)
    d.path(f"M596 {C_lane - 16} H70", "dg-highway", arrow=(64, C_lane - 16, -1, 0))
    route_style = "stroke: var(--dg-o); stroke-dasharray: 6 4"
    d.path(f"M318 {C_lane + 18} V150 H362 V{gates + 30} H160 V{H_lane - 14} H66",
           "dg-wire", style=route_style, arrow=(62, H_lane - 14, -1, 0))
    d.path(f"M40 {H_lane - 24} C12 {H_lane - 60} 12 {C_lane + 50} 40 {C_lane + 14}",
           "dg-wire", style=route_style, arrow=(44, C_lane + 10, 0.6, -1))
    # shapes
    for x, name, cls in ((210, "F", "dg-f"), (290, "I", "dg-i"), (350, "C", "dg-c"),
                         (450, "O", "dg-o")):
        d.box(x, gates, 44, 30, f"dg-gate {cls}")
        d.math(x, gates + 5, name, tilde=name == "C")
    d.node(210, C_lane, "*")
    d.node(320, C_lane, "+")
    d.node(320, 130, "*")
    d.node(510, gates, "*")
    d.box(510, 130, 44, 28, "dg-gate")
    d.label(510, 134.5, "tanh")
    # the variables
    d.math(32, C_lane + 5, "C", "t−1")
    d.math(32, H_lane + 5, "H", "t−1")
    d.math(150, 336, "X", "t")
    d.math(628, C_lane + 5, "C", "t")
    d.math(628, H_lane + 5, "H", "t")
    # what the two ways multiply by
    d.label(330, 28, f"the cell path: × F_t, one number per unit (about {forget} at b_f = 0)")
    d.label(388, 160, "the second route:", anchor="start", cls="dg-label dg-muted")
    d.label(388, 176, "back through the gates,", anchor="start", cls="dg-label dg-muted")
    d.label(388, 222, f"then W_h into H_t−1 (ρ(R_t) ≈ {route})", anchor="start",
            cls="dg-label dg-muted")
    d.label(70, 168, "H_t−1 = O_t−1 ⊙", anchor="middle", cls="dg-label dg-muted")
    d.label(70, 184, "tanh(C_t−1)", anchor="middle", cls="dg-label dg-muted")
    title = "Backwards through one LSTM step: the cell path and the route through H"
    desc = ("An LSTM cell. The forward wires: C sub t minus 1 is multiplied by the forget "
            "gate F sub t and added to I sub t times C tilde sub t, giving C sub t; tanh of "
            "C sub t times the output gate O sub t gives H sub t. All four gates read H sub t "
            "minus 1 and X sub t. Backwards, two ways: along the top, the cell path, where "
            "the gradient of C sub t reaches C sub t minus 1 multiplied by F sub t alone, "
            f"one number per unit, about {forget} at forget bias 0. Dashed, the second route: "
            "from C sub t back through the forget gate, the input gate and the input node, "
            "through the recurrent weights into H sub t minus 1, which the step before made "
            "from C sub t minus 1 as O sub t minus 1 times tanh of C sub t minus 1; its "
            f"matrix R sub t has spectral radius about {route}.")
    svg = d.svg("gradient-paths", 660, 350, title, desc)
    caption = ("Backwards through one step. Amber: the cell path, $\\partial C_t / \\partial "
               "C_{t-1} = \\operatorname{diag}(F_t)$. Dashed: the second route, $R_t$, through "
               "the gates and $H_{t-1}$. Numbers: chapter 13's random LSTM with $b_f = 0$, "
               "from the table below.")
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
        angles = [i / 200 * 3.14159265 - 3.14159265 / 2 for i in range(201)]
        import math
        ax.plot([math.cos(a) for a in angles], [math.sin(a) for a in angles],
                color=colors.muted, linewidth=1.0, linestyle="--")
        ax.annotate("|λ| = 1", (0.72, 0.69), color=colors.fg, fontsize="small")
        ax.set(xlim=(0.2, 1.15), ylim=(-0.45, 0.45), xlabel="real part",
               ylabel="imaginary part", aspect="equal")
        ax.legend(loc="upper left", title=f"step {k}")

    return ctx.figure(draw, alt=f"Eigenvalues of one step's full dC/dC at step {k} for forget "
                                "biases 0, 1 and 2: each a cloud centred on the forget gate's "
                                "value, reaching about rho(R) further right; the forget gates "
                                "alone sit on the real axis",
                      caption="Dots: the eigenvalues of diag(F_t) + R_t, one step's full "
                              "Jacobian. Ticks on the axis: F_t alone, the cell path. Dotted: "
                              "mean F_t + ρ(R_t), the predicted factor per step.")


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
        ax.legend(loc="center right")

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

    def draw(ax, colors):
        for n, (name, color) in enumerate(zip(trunc.models, colors.series)):
            offset = (n - 0.5) * 0.04
            xs = [k * 10 ** offset for k in ks]
            ax.plot(xs, list(trunc.mean_accuracy[name]), color=color, linestyle=STYLES[n],
                    marker=MARKS[n], label=name.replace("b_f=", "$b_f$ = "))
            for x, seeds in zip(xs, trunc.accuracy[name]):
                ax.scatter([x] * len(seeds), list(seeds), color=color, s=12, alpha=0.55,
                           linewidths=0)
        ax.axvline(trunc.lag + 0.5, color=colors.muted, linestyle=":", linewidth=1.2)
        ax.annotate("the first symbol", (trunc.lag + 0.5, 0.1), xytext=(-4, 0),
                    textcoords="offset points", ha="right", color=colors.fg, fontsize="small")
        ax.axhline(0.25, color=colors.muted, linestyle="--", linewidth=1.0)
        ax.set_xscale("log")
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.minorticks_off()
        ax.set(ylim=(0, 1.05), xlabel="k: the steps the backward pass visits",
               ylabel="test accuracy")
        ax.legend(loc="center left")

    return ctx.figure(draw, alt=f"Test accuracy against the truncation k at lag {trunc.lag}: "
                                "the LSTM with forget bias 2 at 1 for every k, the GRU at chance "
                                "for k = 1 and at 1 only when k covers the whole sequence",
                      caption=f"Lag {trunc.lag}. Lines: mean over the seeds; dots: each seed. "
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
        ax.legend(loc="upper right", title=rec.model.replace("b_i=", "$b_i$ = "))

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
    text = (f"The paper's criterion asks for the last 2,000 training sequences to be "
            f"answered within 0.04, every one, and for their mean squared error to be below "
            f"0.01. With the {rec.model}, {_solved_phrase(rec)}; the paper's LSTM needed "
            f"{rec.paper_sequences:,} on average.")
    if done:
        ratio = rec.paper_sequences / (sum(done) / len(done))
        text += (f" Those that met it needed {ratio:.1f} times fewer sequences than the "
                 "paper reports.")
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
