"""Every page of the built site in headless Chromium, in the light and the dark palette.

One browser for the session, one static server on 127.0.0.1, one browser context
per page and palette. A visit records everything the checks need (requests,
errors, images, formulas, the visible text) and closes its context; the tests
below assert on those records, so each page is loaded once per palette however
many checks read it.

The pages come from the built site (every index.html under site/, not 404.html),
so a page added to the site is checked without editing this file.
"""

import gzip
import re
from dataclasses import dataclass, field
from urllib.parse import urlparse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from helpers import BASE, CHAPTERS, SITE, run_axe, site_pages

pytestmark = pytest.mark.browser

SCHEMES = {"light": "default", "dark": "slate"}  # context color_scheme -> Material scheme
OTHER = {"light": "dark", "dark": "light"}
PAGES = (site_pages(SITE) + ["404.html"]) if SITE.is_dir() else ["<site not built>"]
CHAPTER_PAGES = [ch.page[:-3] + "/" for ch in CHAPTERS]
# bytes sent (sent(): text gzip-compressed, as GitHub Pages serves it), everything a chapter
# loads as it opens. Counted uncompressed until chapter 17's recall and beam tables (in
# collapsed notes: 160 KB of HTML that gzip sends as 25 KB) and the lead plots' both schemes,
# loaded at once for the first paint, put chapters 16 and 17 past 575,000 raw bytes; sent,
# the seven load 229,659 to 279,452 (chapter 16, whose lead plots weigh 38 KB a scheme).
FIRST_LOAD_BUDGET = 300_000
PHONE = {"width": 390, "height": 844}

# TeX that would be on screen if a formula escaped the MathML hook.
RAW_TEX = re.compile(r"\\\(|\\\)|\\\[|\\\]|\$\$|\\(?:frac|sigma|tanh|odot|mathbf|mathrm|"
                     r"sum|prod|cdot|partial|begin|end|left|right|top|times|text)\b")

# Collected in the page once it has loaded. Details are opened, the blocks of content
# tabs shown and the blocks off the screen laid out (site.css skips them until a reader
# scrolls near: content-visibility), so that nothing is hidden from the checks by the
# layout alone;
# code and pre are hidden while the text is read (they may hold backslashes and
# `$ ` prompts legitimately) and shown again.
COLLECT_JS = """() => {
  const visible = (el) => el.offsetParent !== null && el.checkVisibility();
  const images = [...document.images].map((img) => ({
    src: img.getAttribute('src'),
    alt: (img.getAttribute('alt') || '').trim(),
    complete: img.complete,
    naturalWidth: img.naturalWidth,
    visible: visible(img),
  }));
  const maths = [...document.querySelectorAll('math')].map((m) => {
    const box = m.getBoundingClientRect();
    return {alttext: m.getAttribute('alttext') || m.textContent.slice(0, 60),
            width: box.width, height: box.height};
  });
  const hidden = [...document.querySelectorAll('code, pre')];
  const before = hidden.map((el) => el.style.display);
  hidden.forEach((el) => { el.style.display = 'none'; });
  const text = document.body.innerText;
  hidden.forEach((el, i) => { el.style.display = before[i]; });
  return {scheme: document.body.getAttribute('data-md-color-scheme'),
          images, maths, text};
}"""

REVEAL_JS = """() => {
  document.querySelectorAll('details').forEach((d) => { d.open = true; });
  const style = document.createElement('style');
  style.textContent = '.tabbed-set > .tabbed-content > .tabbed-block { display: block !important; }'
    + ' .md-content__inner > * { content-visibility: visible !important; }';
  document.head.appendChild(style);
}"""

# Images this palette should show: not the other palette's variant.
WANTED_IMAGES_JS = """(other) => [...document.images].filter(
  (img) => !(img.getAttribute('src') || '').endsWith('#only-' + other))"""

SCROLL_TO_IMAGES_JS = """async (other) => {
  const wanted = (%s)(other);
  for (const img of wanted) {
    img.loading = 'eager';  // one scrolled past in 30 ms would otherwise wait to be near again
    img.scrollIntoView({block: 'center'});
    await new Promise((resolve) => setTimeout(resolve, 30));
  }
  window.scrollTo(0, 0);
  return wanted.length;
}""" % WANTED_IMAGES_JS

