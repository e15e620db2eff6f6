"""Never stale, never half-written: the page cache, the run cache and the lock, each
tested by breaking what it guards, in a copy of the project."""

import json
import os
import shutil
import subprocess
import sys

import pytest

from helpers import CHAPTERS, EPOCH, build, copy_project, edit, tree_files
from generator.cache import run_cache_dir


@pytest.fixture(scope="module")
def built_copy(tmp_path_factory):
    """A copy of the project with its own run cache, built once. Both caches come from the
    project (what `make build` left), less rnn.py's pages and runs: the copy's first build
    computes rnn.py's pages and fills the run cache with rnn.py's current runs, which the
    tests below damage. The other scripts' runs are copied so that no test retrains them."""
    base = copy_project(tmp_path_factory.mktemp("project"))
    shutil.rmtree(base / "build" / "cache" / "pages" / "rnn", ignore_errors=True)
    runs = tmp_path_factory.mktemp("runs")
    shared = run_cache_dir() / "runs"
    for group in (shared.iterdir() if shared.is_dir() else ()):
        if group.is_dir() and group.name != "rnn":
            shutil.copytree(group, runs / "runs" / group.name)
    result = build(base, env={"RNN_EXPLAINER_CACHE": str(runs)})
    assert result.returncode == 0, result.stderr
    return base, runs


@pytest.fixture
def project(built_copy, tmp_path):
    base, runs = built_copy
    copy = tmp_path / "project"
    shutil.copytree(base, copy, symlinks=True)
    shutil.copytree(runs, tmp_path / "runs")
    env = {"RNN_EXPLAINER_CACHE": str(tmp_path / "runs")}
    return copy, env


def computed(result):
    """The scripts whose pages a build computed afresh."""
    return sorted(line.split("computing ")[1].split("'s pages")[0]
                  for line in result.stderr.splitlines()
                  if line.startswith("generator: computing "))


def page(copy, rel):
    return (copy / "site" / rel / "index.html").read_text("utf-8")


def test_a_warm_build_recomputes_nothing(project):
    copy, env = project
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert computed(result) == []


def test_a_script_edit_shows_on_the_page(project):
    copy, env = project
    edit(copy / "docs" / "code" / "rnn.py", "CLIP_THRESHOLD = 5.0", "CLIP_THRESHOLD = 4.0")
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert computed(result) == ["rnn.py"]
    html = page(copy, "ch12-rnn")
    assert "Clipping at 4 (dashed)" in html and ">4.0000</td>" in html
    assert ">5.0000</td>" not in html
    served = (copy / "site" / "code" / "rnn.py").read_text("utf-8")
    assert "CLIP_THRESHOLD = 4.0" in served
    notebook = (copy / "site" / "code" / "rnn.ipynb").read_text("utf-8")
    assert "CLIP_THRESHOLD = 4.0" in notebook and "gradient clipping at norm 4" in notebook


def test_editing_one_chapter_recomputes_that_chapter_only(project):
    copy, env = project
    edit(copy / "generator" / "chapters" / "ch13_gated.py", '"""Chapter 13', '"""Chapter 13 (edited)')
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert computed(result) == ["gated.py"]


def test_a_shared_helper_recomputes_the_chapters_that_use_it(project):
    """diagrams.py, the cell diagrams, is imported by some chapter modules and not by the
    others (read from their source here): those and only those are recomputed. (A helper
    every chapter imports, plotstyle.py, recomputed every page for 90 s and could not show
    that a chapter which does not use it is left alone.)"""
    copy, env = project
    users = sorted(ch.script for ch in CHAPTERS if "from generator import diagrams" in
                   (copy / "generator" / "chapters" / f"{ch.module}.py").read_text("utf-8"))
    assert 0 < len(users) < len(CHAPTERS), users
    edit(copy / "generator" / "diagrams.py", '"""Cell diagrams', '"""Cell  diagrams')
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert computed(result) == users


def test_editing_the_cli_the_math_hook_or_a_page_s_prose_recomputes_nothing(project):
    copy, env = project
    before = tree_files(copy / "site")
    edit(copy / "generator" / "__main__.py", '"""python -m generator', '"""python  -m generator')
    edit(copy / "generator" / "mathml.py", '"""MkDocs hook', '"""MkDocs  hook')
    edit(copy / "generator" / "build.py", '"""`make build`', '"""`make  build`')
    edit(copy / "docs" / "ch12-rnn.md", "A network can still",  # lines added above markers
         "A paragraph added.\n\nA second one.\n\nA network, say, can still")
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert computed(result) == []
    after = tree_files(copy / "site")
    changed = sorted(rel for rel in after if after[rel] != before.get(rel))
    assert "ch12-rnn/index.html" in changed and "A network, say, can still" in page(copy, "ch12-rnn")
    assert all(not rel.startswith(("img/", "code/")) for rel in changed), changed


def test_edit_and_revert_returns_the_same_bytes(project):
    copy, env = project
    before = tree_files(copy / "site")
    script = copy / "docs" / "code" / "rnn.py"
    original = script.read_bytes()
    edit(script, "MEASURE_SEED = 0", "MEASURE_SEED = 1")
    assert build(copy, env=env).returncode == 0
    assert tree_files(copy / "site") != before
    script.write_bytes(original)
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert computed(result) == []  # the earlier entry is found again
    after = tree_files(copy / "site")
    assert sorted(after) == sorted(before)
    assert [rel for rel in after if after[rel] != before[rel]] == []


