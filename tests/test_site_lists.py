"""What the site lists from its chapter registry (generator/site.py): the home page's
chapters and each chapter's run-it lines with the one-click Colab link.

The built pages are read back and compared with the registry and the pages' own
sources, read here independently (the first heading, the front matter, mkdocs.yml);
then the site markers' checks are driven on fabricated pages, each made to fail.
"""

import re
from urllib.parse import urljoin

import pytest
import yaml
from bs4 import BeautifulSoup

from generator import site as site_lists
from generator.chapter import GeneratorError
from helpers import CHAPTERS, CODE, DOCS, ROOT, SITE

CONFIG = yaml.safe_load((ROOT / "mkdocs.yml").read_text("utf-8"))
COLAB = {"repository": CONFIG["extra"]["colab"]["repository"], "branch": CONFIG["remote_branch"]}


def source(page):
    """(front matter, first heading) of docs/<page>, read as a reader of the file would."""
    text = (DOCS / page).read_text("utf-8")
    meta = {}
    if text.startswith("---\n"):
        head, text = text[4:].split("\n---\n", 1)
        meta = yaml.safe_load(head) or {}
    return meta, re.search(r"^# (.+)$", text, re.M).group(1).strip()


def built(page):
    path = SITE / ("index.html" if page == "index.md" else page[:-3] + "/index.html")
    return BeautifulSoup(path.read_text("utf-8"), "html.parser")


def address(page):
    """A docs page's address relative to the site's root: ch12-rnn.md -> ch12-rnn/."""
    return "" if page == "index.md" else page[:-3] + "/"


def resolved(from_page, href):
    return urljoin("https://site.example/" + address(from_page), href)


# -- the built site ------------------------------------------------------------------

def test_the_home_page_has_a_card_for_every_chapter_in_order(site):
    cards = built("index.md").select(".md-content .grid.cards > ul > li")
    found = []
    for card in cards:
        title = card.find("a")
        script = [a for a in card.find_all("a") if a.find("code")]
        found.append((title.get_text(strip=True), resolved("index.md", title["href"]),
                      script[-1].get_text(strip=True), resolved("index.md", script[-1]["href"]),
                      " ".join(card.get_text(" ", strip=True).split())))
    expected = [(source(ch.page)[1], resolved("index.md", address(ch.page)), ch.script,
                 resolved("index.md", address(ch.code_page))) for ch in CHAPTERS]
    assert [f[:4] for f in found] == expected
    for ch, card in zip(CHAPTERS, found):
        description = source(ch.page)[0].get("description")
        assert description and " ".join(description.split()) in card[4], (ch.page, card[4])


def test_the_home_pages_how_to_list_links_every_code_page(site):
    item = next(li for li in built("index.md").select(".md-content li")
                if li.get_text().startswith("Run the script"))
    links = [(a.get_text(strip=True), resolved("index.md", a["href"]))
             for a in item.find_all("a")]
    assert links == [(ch.script, resolved("index.md", address(ch.code_page)))
                     for ch in CHAPTERS]


def test_the_home_page_says_why_the_numbers_start_where_they_do(site):
    first = int(source(CHAPTERS[0].page)[1].split(".")[0])
    text = " ".join(built("index.md").select_one(".md-content").get_text(" ").split())
    assert f"The chapters are numbered from {first} because they continue a course's " \
           "numbering" in text


@pytest.mark.parametrize("ch", CHAPTERS, ids=[ch.page for ch in CHAPTERS])
def test_each_chapters_run_box_opens_its_notebook_in_colab_with_one_click(site, ch):
    box = next((b for b in built(ch.page).select(".md-content .admonition.tip")
                if b.select_one(".admonition-title").get_text(strip=True) == "Run it yourself"),
               None)
    assert box is not None, f"{ch.page} has no 'Run it yourself' box"
    links = {a.get_text(" ", strip=True): a["href"] for a in box.find_all("a")}
    colab = (f"https://colab.research.google.com/github/{COLAB['repository']}/blob/"
             f"{COLAB['branch']}/{ch.notebook}")
    assert links.get(f"open {ch.stem}.ipynb in Colab") == colab, links
    hrefs = {resolved(ch.page, h) for h in links.values()}
    for name in (ch.script, *ch.data, f"{ch.stem}.ipynb"):
        assert resolved("index.md", "code/" + name) in hrefs, (name, links)
        assert (SITE / "code" / name).is_file()
    assert resolved("index.md", address(ch.code_page)) in hrefs, links