# axe-core checks every token of a listing against its background, which takes a minute on
# gru.py's 15,000 spans. Tokens of one class have one colour on one background, so a listing
# is cut to its first 300 tokens plus the first token of every other class before axe runs:
# every colour pair is still checked (a class whose colour fails is caught wherever it first
# appears). Returns the listings whose set of classes the cut changed: none, or it is wrong.
TRIM_LISTINGS_JS = """() => {
  const changed = [];
  for (const box of document.querySelectorAll('.highlight pre, .highlight code')) {
    if (box.children.length <= 300) continue;
    const classes = () => [...new Set([...box.children].map((el) => el.className))].sort().join();
    const before = classes(), seen = new Set();
    [...box.children].forEach((el, i) => {
      if (i < 300 || !seen.has(el.className)) seen.add(el.className); else el.remove();
    });
    if (classes() !== before) changed.push(before);
  }
  return changed;
}"""

# Where the page stands as it has opened: its scroll, and each widget's place and state.
OPENED_JS = """() => ({scrollY: window.scrollY, widgets: [...document.querySelectorAll(
  '.rw-widget')].map((h) => [h.dataset.widget, Math.round(h.getBoundingClientRect().top),
                            h.dataset.state || 'waiting'])})"""

# Every wanted image has chosen its source (currentSrc) and finished with it.
IMAGES_DONE_JS = """(other) => (%s)(other).every((img) => img.complete && img.currentSrc)""" % (
    WANTED_IMAGES_JS)


@dataclass
class Visit:
    page: str
    theme: str
    requests: list = field(default_factory=list)
    console_errors: list = field(default_factory=list)
    page_errors: list = field(default_factory=list)
    failed_requests: list = field(default_factory=list)
    bad_responses: list = field(default_factory=list)
    scheme: str = ""
    images: list = field(default_factory=list)
    maths: list = field(default_factory=list)
    text: str = ""
    axe: list = field(default_factory=list)  # (rule, impact, targets) of each violation
    rules_run: set = field(default_factory=set)  # every axe rule that ran
    code_navs: list = field(default_factory=list)  # the role of each md-code__nav
    received: dict = field(default_factory=dict)  # url -> bytes sent of every response (sent)
    bytes: dict = field(default_factory=dict)  # url -> bytes sent, as the page opened
    opened: dict = field(default_factory=dict)  # where the page and its widgets were then


# Text that a web server sends gzip-compressed (GitHub Pages does, and so does the
# test's own count): PNG and WOFF2 are compressed already and go as they are.
TEXT_SUFFIXES = (".html", ".css", ".js", ".json", ".svg", ".xml", ".txt", "/")


def sent(body, path):
    """The bytes a reader downloads for one response: text gzip-compressed at level 6."""
    return len(gzip.compress(body, 6, mtime=0)) if path.endswith(TEXT_SUFFIXES) else len(body)


def record(context, visit):
    """Listen to everything the context does: its pages and its workers."""
    def received(response):
        try:
            visit.received[response.url] = sent(response.body(), urlparse(response.url).path)
        except Exception:  # a redirect or a response without a body
            pass

    context.on("response", received)
    context.on("request", lambda req: visit.requests.append(req.url))
    context.on("requestfailed", lambda req: visit.failed_requests.append(
        f"{req.url}: {req.failure}"))
    context.on("response", lambda res: res.status >= 400 and visit.bad_responses.append(
        f"{res.status} {res.url}"))


def watch_page(page, visit):
    page.on("console", lambda msg: msg.type == "error" and visit.console_errors.append(
        f"{msg.text} (at {msg.location.get('url')}:{msg.location.get('lineNumber')})"))
    page.on("pageerror", lambda err: visit.page_errors.append(str(err)))


@pytest.fixture(scope="session")
def visits(browser, server):
    """visits(page, theme) -> Visit, loaded once per session."""
    cache = {}

    def get(page_path, theme):
        key = (page_path, theme)
        if key not in cache:
            cache[key] = load(browser, server, page_path, theme)
        return cache[key]

    return get


