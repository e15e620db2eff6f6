"""Paper, phones, the keyboard and search, as a reader meets them (issue 31's defects).

Each check here failed on the site before its fix: a chapter printed after a reader had
scrolled through it came out longer than one printed at once (content-visibility kept
the placeholder height of blocks never laid out), widget controls printed, wide tables
lost their right-hand columns at the margin, blocks that scroll sideways on a phone
could not be reached by keyboard, the phone header's two-line title sat at the top, a
chapter's title wrapped onto a blank line for its hidden anchor, "BPTT" found nothing
and a code page ranked above the chapter it serves.
"""

import re
from urllib.parse import urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from helpers import BASE, CHAPTERS, SITE, site_pages

pytestmark = pytest.mark.browser

PHONE = dict(viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True,
             has_touch=True)
A4 = {"width": 794, "height": 1123}  # CSS pixels: the paper a page prints on
CHAPTER_PAGES = [ch.page[:-3] + "/" for ch in CHAPTERS]
PAGES = site_pages(SITE) if SITE.is_dir() else ["<site not built>"]


def open_page(browser, server, path, **context):
    context = browser.new_context(**{"viewport": {"width": 1280, "height": 900}, **context})
    page = context.new_page()
    page.goto(server.url + path, wait_until="networkidle")
    return context, page


SCROLL_THROUGH_JS = """async () => {
  for (let y = 0; y < document.body.scrollHeight; y += window.innerHeight / 2) {
    window.scrollTo(0, y);
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  }
  window.scrollTo(0, 0);
}"""


# Every widget of the page mounted (kit.js sets data-state="ready"); true on a page with
# none. (What a scroll through starts, waited for: wait_for_load_state("networkidle")
# after the page's first load returns at once, the state being reached already.)
WIDGETS_READY = ("[...document.querySelectorAll('.rw-widget')]"
                 ".every((h) => h.dataset.state === 'ready')")


def pdf_pages(pdf):
    return len(re.findall(rb"/Type\s*/Page\b", pdf))


NOTHING_SKIPPED = "* { content-visibility: visible !important; }"


@pytest.mark.parametrize("page_path", ["ch14-gru-lm/"])
def test_a_chapter_read_through_prints_as_if_nothing_were_skipped(browser, server, page_path):
    """After a reader has scrolled through it (every widget started), a chapter prints on
    as many A4 pages as it does with no block's layout skipped: none prints at the height
    the screen remembered or guessed for it (25 pages against 18 for chapter 14)."""
    counts = []
    for style in ("", NOTHING_SKIPPED):
        context, page = open_page(browser, server, page_path, viewport=A4)
        try:
            if style:
                page.add_style_tag(content=style)
            page.evaluate(SCROLL_THROUGH_JS)
            page.wait_for_function(WIDGETS_READY, timeout=15_000)
            started = page.evaluate("[...document.querySelectorAll('.rw-widget')]"
                                    ".map((h) => h.dataset.state)")
            assert started and all(s == "ready" for s in started), started
            page.emulate_media(media="print")
            counts.append(pdf_pages(page.pdf(format="A4", print_background=True)))
        finally:
            context.close()
    assert counts[0] == counts[1], (
        f"/{page_path} read through prints {counts[0]} pages; {counts[1]} with nothing skipped")


PRINTED_JS = """() => {
  const main = document.querySelector('.md-content__inner');
  const right = main.getBoundingClientRect().right;
  return {
    skipping: [...main.children].filter((b) =>
      getComputedStyle(b).contentVisibility !== 'visible').map((b) => b.tagName).slice(0, 5),
    widgets: [...document.querySelectorAll('.rw-widget, .rw-widget *')]
      .filter((el) => el.checkVisibility()).map((el) => el.className || el.tagName).slice(0, 5),
    wide: [...main.querySelectorAll('table')].filter((t) =>
      t.getBoundingClientRect().right > right + 1 || t.scrollWidth > t.clientWidth + 1)
      .map((t) => t.innerText.slice(0, 50)),
  };
}"""


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
def test_paper_lays_out_every_block_hides_the_widgets_and_fits_the_tables(browser, server,
                                                                          page_path):
    context, page = open_page(browser, server, page_path, viewport=A4)
    try:
        page.evaluate(SCROLL_THROUGH_JS)  # the widgets started, as a reader left them
        page.wait_for_function(WIDGETS_READY, timeout=15_000)
        page.emulate_media(media="print")
        page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        seen = page.evaluate(PRINTED_JS)
    finally:
        context.close()
    assert not seen["skipping"], f"/{page_path} prints blocks unlaid: {seen['skipping']}"
    assert not seen["widgets"], f"/{page_path} prints widget parts: {seen['widgets']}"
    assert not seen["wide"], f"/{page_path} prints tables past the margin: {seen['wide']}"


