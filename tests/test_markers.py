"""Markers: parsing, the checks that fail the build, substitution."""

import pytest

from generator.chapter import Chapter, GeneratorError
from generator.markers import check, parse, substitute

SCRIPTS = {"rnn.py", "gated.py"}


def chapter_with(*producers):
    ch = Chapter("ch99-test.md", "rnn.py")
    ch.module = "ch99_test"
    for name, kind in producers:
        func = (lambda ctx: "x")
        func.__name__ = name
        getattr(ch, kind)(func)
    return ch


def test_every_kind_is_found_with_its_line_script_and_flags():
    text = ("# T\n\n<!-- gen table decay from rnn.py --vanish -->\n\n"
            "It is <!-- gen value spectral_radius:.4f from rnn.py --vanish -->.\n\n"
            "<!-- gen figure decay -->\n\nSee <!-- gen inline setup -->.\n\n"
            "<!-- gen output from gru.py --cell lstm --epochs 2 -->\n")
    found = parse("ch99-test.md", text)
    assert [(m.line, m.kind, m.name, m.fmt, m.script, m.argv, m.alone) for m in found] == [
        (3, "table", "decay", None, "rnn.py", ("--vanish",), True),
        (5, "value", "spectral_radius", ".4f", "rnn.py", ("--vanish",), False),
        (7, "figure", "decay", None, None, (), True),
        (9, "inline", "setup", None, None, (), False),
        (11, "output", "", None, "gru.py", ("--cell", "lstm", "--epochs", "2"), True),
    ]
    assert found[1].key == "value spectral_radius:.4f from python3 rnn.py --vanish"
    fragments = {m.key: m.kind.upper() for m in found}
    assert substitute(text, found, fragments) == \
        "# T\n\nTABLE\n\nIt is VALUE.\n\nFIGURE\n\nSee INLINE.\n\nOUTPUT\n"


def test_a_value_reaches_into_nested_records():
    (m,) = parse("p.md", "x <!-- gen value measured.3.norms.0:.3f from rnn.py --measure --> y")
    assert m.name == "measured.3.norms.0" and m.fmt == ".3f"
    (m,) = parse("p.md", "x <!-- gen value H from gated.py --params --> y")
    assert m.name == "H" and m.fmt is None


def test_a_value_reaches_a_label_keyed_dict_by_the_label_as_a_name():
    from generator.runs import Record
    record = Record({"mean": {"LSTM b_f=2": [0.5, 0.75], "plain RNN": [0.25], "GRU": [1.0]}},
                    "`python3 memory.py --accuracy`")
    assert record.mean.LSTM_b_f_2[1] == 0.75 and record.mean.plain_RNN[0] == 0.25
    assert record.mean.GRU[0] == 1.0
    with pytest.raises(GeneratorError, match="has no field 'LSTM_b_f_3'"):
        record.mean.LSTM_b_f_3
    (m,) = parse("p.md", "x <!-- gen value mean.LSTM_b_f_2.1:.2f from memory.py --accuracy --> y")
    assert m.name == "mean.LSTM_b_f_2.1"


@pytest.mark.parametrize("bad", [
    "<!-- gen ch12_rnn.decay_table -->",  # the old syntax
    "<!-- gen table decay -->",  # no command
    "<!-- gen table decay from rnn -->",  # not a .py script
    "<!-- gen tabel decay from rnn.py -->",  # unknown kind
    "<!-- gen figure Decay -->",  # capital letters
    "<!-- gen table decay from rnn.py --vanish",  # never closed
    "<!-- gen value x from rnn.py 'unclosed -->",  # bad quoting
])
def test_malformed_markers_fail_with_file_and_line(bad):
    with pytest.raises(GeneratorError) as err:
        parse("ch99-test.md", f"intro\n\n{bad}\n")
    assert "docs/ch99-test.md:3: malformed marker" in str(err.value)


def test_markers_inside_code_are_documentation():
    text = ("Write `<!-- gen table decay from rnn.py --vanish -->` on its own line.\n\n"
            "```markdown\n<!-- gen anything -->\n```\n")
    assert parse("building.md", text) == []


def test_markers_in_indented_code_are_documentation_in_admonitions_they_are_not():
    """Four spaces deeper than the text around it, after a blank line, is a code block
    (Python-Markdown's reading); the body of an admonition or a list item is not."""
    marker = "<!-- gen table decay from rnn.py --vanish -->"
    code = f"Write this on its own line:\n\n    {marker}\n\nand build."
    assert parse("building.md", code) == []
    in_a_list = f"1. Write the marker:\n\n        {marker}\n\n2. Build."
    assert parse("building.md", in_a_list) == []
    shown = [(m.line, m.kind) for m in parse("p.md", f"??? note \"The table\"\n\n    {marker}\n")]
    assert shown == [(3, "table")]
    nested = (f"??? question \"Q\"\n\n    Text.\n\n    ??? success \"Answer\"\n\n"
              f"        {marker}\n\n1. An item:\n\n    {marker}\n")
    assert [m.line for m in parse("p.md", nested)] == [7, 11]
    no_blank_line = f"A paragraph\n    {marker}\n"  # no code block can interrupt a paragraph
    assert [m.line for m in parse("p.md", no_blank_line)] == [2]


