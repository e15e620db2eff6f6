"""Adding a chapter follows the short path of docs/building.md: the script, the page, one
generator module and one nav line. A throwaway chapter with a table, a value and a plot is
added that way to a copy of the project, built, and checked: its page, its code page and
notebook, the navigation, and the project's own tests, which pick it up unedited."""

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from helpers import ROOT, build, copy_project, edit

def new_chapter(copy, *words):
    """`python -m generator new-chapter WORDS...` in a copy of the project."""
    return subprocess.run([sys.executable, "-m", "generator", "new-chapter", *words],
                          cwd=copy, capture_output=True, text=True, timeout=60)


@pytest.fixture(scope="module")
def with_toy(tmp_path_factory):
    """A copy of the project with chapter 99 scaffolded by the command and built as made."""
    copy = copy_project(tmp_path_factory.mktemp("toy"))
    shutil.copytree(ROOT / "tests", copy / "tests",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "pytest.ini", copy / "pytest.ini")
    made = new_chapter(copy, "99", "toy", "toy.py", "Squares")
    assert made.returncode == 0, made.stderr
    result = build(copy, env=private_run_cache(copy))
    assert result.returncode == 0, result.stderr
    return copy


def private_run_cache(copy):
    """The toy's runs go to a run cache of the copy's own, not to the reader's."""
    return {"RNN_EXPLAINER_CACHE": str(copy / "build" / "runs")}


def test_the_command_writes_three_files_and_one_line(with_toy):
    added = [with_toy / "docs" / "code" / "toy.py", with_toy / "docs" / "ch99-toy.md",
             with_toy / "generator" / "chapters" / "ch99_toy.py"]
    assert all(path.is_file() for path in added)
    nav = (with_toy / "mkdocs.yml").read_text("utf-8").splitlines()
    assert sum("ch99-toy.md" in line for line in nav) == 1


def test_the_page_shows_the_table_value_and_plot(with_toy):
    html = (with_toy / "site" / "ch99-toy" / "index.html").read_text("utf-8")
    assert "$ python3 toy.py --squares" in html
    assert ">16</td>" in html and "Their sum is 30." in html
    for theme in ("light", "dark"):
        assert (with_toy / "site" / "img" / "ch99-toy" / f"growth-{theme}.png").is_file()


def test_the_code_page_notebook_and_navigation_follow(with_toy):
    site = with_toy / "site"
    code_page = (site / "code" / "toy" / "index.html").read_text("utf-8")
    assert "toy.py: Squares." in code_page
    assert "python3 toy.py --squares" in code_page and "|   4 |  16 |" in code_page
    notebook = json.loads((site / "code" / "toy.ipynb").read_text("utf-8"))
    outputs = ["".join(o["text"]) for c in notebook["cells"] if c["cell_type"] == "code"
               for o in c.get("outputs", [])]
    assert any("|   4 |  16 |" in text for text in outputs)
    index = (site / "index.html").read_text("utf-8")
    assert 'href="code/toy/"' in index and 'href="ch99-toy/"' in index  # in the navigation


def test_the_home_page_and_the_run_box_list_the_new_chapter(with_toy):
    """Without an edit to docs/index.md: the home page's card (title from the page's
    heading, text from its description) and its code page in "How to use it"; the
    chapter's run box with the one-click Colab link."""
    from bs4 import BeautifulSoup

    site = with_toy / "site"
    home = BeautifulSoup((site / "index.html").read_text("utf-8"), "html.parser")
    cards = home.select(".md-content .grid.cards > ul > li")
    last = " ".join(cards[-1].get_text(" ", strip=True).split())
    assert last.startswith("99. Squares") and "Script: toy.py" in last, last
    assert cards[-1].find("a")["href"] == "ch99-toy/"
    how_to = [a["href"] for a in home.select(".md-content li a") if a.get_text() == "toy.py"]
    assert "code/toy/" in how_to
    page = (site / "ch99-toy" / "index.html").read_text("utf-8")
    assert "https://colab.research.google.com/github/" in page and \
        "/blob/gh-pages/code/toy.ipynb" in page


def test_the_projects_tests_pick_up_the_new_chapter_unedited(with_toy):
    """The page-against-script and script tests, run in the copy, include the new chapter."""
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "toy",
         "tests/test_page_matches_script.py", "tests/test_scripts_standalone.py",
         "tests/test_notebooks.py"],
        cwd=with_toy, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    passed = int(result.stdout.strip().splitlines()[-1].split(" passed")[0].split()[-1])
    assert passed >= 6, result.stdout[-2000:]


def test_a_page_without_its_nav_line_is_refused(with_toy, tmp_path):
    copy = tmp_path / "copy"
    shutil.copytree(with_toy, copy, symlinks=True)
    edit(copy / "mkdocs.yml", '      - "99. Squares": ch99-toy.md\n', "")
    result = build(copy, env=private_run_cache(copy))
    assert result.returncode == 1
    assert "docs/ch99-toy.md (generator/chapters/ch99_toy.py) is not in mkdocs.yml's nav" \
        in result.stderr


def test_the_building_page_documents_this_path():
    text = (ROOT / "docs" / "building.md").read_text("utf-8")
    assert "## Adding a chapter" in text
    assert textwrap.dedent("""\
        4. **One line** in `mkdocs.yml`'s nav, under Chapters, in number order.""") in text
