"""Assemble the docs tree and build the site, all or nothing.

generate(): copy docs/ into a temporary folder, replace every marker with its
producer's output (from the cache when nothing it reads has changed), write
the generated files beside the pages, then swap the folder into build/docs.

build_site(): run MkDocs in strict mode on build/docs into a temporary folder
and swap it into site/. A failure at any point leaves the previous build/docs
and site/ as they were.
"""

import logging
import os
import shutil
import time
from pathlib import Path

from .cache import Cache, measurement_cache_dir, page_key
from .markers import check_markers, find_markers, substitute
from .registry import DOCS, ROOT, GeneratorError, load_pages

BUILD = ROOT / "build"
CONFIG = ROOT / "mkdocs.yml"


def read_config():
    """(text of mkdocs.yml, its `extra` mapping plus site_url); plain YAML on purpose."""
    import yaml

    try:
        text = CONFIG.read_text("utf-8")
        loaded = yaml.safe_load(text) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise GeneratorError(f"mkdocs.yml: cannot read: {exc}") from exc
    return text, {**(loaded.get("extra") or {}), "site_url": loaded.get("site_url", "")}


def compute_page(page, config, measurements):
    """Run every producer of a page: ({producer: markdown}, {docs path: bytes})."""
    from .context import Context

    ctx = Context(page, config, measurements)
    fragments = {}
    for name, producer in page.producers.items():
        where = f"generator/{page.module}.py: producer {name}"
        try:
            out = producer.func(ctx)
        except GeneratorError:
            raise
        except ImportError as exc:
            raise GeneratorError(
                f"{where} needs the Python package {exc.name or exc}, which is not installed: "
                "make build installs the pinned requirements into .venv") from exc
        except Exception as exc:
            raise GeneratorError(f"{where} failed: {type(exc).__name__}: {exc}") from exc
        if not isinstance(out, str) or not out.strip():
            raise GeneratorError(f"{where} returned no text")
        if producer.kind == "inline" and "\n" in out:
            raise GeneratorError(f"{where} is inline but returned several lines")
        fragments[name] = out
    return fragments, ctx.files


def _read_page(path, rel):
    try:
        return path.read_text("utf-8")
    except UnicodeDecodeError as exc:
        raise GeneratorError(f"docs/{rel}: not UTF-8 ({exc.reason} at byte {exc.start})") from exc


def swap_into(tmp, target):
    """Replace the folder target by tmp, keeping target intact until tmp is complete."""
    target = Path(target)
    old = target.with_name(target.name + ".old")
    if old.exists():
        shutil.rmtree(old)
    if target.exists():
        os.replace(target, old)
    os.replace(tmp, target)
    if old.exists():
        shutil.rmtree(old)


def generate(out=BUILD / "docs", cache_dir=BUILD / "cache", log=print):
    """Write the complete docs tree to `out`. Returns the number of pages recomputed."""
    started = time.perf_counter()
    config_text, config = read_config()
    pages = load_pages()
    by_source = {p.source: p for p in pages.values()}
    for page in pages.values():
        if not (DOCS / page.source).is_file():
            raise GeneratorError(f"generator/{page.module}.py feeds docs/{page.source}, "
                                 "which does not exist")
    cache = Cache(cache_dir)
    measurements = Cache(measurement_cache_dir())
    out = Path(out)
    tmp = out.with_name(out.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    out.parent.mkdir(parents=True, exist_ok=True)
    recomputed = 0
    try:
        shutil.copytree(DOCS, tmp, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        # Check every marker of every page first: a typo fails in a second, not after training.
        plans = []
        for path in sorted(DOCS.rglob("*.md")):
            rel = path.relative_to(DOCS).as_posix()
            text = _read_page(path, rel)
            markers = find_markers(text, f"docs/{rel}")
            page = by_source.get(rel)
            check_markers(markers, f"docs/{rel}", page)
            plans.append((rel, text, markers, page))
        for rel, text, markers, page in plans:
            if page is None:
                continue
            key = page_key(page, config_text)
            stored = cache.load_page(page.module, key)
            if stored is None:
                t0 = time.perf_counter()
                stored = compute_page(page, config, measurements)
                cache.store_page(page.module, key, *stored)
                recomputed += 1
                log(f"generator: {rel:<22} computed in {time.perf_counter() - t0:6.1f} s")
            fragments, files = stored
            for file_rel, data in files.items():
                target = tmp / file_rel
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(data)
            (tmp / rel).write_text(substitute(text, markers, fragments), "utf-8")
        swap_into(tmp, out)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp)
    if recomputed:
        log(f"generator: {recomputed} page(s) recomputed, {len(pages) - recomputed} from the "
            f"cache, in {time.perf_counter() - started:.1f} s")
    return recomputed


class _Collect(logging.Handler):
    """Keep MkDocs' warnings so a failed strict build can say what failed."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def build_all(site=ROOT / "site", log=print):
    """The docs tree and the site, both or neither: the tree is staged beside build/docs,
    MkDocs builds the staged tree, and only then do both folders swap into place."""
    staged = BUILD / "docs.staged"
    try:
        generate(out=staged, log=log)
        build_site(site, docs_dir=staged)
        swap_into(staged, BUILD / "docs")
    finally:
        if staged.exists():
            shutil.rmtree(staged)


def build_site(site=ROOT / "site", docs_dir=None):
    """mkdocs build --strict into a temporary folder, then swapped into site/."""
    os.environ.setdefault("NO_MKDOCS_2_WARNING", "1")  # Material 9.8's end-of-life banner
    from mkdocs import config as mkconfig
    from mkdocs.commands import build as mkbuild
    from mkdocs.exceptions import MkDocsException

    site = Path(site)
    tmp = site.with_name(site.name + ".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    collect = _Collect()
    mk_logger = logging.getLogger("mkdocs")
    mk_logger.addHandler(collect)
    try:
        try:
            overrides = {"docs_dir": str(docs_dir)} if docs_dir else {}
            cfg = mkconfig.load_config(config_file=str(CONFIG), strict=True, site_dir=str(tmp),
                                       **overrides)
            cfg.plugins.on_startup(command="build", dirty=False)
            try:
                mkbuild.build(cfg)
            finally:
                cfg.plugins.on_shutdown()
        except (MkDocsException, SystemExit) as exc:
            details = "; ".join(collect.messages[-5:]) or str(exc)
            raise GeneratorError(f"mkdocs build --strict failed: {details}") from exc
        swap_into(tmp, site)
    finally:
        mk_logger.removeHandler(collect)
        if tmp.exists():
            shutil.rmtree(tmp)
