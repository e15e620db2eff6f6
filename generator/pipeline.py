"""The generator inside MkDocs: what the hook (hook.py) does at each build.

on_config   check both caches can be used (before any expensive work), load the
            chapter registry, add the Code section to the navigation and check
            that every chapter's page is in it.
on_files    read every page's markers and check them; group them by script;
            for each script take its content from the page cache, or compute it
            in a fresh worker process (two at a time, the longest first); hand
            the generated files (plots, code pages, notebooks) to MkDocs.
on_page_markdown
            put each marker's fragment into its page.

Nothing is written into docs/: generated files enter the build through
File.generated, as mkdocs-gen-files does, so `mkdocs build` and `mkdocs serve`
work on a fresh clone.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from . import chapter as registry
from . import markers as marker_syntax
from . import runs
from .cache import FileHashes, PageCache, check_usable, page_cache_dir, run_cache_dir
from .chapter import CODE, ROOT, GeneratorError, log

RUN_CACHE_SETTING = "set RNN_EXPLAINER_CACHE to a folder that can be written"
PAGE_CACHE_SETTING = "remove build/cache and build again"
TIMEOUT_SETTING = "RNN_EXPLAINER_WORKER_TIMEOUT"  # seconds one script's pages may take
TIMEOUT = 1800  # a fresh clone's slowest worker (chapter 14's, every model trained) takes ~200


class Pipeline:
    def __init__(self, command):
        self.command = command  # build, serve or gh-deploy
        self.chapters = []
        self.colab = {}
        self.fragments = {}  # page -> {marker key: markdown}

    # -- on_config ---------------------------------------------------------------

    def on_config(self, config):
        check_usable(run_cache_dir(), "run cache", RUN_CACHE_SETTING)
        check_usable(page_cache_dir(), "page cache", PAGE_CACHE_SETTING)
        self.timeout = worker_timeout()
        self.chapters = registry.chapters()
        if not config.use_directory_urls:
            raise GeneratorError("mkdocs.yml: use_directory_urls must be true: the figures' "
                                 "raw HTML links are written for directory URLs")
        colab = (config.extra or {}).get("colab") or {}
        if "repository" not in colab:
            raise GeneratorError("mkdocs.yml: extra.colab.repository (owner/name on GitHub) "
                                 "is missing; the Open in Colab links need it")
        if "branch" in colab:
            raise GeneratorError("mkdocs.yml: extra.colab.branch is not a setting: the Colab "
                                 "links name the branch `make deploy` publishes to, remote_branch")
        self.colab = {"repository": colab["repository"], "branch": config.remote_branch}
        # the published address, which `mkdocs serve` replaces by its own in config.site_url
        self.site_url = _configured_site_url(config)
        if config.nav is not None:
            config.nav = self._nav_with_code(config.nav)
        return config

    def _nav_with_code(self, nav):
        """The navigation with a Code section listing every chapter's code page, after
        the chapters. The section is generated: mkdocs.yml does not list it."""
        listed = set()

        def walk(items):
            for item in items:
                value = next(iter(item.values())) if isinstance(item, dict) else item
                if isinstance(value, list):
                    walk(value)
                else:
                    listed.add(value)
        walk(nav)
        for ch in self.chapters:
            if ch.page not in listed:
                raise GeneratorError(
                    f"docs/{ch.page} (generator/chapters/{ch.module}.py) is not in mkdocs.yml's "
                    f"nav: add a line `- \"...\": {ch.page}` under Chapters")
        code = {"Code": [{ch.script: ch.code_page} for ch in self.chapters]}
        nav = [item for item in nav if not (isinstance(item, dict) and "Code" in item)]
        after = next((n + 1 for n, item in enumerate(nav)
                      if isinstance(item, dict) and "Chapters" in item), len(nav))
        return nav[:after] + [code] + nav[after:]

    # -- on_files ----------------------------------------------------------------

    def on_files(self, files, config):
        from mkdocs.structure.files import File

        for ch in self.chapters:  # cheap, and a page-cache hit would skip it in a worker
            runs.check_harness(ch.script, (CODE / ch.script).read_text("utf-8", "replace"))
        pages = self._pages(files)
        found = {}
        for page, text in pages.items():
            found[page] = marker_syntax.parse(page, text)
        scripts = {ch.script: ch for ch in self.chapters}
        by_page = {ch.page: ch for ch in self.chapters}
        for page, markers in found.items():
            marker_syntax.check(markers, by_page.get(page), scripts)
        generated = {ch.code_page for ch in self.chapters} | {ch.notebook for ch in self.chapters}
        for f in files:
            if f.src_uri in generated:
                raise GeneratorError(f"docs/{f.src_uri}: this file is generated (from "
                                     "docs/code/ and the chapter registry); remove it from docs/")
        jobs = {ch.script: self._job(ch, found, pages) for ch in self.chapters}
        results = self._results(jobs)
        self.fragments = {page: {} for page in found}
        for page, markers in found.items():
            for mk in markers:
                owner = mk.script or by_page[page].script
                self.fragments[page][mk.key] = results[owner][0]["fragments"][mk.key]
        for ch in self.chapters:  # in the registry's order, whichever worker finished first
            manifest, folder = results[ch.script]
            for rel in sorted(manifest["files"]):
                files.append(File.generated(config, rel, abs_src_path=str(folder / rel)))
        return files

    def _pages(self, files):
        """{docs-relative path: text} of every page MkDocs will build. A file whose
        name is not UTF-8 is an error; a dangling symlink (an editor's lock file, a
        link to a deleted page) is left out."""
        pages = {}
        for f in list(files):
            if f.generated_by or not f.abs_src_path:
                continue
            try:
                f.src_uri.encode("utf-8")
            except UnicodeEncodeError:
                shown = os.fsencode(f.src_uri).decode("ascii", "backslashreplace")
                raise GeneratorError(f"docs/{shown}: the file name is not UTF-8; rename it") \
                    from None
            if not os.path.exists(f.abs_src_path):
                files.remove(f)
                continue
            if not f.is_documentation_page() or not f.inclusion.is_included():
                continue
            try:
                pages[f.src_uri] = f.content_string
            except UnicodeDecodeError as exc:
                raise GeneratorError(f"docs/{f.src_uri}: not UTF-8 ({exc.reason} at byte "
                                     f"{exc.start})") from None
            except OSError as exc:
                raise GeneratorError(f"docs/{f.src_uri}: cannot read: {exc.strerror}") from None
        return pages

    def _job(self, ch, found, pages):
        """Everything a worker needs for one script, and nothing that does not change
        its output: the job is part of the page cache's key."""
        wanted = {}
        for page, markers in found.items():
            for mk in markers:
                if mk.script == ch.script or (mk.script is None and page == ch.page):
                    wanted.setdefault(mk.key, {
                        "key": mk.key, "page": mk.page, "line": mk.line, "kind": mk.kind,
                        "name": mk.name, "fmt": mk.fmt, "argv": list(mk.argv)})
        title = re.search(r"^#\s+(.+?)\s*$", pages.get(ch.page, ""), re.M)
        page_url = (self.site_url or "/").rstrip("/") + "/" + ch.page[:-3] + "/"  # directory URLs
        return {"script": ch.script, "data": list(ch.data), "chapter": ch.module,
                "markers": sorted(wanted.values(), key=lambda m: m["key"]),
                "title": title.group(1) if title else ch.page, "page_url": page_url,
                "colab": self.colab, "python": list(sys.version_info[:2])}

    def _results(self, jobs):
        """{script: (manifest, folder of its files)}: from the page cache, or computed."""
        cache, hashes = PageCache(), FileHashes()
        results, todo = {}, []
        for script, job in jobs.items():
            group = Path(script).stem
            hit = cache.find(group, job, hashes)
            if hit is not None:
                results[script] = hit
            else:
                todo.append((script, group, job))
        if todo:
            results.update(_run_workers(todo, cache, self.timeout))
        return results

    # -- on_page_markdown --------------------------------------------------------

    def on_page_markdown(self, markdown, page):
        src = page.file.src_uri
        markers = marker_syntax.parse(src, markdown)
        if not markers:
            return markdown
        fragments = self.fragments.get(src, {})
        missing = [mk for mk in markers if mk.key not in fragments]
        if missing:
            raise GeneratorError(f"{missing[0].where}: marker {missing[0].text} was added to "
                                 "the page while it was being built; build again")
        return marker_syntax.substitute(markdown, markers, fragments)


