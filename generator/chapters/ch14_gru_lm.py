"""Chapter 14, a GRU language model from scratch: the figures of docs/ch14-gru-lm.md,
from docs/code/gru.py and the models it trains (one worker process trains each once)."""

import html
import json
import math

from generator import diagrams
from generator.plotstyle import label_line
from generator.chapter import CODE, Chapter, GeneratorError, Served

# The trained GRU as a file, and the lines that load it back into gru.py's functions
# (the widget's "same in Python" lines run after them).
TRAINED_USAGE = """\
import json
import numpy as np
import gru

m = json.load(open('gru-trained.json'))
w = {name: np.array(v) for name, v in m['weights'].items()}
params = {'W_x': np.stack([w['W_xz'], w['W_xr'], w['W_xh']]),   # stacked as gru.py keeps them
          'W_h': np.stack([w['W_hz'], w['W_hr'], w['W_hh']]),
          'b': np.stack([w['b_z'], w['b_r'], w['b_h']]),
          'W_hq': w['W_hq'], 'b_q': w['b_q']}
print(gru.predict(params, 'gru', 'it has', 20))                                # greedy
print(gru.predict(params, 'gru', 'it has', 20, 0.5, np.random.default_rng(0)))  # drawn
"""

# The reach of the three models, and lines that print a row of it.
REACH_USAGE = """\
import json

r = json.load(open('gru-reach.json'))
t = len(r['passage']) - 1                                   # the last character's prediction
for m in r['models']:
    print(m['model'], [f'{v:.1e}' for v in m['reach'][t][:9]])   # k = 0 .. 8 back
"""

CHAPTER = Chapter("ch14-gru-lm.md", "gru.py", data=("timemachine.txt",), served=(
    Served("gru-trained.json", ("--export",),
           "The GRU that `python3 gru.py` trains (d2l's configuration, seed 0, epoch 50): "
           "`weights`, its parameters under the equations' names (float32 values), "
           "`vocab` and `preprocessing`, and its `greedy` continuation of `prefix`. "
           "Chapter 14's page runs it in the browser.",
           TRAINED_USAGE),
    Served("gru-reach.json", ("--reach",),
           "How far back each prediction reaches in the three models `python3 gru.py` "
           "trains (the GRU, the LSTM and the plain RNN, d2l's configuration, seed 0, epoch "
           "50): for each character of the validation `passage` of `--inside` (and "
           "`next_char`, the one after it), `models[i].reach[t][k]`, the norm of the "
           "gradient of log P(next character) with respect to the input k characters "
           "back, k up to `reach_back` - 1, and `mean_reach[k]`, its mean over the "
           "passage. Chapter 14's \"how far back\" view looks them up.",
           REACH_USAGE)))


@CHAPTER.figure
def lead(ctx):
    models = [m for m in ctx.record("--compare").models if m.d2l_lr]
    return ctx.lead([(m.model, [r.epoch for r in m.history], [r.val_ppl for r in m.history])
                     for m in models],
                    xlabel="epoch", ylabel="validation perplexity",
                    alt="Validation perplexity per epoch of the GRU, the LSTM and the plain RNN "
                        "trained on The Time Machine at d2l's learning rates",
                    caption="The chapter in one picture: the numpy GRU of this chapter, trained on "
                            "<i>The Time Machine</i> beside an LSTM and a plain RNN, each at d2l's "
                            "learning rate, the first seed (<code>python3 gru.py --compare</code>; "
                            "section 14.5 has every rate and seed).")


STYLES = {"GRU": "-", "LSTM": "--", "plain RNN": ":"}


@CHAPTER.diagram
def gru_cell(ctx):
    return diagrams.gru_cell(letters="upper", id_prefix="gru-cell-d2l",
                             title="The GRU cell in d2l's notation")


@CHAPTER.figure
def curves(ctx):
    compare = ctx.record("--compare")

    def draw(ax, colors):
        from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

        color = dict(zip(("GRU", "LSTM", "plain RNN"), colors.series))
        for m in compare.models:
            epochs = [row.epoch for row in m.history]
            ax.plot(epochs, [row.val_ppl for row in m.history], color=color[m.model],
                    linestyle=STYLES.get(m.model, "-"), linewidth=2.0 if m.d2l_lr else 1.1,
                    label=f"{m.model}, learning rate {m.lr:g}" + (" (d2l's)" if m.d2l_lr else ""))
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(FixedLocator([5, 6, 7, 8, 10, 12, 15, 20, 25]))
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set(xlabel="epoch", ylabel="validation perplexity")
        ax.legend(loc="upper right")

    return ctx.figure(draw, alt="Validation perplexity per epoch for the GRU, the LSTM and the "
                                "plain RNN on The Time Machine, each at d2l's learning rate "
                                "(thick) and at the rate it does best at (thin), first seed",
                      caption="Validation perplexity per epoch, log scale, the first seed of "
                              "each line of the table: thick at d2l's learning rate, thin at "
                              "the pilot's best.")