def load(browser, server, page_path, theme):
    visit = Visit(page_path, theme)
    context = browser.new_context(color_scheme=theme, viewport={"width": 1280, "height": 900})
    record(context, visit)
    try:
        page = context.new_page()
        watch_page(page, visit)
        page.goto(server.url + page_path, wait_until="load")
        page.wait_for_load_state("networkidle")
        # what came as the page opened, before the checks scroll to every image; a copy, as
        # the responses to that scrolling may still reach received() during later calls
        visit.bytes = dict(visit.received)
        visit.opened = page.evaluate(OPENED_JS)
        page.evaluate(REVEAL_JS)  # collapsed blocks (a script's listing) are checked too
        other = OTHER[theme]
        page.evaluate(SCROLL_TO_IMAGES_JS, other)
        try:  # (not a second wait for networkidle: reached once, it returns at once)
            page.wait_for_function(IMAGES_DONE_JS, arg=other, timeout=30_000)
        except PlaywrightTimeout:  # the image check reports which ones did not load
            pass
        data = page.evaluate(COLLECT_JS)
        visit.scheme, visit.images = data["scheme"], data["images"]
        visit.maths, visit.text = data["maths"], data["text"]
        visit.code_navs = page.evaluate("[...document.querySelectorAll('nav.md-code__nav')]"
                                        ".map((n) => n.getAttribute('role') || 'navigation')")
        assert page.evaluate(TRIM_LISTINGS_JS) == [], "cutting a listing lost a token class"
        result = run_axe(page, rules=BEST_PRACTICES)
        visit.axe = violations(result)
        visit.rules_run = {r["id"] for kind in ("violations", "passes", "incomplete",
                                                "inapplicable") for r in result[kind]}
    finally:
        context.close()
    return visit


# The WCAG 2.1 A and AA rules (helpers.run_axe, axe-core 4.14), and landmark-unique (a best
# practice, not a WCAG rule: Material's code blocks each had an unnamed <nav>).
BEST_PRACTICES = ("landmark-unique",)


def violations(result):
    """(rule, impact, the first five nodes' targets) of each violation axe found."""
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:5])
            for v in result["violations"]]


def page_ids(page):
    return page or "index"


both = pytest.mark.parametrize("theme", ["light", "dark"])
every_page = pytest.mark.parametrize("page_path", PAGES, ids=page_ids)


@every_page
@both
def test_requests_stay_on_the_local_server(visits, server, page_path, theme):
    visit = visits(page_path, theme)
    assert visit.requests, "no request recorded: the recording is broken"
    foreign = sorted({url for url in visit.requests if not server.is_local(url)})
    assert not foreign, (f"/{page_path} ({theme}) asked another host for:\n  "
                         + "\n  ".join(foreign))


@every_page
@both
def test_no_errors_and_no_failed_requests(visits, page_path, theme):
    visit = visits(page_path, theme)
    problems = ([f"console error: {e}" for e in visit.console_errors]
                + [f"page error: {e}" for e in visit.page_errors]
                + [f"request failed: {e}" for e in visit.failed_requests]
                + [f"HTTP {e}" for e in visit.bad_responses])
    assert not problems, f"/{page_path} ({theme}):\n  " + "\n  ".join(problems)


@every_page
@both
def test_images_of_the_palette_load_and_have_alt_text(visits, page_path, theme):
    visit = visits(page_path, theme)
    other = "#only-" + OTHER[theme]
    wanted = [img for img in visit.images if not img["src"].endswith(other)]
    broken = [img["src"] for img in wanted if not (img["complete"] and img["naturalWidth"] > 0)]
    no_alt = [img["src"] for img in visit.images if not img["alt"]]
    problems = ([f"not loaded: {src}" for src in broken]
                + [f"no alt text: {src}" for src in no_alt])
    assert not problems, f"/{page_path} ({theme}):\n  " + "\n  ".join(problems)


@every_page
@both
def test_math_is_rendered(visits, page_path, theme):
    visit = visits(page_path, theme)
    flat = [m["alttext"] for m in visit.maths if not (m["width"] > 0 and m["height"] > 0)]
    assert not flat, f"/{page_path} ({theme}): formulas with an empty box: {flat[:10]}"


@every_page
@both
def test_no_raw_tex_on_screen(visits, page_path, theme):
    visit = visits(page_path, theme)
    assert visit.text.strip(), f"/{page_path} ({theme}): no visible text was read"
    hits = [f"{m.group()!r} in ...{visit.text[max(0, m.start() - 40):m.end() + 40]}..."
            .replace("\n", " ") for m in RAW_TEX.finditer(visit.text)]
    assert not hits, f"/{page_path} ({theme}): raw TeX visible outside code:\n  " + "\n  ".join(hits)


@every_page
@both
def test_the_palette_applies(visits, page_path, theme):
    visit = visits(page_path, theme)
    assert visit.scheme == SCHEMES[theme], (
        f"/{page_path}: a {theme} browser got data-md-color-scheme={visit.scheme!r}")
    wrong = ([f"{img['src']} is hidden" for img in visit.images
              if img["src"].endswith(f"-{theme}.png#only-{theme}") and not img["visible"]]
             + [f"{img['src']} is shown" for img in visit.images
                if img["src"].endswith(f"-{OTHER[theme]}.png#only-{OTHER[theme]}")
                and img["visible"]])
    assert not wrong, f"/{page_path} ({theme}):\n  " + "\n  ".join(wrong)


