"""The page and the download cannot disagree.

For every table a chapter page shows under a command (`$ python3 rnn.py --vanish`),
running that command as a reader would, a subprocess on the served file, prints
exactly that table; and the HTML table on the built page holds the same cells.
For every command of the scripts, every table printed appears on the site.
"""

import re
import shlex

import pytest
from bs4 import BeautifulSoup

from conftest import SITE, run_script

# The step-by-step scripts, their flags, and the pages their tables may appear on.
SCRIPTS = {
    "rnn.py": (["", "--unroll", "--params", "--vanish", "--clip", "--measure"],
               ["ch12-rnn.md"]),
    "gated.py": (["", "--highway", "--bias", "--step", "--params", "--measure"],
                 ["ch13-gated.md", "conventions.md"]),
    "gru.py": (["", "--gradcheck", "--compare"], ["ch14-gru-lm.md"]),  # trains: ~1 min
}
COMMAND = re.compile(r"^`\$ (python3 (\S+\.py)(?: [^`]*)?)`$")

_outputs = {}


def output_of(command):
    """stdout of a command such as 'python3 rnn.py --vanish', run once per session."""
    if command not in _outputs:
        _, script, *args = shlex.split(command)
        result = run_script(script, *args)
        assert result.returncode == 0, f"{command} failed: {result.stderr}"
        assert result.stderr == "", f"{command} wrote to stderr: {result.stderr}"
        _outputs[command] = result.stdout
    return _outputs[command]


def table_blocks(text):
    """Every markdown table in a text: runs of consecutive lines starting with '|'."""
    blocks, current = [], []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            current.append(line)
        elif current:
            blocks.append("\n".join(current))
            current = []
    return blocks


def cells_of_markdown(table):
    rows = []
    for line in table.splitlines():
        if re.fullmatch(r"\|[-:| ]+\|", line):
            continue  # the alignment rule
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def commanded_tables(markdown):
    """(command, table) for each table the page shows under a `$ command` line."""
    found, lines = [], markdown.splitlines()
    for i, line in enumerate(lines):
        m = COMMAND.match(line.strip())
        if m:
            assert lines[i + 1:i + 3] == ["{: .command }", ""], f"`{line}` is not a command label"
            table = table_blocks("\n".join(lines[i + 3:]))[0]
            assert "\n".join(lines[i + 3:]).startswith(table), \
                f"no table directly under `$ {m.group(1)}`"
            found.append((m.group(1), table))
    return found


def html_tables_after_commands(html):
    soup = BeautifulSoup(html, "html.parser")
    pairs = []
    for p in soup.select("p.command"):
        table = p.find_next_sibling()
        assert table is not None and table.name == "table", \
            f"{p.get_text()} is not directly followed by a table"
        rows = [[cell.get_text(strip=True) for cell in tr.find_all(["th", "td"])]
                for tr in table.find_all("tr")]
        pairs.append((p.get_text(strip=True).lstrip("$ ").strip(), rows))
    return pairs


PAGES = sorted({page for _, pages in SCRIPTS.values() for page in pages})


@pytest.mark.parametrize("page", PAGES)
def test_every_table_on_the_page_is_printed_by_its_command(page, built):
    markdown = (built / page).read_text("utf-8")
    pairs = commanded_tables(markdown)
    assert pairs, f"{page} shows no table under a command"
    for command, table in pairs:
        assert table in table_blocks(output_of(command)), \
            f"{page}: the table under `{command}` is not what the command prints:\n{table}"


@pytest.mark.parametrize("page", PAGES)
def test_html_tables_hold_the_printed_cells(page, site, built):
    html = (SITE / page.replace(".md", "") / "index.html").read_text("utf-8")
    pairs = html_tables_after_commands(html)
    markdown_pairs = commanded_tables((built / page).read_text("utf-8"))
    assert len(pairs) == len(markdown_pairs) > 0
    for (command, rows), (md_command, table) in zip(pairs, markdown_pairs):
        assert command == md_command
        assert rows == cells_of_markdown(table), f"{page}: HTML table under `{command}` differs"


@pytest.mark.parametrize("script,flag", [(s, f) for s, (flags, _) in SCRIPTS.items()
                                         for f in flags])
def test_every_printed_table_is_on_the_site(script, flag, built):
    command = f"python3 {script} {flag}".strip()
    pages = "\n".join((built / page).read_text("utf-8") for page in SCRIPTS[script][1])
    printed = table_blocks(output_of(command))
    assert printed, f"{command} printed no table"
    for table in printed:
        assert table in pages, f"`{command}` prints a table no page shows:\n{table}"


def test_the_vanish_table_of_the_served_copy_is_on_the_page(site, tmp_path):
    """The issue's own check: python3 site/code/rnn.py --vanish prints what ch12 shows."""
    served = tmp_path / "rnn.py"
    served.write_bytes((SITE / "code" / "rnn.py").read_bytes())
    result = run_script(str(served), "--vanish", cwd=tmp_path)
    assert result.returncode == 0
    html = (SITE / "ch12-rnn" / "index.html").read_text("utf-8")
    shown = [rows for command, rows in html_tables_after_commands(html)
             if command == "python3 rnn.py --vanish"]
    printed = [cells_of_markdown(t) for t in table_blocks(result.stdout)]
    assert shown == printed and len(shown) == 2