@CHAPTER.figure
def clipping(ctx):
    from matplotlib.ticker import LogLocator

    run = ctx.record("--cell", "rnn", "--lr", "4")

    def draw(axes, colors):
        top, bottom = axes
        epochs = [row.epoch for row in run.history]
        top.plot(epochs, [row.val_ppl for row in run.history], color=colors.series[0],
                 label="validation perplexity")
        top.set(yscale="log", ylabel="perplexity")
        top.legend(loc="upper right")
        bottom.plot(epochs, [row.max_grad_norm for row in run.history], color=colors.series[1],
                    linestyle="--", label="largest gradient norm, before clipping")
        bottom.axhline(run.config.clip, color=colors.muted, linestyle=":", linewidth=1.2)
        label_line(bottom, colors, f"threshold {run.config.clip:g}", y=run.config.clip)
        bottom.set(yscale="log", xlabel="epoch", ylabel="norm")
        bottom.legend(loc="upper right")
        # This run is chaotic: its range differs in the last bits of BLAS from one CPU to
        # another, and where it spans about a decade matplotlib labels every minor tick
        # (3, 4, ... x 10^k), which collide. Minor ticks at 2 and 5 only can be labelled.
        for ax in axes:
            ax.yaxis.set_minor_locator(LogLocator(subs=(2.0, 5.0)))

    return ctx.figure(draw, size=(7.2, 4.2), grid=dict(nrows=2, sharex=True),
                      alt="The plain RNN at learning rate 4: its validation perplexity jumps by "
                          "orders of magnitude between epochs while its gradient norm, before "
                          "clipping, stays far above the clipping threshold of 1",
                      caption="The plain RNN at learning rate 4, <code>python3 gru.py --cell rnn "
                              "--lr 4</code>. Dotted: the clipping threshold.")


@CHAPTER.figure
def distance(ctx):
    dist = ctx.record("--distance")

    def draw(ax, colors):
        for curve, color in zip(dist.curves, colors.series):
            ks = list(range(len(curve.trained)))
            ax.plot(ks, list(curve.trained), color=color, label=f"{curve.model}, trained")
            ax.plot(ks, list(curve.init), color=color, linestyle=":", linewidth=1.4)
        ax.plot([], [], color=colors.muted, linestyle=":", linewidth=1.4,
                label="the same, at initialisation")
        ax.set(yscale="log", xlabel="k, steps back from the last",
               ylabel=r"mean $\Vert \partial L_T / \partial H_{T-k} \Vert$")
        ax.legend(loc="lower left", ncols=2)

    return ctx.figure(draw, alt="Gradient of the last step's loss against distance in the three "
                                "trained language models: after training it reaches back far "
                                "further than at initialisation, the GRU's furthest",
                      caption="Solid: after 50 epochs. Dotted: the same weights before "
                              "training.")


@CHAPTER.figure
def saturation(ctx):
    sat = ctx.record("--saturation")
    markers = {"Z": "o", "R": "s", "I": "^", "F": "D", "O": "v"}

    def draw(axes, colors):
        for ax, model in zip(axes, ("GRU", "LSTM")):
            for gate, color in zip([g for g in sat.gates if g.model == model], colors.series):
                ax.scatter(list(gate.unit_right), list(gate.unit_left), s=22, color=color,
                           marker=markers.get(gate.gate, "o"), label=f"gate {gate.gate}",
                           alpha=0.85, linewidths=0)
            ax.plot([0, 1], [1, 0], color=colors.muted, linewidth=1, linestyle=":")
            ax.set(xlim=(-0.05, 1.05), ylim=(-0.05, 1.05))  # the panels' "1" and "0" apart
            ax.set_xticks([0, 0.5, 1], ["0", "0.5", "1"])  # "1.0" beside "0.0" read as one
            ax.set_title(model)
            ax.set_xlabel(f"fraction of steps\nabove {sat.high:g}")  # two fit side by side
            ax.legend(loc="upper right")
        axes[0].set_yticks([0, 0.5, 1], ["0", "0.5", "1"])
        axes[0].set_ylabel(f"fraction of steps below {sat.low:g}")

    return ctx.figure(draw, size=(7.2, 3.8), grid=dict(ncols=2, sharey=True),
                      alt="Scatter of the gates' units, fraction of time right-saturated "
                          "against left-saturated, for the trained GRU and LSTM",
                      caption="One point per unit and gate: how often it is nearly closed "
                              "(up) or nearly open (right). Points on the dotted diagonal are "
                              "always saturated one way or the other.")


