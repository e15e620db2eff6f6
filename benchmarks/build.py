"""Build timings, side by side in one run: cold, one chapter, warm, and a bare MkDocs build.

    .venv/bin/python benchmarks/build.py [--repeat 5] [--cold-runs]

cold      a copy of the project with no page cache: every chapter's worker runs
          (the scripts' runs come from the run cache unless --cold-runs empties
          that too, which retrains every model: minutes). Reports wall time and
          CPU time, whose ratio says how many cores the build kept busy.
chapter   one chapter module edited (a comment): that chapter's worker runs again.
warm      `make build` with nothing changed.
mkdocs    `mkdocs build` with nothing changed (the hook, without make's lock and swap).
bare      MkDocs alone (no generator hook) on the generated tree, exported once by
          benchmarks/export_hook.py listed after the generator's hook: the same
          pages and files, the floor a warm build is compared with.

Warm, mkdocs and bare runs take turns, so machine noise hits all alike; the
figures are medians of wall time and of CPU time (the steadier on a shared
machine); the ratio warm / bare has a goal of at most 1.2.
"""

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = ROOT / ".venv" / "bin"
ENV = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONDONTWRITEBYTECODE": "1"}
SOURCES = ("docs", "generator", "overrides", "mkdocs.yml", "requirements.txt", "Makefile")


def timed(cmd, cwd, env=ENV):
    """(wall seconds, CPU seconds of the command and its children)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    result = subprocess.run([str(c) for c in cmd], cwd=cwd, env=env, capture_output=True,
                            text=True)
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.returncode != 0:
        sys.exit(f"benchmark: `{' '.join(map(str, cmd))}` failed:\n{result.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def copy(dest):
    dest.mkdir(parents=True)
    for name in SOURCES:
        src = ROOT / name
        (shutil.copytree if src.is_dir() else shutil.copy2)(src, dest / name)
    (dest / ".venv").symlink_to(ROOT / ".venv")
    return dest


def export_config(project):
    """mkdocs.yml with benchmarks/export_hook.py right after the generator's hook."""
    text = (project / "mkdocs.yml").read_text("utf-8")
    line = next(line for line in text.splitlines() if line.startswith("  - generator/hook.py"))
    hook = ROOT / "benchmarks" / "export_hook.py"
    path = project / "mkdocs-export.yml"
    path.write_text(text.replace(line, f"{line}\n  - {hook}", 1), "utf-8")
    return path


def bare_config(project, exported):
    """mkdocs.yml for the exported tree, without the generator hook."""
    text = (project / "mkdocs.yml").read_text("utf-8")
    text = text.replace("docs_dir: docs", f"docs_dir: {exported}")
    text = "\n".join(line for line in text.splitlines() if "generator/hook.py" not in line)
    code = "".join(f"      - {page.stem}.py: code/{page.name}\n"
                   for page in sorted((exported / "code").glob("*.md")))
    text = text.replace("\n  - GRU conventions", f"\n  - Code:\n{code}  - GRU conventions", 1)
    path = project / "mkdocs-bare.yml"
    path.write_text(text, "utf-8")
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="warm/mkdocs/bare rounds (5)")
    parser.add_argument("--cold-runs", action="store_true",
                        help="also empty the run cache for the cold build (retrains)")
    args = parser.parse_args(argv)
    if not (BIN / "mkdocs").exists():
        sys.exit("benchmark: run `make build` first (it creates .venv)")
    tmp = Path(tempfile.mkdtemp(prefix="build-bench-"))
    try:
        project = copy(tmp / "project")
        env = dict(ENV)
        if args.cold_runs:
            env["RNN_EXPLAINER_CACHE"] = str(tmp / "runs")
        cold = timed(["make", "build"], project, env)

        module = project / "generator" / "chapters" / "ch12_rnn.py"
        module.write_text(module.read_text("utf-8") + "\n# edited\n", "utf-8")
        chapter = timed(["make", "build"], project, env)

        exported = tmp / "exported"
        timed([BIN / "mkdocs", "build", "-f", export_config(project), "--site-dir",
               tmp / "site-export"], project, {**env, "BENCH_EXPORT": str(exported)})
        bare_yml = bare_config(project, exported)
        runs = {"warm": [], "mkdocs": [], "bare": []}
        for _ in range(args.repeat):
            runs["warm"].append(timed(["make", "build"], project, env))
            runs["mkdocs"].append(timed([BIN / "mkdocs", "build", "--site-dir",
                                         tmp / "site-mkdocs"], project, env))
            runs["bare"].append(timed([BIN / "mkdocs", "build", "-f", bare_yml, "--site-dir",
                                       tmp / "site-bare"], project, env))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    wall = {k: statistics.median(w for w, _ in v) for k, v in runs.items()}
    cpu = {k: statistics.median(c for _, c in v) for k, v in runs.items()}
    print(f"build timings on {os.cpu_count()} cores (seconds)")
    print(f"  cold ({'runs retrained' if args.cold_runs else 'page cache empty'}):"
          f"{cold[0]:>15.2f} wall, {cold[1]:.2f} CPU: {cold[1] / cold[0]:.2f} cores busy")
    print(f"  one chapter recomputed:      {chapter[0]:>7.2f} wall")
    for name, label in (("warm", "warm `make build`"), ("mkdocs", "warm `mkdocs build`"),
                        ("bare", "bare MkDocs, no hook")):
        print(f"  {label + ':':<28} {wall[name]:>7.2f} wall, {cpu[name]:.2f} CPU   medians of "
              + ", ".join(f"{w:.2f}/{c:.2f}" for w, c in runs[name]))
    for name in ("warm", "mkdocs"):
        print(f"  {name} / bare:{'':<{19 - len(name)}}{wall[name] / wall['bare']:>7.2f} wall, "
              f"{cpu[name] / cpu['bare']:.2f} CPU" + ("   (goal: at most 1.20)" if name == "warm"
                                                     else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