def themed_page():
    """The first page with light and dark plots: the toggle test needs both."""
    for page_path in PAGES:
        path = SITE / page_path / "index.html"
        if path.is_file() and "#only-dark" in path.read_text(encoding="utf-8"):
            return page_path
    return None


VARIANTS_JS = """() => [...document.images].filter((i) => /#only-(light|dark)$/.test(i.src))
  .map((i) => ({src: i.getAttribute('src'), visible: i.offsetParent !== null}))"""


def toggle(page, page_path, expected):
    """Click the palette toggle the header shows; the body's scheme must become `expected`."""
    page.locator("form[data-md-component=palette] label:visible").click(timeout=5000)
    try:
        page.wait_for_function(
            f"document.body.getAttribute('data-md-color-scheme') === {expected!r}", timeout=3000)
    except PlaywrightTimeout:
        now = page.locator("body").get_attribute("data-md-color-scheme")
        pytest.fail(f"/{page_path}: the palette toggle left data-md-color-scheme={now!r}, "
                    f"expected {expected!r}")


@both
def test_palette_toggle_flips_the_scheme_and_the_plots(browser, server, theme):
    page_path = themed_page()
    assert page_path is not None, "no page of the site has light and dark plot variants"
    context = browser.new_context(color_scheme=theme)
    try:
        page = context.new_page()
        errors = []
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(server.url + page_path, wait_until="load")
        body = page.locator("body")
        assert body.get_attribute("data-md-color-scheme") == SCHEMES[theme]
        toggle(page, page_path, SCHEMES[OTHER[theme]])
        shown = {img["src"] for img in page.evaluate(VARIANTS_JS) if img["visible"]}
        assert shown, f"/{page_path}: no plot is shown after the toggle"
        assert all(src.endswith("#only-" + OTHER[theme]) for src in shown), (
            f"/{page_path}: after switching from {theme}, shown: {sorted(shown)}")
        # And back again.
        toggle(page, page_path, SCHEMES[theme])
        assert not errors, errors
    finally:
        context.close()


def test_search_finds_the_forget_gate_in_chapter_13(browser, server):
    context = browser.new_context()
    requests = []
    context.on("request", lambda req: requests.append(req.url))
    try:
        page = context.new_page()
        page.goto(server.url, wait_until="networkidle")
        page.keyboard.press("/")
        page.keyboard.type("forget gate")
        try:
            page.locator(".md-search-result__item").first.wait_for(timeout=5000)
        except PlaywrightTimeout:
            pytest.fail("no search result for 'forget gate' within 5 s")
        hrefs = page.locator(".md-search-result__item a").evaluate_all(
            "links => links.map((a) => a.href)")
        paths = [urlparse(href).path for href in hrefs]
        assert any(p.startswith(f"/{BASE}/ch13-gated/") for p in paths), (
            f"no search result for 'forget gate' links to /ch13-gated/: {sorted(set(paths))}")
    finally:
        context.close()
    assert any(urlparse(u).path.endswith("/search/search_index.json") for u in requests), (
        "the search index was not requested: the search did not run or was not recorded")
    foreign = sorted({u for u in requests if not server.is_local(u)})
    assert not foreign, f"the search asked another host for: {foreign}"


def test_code_blocks_have_a_working_copy_button(browser, server):
    page_path = "code/rnn/"
    context = browser.new_context(permissions=["clipboard-read", "clipboard-write"])
    try:
        page = context.new_page()
        page.goto(server.url + page_path, wait_until="load")
        blocks = page.locator(".md-content pre > code")
        assert blocks.count() > 0, f"/{page_path} has no code block"
        buttons = page.locator(".md-content .md-code__button")
        try:
            buttons.first.wait_for(state="attached", timeout=5000)
        except PlaywrightTimeout:
            pytest.fail(f"/{page_path}: no copy button (.md-code__button) on its code blocks")
        assert buttons.count() == blocks.count(), (
            f"/{page_path}: {blocks.count()} code blocks but {buttons.count()} copy buttons")
        console = page.locator(".md-content .highlight:has(.gp) pre:has(.md-code__button)").first
        shown = console.locator("code").inner_text()
        assert shown.startswith("$ python3 "), shown
        console.hover()
        console.locator(".md-code__button").click()
        copied = page.evaluate("navigator.clipboard.readText()")
        assert copied.strip() == shown.strip()[2:].splitlines()[0], (
            f"/{page_path}: the copy button copied {copied[:200]!r}: a command to paste "
            "has no prompt")
    finally:
        context.close()


