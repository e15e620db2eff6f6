"""`make deploy` publishes the site to a branch of `origin`, and every Open in Colab link
names a notebook that exists on that branch. Tested against a local bare repository,
in a copy of the project that is a git repository of its own."""

import json
import os
import re
import subprocess
from urllib.parse import unquote, urlsplit

import pytest

from helpers import CHAPTERS, ROOT, EPOCH, copy_project, edit


def git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True,
                          env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                               "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}).stdout


GIT_USER = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t"}


def project_with_origin(tmp_path, branch=None):
    """A copy of the project, a git repository of its own whose `origin` is a bare
    repository; returns (copy, bare repository)."""
    copy = copy_project(tmp_path / "project")
    (copy / ".venv").symlink_to(ROOT / ".venv")  # make's virtualenv, already installed
    if branch:
        edit(copy / "mkdocs.yml", "remote_branch: gh-pages", f"remote_branch: {branch}")
    bare = tmp_path / "origin.git"
    git("init", "--quiet", "--bare", str(bare), cwd=tmp_path)
    git("init", "--quiet", cwd=copy)
    git("add", "docs", "generator", "overrides", "mkdocs.yml", "requirements.txt", "Makefile", cwd=copy)
    git("commit", "--quiet", "-m", "the project", cwd=copy)
    git("remote", "add", "origin", str(bare), cwd=copy)
    return copy, bare


def make_deploy(copy):
    return subprocess.run(["make", "deploy"], cwd=copy, capture_output=True, text=True,
                          timeout=900, env={**os.environ, "SOURCE_DATE_EPOCH": EPOCH, **GIT_USER})


def deploy(tmp_path, branch=None):
    """`make deploy` in a copy whose origin is a bare repository; (bare repository, branch)."""
    copy, bare = project_with_origin(tmp_path, branch)
    result = make_deploy(copy)
    assert result.returncode == 0, result.stdout + result.stderr
    return bare, branch or "gh-pages"


def published(bare, branch):
    return set(git("ls-tree", "-r", "--name-only", branch, cwd=bare).split())


def show(bare, branch, path):
    return git("show", f"{branch}:{path}", cwd=bare)


@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    return deploy(tmp_path_factory.mktemp("deploy"))


def test_the_branch_holds_pages_scripts_notebooks_and_nojekyll(deployed):
    bare, branch = deployed
    files = published(bare, branch)
    assert ".nojekyll" in files and "index.html" in files and "404.html" in files
    for ch in CHAPTERS:
        stem = ch.page[:-3]
        assert f"{stem}/index.html" in files
        assert f"code/{ch.script}" in files and ch.notebook in files
        assert f"code/{ch.stem}/index.html" in files
        for data in ch.data:
            assert f"code/{data}" in files
        assert show(bare, branch, f"code/{ch.script}") == \
            (ROOT / "docs" / "code" / ch.script).read_text("utf-8")


def test_the_search_index_has_entries(deployed):
    bare, branch = deployed
    index = json.loads(show(bare, branch, "search/search_index.json"))
    locations = {doc["location"].split("#")[0] for doc in index["docs"]}
    assert len(index["docs"]) > 50
    for ch in CHAPTERS:
        assert ch.page[:-3] + "/" in locations


def colab_links(bare, branch):
    links = []
    for path in sorted(p for p in published(bare, branch) if p.endswith(".html")):
        html = show(bare, branch, path)
        links += [(path, url) for url in
                  re.findall(r'href="(https://colab\.research\.google\.com/[^"]+)"', html)]
    return links


def check_colab(bare, branch):
    files = published(bare, branch)
    links = colab_links(bare, branch)
    assert len({url for _, url in links}) == len(CHAPTERS)
    for page, url in links:
        m = re.fullmatch(r"/github/([^/]+/[^/]+)/blob/([^/]+)/(.+)", unquote(urlsplit(url).path))
        assert m, url
        assert m.group(2) == branch, f"{page}: {url} names branch {m.group(2)}, not {branch}"
        assert m.group(3) in files, f"{page}: {url} names {m.group(3)}, not on {branch}"


def test_every_colab_link_names_a_notebook_on_the_published_branch(deployed):
    check_colab(*deployed)


def test_the_colab_links_follow_remote_branch(tmp_path):
    """Publishing to another branch moves the links with it: one setting, remote_branch."""
    bare, branch = deploy(tmp_path, branch="site-pages")
    check_colab(bare, branch)


def branch_sha(repository, branch="gh-pages"):
    result = subprocess.run(["git", "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"],
                            cwd=repository, capture_output=True, text=True)
    return result.stdout.strip() or None


def test_a_push_the_remote_rejects_is_one_line_and_leaves_the_local_branch(tmp_path):
    """The remote refuses (a pre-receive hook here; a protected branch or no rights on
    GitHub): one line saying so, no traceback, and no commit left on the local branch,
    whether the branch did not exist yet or was published before."""
    copy, bare = project_with_origin(tmp_path)
    hook = bare / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'pushes are closed today' >&2\nexit 1\n")
    hook.chmod(0o755)
    said = ("generator: error: publishing to origin's gh-pages failed: ! [remote rejected] "
            "gh-pages -> gh-pages (pre-receive hook declined); nothing was published, and the "
            "local branch gh-pages is as it was")
    result = make_deploy(copy)
    assert result.returncode != 0
    assert "Traceback" not in result.stdout + result.stderr, result.stderr
    assert [line for line in result.stderr.splitlines() if "error" in line.lower()
            and not re.match(r"make(\[\d+\])?:", line)] == [said], result.stderr  # make's own
    assert branch_sha(copy) is None and branch_sha(bare) is None

    hook.unlink()
    assert make_deploy(copy).returncode == 0
    published = branch_sha(copy)
    assert published and branch_sha(bare) == published

    hook.write_text("#!/bin/sh\nexit 1\n")
    hook.chmod(0o755)
    edit(copy / "docs" / "conventions.md", "# GRU conventions, side by side",
         "# GRU conventions, compared")
    result = make_deploy(copy)
    assert result.returncode != 0 and said in result.stderr, result.stderr
    assert branch_sha(copy) == published and branch_sha(bare) == published
