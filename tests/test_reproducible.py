"""Two clean builds of the same sources, in different folders, give the same bytes."""

import gzip
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT, SITE, build, copy_project, tree_digest, tree_files


def clean_build(folder):
    """A build in a new folder with no page cache: every page is computed afresh (the
    scripts' runs come from the run cache, keyed by content; their own determinism is
    tested with the scripts)."""
    copy = copy_project(folder, page_cache=False)
    result = build(copy)
    assert result.returncode == 0, result.stderr
    assert "generator: computing " in result.stderr  # no page came from a cache
    return copy / "site"


@pytest.mark.slow
def test_two_clean_builds_in_different_folders_are_byte_identical(tmp_path):
    first = clean_build(tmp_path / "one" / "checkout")
    time.sleep(1.1)  # a clock-dependent output would now differ
    second = clean_build(tmp_path / "elsewhere")
    one, two = tree_files(first), tree_files(second)
    assert sorted(one) == sorted(two)
    assert [rel for rel in one if one[rel] != two[rel]] == []
    assert tree_digest(first) == tree_digest(second)
    sitemap = (first / "sitemap.xml").read_text("utf-8")
    assert "<lastmod>2023-11-14</lastmod>" in sitemap
    assert gzip.decompress((first / "sitemap.xml.gz").read_bytes()).decode() == sitemap


def test_no_absolute_path_or_build_machine_detail_in_the_site(site):
    needles = [str(ROOT), str(Path.home()), "/tmp/", sys.prefix]
    for path in SITE.rglob("*"):
        if path.is_file() and path.suffix in {".html", ".xml", ".json", ".ipynb", ".js", ".css",
                                              ".txt", ".py", ".md"}:
            text = path.read_text("utf-8", errors="replace")
            found = [n for n in needles if n in text]
            assert not found, f"{path.relative_to(SITE)} contains {found}"


def test_png_files_carry_no_software_or_time_chunk(site):
    pngs = list(SITE.rglob("*.png"))
    assert pngs
    for path in pngs:
        data = path.read_bytes()
        for chunk in (b"tEXtSoftware", b"tIME", b"tEXtCreation", b"iTXt"):
            assert chunk not in data, f"{path.name} has a {chunk!r} chunk"
