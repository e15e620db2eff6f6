"""Page weight: the images a page loads stay within a budget."""

import re

from helpers import SITE, page_markers

BUDGET_PER_PAGE = 400_000  # bytes of PNG per page, light and dark variants together
BUDGET_PER_IMAGE = 80_000  # one plot, one theme


def pages(site):
    return sorted(p for p in site.rglob("index.html"))


def images_of(page):
    html = page.read_text("utf-8")
    sources = re.findall(r'<img[^>]+src="([^"#]+\.png)[^"]*"', html)
    return sorted({(page.parent / src).resolve() for src in sources})


def test_every_page_within_budget(site):
    weights = {}
    for page in pages(site):
        files = images_of(page)
        assert all(f.is_file() for f in files), f"{page}: an image is missing"
        weights[page.relative_to(site).as_posix()] = sum(f.stat().st_size for f in files)
        for f in files:
            assert f.stat().st_size <= BUDGET_PER_IMAGE, f"{f.name}: {f.stat().st_size:,} bytes"
    over = {p: w for p, w in weights.items() if w > BUDGET_PER_PAGE}
    assert not over, f"over {BUDGET_PER_PAGE:,} bytes of images: {over}"


def test_the_budget_weighs_every_figure_a_page_asks_for(site):
    """The budget above is measured on what it should be: each built page loads two PNGs,
    light and dark, for each `<!-- gen figure NAME -->` its hand-written page holds, and
    none otherwise (counted from the markers, not from what the generator wrote)."""
    figures = {page: sum(m.kind == "figure" for m in markers)
               for page, markers in page_markers().items()}
    assert sum(figures.values()) >= 10  # the chapters' plots are there to be weighed
    for page in pages(site):
        rel = page.relative_to(site).as_posix()
        source = "index.md" if rel == "index.html" else rel[:-len("/index.html")] + ".md"
        loaded = [f.name for f in images_of(page)]
        light = sum(name.endswith("-light.png") for name in loaded)
        dark = sum(name.endswith("-dark.png") for name in loaded)
        assert (light, dark, len(loaded)) == (figures.get(source, 0),) * 2 + (light + dark,), \
            f"{rel}: {light} light and {dark} dark PNGs of {len(loaded)} for " \
            f"{figures.get(source, 0)} figure markers"


def test_pngs_are_palette_images(site):
    """The plots are quantised to a palette (colour type 3): a third of the bytes."""
    for png in (SITE / "img").rglob("*.png"):  # ours; Material ships its own favicon
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[25] == 3, f"{png.name} is not paletted"


def test_only_the_lead_plot_loads_before_it_is_near_the_screen(site):
    """The first screen's plot (every chapter's largest paint) is fetched at once, with
    priority; every other plot lazily, so that the scheme not shown costs nothing."""
    chapters = [page for page in pages(site) if 'class="plot lead"' in page.read_text("utf-8")]
    assert len(chapters) >= 7, "a lead plot on every chapter"
    for page in chapters:
        figures = re.findall(r'<figure class="plot( lead)?"(.*?)</figure>',
                             page.read_text("utf-8"), re.S)
        for lead, figure in figures:
            imgs = re.findall(r"<img [^>]+>", figure)
            assert imgs, f"{page}: a figure without its images"
            for img in imgs:
                if lead:
                    assert 'loading="lazy"' not in img and 'fetchpriority="high"' in img, img
                else:
                    assert 'loading="lazy"' in img, img
