"""The CPU time a chapter's runs cost the build, command by command.

The build computes a script's page in one worker process: it imports the script
once and runs every command the page names in it, so that models a script keeps
in memory (gru.py's _TRAINED) serve several commands. This does the same with
nothing cached, on one BLAS thread, and prints each command's CPU seconds and the
total: the figure each chapter's budget is stated in (docs/building.md). Give
another page and script (an older checkout's) to compare two versions side by
side on the same machine.

    .venv/bin/python benchmarks/chapter_runs.py docs/ch14-gru-lm.md
    .venv/bin/python benchmarks/chapter_runs.py OLD/docs/ch14-gru-lm.md --code OLD/docs/code
"""
import argparse
import contextlib
import importlib.util
import io
import os
import sys
import time
from pathlib import Path

for _var in ('OPENBLAS_NUM_THREADS', 'OMP_NUM_THREADS', 'MKL_NUM_THREADS'):
    os.environ[_var] = '1'

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from generator import markers as marker_syntax  # noqa: E402
from generator.contract import report_commands  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(prog='chapter_runs.py', description=__doc__.split('\n\n')[0])
    ap.add_argument('page', type=Path, help='a chapter page (docs/ch14-gru-lm.md)')
    ap.add_argument('--code', type=Path, default=ROOT / 'docs' / 'code',
                    help='the folder of its script (default: this checkout\'s docs/code)')
    args = ap.parse_args(argv)
    found = marker_syntax.parse(args.page.name, args.page.read_text('utf-8'))
    scripts = {m.script for m in found if m.script}
    name = max(scripts, key=lambda s: sum(m.script == s for m in found))  # the page's own
    spec = importlib.util.spec_from_file_location('chapter_script', args.code / name)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    commands = list(dict.fromkeys(
        [tuple(m.argv) for m in found if m.script == name and m.kind in ('table', 'value', 'output')]
        + [tuple(argv) for argv, _ in report_commands(script, name)]))  # and the code page's
    total = 0.0
    for argv in commands:
        start = time.process_time()
        with contextlib.redirect_stdout(io.StringIO()):
            script.run(script.parse_args(list(argv)), script.Printer(io.StringIO()))
        seconds = time.process_time() - start
        total += seconds
        print(f'{seconds:7.1f} s  python3 {name} {" ".join(argv)}', flush=True)
    print(f'{total:7.1f} s  in all, CPU time of one process ({len(commands)} commands)')
    return 0


if __name__ == '__main__':
    sys.exit(main())