def worker_timeout():
    """How long one script's worker may run (seconds): $RNN_EXPLAINER_WORKER_TIMEOUT, else
    TIMEOUT."""
    text = os.environ.get(TIMEOUT_SETTING, "").strip()
    if not text:
        return TIMEOUT
    try:
        seconds = float(text)
    except ValueError:
        seconds = float("nan")
    if not 0 < seconds < float("inf"):
        raise GeneratorError(f"{TIMEOUT_SETTING}={text!r}: give the seconds one script's pages "
                             f"may take, a number above 0 (unset, it is {TIMEOUT})")
    return seconds


def _configured_site_url(config):
    import yaml

    try:
        with open(config.config_file_path, encoding="utf-8") as f:
            return (yaml.safe_load(f) or {}).get("site_url") or ""
    except (OSError, yaml.YAMLError, TypeError):
        return config.site_url or ""


def _run_workers(todo, cache, timeout, slots=None):
    """Compute the scripts' content in fresh processes, `slots` at a time, the one that
    took longest last time first; store each result in the page cache.

    Each worker holds the read end of a pipe whose write end only this process has: when
    this process ends, however it ends (SIGKILL included), the workers see the pipe close
    and stop, so none runs on unseen. A worker still running says so every minute (every
    quarter of the limit, if that is shorter) and is stopped at `timeout` seconds."""
    slots = slots or max(1, min(len(todo), os.cpu_count() or 1))
    order = sorted(todo, key=lambda t: -(cache.last_seconds(t[1]) or 1e9))
    every = min(60.0, timeout / 4)
    waiting, running, results = list(order), [], {}
    watch, alive = os.pipe()
    try:
        while waiting or running:
            while waiting and len(running) < slots:
                script, group, job = waiting.pop(0)
                tmp = cache.new_folder(group)
                (tmp / "job.json").write_text(json.dumps(job), "utf-8")
                # Ctrl-C and SIGTERM held back while the worker starts: one landing inside
                # Popen would leave a worker nobody stops. The worker starts with them
                # blocked and unblocks them first thing, so one sent meanwhile reaches it then.
                held = {signal.SIGINT, signal.SIGTERM}
                signal.pthread_sigmask(signal.SIG_BLOCK, held)
                try:
                    proc = subprocess.Popen([sys.executable, "-m", "generator.worker",
                                             str(tmp / "job.json"), str(tmp), str(watch)],
                                            cwd=ROOT, pass_fds=(watch,),
                                            env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
                    now = time.monotonic()
                    running.append([proc, script, group, job, tmp, now, now + every])
                finally:
                    signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
                log(f"generator: computing {script}'s pages in a fresh process")
            time.sleep(0.05)
            for entry in list(running):
                proc, script, group, job, tmp, started, next_line = entry
                if proc.poll() is None:
                    _still_running(entry, timeout, every)
                    continue
                running.remove(entry)
                results[script] = _collect(proc, script, group, job, tmp, cache, started)
    except BaseException:
        for proc, *_rest in running:
            proc.terminate()
        for proc, *_rest in running:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            shutil.rmtree(_rest[3], ignore_errors=True)
        raise
    finally:
        os.close(watch)
        os.close(alive)
    return results


def _still_running(entry, timeout, every):
    """Stop a worker at the limit; say now and then that it is still running."""
    proc, script, group, job, tmp, started, next_line = entry
    now = time.monotonic()
    if now - started < timeout and now < next_line:
        return
    try:
        doing = (tmp / "doing").read_text("utf-8").strip()  # what the worker said it does
    except OSError:
        doing = ""
    if now - started >= timeout:
        raise GeneratorError(
            f"docs/code/{script}: its pages took longer than {_duration(timeout)}, the limit "
            f"for one script's pages" + (f", {doing}" if doing else "") + ": stopped. If "
            f"they need longer, set {TIMEOUT_SETTING} to the seconds they may take")
    entry[6] = next_line + every
    log(f"generator: still computing {script}'s pages after {_duration(now - started)}"
        + (f", {doing}" if doing else "") + f"; the limit is {_duration(timeout)} "
        f"({TIMEOUT_SETTING})")


def _duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"


def _collect(proc, script, group, job, tmp, cache, started):
    if proc.returncode == 130:
        raise KeyboardInterrupt
    try:
        result = json.loads((tmp / "result.json").read_text("utf-8"))
    except (OSError, ValueError):
        result = {"error": f"the worker for {script} stopped with status {proc.returncode} "
                           "and no result"}
    if "error" in result:
        shutil.rmtree(tmp, ignore_errors=True)
        raise GeneratorError(result["error"])
    for done in ("job.json", "result.json", "doing"):
        (tmp / done).unlink(missing_ok=True)
    (tmp / "files").mkdir(exist_ok=True)
    folder = cache.store(group, tmp, job, result["deps"], result["fragments"], result["files"],
                         result["seconds"])
    log(f"generator: {script}'s pages computed in {time.monotonic() - started:.1f} s")
    manifest = {"fragments": result["fragments"], "files": result["files"]}
    return manifest, folder