def test_unknown_script_names_the_ones_there_are():
    found = parse("p.md", "<!-- gen table decay from rnn2.py --vanish -->\n")
    with pytest.raises(GeneratorError, match=r"docs/p.md:1: unknown script .* docs/code/ has "
                                             r"gated.py, rnn.py"):
        check(found, None, SCRIPTS)


def test_unknown_producer_names_the_marker_and_the_alternatives():
    ch = chapter_with(("decay", "figure"))
    found = parse("ch99-test.md", "<!-- gen figure dcay -->\n<!-- gen figure decay -->\n")
    with pytest.raises(GeneratorError, match=r"ch99-test.md:1: unknown marker <!-- gen figure "
                                             r"dcay -->.*has no figure 'dcay' \(it has: figure "
                                             r"decay\)"):
        check(found, ch, SCRIPTS)


def test_a_producer_of_another_kind_is_unknown():
    ch = chapter_with(("decay", "figure"))
    with pytest.raises(GeneratorError, match="has no block 'decay'"):
        check(parse("ch99-test.md", "<!-- gen block decay -->\n"), ch, SCRIPTS)


def test_producer_marker_on_a_page_no_chapter_draws_for():
    found = parse("index.md", "<!-- gen figure decay -->\n")
    with pytest.raises(GeneratorError, match="no chapter module draws for this page"):
        check(found, None, SCRIPTS)


def test_unused_producer_fails():
    ch = chapter_with(("decay", "figure"), ("clip", "figure"))
    found = parse("ch99-test.md", "<!-- gen figure decay -->\n")
    with pytest.raises(GeneratorError, match=r"docs/ch99-test.md: unused in the page: "
                                             r"<!-- gen figure clip -->"):
        check(found, ch, SCRIPTS)


def test_block_inside_a_sentence_and_inline_alone_fail():
    with pytest.raises(GeneratorError, match="makes a block"):
        parse("p.md", "see <!-- gen table decay from rnn.py --vanish -->\n")
    with pytest.raises(GeneratorError, match="makes inline text"):
        parse("p.md", "<!-- gen value factor_05:sci from rnn.py --vanish -->\n")


# -- code markers: a definition of the served script, quoted at build time ------------

def test_a_code_marker_names_a_function_and_a_script_and_stands_alone():
    text = "# T\n\n<!-- gen code gru_step from gru.py -->\n\n<!-- gen code Adam from deeper.py -->\n"
    found = parse("ch99-test.md", text)
    assert [(m.line, m.kind, m.name, m.script, m.argv, m.alone) for m in found] == [
        (3, "code", "gru_step", "gru.py", (), True), (5, "code", "Adam", "deeper.py", (), True)]
    assert found[0].key == "code gru_step from python3 gru.py"
    with pytest.raises(GeneratorError, match=r"^docs/ch99-test\.md:1: .*no flags"):
        parse("ch99-test.md", "<!-- gen code gru_step from gru.py --cell lstm -->\n")
    with pytest.raises(GeneratorError, match=r"^docs/ch99-test\.md:1: .*makes a block"):
        parse("ch99-test.md", "See <!-- gen code gru_step from gru.py --> here.\n")


def test_a_code_quote_is_the_definitions_lines_as_served_linked_to_them():
    """The quote holds exactly the lines ast reports for the definition (decorators
    included), numbered from its first line, and links the code page's anchor, which
    the code page's listing carries; the listing's blocks together are the file."""
    import ast
    import re

    from generator import codepage
    from generator.chapter import CODE, chapters

    ch = next(c for c in chapters() if c.script == "deeper.py")
    source = (CODE / "deeper.py").read_text("utf-8")
    node = next(n for n in ast.parse(source).body if getattr(n, "name", "") == "beam_search")
    quote = codepage.code_quote(ch, "beam_search", "ch17-deeper.md", "docs/ch17-deeper.md:9")
    lines = source.splitlines()[node.lineno - 1:node.end_lineno]
    assert f"lines {node.lineno} to {node.end_lineno}" in quote
    body = [line[4:] if line else "" for line in quote.split("\n")[2:]]
    assert body[body.index(lines[0]):body.index(lines[0]) + len(lines)] == lines
    assert "(code/deeper.md#def-beam_search)" in quote
    listing = codepage.listing(source, ["beam_search", "attend"])
    assert '<span id="def-beam_search"></span>' in listing
    blocks = re.findall(r'```python linenums="(\d+)"\n(.*?)\n```', listing, re.S)
    assert "\n".join(text for _, text in blocks) == source.rstrip()
    assert [int(n) for n, _ in blocks][1:] == sorted(
        [codepage.definitions(source)[n][0] for n in ("attend", "beam_search")])


def test_an_unknown_definition_fails_naming_the_page_line_and_what_there_is():
    from generator import codepage
    from generator.chapter import chapters

    ch = next(c for c in chapters() if c.script == "gru.py")
    with pytest.raises(GeneratorError) as err:
        codepage.code_quote(ch, "gru_stpe", "ch14-gru-lm.md", "docs/ch14-gru-lm.md:64")
    assert str(err.value).startswith("docs/ch14-gru-lm.md:64: docs/code/gru.py defines no "
                                     "function or class 'gru_stpe' at top level (it defines: ")
    assert "gru_step," in str(err.value)
