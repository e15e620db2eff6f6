"""The math font subset (generator/mathfont.py): what it keeps, that it is
deterministic and fails loudly, and that Chromium lays formulas out the same
with it as with the full font.

The pages' formulas come from docs/*.md through the MathML hook, as in
test_mathml.py; no build is needed except for the one test on the built site.
Reading and writing WOFF2 needs the brotli module (pinned in requirements.txt).
"""

import io
import unicodedata

import pytest

from helpers import DOCS
from generator import mathfont, mathml
from generator.mathfont import MathFontError, math_characters, needed_characters, subset_font
from helpers import BOXES_JS, TRICKY, fixture_html, markdown_converter, open_fixture

FONT = DOCS / "assets" / "fonts" / "stix-two-math.woff2"


@pytest.fixture(scope="module")
def woff2():
    pytest.importorskip("brotli", reason="WOFF2 needs the brotli module, pinned in requirements.txt "
                                         "(`make` reinstalls the virtualenv from it)")
    from fontTools.ttLib import TTFont

    return lambda data: TTFont(io.BytesIO(data))


@pytest.fixture(scope="module")
def pages_html():
    """Each hand-written page's HTML with its formulas as MathML, as the build writes it."""
    md = markdown_converter()
    return {path.name: mathml.convert_page(md.reset().convert(path.read_text("utf-8")), path.name)
            for path in sorted(DOCS.rglob("*.md"))}


@pytest.fixture(scope="module")
def used(pages_html):
    chars = set()
    for text in pages_html.values():
        chars |= math_characters(text)
    return chars


@pytest.fixture(scope="module")
def subset(woff2, used):
    return subset_font(FONT.read_bytes(), used)


# --- which characters ---------------------------------------------------------

def test_math_characters_are_the_text_of_math_elements_only():
    page = ('<p>Plain text x&amp;y</p><!-- <math><mi>Q</mi></math> -->'
            '<math aria-label="h sub t"><msub><mi>h</mi><mi>t</mi></msub><mo>&#x2299;</mo>'
            '<mtext>if&nbsp;</mtext></math>'
            '<math display="block"><msqrt><mi>H</mi></msqrt></math>')
    assert math_characters(page) == set("ht\u2299if\u00A0H\u221A")


def test_needed_characters_add_the_italic_each_letter_is_drawn_with():
    needed = needed_characters(set("hA\u03B8\u03A3\u2202+"))
    for letter, italic in [("h", "PLANCK CONSTANT"), ("A", "MATHEMATICAL ITALIC CAPITAL A"),
                           ("\u03B8", "MATHEMATICAL ITALIC SMALL THETA"),
                           ("\u03A3", "MATHEMATICAL ITALIC CAPITAL SIGMA"),
                           ("\u2202", "MATHEMATICAL ITALIC PARTIAL DIFFERENTIAL")]:
        assert letter in needed and unicodedata.lookup(italic) in needed
    assert set("0123456789 ") <= needed
    assert not any(unicodedata.name(c, "").startswith("MATHEMATICAL BOLD") for c in needed)


def test_every_italic_mapping_is_the_letters_own_italic():
    for code in list(range(0x41, 0x5B)) + list(range(0x61, 0x7B)) + list(range(0x391, 0x3AA)) \
            + list(range(0x3B1, 0x3CA)):
        letter = chr(code)
        if code == 0x3A2:
            continue
        italic = mathfont.italic(letter)
        name = unicodedata.name(letter).replace("LATIN ", "").replace("GREEK ", "").replace("LETTER ", "")
        if letter == "h":
            assert italic == "\u210E"
        else:
            assert unicodedata.name(italic) == f"MATHEMATICAL ITALIC {name}"


# --- the subset of the pages' font -----------------------------------------------

def test_every_character_the_pages_draw_is_in_the_subset(woff2, subset, used):
    cmap = woff2(subset).getBestCmap()
    drawn = {c for c in used if c not in mathfont.INVISIBLE}
    assert len(drawn) > 50
    assert sorted(c for c in drawn if ord(c) not in cmap) == []
    italics = {mathfont.italic(c) for c in drawn if mathfont.italic(c)}
    assert italics and sorted(c for c in italics if ord(c) not in cmap) == []


def test_the_subset_keeps_the_math_table_and_every_size_of_the_brackets_used(woff2, subset, used):
    full, cut = woff2(FONT.read_bytes()), woff2(subset)
    assert "MATH" in cut and "GSUB" in cut
    checked = 0
    for char in sorted(c for c in used if mathml.stretches_vertically(c) or c == "\u220F"):
        sizes = []
        for font in (full, cut):
            glyph = font.getBestCmap()[ord(char)]
            variants = font["MATH"].table.MathVariants
            coverage = variants.VertGlyphCoverage.glyphs
            construction = variants.VertGlyphConstruction[coverage.index(glyph)]
            names = [v.VariantGlyph for v in construction.MathGlyphVariantRecord]
            if construction.GlyphAssembly:
                names += [p.glyph for p in construction.GlyphAssembly.PartRecords]
            glyf = font["glyf"]
            sizes.append([glyf[name].numberOfContours != 0 for name in names])
        assert sizes[0] == sizes[1] and all(sizes[1]), char  # every variant and part, with outlines
        checked += 1
    assert checked >= 5  # ( ) [ ] | and the norm bar, the product sign


