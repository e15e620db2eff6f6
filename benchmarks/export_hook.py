"""A MkDocs hook for benchmarks/build.py alone: the docs tree the generator hands MkDocs.

Listed right after generator/hook.py (in a copy of mkdocs.yml the benchmark writes),
it writes to $BENCH_EXPORT every page as MkDocs receives it, markers filled, and
every other file of docs/ or of the page cache (plots, notebooks, scripts). MkDocs
alone on that tree, without the generator hook, is the floor a warm build is
compared with: the same pages, the same theme and math hooks, no generator.
"""

import os
import shutil
from pathlib import Path


def _target(rel):
    path = Path(os.environ["BENCH_EXPORT"]) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


def on_files(files, config):
    ours = (config.docs_dir, str(Path(config.config_file_path).parent / "build" / "cache"))
    for f in files:
        if (not f.is_documentation_page() and f.inclusion.is_included()
                and f.abs_src_path and f.abs_src_path.startswith(ours)):
            shutil.copyfile(f.abs_src_path, _target(f.src_uri))
    return files


def on_page_markdown(markdown, page, config, files):
    _target(page.file.src_uri).write_text(markdown, "utf-8")
    return markdown