# -- accessibility, weight, phones and paper ------------------------------------------

@every_page
@both
def test_no_serious_or_critical_accessibility_violation(visits, page_path, theme):
    """axe-core, WCAG 2.1 A and AA rules, on the page with its collapsed blocks open."""
    bad = [(rule, impact, targets) for rule, impact, targets in visits(page_path, theme).axe
           if impact in ("serious", "critical")]
    assert not bad, f"/{page_path} ({theme}): " + "; ".join(
        f"{rule} ({impact}) at {targets}" for rule, impact, targets in bad)


@every_page
@both
def test_landmarks_are_unique(visits, page_path, theme):
    """axe-core's landmark-unique, on every page (each code block's copy button sat in an
    unnamed <nav class="md-code__nav">: dozens of navigation landmarks alike)."""
    visit = visits(page_path, theme)
    bad = [(rule, targets) for rule, impact, targets in visit.axe if rule in BEST_PRACTICES]
    assert not bad, f"/{page_path} ({theme}): " + "; ".join(
        f"{rule} at {targets}" for rule, targets in bad)


def test_landmark_unique_runs_where_code_blocks_are(visits):
    """The check above is no empty pass: axe ran the rule, on pages that have Material's
    code navigation (<nav class="md-code__nav">)."""
    with_code = [p for p in PAGES if visits(p, "light").code_navs]
    assert with_code, "no page has a code block with its copy button"
    for page_path in with_code:
        assert set(BEST_PRACTICES) <= visits(page_path, "light").rules_run, page_path


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
def test_a_chapter_opens_within_its_budget(visits, page_path):
    """Everything a chapter loads as it opens (HTML, style sheets, scripts, the math font,
    the search index, the images in view), uncompressed."""
    visit = visits(page_path, "light")
    total = sum(visit.bytes.values())
    biggest = sorted(visit.bytes.items(), key=lambda kv: -kv[1])[:5]
    assert total <= FIRST_LOAD_BUDGET, (
        f"/{page_path} loads {total:,} bytes as it opens (budget {FIRST_LOAD_BUDGET:,}); "
        "largest: " + ", ".join(f"{urlparse(u).path} {n:,}" for u, n in biggest)
        + f"; then: {visit.opened}")
    # every widget sits screens below the first: none of its files come as the page opens
    early = [urlparse(u).path for u in visit.bytes if "/widgets/" in urlparse(u).path]
    assert not early, f"/{page_path} loads widget files as it opens: {early}; {visit.opened}"


PHONE_JS = """() => {
  const vw = document.documentElement.clientWidth;
  const scroller = (el) => { for (let p = el.parentElement; p; p = p.parentElement) {
      const s = getComputedStyle(p); if (['auto', 'scroll'].includes(s.overflowX)) return p; }
    return null; };
  const clipped = [...document.querySelectorAll('.md-content math')].filter((m) => {
    const r = m.getBoundingClientRect();
    return r.width > 0 && (r.right > vw + 1 || r.left < -1) && !scroller(m); })
    .map((m) => m.getAttribute('aria-label'));
  const title = document.querySelector('.md-header__topic:first-child .md-ellipsis');
  const plots = [...document.querySelectorAll('figure.plot img')].filter((i) => i.offsetParent)
    .map((i) => ({src: i.currentSrc, shown: i.getBoundingClientRect().width,
                  natural: i.naturalWidth}));
  return {width: document.documentElement.scrollWidth, vw, clipped, plots,
          titleCut: title ? title.scrollWidth > title.clientWidth + 1 : false};
}"""


@pytest.fixture(scope="session")
def phone_visits(browser, server):
    """phone_visits(page, theme) -> what PHONE_JS saw at 390 px, and axe's violations
    there ("axe"), with the collapsed blocks open; loaded once per session."""
    cache = {}

    def get(page_path, theme="light"):
        if (page_path, theme) not in cache:
            context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                          has_touch=True, color_scheme=theme)
            try:
                page = context.new_page()
                page.goto(server.url + page_path, wait_until="networkidle")
                page.evaluate(REVEAL_JS)
                page.evaluate(SCROLL_TO_IMAGES_JS, OTHER[theme])
                try:  # on a loaded machine an image set eager can still be on its way
                    page.wait_for_function(IMAGES_DONE_JS, arg=OTHER[theme], timeout=30_000)
                except PlaywrightTimeout:  # the test says which plot did not come
                    pass
                seen = page.evaluate(PHONE_JS)
                assert page.evaluate(TRIM_LISTINGS_JS) == [], "cutting a listing lost a token class"
                seen["axe"] = violations(run_axe(page))
                cache[page_path, theme] = seen
            finally:
                context.close()
        return cache[page_path, theme]

    return get


