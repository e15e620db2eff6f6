"""Page weight: the images a page loads stay within a budget."""

import re

from helpers import SITE

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
    assert weights["ch12-rnn/index.html"] > 0 and weights["ch13-gated/index.html"] > 0


def test_pngs_are_palette_images(site):
    """The plots are quantised to a palette (colour type 3): a third of the bytes."""
    for png in (SITE / "img").rglob("*.png"):  # ours; Material ships its own favicon
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[25] == 3, f"{png.name} is not paletted"
