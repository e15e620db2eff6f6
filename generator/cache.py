"""The two caches, both content-addressed and both checked on every read.

The run cache holds what the scripts printed and returned for one command
(``python3 gru.py --compare``): its text, its tables and its records. Its key
is the script's bytes, its data files' bytes, the command's flags and the
Python and numpy versions, nothing else; so a fresh clone, a new folder or a
`make clean` reuse a training run whose inputs have not changed, and the
measured times it printed stay the same from build to build. It lives outside
the checkout: ``$RNN_EXPLAINER_CACHE``, else ``~/.cache/rnn-explainer``.

The page cache (``build/cache``) holds what one chapter's worker produced:
markdown fragments and files (plots, the notebook, the code page). An entry
records the hash of every file the worker read (the script, its data, the
generator modules it imported) and is used only while all of them are
unchanged; several entries are kept per chapter, so editing a file and
reverting it finds the old entry again.

Every entry carries the sha256 of its content. A damaged entry (truncated,
edited, unreadable) is reported in one line, deleted and recomputed: it is
never published. Writes go to a unique temporary name and are renamed into
place, so two builds at once never see each other's half-written entries.
"""

import hashlib
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

from .chapter import ROOT, GeneratorError, log

FORMAT = "2"  # bump to invalidate every entry
KEEP_PER_GROUP = 8  # page-cache entries kept per chapter
KEEP_RUNS = 64  # run-cache entries kept per script


def run_cache_dir():
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rnn-explainer"
    return Path(os.environ.get("RNN_EXPLAINER_CACHE") or default)


def page_cache_dir():
    return ROOT / "build" / "cache"


def check_usable(folder, what, setting):
    """A cache folder exists (or can be made) and can be written; else say so, now."""
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise GeneratorError(f"the {what} {folder} is not a directory: remove it, or {setting}")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        probe = tempfile.NamedTemporaryFile(dir=folder, prefix=".probe-", delete=True)
        probe.close()
    except OSError as exc:
        raise GeneratorError(f"the {what} {folder} cannot be written ({exc.strerror or exc}): "
                             f"fix its permissions, or {setting}") from None


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def digest(value):
    """sha256 of a JSON-able value, canonically encoded."""
    return sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8"))


def warn(message):
    log(f"generator: warning: {message}")


def _write_json(path, value):
    path.write_text(json.dumps(value, sort_keys=True, ensure_ascii=False), "utf-8")


def _publish(tmp, final):
    """Rename a finished temporary file or folder into place; if another build got
    there first with the same key, keep theirs (same content by construction)."""
    try:
        if tmp.is_file():
            os.replace(tmp, final)
        else:
            os.rename(tmp, final)
    except OSError:
        if not final.exists():
            raise
    finally:
        if tmp.is_dir():
            shutil.rmtree(tmp, ignore_errors=True)


def _remove(path):
    """Delete a file, or a folder where a file should be (a damaged entry of either kind)."""
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _prune(entries, keep):
    """Delete all but the `keep` most recently used entries."""
    def mtime(p):
        try:
            return p.stat().st_mtime
        except OSError:
            return 0
    for old in sorted(entries, key=mtime, reverse=True)[keep:]:
        _remove(old)


def _alive(name):
    """Whether the build that made the temporary folder .tmp-<pid>-... still runs (true for
    a name without a pid: then its age decides)."""
    pid = name.split("-")[1] if name.count("-") >= 2 else ""
    if not pid.isdigit():
        return True
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        pass
    return True


class RunCache:
    """What one command of one script printed and returned, by content key."""

    def __init__(self, folder=None):
        self.folder = Path(folder or run_cache_dir())

    def _path(self, script, key):
        return self.folder / "runs" / Path(script).stem / f"{key}.json"

    def load(self, script, key):
        path = self._path(script, key)
        if not path.exists():
            return None
        try:
            entry = json.loads(path.read_text("utf-8"))
            value = entry["value"]
            ok = entry["format"] == FORMAT and entry["sha256"] == digest(value)
        except (OSError, ValueError, KeyError, TypeError):
            ok = False
        if not ok:
            warn(f"damaged run-cache entry {path}: recomputing it")
            _remove(path)
            return None
        os.utime(path)  # recently used: pruned last
        return value

    def store(self, script, key, value):
        path = self._path(script, key)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=path.parent)
        os.close(fd)
        _write_json(Path(tmp), {"format": FORMAT, "sha256": digest(value), "value": value})
        if path.is_dir():  # not an entry: it would keep this one out, build after build
            _remove(path)
        _publish(Path(tmp), path)
        _prune(list(path.parent.glob("*.json")), KEEP_RUNS)


