"""Markers: parsing, the checks that fail the build, substitution."""

import pytest

from generator.markers import check_markers, find_markers, substitute
from generator.registry import GeneratorError, Page


def page_with(*producers):
    page = Page("ch99-test.md")
    page.module = "ch99_test"
    for name, kind in producers:
        func = (lambda ctx: "x")
        func.__name__ = name
        getattr(page, kind)(func)
    return page


def test_block_and_inline_markers_are_found_with_their_lines():
    text = "# T\n\n<!-- gen ch99_test.table -->\n\nIt is <!-- gen ch99_test.value -->.\n"
    markers = find_markers(text, "docs/ch99-test.md")
    assert [(m.line, m.producer, m.alone) for m in markers] == [(3, "table", True),
                                                                 (5, "value", False)]
    page = page_with(("table", "block"), ("value", "inline"))
    check_markers(markers, "docs/ch99-test.md", page)
    assert substitute(text, markers, {"table": "| a |", "value": "42"}) == \
        "# T\n\n| a |\n\nIt is 42.\n"


@pytest.mark.parametrize("bad", [
    "<!-- gen ch99_test -->",  # no producer
    "<!-- gen ch99_test.Table -->",  # capital letters
    "<!-- gen: ch99_test.table -->",  # a colon
    "<!-- gen ch99_test.table",  # never closed
    "<!--gen ch99-test.table-->",  # a hyphen in the module
])
def test_malformed_markers_fail_with_file_and_line(bad):
    with pytest.raises(GeneratorError) as err:
        find_markers(f"intro\n\n{bad}\n", "docs/ch99-test.md")
    assert "docs/ch99-test.md:3: malformed marker" in str(err.value)


def test_markers_inside_code_are_documentation():
    text = ("Write `<!-- gen ch12_rnn.decay_table -->` on its own line.\n\n"
            "```markdown\n<!-- gen anything -->\n```\n")
    assert find_markers(text, "docs/building.md") == []


def test_unknown_producer_names_the_marker_and_the_alternatives():
    page = page_with(("table", "block"))
    markers = find_markers("<!-- gen ch99_test.tabel -->\n", "p.md")
    with pytest.raises(GeneratorError, match=r"p.md:1: unknown marker <!-- gen ch99_test.tabel -->"
                                             r".*has no producer 'tabel' \(it has: table\)"):
        check_markers(markers, "p.md", page)


def test_marker_of_another_module_is_unknown():
    page = page_with(("table", "block"))
    markers = find_markers("<!-- gen ch12_rnn.table -->\n<!-- gen ch99_test.table -->\n", "p.md")
    with pytest.raises(GeneratorError, match="unknown marker <!-- gen ch12_rnn.table -->"):
        check_markers(markers, "p.md", page)


def test_marker_on_a_page_no_module_feeds():
    markers = find_markers("<!-- gen ch12_rnn.table -->\n", "docs/index.md")
    with pytest.raises(GeneratorError, match="no generator module feeds this page"):
        check_markers(markers, "docs/index.md", None)


def test_unused_producer_fails():
    page = page_with(("table", "block"), ("plot", "block"))
    markers = find_markers("<!-- gen ch99_test.table -->\n", "p.md")
    with pytest.raises(GeneratorError, match=r"unused producer.*<!-- gen ch99_test.plot -->"):
        check_markers(markers, "p.md", page)


def test_block_producer_inside_a_sentence_and_inline_alone_fail():
    page = page_with(("table", "block"), ("value", "inline"))
    inline_block = find_markers("see <!-- gen ch99_test.table -->\n<!-- gen ch99_test.value -->\n",
                                "p.md")
    with pytest.raises(GeneratorError, match="makes a block"):
        check_markers(inline_block, "p.md", page)
    alone_inline = find_markers("<!-- gen ch99_test.table -->\n<!-- gen ch99_test.value -->\n",
                                "p.md")
    with pytest.raises(GeneratorError, match="makes inline text"):
        check_markers(alone_inline, "p.md", page)