@CHAPTER.block
def inside(ctx):
    """The validation passage with each character shaded by the mean update gate and by
    the two units the script found, in ten levels (the tenths the script prints as
    digits, shown below the shading: the values do not rest on colour alone)."""
    record = ctx.record("--inside")
    rows = [("mean update gate Z (0 unshaded, 1 full orange)", record.z_mean, False)]
    for unit in record.units:
        rows.append((f"unit {unit.unit}, which tracks {html.escape(unit.feature)} "
                     f"(r = {unit.correlation:+.2f}; orange above 0, blue below)",
                     unit.values, True))
    out = []
    for label, values, signed in rows:
        spans = []
        for ch, v in zip(record.passage, values):
            level = min(9, int(abs(v) * 10))  # tenths, as the script's digits
            shade = ("n" if v < 0 else "p") + str(level)
            shown = "&nbsp;" if ch == " " else html.escape(ch)
            spans.append(f'<i class="{shade}">{shown}</i>' if level else shown)
        out.append(f'<p class="shaded-label">{label}</p>\n'
                   f'<p class="shaded" aria-hidden="true">{"".join(spans)}</p>')
    return '<div class="inside" data-search-exclude>\n' + "\n".join(out) + "\n</div>"


REACH_DECADES = 5  # the reach widget's log scale: ten levels over five decades
REACH_KS = (0, 1, 2, 4, 8, 16, 32, 63)  # the distances its readout lists


@CHAPTER.widget
def reach_widget(ctx):
    """How far back each prediction over the shaded passage reaches in each of the three
    trained models (Distill's connectivity; docs/assets/widgets/reach.js), looked up in
    the served record of --reach (compute_reach), which the page loads when the reader
    first points at it. Until then it shows the last character's prediction, whose
    numbers come with the page."""
    inside, record = ctx.record("--inside"), ctx.record("--reach")
    _, data = ctx.served("gru-reach.json")
    url = ctx.url("code/gru-reach.json")
    if record.passage != inside.passage or any(len(m.reach) != len(inside.passage)
                                               for m in record.models):
        raise GeneratorError(f"{ctx.where}: --reach's passage is not --inside's: the reach "
                             f"shown would not be of the passage shaded above")
    if max(REACH_KS) >= record.reach_back:
        raise GeneratorError(f"{ctx.where}: REACH_KS goes past reach_back = {record.reach_back}")
    start = len(record.passage) - 1
    values = [v for m in record.models for row in m.reach for v in row if v > 0]
    decade = (math.floor(math.log10(min(values))), math.ceil(math.log10(max(values))))
    return ctx.widget("reach", {
        "title": "How far back each prediction reaches: point at a character",
        "caption": (
            "For the character under the pointer, step <i>t</i>: each character before it, "
            "<i>t</i> &minus; <i>k</i>, is shaded by the norm of the gradient of the "
            "log-probability the chosen model gives the character after <i>t</i> (double "
            "underline) with respect to the one-hot input "
            "<i>X</i><sub><i>t</i>&minus;<i>k</i></sub>, for "
            f"<i>k</i> up to {record.reach_back - 1}, reading from a zero state. Each "
            "prediction is shaded against its own largest value: on the log scale in ten levels "
            f"of {REACH_DECADES / 10:g} decade each (darkest within a factor "
            f"{10 ** (REACH_DECADES / 10):.1f} of the largest, unshaded below "
            f"10<sup>&minus;{REACH_DECADES}</sup> of it), on the linear one in tenths. "
            "The chart draws the same prediction in all three models, and in yours once the "
            "trainer below has trained it (computed here by <code>compute_reach</code> written "
            "out in JavaScript). The chapter's numbers are "
            "<code>compute_reach</code> of gru.py, each cell's own backward steps, in the "
            f'record of <code>python3 gru.py --reach</code> (<a href="{url}">'
            "gru-reach.json</a>: <code>models[i].reach[t][k]</code>)."),
        "model": {"url": url, "bytes": len(data)},
        "passage": record.passage,
        "reach_back": record.reach_back,
        "cells": [m.model for m in record.models],
        "cell": 0,
        "start": {"t": start, "rows": [m.reach[start].plain() for m in record.models]},
        "range": {"min": 10.0 ** decade[0], "max": 10.0 ** decade[1]},
        "next": record.next_char,
        "trainer": TRAINER_TITLE,  # the page's trainer, whose GRU the reader can choose
        "scales": [{"text": f"log scale, {REACH_DECADES} decades"},
                   {"text": "linear, tenths of the largest"}],
        "index": 0,
        "decades": REACH_DECADES,
        "ks": list(REACH_KS),
    })


