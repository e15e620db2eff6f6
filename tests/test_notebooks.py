"""The notebooks the site serves: self-contained, faithful to the script, with the outputs
of the very runs the pages show, and runnable as they are in an empty folder."""

import hashlib
import json
import re
import shlex
from urllib.parse import urlparse

import nbformat
import pytest
from bs4 import BeautifulSoup

from helpers import (CHAPTERS, CODE, SITE, load_script, notebook_run, run_alone,
                      run_cells, without_times)

IDS = [ch.script for ch in CHAPTERS]


def served(ch):
    return SITE / ch.notebook


@pytest.mark.parametrize("ch", CHAPTERS, ids=IDS)
def test_embedded_source_is_the_served_script_byte_for_byte(ch, site):
    nb = nbformat.read(served(ch), as_version=4)
    writes = [c.source for c in nb.cells if c.cell_type == "code"
              and c.source.startswith(f"%%writefile {ch.script}\n")]
    assert len(writes) == 1
    embedded = writes[0].split("\n", 1)[1].encode("utf-8")
    assert embedded == (SITE / "code" / ch.script).read_bytes() == (CODE / ch.script).read_bytes()


@pytest.mark.parametrize("ch", [ch for ch in CHAPTERS if ch.data] or [None],
                         ids=[ch.script for ch in CHAPTERS if ch.data] or ["none"])
def test_data_files_are_embedded_and_checked_by_their_hash(ch, site):
    if ch is None:
        pytest.skip("no chapter reads a data file")
    nb = nbformat.read(served(ch), as_version=4)
    for name in ch.data:
        embeds = [c.source for c in nb.cells if c.cell_type == "code"
                  and f'open("{name}", "wb")' in c.source and "b64decode" in c.source]
        assert len(embeds) == 1
        assert hashlib.sha256((CODE / name).read_bytes()).hexdigest() in embeds[0]
        namespace = {}
        exec(embeds[0].replace(f'open("{name}", "wb").write(data)', "pass"), namespace)
        assert namespace["data"] == (CODE / name).read_bytes()


@pytest.mark.parametrize("ch", CHAPTERS, ids=IDS)
def test_every_report_has_a_cell_with_what_it_printed(ch, site):
    """One run cell per report, in the order of the script's REPORTS: each cell's command,
    read by the script's own command line, chooses that report and no other (the example
    the script names for a report that needs options, EXAMPLES, exactly), the cell calls
    main() with that command's flags, and it carries the build's output (the fresh-kernel
    test below runs them again and compares). The expected cells come from the script,
    not from the generator's function that wrote them."""
    nb = nbformat.read(served(ch), as_version=4)
    nbformat.validate(nb)
    script = load_script(ch.script)
    examples = getattr(script, "EXAMPLES", {})
    sources = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("# $ ")]
    chosen = []
    for source in sources:
        label, call = source.split("\n", 1)
        words = shlex.split(label[len("# $ "):])
        assert words[:2] == ["python3", ch.script], label
        argv = words[2:]
        assert call == f"{ch.stem}.main({argv!r});", source
        chosen.append(script.parse_args(argv).chosen)
        flag = chosen[-1][0]
        if flag in examples:
            assert argv == list(examples[flag]), f"{label}: not the script's example"
    assert chosen == [[flag] for flag in script.REPORTS], \
        f"the run cells choose {chosen}, the script's reports are {list(script.REPORTS)}"
    cells = run_cells(nb)
    assert len(cells) == len(sources)
    for cmd, printed in cells.items():
        assert printed.strip(), f"{cmd}: no output in the notebook"
    raw = json.loads(served(ch).read_text("utf-8"))
    assert raw["metadata"]["kernelspec"]["name"] == "python3"
    assert all("execution" not in c.get("metadata", {}) for c in raw["cells"])
    assert "pip" in nb.cells[2].source and "numpy" in nb.cells[2].source  # the install cell


@pytest.mark.slow
@pytest.mark.parametrize("ch", CHAPTERS, ids=IDS)
def test_the_notebook_runs_in_a_fresh_kernel_in_an_empty_folder(ch, site):
    """Run every cell of the served notebook, as Colab would, with nothing beside it; each
    run cell prints what the notebook says it printed (measured times aside). This run is
    also the reader's run of these commands that the pages are checked against."""
    recorded = run_cells(nbformat.read(served(ch), as_version=4))
    fresh = notebook_run(ch)
    assert fresh.keys() == recorded.keys()
    for command in recorded:
        assert without_times(fresh[command]) == without_times(recorded[command]), command


@pytest.mark.parametrize("script", ["rnn.py", "gated.py"])
def test_a_run_cell_prints_what_its_command_prints_in_a_shell(script, site):
    """A run cell calls the script's main() in the notebook's kernel, beside the runs before
    it; its command, run alone in a shell in an empty folder, prints the same (the two
    chapters whose every report runs in seconds; the others share the same cells)."""
    ch = next(ch for ch in CHAPTERS if ch.script == script)
    nb = nbformat.read(served(ch), as_version=4)
    calls = [c.source for c in nb.cells if c.cell_type == "code" and c.source.startswith("# $ ")]
    assert calls and all(re.fullmatch(rf"# \$ python3 {re.escape(script)}( \S+)*\n"
                                      rf"{ch.stem}\.main\(\[.*\]\);", c) for c in calls), calls
    fresh = notebook_run(ch)
    for command, printed in fresh.items():
        alone = run_alone(command)
        assert without_times(alone) == without_times(printed), command


@pytest.mark.parametrize("ch", CHAPTERS, ids=IDS)
def test_code_page_links_download_and_colab_to_the_served_notebook(ch, site):
    import yaml

    html = (SITE / "code" / ch.stem / "index.html").read_text("utf-8")
    soup = BeautifulSoup(html, "html.parser")
    name = f"{ch.stem}.ipynb"
    downloads = [a for a in soup.find_all("a") if a.get_text(strip=True) == f"Download {name}"]
    assert downloads and "download" in downloads[0].attrs
    assert (SITE / "code" / ch.stem / downloads[0]["href"]).resolve() == served(ch).resolve()
    colab = [a["href"] for a in soup.find_all("a") if a.get_text(strip=True) == "Open in Colab"]
    assert len(colab) == 1
    url = urlparse(colab[0])
    assert url.scheme == "https" and url.netloc == "colab.research.google.com"
    m = re.fullmatch(r"/github/([^/]+/[^/]+)/blob/([^/]+)/(.+)", url.path)
    assert m, url.path
    assert (SITE / m.group(3)).resolve() == served(ch).resolve()
    config = yaml.safe_load((SITE.parent / "mkdocs.yml").read_text())
    assert (m.group(1), m.group(2)) == (config["extra"]["colab"]["repository"],
                                        config["remote_branch"])


@pytest.mark.parametrize("ch", CHAPTERS, ids=IDS)
def test_chapter_page_offers_the_script_and_its_code_page(ch, site):
    html = (SITE / ch.page[:-3] / "index.html").read_text("utf-8")
    hrefs = {a["href"] for a in BeautifulSoup(html, "html.parser").find_all("a")}
    assert f"../code/{ch.script}" in hrefs and f"../code/{ch.stem}/" in hrefs