@every_page
@both
def test_no_accessibility_violation_on_a_phone(phone_visits, page_path, theme):
    """axe-core 4.14 at 390 px: what scrolls sideways there (code, formulas, tables) can
    be reached by keyboard (scrollable-region-focusable), and every other WCAG 2.1 A and
    AA rule holds, whatever its impact."""
    bad = phone_visits(page_path, theme)["axe"]
    assert not bad, f"/{page_path} ({theme}, 390 px): " + "; ".join(
        f"{rule} ({impact}) at {targets}" for rule, impact, targets in bad)


@every_page
def test_on_a_phone_nothing_runs_off_the_screen(phone_visits, page_path):
    """At 390 px no page scrolls sideways, and no formula is cut off: a wide display
    formula sits in a block that scrolls (and shows it), never past the screen's edge."""
    seen = phone_visits(page_path)
    assert seen["width"] <= seen["vw"], f"/{page_path} is {seen['width']} px wide at 390 px"
    assert not seen["clipped"], f"/{page_path}: formulas cut off: {seen['clipped'][:5]}"
    assert not seen["titleCut"], f"/{page_path}: the header's title is cut off"


# A block whose content the browser skips (content-visibility: auto) is itself shown;
# its first child is not.
SKIPPED_JS = """() => { const blocks = [...document.querySelectorAll('.md-content__inner > *')];
  const skipped = (b) => b.firstElementChild
    && !b.firstElementChild.checkVisibility({contentVisibilityAuto: true});
  return {blocks: blocks.length, skipped: blocks.filter(skipped).length,
          headings: blocks.filter((b) => /^H[1-6]$/.test(b.tagName))
            .filter((b) => !b.checkVisibility({contentVisibilityAuto: true})).length,
          lists: blocks.filter((b) => /^[OU]L$/.test(b.tagName)).filter(skipped).length};
}"""


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
def test_a_chapter_lays_out_only_what_is_near_the_screen(browser, server, page_path):
    """On a phone a chapter opens with its far blocks skipped (content-visibility: auto,
    site.css), which halves the main thread's work as it opens; its headings and lists
    never are (a skipped list's text fails Lighthouse's colour-contrast check)."""
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True)
    try:
        page = context.new_page()
        page.goto(server.url + page_path, wait_until="networkidle")
        seen = page.evaluate(SKIPPED_JS)
    finally:
        context.close()
    assert seen["skipped"] > seen["blocks"] // 3, seen
    assert seen["headings"] == 0, seen
    assert seen["lists"] == 0, seen


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
def test_on_a_phone_plots_come_in_their_phone_size(phone_visits, page_path):
    plots = phone_visits(page_path)["plots"]
    assert plots, f"/{page_path} has no plot"
    for plot in plots:
        assert plot["src"].endswith("-phone.png"), plot
        # type drawn for about 576 px shown at ~360: its 10-point text stays above 11 px
        assert plot["natural"] / plot["shown"] < 2.0, plot


PRINT_JS = """() => [...document.querySelectorAll('figure.plot')].map((f) =>
  [...f.querySelectorAll('img')].filter((i) => i.offsetParent !== null).length)"""


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
@both
def test_printing_shows_each_plot_once_on_white(browser, server, page_path, theme):
    context = browser.new_context(color_scheme=theme)
    try:
        page = context.new_page()
        page.goto(server.url + page_path, wait_until="networkidle")
        page.emulate_media(media="print")
        shown = page.evaluate(PRINT_JS)
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        text = page.evaluate("getComputedStyle(document.querySelector('.md-typeset p')).color")
        nav = page.evaluate("[...document.querySelectorAll('.md-sidebar, .md-header')]"
                            ".filter((e) => e.offsetParent !== null).length")
    finally:
        context.close()
    assert shown and all(n == 1 for n in shown), f"/{page_path} ({theme}) prints {shown}"
    assert background in ("rgb(255, 255, 255)", "rgba(0, 0, 0, 0)"), background
    assert text.startswith("rgba(0, 0, 0") or text.startswith("rgb(0, 0, 0"), text
    assert nav == 0, "navigation is printed"