# -- the checks, on fabricated pages ---------------------------------------------------

def pages(changes=None):
    """{docs-relative path: text} of every page as it is, with `changes` made."""
    found = {p.relative_to(DOCS).as_posix(): p.read_text("utf-8") for p in DOCS.rglob("*.md")}
    return {**found, **(changes or {})}


def fails(all_pages, message):
    with pytest.raises(GeneratorError) as err:
        site_lists.Site(CHAPTERS, COLAB, all_pages)
    assert message in str(err.value), str(err.value)


def test_the_real_pages_pass_and_fill():
    lists = site_lists.Site(CHAPTERS, COLAB, pages())
    home = lists.fill("index.md", (DOCS / "index.md").read_text("utf-8"))
    assert "<!-- gen" not in home
    for ch in CHAPTERS:
        assert f"]({ch.code_page})" in home and f"]({ch.page})" in home


def test_an_unknown_site_marker_fails():
    text = (DOCS / "index.md").read_text("utf-8") + "\n<!-- gen site chapter_list -->\n"
    fails(pages({"index.md": text}), "docs/index.md:")
    fails(pages({"index.md": text}), "unknown marker <!-- gen site chapter_list -->: generator/"
                             "site.py has no site producer 'chapter_list' (it has: chapters, ")


def test_the_home_page_without_its_list_fails():
    text = (DOCS / "index.md").read_text("utf-8").replace("<!-- gen site chapters -->", "")
    fails(pages({"index.md": text}), "docs/index.md: unused in the page: <!-- gen site chapters --> "
                             "(generator/site.py makes it for docs/index.md)")


def test_a_chapter_without_its_run_lines_fails():
    page = CHAPTERS[0].page
    text = (DOCS / page).read_text("utf-8").replace("<!-- gen site run -->", "")
    fails(pages({page: text}), f"docs/{page}: unused in the page: <!-- gen site run --> "
                                   "(generator/site.py makes it for every chapter's page)")


def test_a_site_marker_on_a_page_it_does_not_serve_fails():
    text = "# Conventions\n\nIntro.\n\n<!-- gen site run -->\n"
    fails(pages({"conventions.md": text}),
          "docs/conventions.md:5: <!-- gen site run --> belongs on every chapter's page, "
          "not on docs/conventions.md")


def test_a_site_marker_in_the_wrong_place_fails():
    text = (DOCS / "index.md").read_text("utf-8").replace(
        "<!-- gen site chapters -->", "The chapters: <!-- gen site chapters -->")
    fails(pages({"index.md": text}), "makes a block; put it on a line of its own")
    text = (DOCS / "index.md").read_text("utf-8").replace(
        "(<!-- gen site scripts -->)", "\n\n<!-- gen site scripts -->\n\n")
    fails(pages({"index.md": text}), "makes inline text; put it inside a sentence")


def test_a_chapter_without_a_description_is_summed_up_by_its_script():
    ch = CHAPTERS[0]
    text = re.sub(r"\A---\n.*?\n---\n", "", (DOCS / ch.page).read_text("utf-8"), flags=re.S)
    lists = site_lists.Site(CHAPTERS, COLAB, pages({ch.page: text}))
    docstring = (CODE / ch.script).read_text("utf-8").split('"""')[1]
    first = docstring.strip().splitlines()[0][len(ch.script) + 2:].rstrip(".")
    assert lists.chapters[0].summary == first[0].upper() + first[1:] + "."
    assert lists.chapters[0].title == source(ch.page)[1]
