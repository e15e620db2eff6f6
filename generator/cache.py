"""The caches: a page's generated output, and the measurements behind it.

The build cache (build/cache) holds each page's output, keyed by a hash of
everything it reads.

A page's key covers its generator module, the shared generator modules, its
script, its further inputs (the corpus), the pinned requirements and, where
the page reads them, the site settings. Nothing changed: the stored fragments
and files are reused and no numpy or matplotlib is even imported. Entries are
written to a temporary folder and renamed into place, so an interrupted build
never leaves a half-written entry behind.

The measurement cache (~/.cache/rnn-explainer, or $RNN_EXPLAINER_CACHE) holds
what cannot be recomputed to the same bytes: training runs and executed
notebooks, whose outputs include measured times. It is keyed by content (the
script, the corpus, the configuration, the pinned versions), not by folder, so
two clean builds of one commit on one machine show the same measurements and
give the same bytes; an empty cache measures afresh.
"""

import hashlib
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from .registry import DOCS, GENERATOR, PAGE_MODULES, ROOT, GeneratorError

CACHE_FORMAT = "1"  # bump to invalidate every entry


def measurement_cache_dir():
    default = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "rnn-explainer"
    return Path(os.environ.get("RNN_EXPLAINER_CACHE") or default)


def environment_parts():
    """What every cached result depends on besides its own inputs."""
    return [("format", CACHE_FORMAT.encode()),
            ("python", f"{sys.version_info[0]}.{sys.version_info[1]}".encode()),
            ("requirements", (ROOT / "requirements.txt").read_bytes())]


def digest(parts):
    """sha256 over a sequence of (label, bytes) pairs."""
    h = hashlib.sha256()
    for label, data in parts:
        h.update(label.encode() + b"\0" + len(data).to_bytes(8, "big") + data)
    return h.hexdigest()


def page_key(page, config_text):
    parts = environment_parts()
    # The shared modules (every .py that feeds no page of its own) and the page's own.
    shared = [p.name for p in sorted(GENERATOR.glob("*.py")) if p.stem not in PAGE_MODULES]
    for name in shared + [f"{page.module}.py"]:
        parts.append((f"generator/{name}", (GENERATOR / name).read_bytes()))
    for rel in ((page.script,) if page.script else ()) + tuple(page.inputs):
        try:
            parts.append((f"docs/{rel}", (DOCS / rel).read_bytes()))
        except OSError as exc:
            raise GeneratorError(f"docs/{rel}: cannot read: {exc.strerror or exc} "
                                 f"(generator/{page.module}.py needs it)") from exc
    if page.uses_config:
        parts.append(("config", config_text.encode()))
    return digest(parts)


class Cache:
    def __init__(self, folder):
        self.folder = Path(folder)

    def _entry(self, kind, name, key):
        return self.folder / kind / f"{name}-{key[:20]}"

    def load_page(self, module, key):
        """(fragments, files) stored under this key, or None."""
        entry = self._entry("pages", module, key)
        try:
            fragments = json.loads((entry / "fragments.json").read_text("utf-8"))
            files = {rel: (entry / "files" / rel).read_bytes()
                     for rel in json.loads((entry / "files.json").read_text("utf-8"))}
        except (OSError, ValueError):
            return None
        return fragments, files

    def store_page(self, module, key, fragments, files):
        def write(tmp):
            (tmp / "fragments.json").write_text(json.dumps(fragments, sort_keys=True), "utf-8")
            (tmp / "files.json").write_text(json.dumps(sorted(files)), "utf-8")
            for rel, data in files.items():
                target = tmp / "files" / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
        self._store(self._entry("pages", module, key), write)

    def load_json(self, kind, name, key):
        try:
            return json.loads((self._entry(kind, name, key) / "value.json").read_text("utf-8"))
        except (OSError, ValueError):
            return None

    def store_json(self, kind, name, key, value):
        self._store(self._entry(kind, name, key),
                    lambda tmp: (tmp / "value.json").write_text(json.dumps(value), "utf-8"))

    def load_bytes(self, kind, name, key):
        try:
            return (self._entry(kind, name, key) / "value.bin").read_bytes()
        except OSError:
            return None

    def store_bytes(self, kind, name, key, data):
        self._store(self._entry(kind, name, key),
                    lambda tmp: (tmp / "value.bin").write_bytes(data))

    def memo_json(self, kind, name, parts, compute):
        """compute() once per content key; a JSON-safe value."""
        key = digest(environment_parts() + list(parts))
        value = self.load_json(kind, name, key)
        if value is None:
            value = compute()
            self.store_json(kind, name, key, value)
        return value

    def _store(self, entry, write):
        """Write into a fresh folder, then rename it into place; drop older entries."""
        entry.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=".tmp-", dir=entry.parent))
        try:
            write(tmp)
            if entry.exists():
                shutil.rmtree(entry)
            os.replace(tmp, entry)
        finally:
            if tmp.exists():
                shutil.rmtree(tmp)
        stem = entry.name.rsplit("-", 1)[0]
        for old in entry.parent.glob(f"{stem}-*"):
            if old != entry and old.name.rsplit("-", 1)[0] == stem:
                shutil.rmtree(old, ignore_errors=True)