def test_the_404_page_leads_somewhere(browser, server):
    context = browser.new_context()
    try:
        page = context.new_page()
        page.goto(server.url + "404.html", wait_until="networkidle")
        links = page.eval_on_selector_all(".md-content a", "as => as.map((a) => a.href)")
        has_search = page.locator("input.md-search__input").count()
        title = page.title()
    finally:
        context.close()
    paths = {urlparse(u).path for u in links}
    assert f"/{BASE}/" in paths
    for ch in CHAPTER_PAGES:
        assert f"/{BASE}/{ch}" in paths, f"the 404 page does not link to {ch}"
    assert has_search == 1
    assert "not found" in title.lower(), f"the 404 page's title is {title!r}"


# -- the keyboard ----------------------------------------------------------------------

# The focused element, and the box a reader sees focused: Material's palette toggle is a
# 0-pixel radio button whose label, next to it, shows the focus.
FOCUS_JS = """() => {
  const el = document.activeElement;
  const shown = el.matches('.md-option') ? el.nextElementSibling : el;
  const box = shown ? shown.getBoundingClientRect() : {width: 0, height: 0};
  return {tag: el.tagName.toLowerCase(), id: el.id, cls: el.className,
          label: el.getAttribute('aria-label') || (el.innerText || '').trim().slice(0, 40),
          width: box.width, height: box.height, inHeader: !!el.closest('.md-header'),
          visible: !!shown && shown.checkVisibility()};
}"""


def tab_stops(page, count):
    stops = []
    for _ in range(count):
        page.keyboard.press("Tab")
        stops.append(page.evaluate(FOCUS_JS))
    return stops