@CHAPTER.block
def timing(ctx):
    compare = ctx.record("--compare")
    return "\n".join(f"- **{m.model}** at learning rate {m.lr:g}: "
                      f"{len(m.seeds)} x {compare.epochs} epochs in {m.seconds:.1f} s, "
                      f"{m.seconds / len(m.seeds):.1f} s a run."
                      for m in compare.models)


@CHAPTER.block
def trained_model(ctx):
    """The trained GRU as a served file (gru.py --export's record): its weights by the
    equations' names, the vocabulary and preprocessing, for a reader's numpy or a page's
    script; and the reach of the three models (--reach's record)."""
    link, data = ctx.served("gru-trained.json")
    reach_link, reach_data = ctx.served("gru-reach.json")
    return (f"[gru-trained.json]({link}){{ download }} ({len(data) / 1000:,.0f} KB) holds "
            f"this trained GRU: its weights under the equations' names, the vocabulary and "
            f"the preprocessing; it is the record of `python3 gru.py --export`. "
            f"[gru-reach.json]({reach_link}){{ download }} ({len(reach_data) / 1000:,.0f} KB), "
            f"the record of `python3 gru.py --reach`, holds how strongly each prediction over "
            f"the passage above depends on each input before it, in all three models. "
            f"[gru.py's code page]({ctx.link('code/gru.md')}#gru-trainedjson) shows the lines "
            f"that load them.")


TEMPERATURES = [round(0.05 * k, 2) for k in range(2, 41)]  # the widget's slider: 0.1 .. 2
LENGTHS = [10, 20, 40, 80, 160]


@CHAPTER.widget
def model_widget(ctx):
    """The trained GRU writing in the page (docs/assets/widgets/textgen.js): it starts
    where the samples table ends, at "it has", 20 characters, temperature 0.5, showing
    --export's greedy text before its weights load; it can also write with the GRU the
    reader trains in the trainer below (trainer_widget), which shares its parameters."""
    train, export = ctx.record(), ctx.record("--export")
    link, data = ctx.served("gru-trained.json")
    last = train.samples[-1]
    if (export.greedy, export.prefix) != (last.greedy, train.config.prefix):
        raise GeneratorError(f"{ctx.where}: --export's greedy {export.greedy!r} is not the "
                             f"samples table's {last.greedy!r}: the widget would not start there")
    if len(export.greedy) != len(export.prefix) + train.config.num_preds:
        raise GeneratorError(f"{ctx.where}: --export's greedy is not {train.config.num_preds} "
                             f"characters after its prefix: not what the widget writes at its start")
    return ctx.widget("textgen", {
        "title": "The trained GRU, writing: type a prompt",
        "caption": ("The GRU above (seed 0, epoch 50), run by this page on the weights of "
                    f'<a href="{ctx.url("code/gru-trained.json")}">gru-trained.json</a>: '
                    "the same step and the same sampling as gru.py's <code>predict</code>, "
                    "with numpy's random numbers (<code>default_rng(seed)</code>), so the "
                    "Python lines under the text print the same. The greedy line at the start "
                    "is the last row of the samples table. Once the trainer below has trained, "
                    "<i>your GRU</i> can write instead, and follows its training."),
        "model": {"url": ctx.url("code/gru-trained.json"), "bytes": len(data)},
        "prefix": train.config.prefix,
        "greedy": export.greedy,  # shown before the weights load: what the widget writes first
        "vocab": list(export.vocab),
        "chapter": f"the chapter's GRU (gru.py, {train.config.epochs} epochs)",
        "trainer": TRAINER_TITLE,  # the page's trainer, whose GRU the reader can write with
        "max_length": 200,
        "temperature": {"values": TEMPERATURES, "index": TEMPERATURES.index(0.5)},
        "length": {"values": LENGTHS, "index": LENGTHS.index(train.config.num_preds)},
        "seed": 0,
        "top": 5,
    })