class FileHashes:
    """sha256 of files under the repository, read once per build."""

    def __init__(self):
        self._seen = {}

    def __call__(self, rel):
        if rel not in self._seen:
            try:
                self._seen[rel] = sha256((ROOT / rel).read_bytes())
            except OSError:
                self._seen[rel] = None  # gone: no entry that read it matches
        return self._seen[rel]


def job_key(job):
    """The job as the page cache compares it: without the markers' line numbers, which
    only say where an error is (a failed job is never stored), so that prose added above
    a marker does not recompute the chapter."""
    return {**job, "markers": [{k: v for k, v in m.items() if k != "line"}
                               for m in job.get("markers", ())]}


class PageCache:
    """One chapter's worker output: fragments and files, valid while its inputs are."""

    def __init__(self, folder=None):
        self.folder = Path(folder or page_cache_dir())

    def _group(self, group):
        return self.folder / "pages" / group

    def find(self, group, job, hashes):
        """The newest valid entry for this job whose every input is unchanged, or None.
        Returns (manifest, folder of its files)."""
        folder = self._group(group)
        if not folder.is_dir():
            return None
        entries = sorted((p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")),
                         key=lambda p: p.stat().st_mtime, reverse=True)
        for entry in entries:
            manifest = self._manifest(entry)
            if manifest is None:
                continue
            if manifest["job"] != job_key(job):
                continue
            if any(hashes(rel) != sha for rel, sha in manifest["deps"].items()):
                continue
            if not self._files_intact(entry, manifest):
                continue
            os.utime(entry)
            return manifest, entry / "files"
        return None

    def _manifest(self, entry):
        try:
            manifest = json.loads((entry / "manifest.json").read_text("utf-8"))
            body = {k: manifest[k] for k in ("job", "deps", "fragments", "files", "seconds")}
            if manifest["format"] != FORMAT or manifest["sha256"] != digest(body):
                raise ValueError("checksum")
            return manifest
        except (OSError, ValueError, KeyError, TypeError):
            warn(f"damaged page-cache entry {entry}: recomputing it")
            shutil.rmtree(entry, ignore_errors=True)
            return None

    def _files_intact(self, entry, manifest):
        for rel, sha in manifest["files"].items():
            try:
                ok = sha256((entry / "files" / rel).read_bytes()) == sha
            except OSError:
                ok = False
            if not ok:
                warn(f"damaged page-cache entry {entry} ({rel} does not match its checksum): "
                     "recomputing it")
                shutil.rmtree(entry, ignore_errors=True)
                return False
        return True

    def new_folder(self, group):
        """A fresh temporary folder for a worker to write its files into, named after the
        build that made it; the leftovers of builds that are gone (SIGKILL) removed, and
        any over an hour old."""
        folder = self._group(group)
        folder.mkdir(parents=True, exist_ok=True)
        for old in folder.glob(".tmp-*"):
            try:
                if not _alive(old.name) or old.stat().st_mtime < time.time() - 3600:
                    shutil.rmtree(old, ignore_errors=True)
            except OSError:
                pass
        return Path(tempfile.mkdtemp(prefix=f".tmp-{os.getpid()}-", dir=folder))

    def store(self, group, tmp, job, deps, fragments, files, seconds):
        """Publish a worker's output (its files already in tmp/files/) as an entry."""
        body = {"job": job_key(job), "deps": deps, "fragments": fragments, "files": files,
                "seconds": seconds}
        _write_json(tmp / "manifest.json", {"format": FORMAT, "sha256": digest(body), **body})
        final = self._group(group) / digest(body)[:20]
        _publish(tmp, final)
        os.utime(final, (time.time(), time.time()))
        _prune([p for p in self._group(group).iterdir()
                if p.is_dir() and not p.name.startswith(".")], KEEP_PER_GROUP)
        return final / "files"

    def last_seconds(self, group):
        """How long the newest entry of this chapter took to compute (for scheduling)."""
        folder = self._group(group)
        best = None
        for entry in folder.glob("*/manifest.json") if folder.is_dir() else ():
            try:
                m = json.loads(entry.read_text("utf-8"))
                if best is None or entry.stat().st_mtime > best[0]:
                    best = (entry.stat().st_mtime, float(m["seconds"]))
            except (OSError, ValueError, KeyError):
                continue
        return best[1] if best else None