@pytest.mark.parametrize("page_path", ["", CHAPTER_PAGES[0]], ids=page_ids)
def test_every_tab_stop_in_the_header_can_be_seen(browser, server, page_path):
    """Tab from the top of the page until focus leaves the header: each stop is a box a
    reader can see (the results box after the search field was a 0-pixel stop)."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(server.url + page_path, wait_until="networkidle")
        stops = tab_stops(page, 8)
    finally:
        context.close()
    header = [stop for stop in stops[1:] if stop["inHeader"]]  # [0]: the skip link
    assert any(stop["cls"].startswith("md-search__input") for stop in header), stops
    assert stops[len(header) + 1]["inHeader"] is False, "focus never left the header"
    unseen = [stop for stop in header if not (stop["visible"] and stop["width"] > 0
                                              and stop["height"] > 0)]
    assert not unseen, f"/{page_path}: tab stops nobody sees: {unseen}"
    after_search = stops[1 + next(n for n, stop in enumerate(header)
                                  if stop["cls"].startswith("md-search__input")) + 1]
    assert "md-search" not in after_search["cls"], after_search


@pytest.mark.parametrize("key", ["Space", "Enter"])
def test_the_palette_toggle_answers_space_and_enter(browser, server, key):
    context = browser.new_context(color_scheme="light", viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(server.url + CHAPTER_PAGES[0], wait_until="networkidle")
        stops = tab_stops(page, 6)
        assert any(stop["cls"].startswith("md-option") for stop in stops), stops
        page.locator("form[data-md-component=palette] .md-option").first.focus()
        for expected in ("slate", "default", "slate"):
            page.keyboard.press(key)
            scheme = page.evaluate("document.body.getAttribute('data-md-color-scheme')")
            assert scheme == expected, f"{key} on the palette toggle left the scheme {scheme!r}"
            assert page.evaluate("document.activeElement.matches('.md-option')"), \
                "focus left the palette toggle"
    finally:
        context.close()


# -- colours, long lines, paper ---------------------------------------------------------

# The WCAG contrast of each element's text against what is behind it: the background
# colours of the element and its ancestors, composited down to the first opaque one.
CONTRAST_JS = """(selector) => {
  const parse = (c) => { const m = c.match(/rgba?\\(([^)]*)\\)/);
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
  const over = (top, below) => [0, 1, 2].map((i) => top[i] * top[3] + below[i] * (1 - top[3]))
    .concat([1]);
  const behind = (el) => { const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) layers.push(c);
      if (c && c[3] >= 1) break; }
    return layers.reverse().reduce((below, layer) => over(layer, below), [255, 255, 255, 1]); };
  const lum = (c) => { const f = (v) => { v /= 255;
      return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]); };
  return [...document.querySelectorAll(selector)].filter((el) => el.textContent.trim())
    .map((el) => { const bg = behind(el), fg = parse(getComputedStyle(el).color);
      if (!fg) return {text: el.textContent.trim().slice(0, 40), ratio: 0,
                       color: getComputedStyle(el).color};
      const [a, b] = [lum(over(fg, bg)), lum(bg)].sort((x, y) => y - x);
      return {text: el.textContent.trim().slice(0, 40), ratio: (a + 0.05) / (b + 0.05)}; });
}"""
COMFORTABLE = 5.0  # WCAG AA asks 4.5:1 of body text; captions and the footer had 4.5-4.6


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
@both
def test_captions_and_the_copyright_read_at_5_to_1(browser, server, page_path, theme):
    context = browser.new_context(color_scheme=theme, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(server.url + page_path, wait_until="networkidle")
        found = {sel: page.evaluate(CONTRAST_JS, sel)
                 for sel in (".md-typeset figcaption", ".md-copyright")}
    finally:
        context.close()
    assert found[".md-typeset figcaption"] and found[".md-copyright"], found
    low = [(sel, f["text"], round(f["ratio"], 2)) for sel, items in found.items()
           for f in items if f["ratio"] < COMFORTABLE]
    assert not low, f"/{page_path} ({theme}): below {COMFORTABLE}:1: {low}"


# For every code block wider than its box: the colours of the last few pixels at its
# right edge, against the block's background (a shadow there says "more this way").
OVERFLOWING_CODE_JS = """() => [...document.querySelectorAll('.md-typeset pre > code')]
  .filter((c) => c.checkVisibility() && c.scrollWidth > c.clientWidth + 1)
  .map((c) => { const r = c.getBoundingClientRect();
    return {x: r.right, top: r.top + window.scrollY, height: r.height,
            bg: getComputedStyle(c).backgroundColor,
            text: c.textContent.slice(0, 40)}; })"""


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
@both
def test_code_lines_too_long_for_the_page_show_that_they_scroll(browser, server, page_path,
                                                                theme):
    """At 1280 px a code line longer than its block (14.7's comments) scrolls, and the
    block's right edge shows a shadow where the line goes on."""
    from io import BytesIO

    from PIL import Image

    context = browser.new_context(color_scheme=theme, viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()
        page.goto(server.url + page_path, wait_until="networkidle")
        blocks = page.evaluate(OVERFLOWING_CODE_JS)
        edges = []
        for block in blocks:
            band = {"x": block["x"] - 7, "y": block["top"], "width": 5,
                    "height": min(block["height"], 400)}
            png = page.screenshot(full_page=True, clip=band)
            edges.append(Image.open(BytesIO(png)).convert("RGB"))
    finally:
        context.close()
    for block, edge in zip(blocks, edges):
        bg = [int(v) for v in re.findall(r"[0-9.]+", block["bg"])[:3]]
        pixels = [edge.getpixel((x, y)) for y in range(edge.height) for x in range(edge.width)]
        darkest = max(sum(abs(p[i] - bg[i]) for i in range(3)) for p in pixels)
        shaded = sum(sum(abs(p[i] - bg[i]) for i in range(3)) > 12 for p in pixels)
        assert darkest > 12 and shaded > len(pixels) // 2, (
            f"/{page_path} ({theme}): the code block {block['text']!r} scrolls sideways "
            "with nothing at its edge to show it")


A4 = {"width": 794, "height": 1123}  # CSS pixels: the paper a page prints on


@pytest.mark.parametrize("page_path", CHAPTER_PAGES)
@both
def test_printing_opens_the_answers_darkens_links_and_wraps_code(browser, server, page_path,
                                                                 theme):
    context = browser.new_context(color_scheme=theme, viewport=A4)
    try:
        page = context.new_page()
        page.goto(server.url + page_path, wait_until="networkidle")
        closed = page.evaluate("[...document.querySelectorAll('.md-typeset details')]"
                               ".filter((d) => !d.open).length")
        page.add_style_tag(content="* { transition: none !important; }")  # colours at once
        page.emulate_media(media="print")
        hidden = page.evaluate("""() => [...document.querySelectorAll('.md-typeset details')]
          .flatMap((d) => [...d.children].filter((c) => c.tagName !== 'SUMMARY'))
          .filter((c) => !c.checkVisibility()).map((c) => c.textContent.trim().slice(0, 40))""")
        links = page.evaluate(CONTRAST_JS, ".md-typeset a:not(.headerlink):not(.md-button)")
        overflowing = page.evaluate(OVERFLOWING_CODE_JS)
    finally:
        context.close()
    assert closed, f"/{page_path} has no collapsed block: nothing to check"
    assert not hidden, f"/{page_path} ({theme}) prints these collapsed: {hidden[:5]}"
    pale = [(f["text"], round(f["ratio"], 1)) for f in links if f["ratio"] < 7.0]
    assert links and not pale, f"/{page_path} ({theme}) prints pale links: {pale[:5]}"
    assert not overflowing, f"/{page_path} ({theme}) prints code cut at the edge: " \
        f"{[b['text'] for b in overflowing]}"
