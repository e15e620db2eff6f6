"""How a script's output is framed on a page: the notation of table cells and captions
typeset by one rule, numbers untouched, prose numbers formatted, console blocks. Expected
values written out by hand."""

import pytest

from generator.chapter import GeneratorError
from generator.tables import command_table, console_block, format_value, typeset, typeset_table


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
    # body cells and captions: the same rule
    ("C_{t-1}, previous cell state", "$C_{t-1}$, previous cell state"),
    ("candidate C~", r"candidate $\tilde{C}$"),
    ("C~_t", r"$\tilde{C}_t$"),
    ("sigma(W_f q + b_f)", r"$\sigma(W_f q + b_f)$"),
    ("f * C_{t-1} + i * C~", r"$f \odot C_{t-1} + i \odot \tilde{C}$"),
    ("(1 - z) * h_{t-1} + z * h~", r"$(1 - z) \odot h_{t-1} + z \odot \tilde{h}$"),
    ("tanh(W_h [r * h_{t-1}, x_t])", r"$\tanh(W_h [r \odot h_{t-1}, x_t])$"),
    ("b_f; b_i and b_o", "$b_f$; $b_i$ and $b_o$"),
    ("W_f, forget (2 x 4, acting on q)", "$W_f$, forget (2 x 4, acting on q)"),
    ("LSTM (b_f 0)", "LSTM ($b_f$ 0)"),
    ("plain RNN, LSTM b_f=1, GRU", "plain RNN, LSTM $b_f=1$, GRU"),
    ("Dashed: rho^t, the linearised prediction.", r"Dashed: $\rho^t$, the linearised prediction."),
    ("norm of dh_t/dh_0. Dashed: sigma(b_f)^t.", r"norm of $dh_t/dh_0$. Dashed: $\sigma(b_f)^t$."),
    ("rho = 1.1", r"$\rho$ = 1.1"),
    ("betas 0.9 and 0.999, epsilon 1e-08", r"betas 0.9 and 0.999, $\epsilon$ 1e-08"),
    # numbers, alone or beside words, are never touched
    ("(+0.4100, -0.0500)", "(+0.4100, -0.0500)"),
    ("0.8038", "0.8038"),
    ("At d = 64, H = 128.", "At d = 64, H = 128."),
    ("uniform(-1/sqrt(16), 1/sqrt(16))", "uniform(-1/sqrt(16), 1/sqrt(16))"),
])
def test_notation_is_typeset_by_one_rule(printed, shown):
    assert typeset(printed) == shown


def test_a_table_keeps_its_numbers_and_its_alignment_rule():
    table = ("| t | h_t       | rho^2 |\n"
             "|--:|-----------|------:|\n"
             "| 1 | (+0.1, -0.2) | 0.25 |\n"
             "| f * C~ | 1e-05 | 7.1e-15 |")
    lines = typeset_table(table).split("\n")
    assert lines[0] == "| t | $h_t$ | $\\rho^2$ |"
    assert lines[1:3] == table.split("\n")[1:3]
    assert lines[3] == r"| $f \odot \tilde{C}$ | 1e-05 | 7.1e-15 |"


def test_a_caption_is_typeset_for_html():
    assert typeset("about sigma(b_f): the bias", html=True) == (
        'about <span class="arithmatex">\\(\\sigma(b_f)\\)</span>: the bias')
    assert typeset("a < b_t", html=True) == 'a < <span class="arithmatex">\\(b_t\\)</span>'


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


@pytest.mark.parametrize("markup, printed", [
    ("<math><msub><mi>h</mi><mrow><mi>t</mi><mo>\u2212</mo><mn>1</mn></mrow></msub></math>",
     "h_{t-1}"),
    ("<math><mi>\u03C3</mi><mo>(</mo><msub><mi>b</mi><mi>f</mi></msub><mo>)</mo></math>",
     "sigma(b_f)"),
    ('<math><msub><mover accent="true"><mi>C</mi><mo>\u02DC</mo></mover><mi>t</mi></msub></math>',
     "C~_t"),
    ("<math><mi>f</mi><mo>\u2299</mo><msub><mi>C</mi><mi>hh</mi></msub></math>", "f*C_hh"),
    ("<math><msup><mi>\u03C1</mi><mn>47</mn></msup></math>", "rho^47"),
    ("<math><mrow><mi>tanh</mi><mo>\u2032</mo></mrow></math>", "tanh'"),
    ("<math><mi>\u03F5</mi></math>", "epsilon"),  # TeX's \epsilon, the lunate form
])
def test_the_tests_read_mathml_back_into_the_scripts_notation(markup, printed):
    """tests/helpers.py's inverse, which the page-against-script comparison relies on."""
    from bs4 import BeautifulSoup

    from helpers import math_ascii

    assert math_ascii(BeautifulSoup(markup, "html.parser").math) == printed
