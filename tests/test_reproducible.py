"""Two clean builds of the same sources, in different folders, give the same bytes."""

import gzip
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import ROOT, SITE
from test_build_failures import tree_digest

SOURCES = ("docs", "generator", "mkdocs.yml", "requirements.txt")
EPOCH = "1700000000"  # 2023-11-14: any fixed commit time will do


def clean_build(folder):
    for name in SOURCES:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, folder / name)
    env = {**os.environ, "SOURCE_DATE_EPOCH": EPOCH, "NO_MKDOCS_2_WARNING": "1"}
    result = subprocess.run([sys.executable, "-m", "generator", "build"], cwd=folder, env=env,
                            capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stderr
    assert "computed in" in result.stdout  # no page came from a cache: it really was clean
    return folder / "site"


@pytest.mark.slow
def test_two_clean_builds_in_different_folders_are_byte_identical(tmp_path):
    first = clean_build(tmp_path / "one" / "checkout")
    time.sleep(1.1)  # a clock-dependent output would now differ
    second = clean_build(tmp_path / "elsewhere")
    files_one = sorted(p.relative_to(first) for p in first.rglob("*") if p.is_file())
    files_two = sorted(p.relative_to(second) for p in second.rglob("*") if p.is_file())
    assert files_one == files_two
    differing = [str(p) for p in files_one if (first / p).read_bytes() != (second / p).read_bytes()]
    assert differing == []
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
