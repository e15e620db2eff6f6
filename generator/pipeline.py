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
from dataclasses import dataclass
from pathlib import Path

from . import chapter as registry
from . import markers as marker_syntax
from . import contract, runs
from .cache import FileHashes, PageCache, check_usable, page_cache_dir, run_cache_dir
from .chapter import CODE, ROOT, GeneratorError, log
from .site import Site

RUN_CACHE_SETTING = "set RNN_EXPLAINER_CACHE to a folder that can be written"
PAGE_CACHE_SETTING = "remove build/cache and build again"
TIMEOUT_SETTING = "RNN_EXPLAINER_WORKER_TIMEOUT"  # seconds one script's pages may take
TIMEOUT = 1800  # a fresh clone's slowest worker (chapter 14's, every model trained) takes ~200


class Pipeline:
    def __init__(self, command):
        self.command = command  # build, serve or gh-deploy
        self.chapters = []
        self.colab = {}
        self.fragments = {}  # page -> {marker key: markdown}, the chapters' markers
        self.site = None  # site.Site: the site's own markers (the registry's lists)

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
            contract.check_harness(ch.script, (CODE / ch.script).read_text("utf-8", "replace"))
        pages = self._pages(files)
        # The site's markers first: they are checked in a moment, the chapters' take workers.
        self.site = Site(self.chapters, self.colab, pages)
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
                "blas": runs.blas_kernel(),
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
        markdown = self.site.fill(src, markdown)
        return marker_syntax.fill(src, markdown, self.fragments.get(src, {}))


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


@dataclass
class Worker:
    """One script's pages being computed in a fresh process (`python -m generator.worker`),
    in the page cache's new folder `tmp`."""
    proc: subprocess.Popen
    script: str
    group: str
    job: dict
    tmp: Path
    started: float
    next_line: float  # when to say next that it is still running

    @classmethod
    def start(cls, script, group, job, cache, watch, every):
        tmp = cache.new_folder(group)
        (tmp / "job.json").write_text(json.dumps(job), "utf-8")
        # Ctrl-C and SIGTERM held back while the worker starts: one landing inside Popen
        # would leave a worker nobody stops. The worker starts with them blocked and
        # unblocks them first thing, so one sent meanwhile reaches it then.
        held = {signal.SIGINT, signal.SIGTERM}
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            proc = subprocess.Popen([sys.executable, "-m", "generator.worker",
                                     str(tmp / "job.json"), str(tmp), str(watch)],
                                    cwd=ROOT, pass_fds=(watch,),
                                    env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
            now = time.monotonic()
            return cls(proc, script, group, job, tmp, now, now + every)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)

    def check_time(self, timeout, every):
        """Stop at the limit; say now and then that it is still running."""
        now = time.monotonic()
        if now - self.started < timeout and now < self.next_line:
            return
        try:
            doing = (self.tmp / "doing").read_text("utf-8").strip()  # what it said it does
        except OSError:
            doing = ""
        if now - self.started >= timeout:
            raise GeneratorError(
                f"docs/code/{self.script}: its pages took longer than {_duration(timeout)}, "
                f"the limit for one script's pages" + (f", {doing}" if doing else "") +
                f": stopped. If they need longer, set {TIMEOUT_SETTING} to the seconds they "
                "may take")
        self.next_line += every
        log(f"generator: still computing {self.script}'s pages after "
            f"{_duration(now - self.started)}" + (f", {doing}" if doing else "") +
            f"; the limit is {_duration(timeout)} ({TIMEOUT_SETTING})")

    def stop(self):
        self.proc.terminate()

    def reap(self):
        """Wait for a stopped worker (killing it after 10 s) and remove its folder."""
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.tmp, ignore_errors=True)

    def collect(self, cache):
        """The finished worker's (manifest, folder), stored in the page cache."""
        if self.proc.returncode == 130:
            raise KeyboardInterrupt
        try:
            result = json.loads((self.tmp / "result.json").read_text("utf-8"))
        except (OSError, ValueError):
            result = {"error": f"the worker for {self.script} stopped with status "
                               f"{self.proc.returncode} and no result"}
        if "error" in result:
            shutil.rmtree(self.tmp, ignore_errors=True)
            raise GeneratorError(result["error"])
        for done in ("job.json", "result.json", "doing"):
            (self.tmp / done).unlink(missing_ok=True)
        (self.tmp / "files").mkdir(exist_ok=True)
        folder = cache.store(self.group, self.tmp, self.job, result["deps"],
                             result["fragments"], result["files"], result["seconds"])
        log(f"generator: {self.script}'s pages computed in "
            f"{time.monotonic() - self.started:.1f} s")
        return {"fragments": result["fragments"], "files": result["files"]}, folder


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
                running.append(Worker.start(script, group, job, cache, watch, every))
                log(f"generator: computing {script}'s pages in a fresh process")
            time.sleep(0.05)
            for worker in list(running):
                if worker.proc.poll() is None:
                    worker.check_time(timeout, every)
                    continue
                running.remove(worker)
                results[worker.script] = worker.collect(cache)
    except BaseException:
        for worker in running:
            worker.stop()
        for worker in running:
            worker.reap()
        raise
    finally:
        os.close(watch)
        os.close(alive)
    return results


def _duration(seconds):
    return f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"

