"""A clean build of the same sources, in another folder, gives the same bytes."""

import gzip
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from helpers import ROOT, SITE, copy_project, tree_files


def make_builds_epoch():
    """The SOURCE_DATE_EPOCH `make build` used for site/: make exports it to the tests it
    runs; run alone, pytest asks git as the Makefile does."""
    if os.environ.get("SOURCE_DATE_EPOCH"):
        return os.environ["SOURCE_DATE_EPOCH"]
    done = subprocess.run(["git", "log", "-1", "--format=%ct"], cwd=ROOT, capture_output=True,
                          text=True)
    return done.stdout.strip() or "0"


@pytest.mark.slow
def test_a_clean_plain_mkdocs_build_elsewhere_gives_make_builds_bytes(tmp_path, site):
    """A fresh clone's habit, `mkdocs build` alone with no build/ folder, in another folder,
    later, every page computed afresh (the scripts' runs come from the run cache, keyed by
    content; their own determinism is tested with the scripts), gives byte for byte the
    site/ that `make build` made here with its page cache: the build is reproducible, and
    site/ is what these sources make (a stale site/ fails here: run make build)."""
    copy = copy_project(tmp_path / "elsewhere" / "checkout", page_cache=False)
    assert not (copy / "build").exists()
    mkdocs = os.path.join(os.path.dirname(sys.executable), "mkdocs")
    result = subprocess.run([mkdocs, "build"], cwd=copy, capture_output=True, text=True,
                            timeout=1500, env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                                               "PYTHONDONTWRITEBYTECODE": "1",
                                               "SOURCE_DATE_EPOCH": make_builds_epoch()})
    assert result.returncode == 0, result.stderr
    assert "generator: computing " in result.stderr  # no page came from a cache
    fresh, made = tree_files(copy / "site"), tree_files(SITE)
    assert sorted(fresh) == sorted(made)
    assert [rel for rel in fresh if fresh[rel] != made[rel]] == [], \
        "site/ differs from a clean build of the same sources (stale? run make build)"
    sitemap = (copy / "site" / "sitemap.xml").read_text("utf-8")
    day = time.strftime("%Y-%m-%d", time.gmtime(int(make_builds_epoch())))
    assert f"<lastmod>{day}</lastmod>" in sitemap
    assert gzip.decompress((copy / "site" / "sitemap.xml.gz").read_bytes()).decode() == sitemap


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
