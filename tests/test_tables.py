"""How a script's output is framed on a page: table headers typeset, bodies untouched,
prose numbers formatted, console blocks. Expected values written out by hand."""

import pytest

from generator.chapter import GeneratorError
from generator.tables import command_table, console_block, format_value, header_cell, typeset_header


@pytest.mark.parametrize("printed, shown", [
    ("W x_t + U h_{t-1} + b_h", "$W x_t + U h_{t-1} + b_h$"),
    ("f = sigma(b_f)", r"$f = \sigma(b_f)$"),
    ("sigma(b_f)^47", r"$\sigma(b_f)^{47}$"),
    ("measured norm of dh_47/dh_0", "measured norm of $dh_{47}/dh_0$"),
    ("spectral radius rho", r"spectral radius $\rho$"),
    ("mean tanh'", r"mean $\tanh'$"),
    ("factor^47", r"$\text{factor}^{47}$"),
    ("f^10", "$f^{10}$"),
    # words, and notation without a subscript, superscript or Greek name, stay as printed
    ("feed-forward: context x d x H", "feed-forward: context x d x H"),
    ("cell path, median unit", "cell path, median unit"),
    ("P(the)", "P(the)"),
    ("val ppl", "val ppl"),
])
def test_header_cells_are_typeset_by_a_fixed_rule(printed, shown):
    assert header_cell(printed) == shown


def test_only_the_header_row_changes():
    table = ("| t | h_t       | rho^2 |\n"
             "|--:|-----------|------:|\n"
             "| 1 | (+0.1, x_t) | 0.25 |")
    out = typeset_header(table)
    first, *rest = out.split("\n")
    assert first == "| t | $h_t$ | $\\rho^2$ |"
    assert rest == table.split("\n")[1:]


def test_a_command_table_is_labelled_and_kept_out_of_search():
    out = command_table("python3 rnn.py --vanish", "| a |\n|---|\n| 1 |")
    assert out.startswith("`$ python3 rnn.py --vanish`\n{: .command }\n\n")
    assert '<section class="command-output" data-search-exclude markdown>' in out
    assert "| 1 |" in out


def test_a_console_block_fences_past_any_backticks_and_prompts_with_the_command():
    out = console_block("a ``` b\n", prompt="python3 x.py")
    assert "````console\n$ python3 x.py\na ``` b\n````" in out


@pytest.mark.parametrize("value, fmt, shown", [
    (0.5 ** 47, "sci", r"$7.1 \times 10^{-15}$"),
    (0.5 ** 47, "sci3", r"$7.11 \times 10^{-15}$"),
    (5266.6, ",.0f", "5,267"),
    (0.6, ".4f", "0.6000"),
    (0.75, ".0%", "75%"),
    (6310500, None, "6,310,500"),
    ([0.41, -0.05], "vec", "(+0.4100, -0.0500)"),
    (3.2, "sci", "$3.2$"),
])
def test_prose_values(value, fmt, shown):
    assert format_value(value, fmt, "here") == shown


@pytest.mark.parametrize("value, fmt", [(0.5, None), (float("nan"), "sci"), ("x", ".2f"),
                                        ([1, "a"], "vec")])
def test_values_that_cannot_be_formatted_say_where(value, fmt):
    with pytest.raises(GeneratorError, match="here"):
        format_value(value, fmt, "here")
