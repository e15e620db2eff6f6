"""Chapter 16, training recurrent networks: the figures and the diagram of
docs/ch16-training.md, from docs/code/training.py.

Its tables and numbers need no code here: the page names them
(<!-- gen table jacobian from training.py --jacobian -->).
"""

import math
from html import escape

from generator.chapter import Chapter, GeneratorError
from generator.plotstyle import label_line

CHAPTER = Chapter("ch16-training.md", "training.py", data=("timemachine.txt",))


@CHAPTER.figure
def lead(ctx):
    clip = ctx.record("--clip")
    big, small = max(r.radius for r in clip.rows), min(r.radius for r in clip.rows)
    first = [sorted(row.norms[0])[len(row.norms[0]) // 2] for row in clip.rows
             if row.radius == big]
    if not (clip.vanishing_identical and min(first) > clip.threshold):
        raise GeneratorError("generator/chapters/ch16_training.py: lead: the caption says the "
                             f"runs from rho = {big:g} start above the threshold and clipping "
                             f"changes nothing at rho = {small:g}; `training.py --clip` no "
                             "longer shows both")
    return ctx.lead([(f"ρ = {row.radius:g}, " + ("clipped" if row.clipped else "not clipped"),
                      range(1, len(row.norms) + 1),
                      [sorted(s)[len(s) // 2] for s in row.norms]) for row in clip.rows],
                    refs=[(clip.threshold, "clipping threshold")],
                    xlabel="training step", ylabel="raw gradient norm", ylog=True,
                    alt="Raw gradient norm per training step, median seed, log scale, for "
                        "large and small initial weights, clipped and not",
                    caption="The chapter in one picture: clipping acts only where gradients "
                            f"explode. From large initial weights (ρ = {big:g}) the raw norm "
                            "starts above the threshold and clipping changes the run; from "
                            f"small ones (ρ = {small:g}) the clipped and unclipped runs lie on "
                            "top of each other (<code>python3 training.py --clip</code>; "
                            "section 16.3).")


STYLES = ("-", "--", "-.", ":", "-", "--")
MARKS = ("o", "s", "^", "D", "v", "P")


# ---------------------------------------------------------------------------
# The diagram: one LSTM step, and the two ways its gradient goes back
# ---------------------------------------------------------------------------
# Drawn in the conventions of generator/diagrams.py and docs/assets/diagrams.css: lines
# and nodes in SVG, symbols as TeX in foreignObjects (the page's math hook typesets them
# like every formula), arrowheads as markers.

PREFIX = "gradient-paths"
ROUTE = "stroke: var(--dg-o); stroke-dasharray: 5 4"  # the second way back: dashed, orange


class Drawing:
    """The elements of one inline SVG, back to front."""

    def __init__(self):
        self.back, self.lines, self.front = [], [], []

    def line(self, d, arrow=False, cls="dg-wire", style="", layer=None):
        marker = f' marker-end="url(#{PREFIX}-{"route" if style else cls})"' if arrow else ""
        extra = f' style="{style}"' if style else ""
        (self.lines if layer is None else layer).append(
            f'<path class="{cls}" d="{d}"{marker}{extra}/>')

    def node(self, x, y, op):
        mark = (f'<circle class="dg-node-mark" cx="{x}" cy="{y}" r="2.3"/>' if op == "*" else
                f'<path class="dg-node-mark" d="M{x - 5} {y}h10M{x} {y - 5}v10"/>')
        self.front.append(f'<circle class="dg-node" cx="{x}" cy="{y}" r="9"/>{mark}')

    def math(self, x, y, tex, w=60, h=30):
        self.front.append(f'<foreignObject x="{x - w / 2:g}" y="{y - h / 2:g}" width="{w}" '
                          f'height="{h}"><div class="dg-fo"><span class="arithmatex">'
                          f'\\({escape(tex)}\\)</span></div></foreignObject>')

    def gate(self, x, y, tex, cls, size="small"):
        w, h = (38, 26) if size == "small" else (48, 28)
        self.front.append(f'<foreignObject x="{x - w / 2:g}" y="{y - h / 2:g}" width="{w}" '
                          f'height="{h}"><div class="dg-fo"><div class="dg-gate {size} {cls}">'
                          f'<span class="arithmatex">\\({escape(tex)}\\)</span></div></div>'
                          '</foreignObject>')

    def label(self, x, y, words, anchor="middle", muted=False):
        cls = "dg-label dg-muted" if muted else "dg-label"
        self.front.append(f'<text class="{cls}" x="{x}" y="{y}" text-anchor="{anchor}">'
                          f"{escape(words)}</text>")

    def svg(self, width, height, title, desc):
        heads = "".join(
            f'<marker id="{PREFIX}-{name}" viewBox="0 0 10 10" refX="9" refY="5" '
            f'markerWidth="{size}" markerHeight="{size}" orient="auto-start-reverse">'
            f'<path class="{cls}" d="M0 0L10 5L0 10z"{style}/></marker>'
            for name, size, cls, style in (("dg-wire", 5, "dg-wire-head", ""),
                                           ("dg-hw", 3.5, "dg-hw-head", ""),
                                           ("route", 5, "dg-wire-head",
                                            ' style="fill: var(--dg-o)"')))
        return "\n".join([
            f'<svg xmlns="http://www.w3.org/2000/svg" class="dg" viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-labelledby="{PREFIX}-title" '
            f'aria-describedby="{PREFIX}-desc">',
            f'<title id="{PREFIX}-title">{escape(title)}</title>',
            f'<desc id="{PREFIX}-desc">{escape(desc)}</desc>', f"<defs>{heads}</defs>",
            *self.back, *self.lines, *self.front, "</svg>"])


@CHAPTER.diagram
def gradient_paths(ctx):
    jac = ctx.record("--jacobian")
    row = jac.rows[0]  # b_f = 0: the live numbers of the table's first row
    forget, route = f"{row.forget:.2f}", f"{row.route:.2f}"
    d = Drawing()
    C, Hy, gates, bus = 72, 258, 180, 224  # the lanes of C and H, the gates, the input bus
    F, I, Ct, O, T = 130, 188, 242, 300, 344  # x of the gates and of tanh(C)
    d.back.append('<rect class="dg-cell dg-cell-outline" x="56" y="44" width="332" '
                  'height="232" rx="10"/>')
    d.line(f"M52 {C}H410", cls="dg-highway-band", layer=d.back)
    # forward: the cell lane, the gates' inputs and outputs, the output lane
    d.line(f"M52 {C}H{F - 9}", arrow=True)
    d.line(f"M{F + 9} {C}H206", arrow=True)
    d.line(f"M224 {C}H408", arrow=True)
    d.line(f"M52 {Hy}H92V{bus}H{O}")
    d.line(f"M92 304V{bus}")
    for x in (F, I, Ct, O):
        d.line(f"M{x} {bus}V{gates + 13}", arrow=True)
    d.line(f"M{F} {gates - 13}V{C + 9}", arrow=True)
    d.line(f"M{I} {gates - 13}V126H206", arrow=True)
    d.line(f"M{Ct} {gates - 13}V126H224", arrow=True)
    d.line(f"M215 117V{C + 9}", arrow=True)
    d.line(f"M{T} {C}V108", arrow=True)
    d.line(f"M{T} 132V{gates - 9}", arrow=True)
    d.line(f"M{O + 19} {gates}H{T - 9}", arrow=True)
    d.line(f"M{T} {gates + 9}V{Hy}H408", arrow=True)
    # backward: the cell path, and the second route through the gates into H_{t-1}
    d.line(f"M404 {C - 16}H56", arrow=True, cls="dg-hw")
    d.line(f"M226 {C + 11}H270V206H106V{Hy - 9}H58", arrow=True, style=ROUTE)
    d.line(f"M40 {Hy - 12}C8 {Hy - 50} 8 {C + 50} 40 {C + 12}", arrow=True, style=ROUTE)
    # the gates, the nodes, tanh
    for x, tex, cls in ((F, "F_t", "dg-f"), (I, "I_t", "dg-i"), (Ct, "\\tilde{C}_t", "dg-c"),
                        (O, "O_t", "dg-o")):
        d.gate(x, gates, tex, cls)
    for x, y, op in ((F, C, "*"), (215, C, "+"), (215, 126, "*"), (T, gates, "*")):
        d.node(x, y, op)
    d.gate(T, 120, "\\tanh", "", size="fn")
    # the variables, and what the two ways multiply by
    d.math(26, C, "C_{t-1}", w=48)
    d.math(26, Hy, "H_{t-1}", w=48)
    d.math(92, 318, "X_t", w=40)
    d.math(422, C, "C_t", w=32)
    d.math(422, Hy, "H_t", w=32)
    d.label(222, 26, f"the cell path: one forget gate per unit, about {forget} here")
    d.label(398, 300, "dashed: the second route, back through the", anchor="end", muted=True)
    d.label(398, 316, f"gates and the last output; ρ(R) ≈ {route} here", anchor="end",
            muted=True)
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
    svg = d.svg(440, 332, title, desc)
    caption = ("Backwards through one step. Amber, bold: the cell path, "
               "∂C<sub>t</sub>/∂C<sub>t−1</sub> = diag(F<sub>t</sub>). Dashed: the second "
               "route, R<sub>t</sub>, through the gates into H<sub>t−1</sub>, which the step "
               "before made from C<sub>t−1</sub> (the curve on the left). Numbers: chapter "
               "13's random LSTM with b<sub>f</sub> = 0, from the tables in 16.2.")
    return (f'<figure class="diagram" id="{PREFIX}" data-search-exclude>\n{svg}\n'
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
        ax.set(xlim=(0.15, 1.1), ylim=(-0.22, 0.22), xlabel="real part", ylabel="imaginary part")
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


def _ks_phrase(ks):
    """'1, 2, 4 and 8'."""
    words = [str(k) for k in ks]
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


@CHAPTER.inline
def truncation_ks(ctx):
    """The truncations short of the whole sequence, '1, 2, 4 and 8', from the record."""
    trunc = ctx.record("--truncation")
    return _ks_phrase([k for k in trunc.ks if k < trunc.length])


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
        ax.axhline(trunc.chance, color=colors.muted, linestyle="--", linewidth=1.0)
        label_line(ax, colors, f"chance {trunc.chance:g}", y=trunc.chance)
        ax.set_xticks(range(len(ks)), [f"{k} (all)" if k == trunc.length else str(k)
                                       for k in ks])
        # room right of the last bars for the chance label (on a phone it covered them)
        ax.set(xlim=(-0.7, len(ks) + 0.9), ylim=(0, 1.05), ylabel="test accuracy",
               xlabel="k, the last steps the backward pass visits")
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(trunc.models))

    counts = "; ".join(f"{name}: {', '.join(map(str, trunc.learned[name]))}"
                       for name in trunc.models)
    return ctx.figure(draw, alt=f"Bars of test accuracy at lag {trunc.lag} for the backward "
                                f"pass over the last k steps, k = {_ks_phrase(ks)} (all the "
                                "steps), each seed a dot. Seeds of "
                                f"{trunc.seeds} that learned, k by k: {counts}",
                      caption=f"Lag {trunc.lag}. Bars: mean over the seeds; dots: each seed. "
                              "Dashed: chance, a guess.")


@CHAPTER.figure
def init(ctx):
    rec = ctx.record("--init")
    lags, models = list(rec.lags), list(rec.models)
    width = 0.8 / len(models)
    seeds = {(r.model, r.lag): list(r.accuracy) for r in rec.runs}

    def draw(ax, colors):
        for n, (name, color) in enumerate(zip(models, colors.series)):
            xs = [j + (n - (len(models) - 1) / 2) * width for j in range(len(lags))]
            ax.bar(xs, list(rec.mean_accuracy[name]), width * 0.9, color=color,
                   hatch=(None, "//", "..")[n % 3], edgecolor=colors.bg, label=name)
            for x, lag in zip(xs, lags):  # each seed a dot, side by side: ties stay visible
                k = len(seeds[name, lag])
                ax.scatter([x + (i - (k - 1) / 2) * width * 0.2 for i in range(k)],
                           seeds[name, lag], color=colors.fg, s=12, zorder=3, linewidths=0)
        ax.axhline(rec.chance, color=colors.muted, linestyle="--", linewidth=1.0)
        label_line(ax, colors, f"chance {rec.chance:g}", y=rec.chance, end="left")
        ax.set_xticks(range(len(lags)), [f"lag {lag}" for lag in lags])
        # room left of the first bars for the chance label (it hid a bar's dots before)
        ax.set(xlim=(-1.05, len(lags) - 0.4), ylim=(0, 1.05), ylabel="test accuracy")
        # the legend above the axes: inside, it covered a bar and its dots
        ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.0), ncol=len(models))

    shown = " and ".join(str(lag) for lag in lags)
    return ctx.figure(draw, alt=(
        f"Bars of test accuracy at lags {shown} for chapter 15's plain RNN started three ways, "
        "each seed a dot: from chapter 15's start near chance at both lags; from U = I with "
        "ReLU high at both; from an orthogonal U high at the shorter lag and near chance at "
        "the longer"),
        caption=f"Chapter 15's recall task, {rec.seeds} seeds, {rec.steps:,} steps of Adam. "
                "Bars: mean over the seeds; dots: each seed. Dashed: chance.")


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
        share = (sum(done) / len(done)) / rec.paper_sequences
        text += (f" Those that met it needed, on average, {share:.0%} of the sequences the "
                 "paper reports" + (" (the seeds that had not are not counted)."
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


CLIP_THRESHOLDS = ("0.25", "1", "4")  # the clipping widget's grid: `--clip --threshold X`
CLIP_EVERY = 2                        # it draws every second step of each seed's norms


@CHAPTER.widget
def clip_widget(ctx):
    """Clipping moved by hand (docs/assets/widgets/clip.js): for each threshold of the
    grid, the four (rho, clipping) rows of `training.py --clip --threshold X` as the
    script prints them, with each seed's raw gradient norm (every CLIP_EVERY-th step,
    three significant digits: a drawing) and test accuracy and loss."""
    runs = []
    for x in CLIP_THRESHOLDS:
        run, record = ctx.run("--clip", "--threshold", x), ctx.record("--clip", "--threshold", x)
        printed = [[c.strip() for c in line.strip("|").split("|")]
                   for line in run.tables["clip"].splitlines()[2:]]
        runs.append({"threshold": record.threshold, "command": run.command, "rows": [{
            "radius": r["radius"], "clipped": r["clipped"], "printed": cells,
            "accuracy": r["accuracy"], "loss": r["loss"],
            "norms": [[float(f"{v:.3g}") for v in step] for step in r["norms"][::CLIP_EVERY]],
        } for r, cells in zip(record.plain()["rows"], printed)]})
    header = [c.strip() for c in ctx.run("--clip").tables["clip"].splitlines()[0].strip("|")
              .split("|")]
    default = CLIP_THRESHOLDS.index("1")
    return ctx.widget("clip", {
        "title": "Clipping by hand: choose the threshold, the radius and whether to clip",
        "caption": (
            "Each threshold is its own run of <code>python3 training.py --clip --threshold "
            "X</code>: the four models of the table, trained side by side for "
            f"{ctx.record('--clip').steps} steps. The lines are "
            f"each seed's raw gradient norm before clipping, every {CLIP_EVERY}nd step; dotted, "
            "the threshold. The row and the seeds' numbers are the script's."),
        "header": header,
        "runs": runs,
        "threshold": default,
        "every": CLIP_EVERY,
    })


TRUNCATION_DIGITS = 3  # the truncation widget's curves: three significant digits, a drawing


@CHAPTER.widget
def truncation_widget(ctx):
    """Truncation moved by hand (docs/assets/widgets/truncation.js): for each model and
    each k of the grid, the row of `training.py --truncation` as the script prints it,
    with each seed's training-loss curve (the mean of each block of curve_every steps) and
    test accuracy and loss, all from the build's one run."""
    run, trunc = ctx.run("--truncation"), ctx.record("--truncation")
    lines = run.tables["truncation"].splitlines()
    header, *printed = [[c.strip() for c in line.strip().strip("|").split("|")]
                        for line in lines[:1] + lines[2:]]
    plain = trunc.plain()
    models, ks = plain["models"], plain["ks"]
    rows = [{"model": name, "k": k, "accuracy": plain["accuracy"][name][j],
             "loss": plain["loss"][name][j],
             "curve": [[float(f"{v:.{TRUNCATION_DIGITS}g}") for v in block]
                       for block in plain["curves"][name][j]]}
            for name in models for j, k in enumerate(ks)]
    if len(printed) != len(rows) or any(
            cells[0] != r["model"] or cells[1].split()[0] != str(r["k"])
            for cells, r in zip(printed, rows)):
        raise GeneratorError("generator/chapters/ch16_training.py: truncation_widget: the "
                             "rows of `training.py --truncation` are no longer one per model "
                             "and k, model by model, in the record's order")
    for cells, r in zip(printed, rows):
        r["printed"] = cells
    drawn = [v for r in rows for block in r["curve"] for v in block]
    top = 10.0 ** math.floor(math.log10(max(drawn)))  # 1, 2 or 5 times it: just above the lines
    ylim = [10.0 ** math.floor(math.log10(min(drawn))),
            next(m * top for m in (1, 2, 5, 10) if m * top >= max(drawn))]
    return ctx.widget("truncation", {
        "title": "Truncation by hand: choose the model and how far back the gradient goes",
        "caption": (
            f"<code>python3 training.py --truncation</code> trains each model at lag "
            f"{trunc.lag} with the backward pass cut after the last k of its "
            f"{trunc.length} steps, every k and seed side by side, for {trunc.steps:,} "
            f"steps. The lines are each seed's training loss, the mean over each block of "
            f"{trunc.curve_every} steps; dotted, chance: the loss of a guess, every symbol as likely. The row and the seeds' "
            "numbers are the script's."),
        "command": run.command,
        "header": header,
        "models": [{"name": name, "html": escape(name).replace("b_f=", "<i>b</i><sub>f</sub> = ")}
                   for name in models],
        "ks": ks,
        "length": trunc.length,
        "rows": rows,
        "model": 0,
        "k": 0,
        "every": trunc.curve_every,
        "steps": trunc.steps,
        "ylim": ylim,
        "chance": trunc.chance,
        "chance_loss": trunc.chance_loss,
    })
