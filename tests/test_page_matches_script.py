"""The page and the download cannot disagree.

For every table a page shows (every `<!-- gen table NAME from SCRIPT FLAGS -->` of
every page), running that command as a reader would prints exactly that table:
the chapter's notebook run in a fresh kernel, or the served script run alone in
an empty folder with its data, or, for a training run no notebook makes, the
build's own run of it (helpers.TRAINS); the HTML table under the command label
holds the same cells; and the label is that command. Every table a chapter's
commands print is on some page.
"""

import pytest

from helpers import (CHAPTERS, built_output, html_command_tables,
                     masked, measured_tables, output_of, outputs_of, page_html, page_markers,
                     same_cells, shown_cells, table_blocks)
from generator.tables import command

MARKERS = page_markers()
TABLE_PAGES = sorted(p for p, ms in MARKERS.items() if any(m.kind == "table" for m in ms))


def tables_of(page):
    return [m for m in MARKERS[page] if m.kind == "table"]


def test_every_chapter_page_shows_tables_of_its_script():
    for ch in CHAPTERS:
        shown = {m.script for m in MARKERS.get(ch.page, []) if m.kind == "table"}
        assert ch.script in shown, f"{ch.page} shows no table of {ch.script}"


@pytest.mark.parametrize("page", TABLE_PAGES)
def test_every_table_on_the_page_is_what_its_command_prints(page, site):
    shown = html_command_tables(page_html(page))
    wanted = tables_of(page)
    outputs_of([command(m.script, m.argv) for m in wanted])  # two at a time
    assert [cmd for cmd, _ in shown] == [command(m.script, m.argv) for m in wanted], \
        f"{page}: the command labels are not the markers' commands, in order"
    for (cmd, rows), m in zip(shown, wanted):
        printed = output_of(cmd)
        measured = measured_tables(printed)
        tables = [t for t in table_blocks(printed) if shown_cells(t) == same_cells(rows)
                  or t in measured and masked(shown_cells(t)) == masked(same_cells(rows))]
        assert tables, (f"{page}: the table under `{cmd}` (marker '{m.name}', line {m.line}) "
                        f"is not one the command prints:\n{rows}")
        if tables[0] in measured:  # its times are the build's run's, to the digit
            _, script, *args = cmd.split()
            built = [t for t in table_blocks(built_output(script, *args) or "")
                     if shown_cells(t) == same_cells(rows)]
            assert built, f"{page}: the measured table under `{cmd}` is not the build's"