def damage(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def test_a_damaged_page_cache_entry_is_recomputed_and_never_published(project):
    copy, env = project
    before = tree_files(copy / "site")
    pngs = sorted((copy / "build" / "cache" / "pages" / "rnn").glob("*/files/img/ch12-rnn/clip-dark.png"))
    assert pngs, "no cached plot found"
    for png in pngs:
        damage(png)
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert "generator: warning: damaged page-cache entry" in result.stderr
    assert "clip-dark.png does not match its checksum" in result.stderr
    assert computed(result) == ["rnn.py"]
    assert tree_files(copy / "site") == before  # the recomputed plot, byte for byte


def test_a_damaged_manifest_is_recomputed(project):
    copy, env = project
    before = tree_files(copy / "site")
    for manifest in (copy / "build" / "cache" / "pages" / "gated").glob("*/manifest.json"):
        manifest.write_text(manifest.read_text("utf-8").replace("gated.py", "gated.pz", 1))
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert "damaged page-cache entry" in result.stderr
    assert tree_files(copy / "site") == before


def test_a_damaged_run_cache_entry_is_recomputed(project):
    copy, env = project
    before = tree_files(copy / "site")
    runs = sorted((copy.parent / "runs" / "runs" / "rnn").glob("*.json"))
    assert runs, "no run-cache entry found"
    for entry in runs:
        damage(entry)
    shutil.rmtree(copy / "build" / "cache" / "pages" / "rnn")  # make the worker read them
    result = build(copy, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stderr.count("damaged run-cache entry") >= 1
    assert tree_files(copy / "site") == before


def test_a_cached_result_that_was_tampered_with_is_not_served(project):
    """A run-cache entry whose content and checksum were both rewritten would be trusted;
    but one whose table alone was edited is not."""
    copy, env = project
    entry = sorted((copy.parent / "runs" / "runs" / "rnn").glob("*.json"))[0]
    value = json.loads(entry.read_text("utf-8"))
    value["value"]["text"] += "tampered"
    entry.write_text(json.dumps(value), "utf-8")
    shutil.rmtree(copy / "build" / "cache" / "pages" / "rnn")
    result = build(copy, env=env)
    assert result.returncode == 0 and "damaged run-cache entry" in result.stderr
    assert "tampered" not in (copy / "site" / "code" / "rnn.ipynb").read_text("utf-8")


def test_two_builds_at_once_leave_a_whole_site(project):
    """Two `python -m generator build` started together: both succeed, the second waits
    for the first, and the site left behind is byte for byte a single build's."""
    copy, env = project
    single = tree_files(copy / "site")
    for group in ("rnn", "gated"):  # both builds now have real work to do (and no script
        shutil.rmtree(copy / "build" / "cache" / "pages" / group)  # that times itself)
    full_env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONDONTWRITEBYTECODE": "1",
                "SOURCE_DATE_EPOCH": EPOCH, **env}
    procs = [subprocess.Popen([sys.executable, "-m", "generator", "build"], cwd=copy,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              env=full_env) for _ in range(2)]
    outs = [p.communicate(timeout=900) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], [err for _, err in outs]
    assert sum("another build is running" in err for _, err in outs) == 1
    assert tree_files(copy / "site") == single
    assert [p.name for p in copy.iterdir() if p.name.startswith(".site.")] == []


def test_plain_mkdocs_build_gives_the_same_site(project):
    """A MkDocs user's habit: `mkdocs build` alone builds what `make build` builds."""
    copy, env = project
    made = tree_files(copy / "site")
    shutil.rmtree(copy / "site")
    mkdocs = os.path.join(os.path.dirname(sys.executable), "mkdocs")
    result = subprocess.run([mkdocs, "build"], cwd=copy, capture_output=True, text=True,
                            timeout=900, env={**os.environ, "NO_MKDOCS_2_WARNING": "1",
                                              "SOURCE_DATE_EPOCH": EPOCH, **env})
    assert result.returncode == 0, result.stderr
    assert tree_files(copy / "site") == made


def test_a_fresh_run_and_a_cached_one_are_alike_to_the_order_of_their_keys(tmp_path):
    """The run cache stores JSON with its keys sorted. A run computed now must come back in
    that same order, or what is written from it (a served record such as gru-trained.json,
    whose keys were once in the dataclass's order when fresh and sorted when cached)
    differs between a cold build and a warm one."""
    from generator import contract, runs
    from generator.cache import RunCache

    module = contract.load_script("gated.py")
    cache = RunCache(tmp_path / "cache")
    fresh = runs.run_command(module, "gated.py", ("--step",), (), cache)
    cached = runs.run_command(module, "gated.py", ("--step",), (), cache)
    assert list((tmp_path / "cache" / "runs" / "gated").glob("*.json")), "nothing was cached"
    as_written = [json.dumps(run.records.plain()) for run in (fresh, cached)]  # order kept
    assert as_written[0] == as_written[1]
    assert list(fresh.tables) == list(cached.tables)
    record = fresh.records.plain()["step"]
    assert list(record) == sorted(record)  # the dataclass's order would not be sorted
