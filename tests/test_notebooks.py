"""The notebooks the site serves: self-contained, faithful to the script, and
carrying the same tables as the chapter pages."""

import json
import re
import shutil
from urllib.parse import urlparse

import nbformat
import pytest
from bs4 import BeautifulSoup

from conftest import BUILT, CODE, SITE
from test_page_matches_script import commanded_tables, table_blocks

NOTEBOOKS = {  # script -> the chapter page whose tables its runs print
    "rnn.py": "ch12-rnn.md",
    "gated.py": "ch13-gated.md",
    "gru.py": "ch14-gru-lm.md",
}


def served(script):
    return SITE / "code" / script.replace(".py", ".ipynb")


def run_fresh(path, tmp_path):
    """Execute a copy of the notebook in an empty folder, with nothing beside it."""
    from generator import notebooks

    folder = tmp_path / "empty"
    folder.mkdir()
    shutil.copy(path, folder / path.name)
    nb = nbformat.read(folder / path.name, as_version=4)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    return notebooks.execute(nb)


@pytest.mark.parametrize("script", NOTEBOOKS)
def test_embedded_source_is_the_served_script_byte_for_byte(script, site):
    nb = nbformat.read(served(script), as_version=4)
    writes = [c.source for c in nb.cells if c.cell_type == "code"
              and c.source.startswith(f"%%writefile {script}\n")]
    assert len(writes) == 1
    embedded = writes[0].split("\n", 1)[1].encode("utf-8")
    assert embedded == (SITE / "code" / script).read_bytes() == (CODE / script).read_bytes()


def test_gru_notebook_carries_the_corpus_checked_by_its_hash(site):
    nb = nbformat.read(served("gru.py"), as_version=4)
    embeds = [c.source for c in nb.cells if c.cell_type == "code" and "timemachine.txt" in c.source
              and "b64decode" in c.source]
    assert len(embeds) == 1
    import hashlib

    assert hashlib.sha256((CODE / "timemachine.txt").read_bytes()).hexdigest() in embeds[0]
    namespace = {}
    exec(embeds[0].replace('open("timemachine.txt", "wb").write(data)', "pass"), namespace)
    assert namespace["data"] == (CODE / "timemachine.txt").read_bytes()


@pytest.mark.parametrize("script", NOTEBOOKS)
def test_served_notebook_has_outputs_and_no_timing_metadata(script, site):
    nb = nbformat.read(served(script), as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.outputs for c in code), "every cell was executed at build time"
    assert all("execution" not in c.metadata for c in code)
    assert code[0].source.count("pip") and "numpy" in code[0].source  # the install cell
    raw = json.loads(served(script).read_text("utf-8"))
    assert raw["metadata"]["kernelspec"]["name"] == "python3"


@pytest.mark.slow
@pytest.mark.parametrize("script", NOTEBOOKS)
def test_notebook_runs_alone_and_prints_the_chapter_tables(script, site, tmp_path):
    nb = run_fresh(served(script), tmp_path)  # raises CellExecutionError on any error
    printed = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and cell.source.startswith("!"):
            printed[cell.source[1:]] = "".join(o.get("text", "") for o in cell.outputs)
    page = (BUILT / NOTEBOOKS[script]).read_text("utf-8")
    pairs = commanded_tables(page)
    assert pairs
    for command, table in pairs:
        if command.startswith(f"python3 {script}"):
            assert table in table_blocks(printed[command]), f"{command}: table differs"


@pytest.mark.parametrize("script", NOTEBOOKS)
def test_code_page_links_download_and_colab_to_the_served_notebook(script, site):
    html = (SITE / "code" / script.replace(".py", "") / "index.html").read_text("utf-8")
    soup = BeautifulSoup(html, "html.parser")
    name = script.replace(".py", ".ipynb")
    downloads = [a for a in soup.find_all("a") if a.get_text(strip=True) == f"Download {name}"]
    assert downloads and (SITE / "code" / script.replace(".py", "") / downloads[0]["href"]).resolve() \
        == served(script).resolve()
    colab = [a["href"] for a in soup.find_all("a") if a.get_text(strip=True) == "Open in Colab"]
    assert len(colab) == 1
    url = urlparse(colab[0])
    assert url.scheme == "https" and url.netloc == "colab.research.google.com"
    m = re.fullmatch(r"/github/([^/]+/[^/]+)/blob/([^/]+)/(.+)", url.path)
    assert m, url.path
    # the path in the published branch is the path of the notebook in the built site
    assert (SITE / m.group(3)).resolve() == served(script).resolve()
    import yaml

    colab_setting = yaml.safe_load((SITE.parent / "mkdocs.yml").read_text())["extra"]["colab"]
    assert (m.group(1), m.group(2)) == (colab_setting["repository"], colab_setting["branch"])


@pytest.mark.parametrize("script", NOTEBOOKS)
def test_chapter_page_offers_the_notebook(script, site):
    chapter = NOTEBOOKS[script].replace(".md", "")
    html = (SITE / chapter / "index.html").read_text("utf-8")
    name = script.replace(".py", ".ipynb")
    hrefs = [a["href"] for a in BeautifulSoup(html, "html.parser").find_all("a")
             if a.get_text(strip=True) == f"download {name}"]
    assert hrefs and (SITE / chapter / hrefs[0]).resolve() == served(script).resolve()