# Every block in the page that scrolls sideways, and whether a keyboard can reach it: it
# takes focus itself, or holds something that does (then arrow keys scroll it there).
SCROLLERS_JS = """() => [...document.querySelectorAll('.md-content *')].filter((el) => {
    const s = getComputedStyle(el);
    return ['auto', 'scroll'].includes(s.overflowX) && el.scrollWidth > el.clientWidth + 1
      && el.checkVisibility();
  }).map((el) => ({what: el.tagName + '.' + el.className, text: el.textContent.slice(0, 40),
                   reached: el.tabIndex >= 0 || !!el.querySelector(
                     'a[href], button, input, select, textarea, [tabindex]:not([tabindex="-1"])')}))"""


@pytest.mark.parametrize("page_path", PAGES)
def test_on_a_phone_every_sideways_scroller_takes_the_keyboard(browser, server, page_path):
    """At 390 px code, formulas and tables that scroll sideways are tab stops, on a
    touch phone too (Material makes code one only where a pointer can hover)."""
    context, page = open_page(browser, server, page_path, **PHONE)
    try:
        page.evaluate("document.querySelectorAll('details').forEach((d) => { d.open = true; })")
        page.evaluate(SCROLL_THROUGH_JS)
        page.wait_for_timeout(200)  # the resize observer's turn
        found = page.evaluate(SCROLLERS_JS)
    finally:
        context.close()
    unreachable = [(f["what"], f["text"]) for f in found if not f["reached"]]
    assert not unreachable, f"/{page_path}: {len(unreachable)} unreachable: {unreachable[:5]}"


HEADER_JS = """() => {
  const header = document.querySelector('.md-header').getBoundingClientRect();
  const title = document.querySelector('.md-header__topic:first-child .md-ellipsis')
    .getBoundingClientRect();
  const h1 = document.querySelector('.md-content h1');
  const range = document.createRange();
  range.selectNodeContents(h1);
  const lines = [...range.getClientRects()].filter((r) => r.width > 0);
  const text = [...h1.childNodes].filter((n) => n.nodeType === 3);
  const textRange = document.createRange();
  textRange.setStartBefore(text[0]);
  textRange.setEndAfter(text[text.length - 1]);
  const textLines = [...textRange.getClientRects()].filter((r) => r.width > 0);
  return {header: [header.top, header.bottom], title: [title.top, title.bottom],
          h1Bottom: Math.max(...lines.map((r) => r.bottom)),
          textBottom: Math.max(...textLines.map((r) => r.bottom))};
}"""


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
def test_on_a_phone_the_header_title_is_centred_and_the_title_has_no_blank_line(
        browser, server, page_path):
    context, page = open_page(browser, server, page_path, **PHONE)
    try:
        seen = page.evaluate(HEADER_JS)
    finally:
        context.close()
    header_middle = sum(seen["header"]) / 2
    title_middle = sum(seen["title"]) / 2
    assert abs(title_middle - header_middle) <= 2, (
        f"/{page_path}: the site's title is centred at {title_middle:.1f} px, "
        f"the header at {header_middle:.1f}")
    assert seen["h1Bottom"] - seen["textBottom"] < 4, (
        f"/{page_path}: the chapter's title ends {seen['h1Bottom'] - seen['textBottom']:.0f} px "
        "below its last word: a line of its own for the heading's anchor")


