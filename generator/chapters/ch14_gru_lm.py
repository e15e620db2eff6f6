"""Chapter 14, a GRU language model from scratch: docs/ch14-gru-lm.md, from docs/code/gru.py.

Training the three cells takes a while, so each run is kept in the measurement
cache, keyed by the script, the corpus and the configuration: a warm build does
not retrain, and a cold one prints a progress line per model.
"""

import time
from dataclasses import asdict

from .registry import DOCS, GeneratorError, Page
from .tables import command_table

PAGE = Page("ch14-gru-lm.md", script="code/gru.py", inputs=("code/timemachine.txt",))
CORPUS = "code/timemachine.txt"


def _text(ctx):
    gru = ctx.script
    try:
        return ctx.memo("text", lambda: gru.load_corpus(DOCS / CORPUS))
    except gru.CorpusError as exc:
        raise GeneratorError(f"docs/{CORPUS}: {exc}") from exc


def _train(ctx, cell):
    """The TrainResult of `python3 gru.py --cell <cell>` (d2l's configuration)."""
    gru = ctx.script

    def compute():
        print(f"generator:   training {cell.upper()} ({gru.Config.epochs} epochs) ...", flush=True)
        started = time.perf_counter()
        result = gru.compute_training(_text(ctx), gru.Config(cell=cell))
        print(f"generator:   trained {cell.upper()} in {time.perf_counter() - started:.1f} s, "
              f"validation perplexity {result.history[-1][2]:.2f}", flush=True)
        return result.to_dict()

    parts = [("script", (DOCS / PAGE.script).read_bytes()), ("corpus", (DOCS / CORPUS).read_bytes()),
             ("config", repr(asdict(gru.Config(cell=cell))).encode())]
    value = ctx.memo(f"train-{cell}",
                     lambda: ctx.measurements.memo_json("training", cell, parts, compute))
    return gru.TrainResult.from_dict(value)


def _all(ctx):
    return [_train(ctx, cell) for cell in ctx.script.CELLS]


# 14.1 the data ----------------------------------------------------------------

@PAGE.block
def config_table(ctx):
    gru = ctx.script
    data = ctx.memo("data", lambda: gru.make_dataset(_text(ctx), gru.Config()))
    return command_table("python3 gru.py", gru.format_config_table(gru.Config(), data))


# 14.4 gradient check ---------------------------------------------------------

def _gradcheck(ctx):
    return ctx.memo("gradcheck", ctx.script.compute_gradcheck)


def _gradcheck_parts(ctx):
    caption, table = ctx.script.format_gradcheck_table(_gradcheck(ctx)).split("\n\n", 1)
    return caption, table


@PAGE.block
def gradcheck_table(ctx):
    return command_table("python3 gru.py --gradcheck", _gradcheck_parts(ctx)[1])


@PAGE.block
def gradcheck_caption(ctx):
    caption = _gradcheck_parts(ctx)[0]
    return f"The relative error is {caption[len('relative error '):]}."


@PAGE.inline
def gradcheck_worst(ctx):
    return f"{max(err for *_, err in _gradcheck(ctx)):.1e}"


# 14.5 training ---------------------------------------------------------------

@PAGE.block
def history_table(ctx):
    return command_table("python3 gru.py", ctx.script.format_history_table(_train(ctx, "gru")))


@PAGE.inline
def gru_val(ctx):
    return f"{_train(ctx, 'gru').history[-1][2]:.2f}"


@PAGE.block
def compare_table(ctx):
    return command_table("python3 gru.py --compare",
                         ctx.script.format_comparison_table(_all(ctx)))


@PAGE.inline
def gru_sample(ctx):
    return f"`{_train(ctx, 'gru').sample}`"


@PAGE.block
def curves_plot(ctx):
    results = _all(ctx)

    def draw(fig, colors):
        from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

        ax = fig.subplots()
        for result, color in zip(results, colors.series):
            epochs = [e for e, _, _ in result.history]
            name = result.config.cell.upper() if result.config.cell != "rnn" else "plain RNN"
            ax.plot(epochs, [t for _, t, _ in result.history], color=color, linestyle="--",
                    linewidth=1.4)
            ax.plot(epochs, [v for _, _, v in result.history], color=color,
                    label=f"{name}, validation")
        ax.plot([], [], color=colors.muted, linestyle="--", linewidth=1.4, label="training")
        ax.set_yscale("log")
        ax.yaxis.set_major_locator(FixedLocator([5, 6, 7, 8, 10, 12, 15, 20, 25]))
        ax.yaxis.set_major_formatter(ScalarFormatter())
        ax.yaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("epoch")
        ax.set_ylabel("perplexity")
        ax.legend(loc="upper right")

    return ctx.figure("curves", draw,
                      alt="Training and validation perplexity per epoch for the GRU, the LSTM "
                          "and the plain RNN on The Time Machine",
                      caption="Perplexity per epoch, log scale: solid validation, dashed "
                              "training.")


# 14.6 timing ------------------------------------------------------------------

@PAGE.block
def timing(ctx):
    lines = ["On the machine that built this page (numpy, float32; the times are "
             "measurements, kept with the training results):", ""]
    for result in _all(ctx):
        name = result.config.cell.upper() if result.config.cell != "rnn" else "plain RNN"
        lines.append(f"- **{name}**: {result.config.epochs} epochs in {result.seconds:.1f} s, "
                     f"{result.tokens_per_second:,.0f} training tokens per second.")
    return "\n".join(lines)