@CHAPTER.block
def torch_model(ctx):
    """The model and the training loop of gru_torch.py, as they are in the served file."""
    source = ctx.quote("gru_torch.py", "RNNLM", "clip_gradients", "compute_training")
    return f"```python\n{source}\n```"


TRAINER_TITLE = "Train the GRU here: on the book, or on your own text"
TRAINER_HIDDEN = [16, 32, 64]                      # the trainer's hidden sizes, one --init each
TRAINER_BOOK_CHARS = 4000                          # the book's first characters, as it starts
TRAINER_SMALL = ("--updates", "50", "--float64", "--hidden", "16", "--batch-size", "1",
                 "--num-train", "100", "--num-val", "10")  # the page's run, small: its settings


@CHAPTER.widget
def trainer_widget(ctx):
    """The GRU trained in the page (docs/assets/widgets/trainer.js, gru-train.js in a
    worker): from the initial parameters of `gru.py --init --hidden H`, one file per
    size, loaded when the reader presses Start; the settings of `gru.py --updates`."""
    small = ctx.record(*TRAINER_SMALL).plain()
    config, init = small["config"], {}
    records = {h: ctx.record("--init", "--hidden", str(h)).plain() for h in TRAINER_HIDDEN}
    if any(r["vocab"] != list(ctx.record("--export").vocab) for r in records.values()):
        raise GeneratorError(f"{ctx.where}: --init's vocabulary is not --export's: the text "
                             f"generator could not write with the reader's GRU")
    for h, record in records.items():
        relpath = f"widgets/ch14-gru-lm/gru-init-{h}.json"
        ctx.add_file(relpath, json.dumps({k: record[k] for k in (
            "cell", "hidden", "seed", "float64", "state", "inc", "has_uint32", "uinteger")},
            sort_keys=True).encode("utf-8"))
        init[str(h)] = ctx.url(relpath)
    lrs, clips = [0.25, 0.5, 1, 2, 4, 8], [0.1, 0.25, 0.5, 1, 2, 5]
    temperatures = [round(0.05 * k, 2) for k in range(2, 41)]
    return ctx.widget("trainer", {
        "title": TRAINER_TITLE,
        "caption": (
            "gru.py's training, run by this page in float64 in a background thread: the same "
            "windows, initial weights (from <code>python3 gru.py --init</code>), order of "
            "batches (numpy's generator), forward and backward pass, clipping and SGD as "
            "<code>python3 gru.py --updates</code>, so the command under the chart prints "
            "the rows and samples this page shows. The arithmetic differs only in the order "
            "of some sums (numpy's are BLAS's), a difference in the last digits that a "
            "browser test bounds after 200 updates (parameters equal to numpy's within "
            "10<sup>&minus;9</sup>); it grows as training goes on, and at a high learning "
            "rate with small batches, where SGD amplifies small differences, a run of many "
            "hundreds of updates here and in numpy part ways in the printed digits. The "
            "last sample column is drawn at your temperature with the generator of the "
            "column of the same temperature."),
        "book": (CODE / "timemachine.txt").read_text("utf-8")[:TRAINER_BOOK_CHARS],
        "init": init,
        "vocab": records[TRAINER_HIDDEN[0]]["vocab"],
        "T": config["num_steps"], "prefix": config["prefix"], "num_preds": config["num_preds"],
        "temperatures": small["temperatures"], "every": small["every"], "seed": config["seed"],
        "hidden": {"values": TRAINER_HIDDEN, "index": TRAINER_HIDDEN.index(32)},
        "batch": {"values": [1, 8, 32], "index": 0},
        "updates": {"values": [200, 1000, 5000, 20000], "index": 1},
        "lr": {"values": lrs, "index": lrs.index(config["lr"])},
        "clip": {"values": clips, "index": clips.index(config["clip"])},
        "temperature": {"values": temperatures, "index": temperatures.index(0.5)},
        "max_chars": 200_000, "min_windows": 20, "val_share": 10, "val_max": 100,
        "train_max": 10_000,
    })