def search(browser, server, words):
    """The result links, in order, that the site's search gives for `words`."""
    context, page = open_page(browser, server, "")
    try:
        page.keyboard.press("/")
        page.keyboard.type(words)
        try:
            page.locator(".md-search-result__item").first.wait_for(timeout=5000)
        except PlaywrightTimeout:
            return []
        page.wait_for_timeout(300)  # every result in
        hrefs = page.locator(".md-search-result__item > .md-search-result__link").evaluate_all(
            "links => links.map((a) => a.href)")
    finally:
        context.close()
    return [urlparse(h).path[len(BASE) + 2:] for h in hrefs]


def test_search_finds_bptt_in_the_chapters_that_do_it(browser, server):
    pages = search(browser, server, "BPTT")
    for chapter in ("ch12-rnn/", "ch14-gru-lm/", "ch16-training/"):
        assert any(p.startswith(chapter) for p in pages), (chapter, pages)


@pytest.mark.parametrize("words, chapter", [("forget gate", "ch13-gated/"),
                                            ("GRU language model", "ch14-gru-lm/")])
def test_search_ranks_the_chapter_above_its_code_page(browser, server, words, chapter):
    pages = search(browser, server, words)
    assert pages, f"no result for {words!r}"
    assert pages[0].startswith(chapter), f"{words!r}: first result {pages[0]}, all: {pages}"


# Every tick label of every widget chart, against the box of its chart (an SVG clips).
TICKS_JS = """() => [...document.querySelectorAll('.rw-chart svg')].flatMap((svg) => {
  const box = svg.getBoundingClientRect();
  return [...svg.querySelectorAll('.rw-ticks text')].map((t) => {
    const r = t.getBoundingClientRect();
    return {text: t.textContent, inside: r.left >= box.left - 0.5 && r.right <= box.right + 0.5
                                         && r.top >= box.top - 0.5 && r.bottom <= box.bottom + 0.5};
  });
})"""


@pytest.mark.parametrize("page_path", ["ch12-rnn/", "ch15-memory/"])
def test_on_a_phone_no_chart_cuts_a_tick_label(browser, server, page_path):
    """Chapter 15's "1500", centred on the right end of the x axis, lost its last digit."""
    context, page = open_page(browser, server, page_path, **PHONE)
    try:
        page.evaluate(SCROLL_THROUGH_JS)
        page.wait_for_function(WIDGETS_READY, timeout=15_000)
        ticks = page.evaluate(TICKS_JS)
    finally:
        context.close()
    assert ticks, f"/{page_path}: no chart with tick labels"
    cut = [t["text"] for t in ticks if not t["inside"]]
    assert not cut, f"/{page_path}: tick labels cut at the chart's edge: {cut}"


# The first figure of the chapter (a plot or a diagram) and where it stands as the page opens.
FIRST_FIGURE_JS = """() => {
  const figure = document.querySelector('.md-content figure');
  if (!figure) return null;
  const img = figure.querySelector('img');
  const box = (img || figure).getBoundingClientRect();  // the picture, not its caption
  return {top: box.top, bottom: box.bottom, screen: window.innerHeight,
          caption: (figure.querySelector('figcaption') || {}).textContent || '',
          loaded: img ? img.complete && img.naturalWidth > 0 : true,
          shown: img ? img.getBoundingClientRect().width : box.width};
}"""


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
def test_a_chapter_opens_with_a_picture_of_its_argument(browser, server, page_path, width):
    """Every chapter (the registry's: a new one too) shows a figure that states its
    argument in the first screen, whole, at 1280 and at 390 px, loaded without a scroll."""
    context, page = open_page(browser, server, page_path,
                              **(PHONE if width == 390 else {}))
    try:
        try:  # the first figure's picture, if it is in view (lazy: only then does it load)
            page.wait_for_function("() => { const i = document.querySelector("
                                   "'.md-content figure img'); return !i || i.complete; }",
                                   timeout=5_000)
        except PlaywrightTimeout:  # below the screen: the assertions say where
            pass
        first = page.evaluate(FIRST_FIGURE_JS)
    finally:
        context.close()
    assert first, f"/{page_path} has no figure"
    assert first["bottom"] <= first["screen"], (
        f"/{page_path} at {width} px: the first figure spans {first['top']:.0f} to "
        f"{first['bottom']:.0f} px, the screen {first['screen']} px")
    assert first["loaded"] and first["shown"] > 0.8 * min(width, 700), first
    assert first["caption"].strip(), f"/{page_path}: the opening picture has no caption"