def test_the_subset_is_a_small_woff2_with_the_fonts_names(woff2, subset):
    assert subset[:4] == b"wOF2"
    assert len(subset) < 40_000 and len(subset) < FONT.stat().st_size / 10
    names = {r.nameID: str(r) for r in woff2(subset)["name"].names if r.platformID == 3}
    assert names[1] == "STIX Two Math" and "OFL" in names[14]


def test_two_runs_give_the_same_bytes_from_woff2_or_from_the_decoded_font(woff2, subset, used):
    data = FONT.read_bytes()
    assert subset_font(data, used) == subset
    decoded = mathfont.decode_font(data)
    assert decoded[:4] == b"\x00\x01\x00\x00"
    assert subset_font(decoded, used) == subset
    assert woff2(subset)["head"].modified == woff2(data)["head"].modified


def test_a_character_the_font_lacks_fails_loudly(woff2, used):
    with pytest.raises(MathFontError, match="U\\+1F600"):
        subset_font(FONT.read_bytes(), used | {"\U0001F600"})
    assert mathfont.missing_characters(FONT.read_bytes(), {"\u2061", " ", "x"}) == []


# --- the hook ---------------------------------------------------------------------

def site_with(tmp_path, pages):
    site = tmp_path / "site"
    for name, text in pages.items():
        (site / name).parent.mkdir(parents=True, exist_ok=True)
        (site / name).write_text(text, "utf-8")
    (site / "assets" / "fonts").mkdir(parents=True)
    (site / mathfont.FONT).write_bytes(FONT.read_bytes())  # the full copy MkDocs puts there
    return site


def test_hook_replaces_the_sites_font_and_reuses_its_cache(woff2, tmp_path, monkeypatch, pages_html, subset):
    project = tmp_path / "project"
    (project / "docs" / "assets" / "fonts").mkdir(parents=True)
    (project / "docs" / mathfont.FONT).write_bytes(FONT.read_bytes())
    (project / "mkdocs.yml").write_text("site_name: x\n")
    site = site_with(tmp_path, {f"{n}/index.html": t for n, t in pages_html.items()})
    config = {"docs_dir": str(project / "docs"), "site_dir": str(site),
              "config_file_path": str(project / "mkdocs.yml")}
    mathfont.on_post_build(config)
    assert (site / mathfont.FONT).read_bytes() == subset
    cache = project / "build" / "cache" / "mathfont"
    assert len(list(cache.glob("subset-*.woff2"))) == 1 and len(list(cache.glob("source-*.ttf"))) == 1

    # Again: the cached subset, without subsetting (and in well under a second).
    (site / mathfont.FONT).write_bytes(b"stale")
    monkeypatch.setattr(mathfont, "subset_font", lambda *a: pytest.fail("not from the cache"))
    before, after, seconds = mathfont.subset_site(site, project / "docs" / mathfont.FONT, cache)
    assert (site / mathfont.FONT).read_bytes() == subset and after == len(subset) and seconds < 1


def test_hook_fails_the_build_on_a_character_the_font_lacks(woff2, tmp_path):
    from mkdocs.exceptions import PluginError

    site = site_with(tmp_path, {"index.html": "<math><mi>\U0001F600</mi></math>"})
    config = {"docs_dir": str(DOCS), "site_dir": str(site), "config_file_path": None}
    with pytest.raises(PluginError, match="no glyph for U\\+1F600"):
        mathfont.on_post_build(config)


def test_the_built_site_serves_a_subset_that_covers_its_pages(woff2, site):
    served = (site / mathfont.FONT).read_bytes()
    assert len(served) < FONT.stat().st_size / 10, "the site serves the full font"
    cmap = woff2(served).getBestCmap()
    drawn = {c for c in mathfont.site_characters(site) if c not in mathfont.INVISIBLE}
    assert drawn and sorted(c for c in drawn if ord(c) not in cmap) == []
    assert "MATH" in woff2(served)


# --- in Chromium --------------------------------------------------------------------

def layout(browser, page_html, font):
    page = open_fixture(browser, page_html, font)
    data = page.evaluate(BOXES_JS)
    page.close()
    return data


@pytest.mark.browser
def test_formulas_lay_out_the_same_with_the_subset_as_with_the_full_font(woff2, browser):
    page_html = fixture_html()
    cut = subset_font(FONT.read_bytes(), math_characters(page_html))
    full, sub, none = (layout(browser, page_html, f) for f in (FONT.read_bytes(), cut, None))
    assert full["loaded"] and sub["loaded"] and not none["loaded"]
    assert set(full["boxes"]) == set(TRICKY)
    compared = 0
    for key in TRICKY:
        a, b = full["boxes"][key]["all"], sub["boxes"][key]["all"]
        assert len(a) == len(b)
        for box_a, box_b in zip(a, b):
            for side in ("x", "y", "w", "h"):
                assert abs(box_a[side] - box_b[side]) <= 1, (key, side, box_a, box_b)
            compared += 1
    assert compared > 100
    # The comparison can tell fonts apart: without STIX Two Math the boxes move.
    moved = [key for key in TRICKY if any(
        abs(p["w"] - q["w"]) > 1 or abs(p["h"] - q["h"]) > 1
        for p, q in zip(full["boxes"][key]["all"], none["boxes"][key]["all"]))]
    assert len(moved) >= len(TRICKY) // 2, moved
