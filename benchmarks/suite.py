"""Where `make test`'s time goes: the tests' own times, and how busy they keep the machine.

    .venv/bin/python benchmarks/suite.py [-n WORKERS] [PYTEST ARGS ...]

Runs the suite as `make test` does (`pytest -n 3` on the built site; build first) and
prints, side by side from that one run:

wall        pytest's wall time
busy        the core-seconds the whole machine spent (from /proc/stat, read before
            and after): the browser's processes, the builds in copies and the notebooks'
            kernels included, which the shell's `time` does not see (Chromium's
            renderers are not its children). Other work on the machine counts too: run
            it on a quiet one.
floor       busy / cores: the wall time no scheduling can beat while the tests need
            that much CPU
per worker  when each worker ran what, and how long it sat idle at the end
per module  the sum of its tests' times (setup and call), with the tests' count

A test's time is stretched by the others running beside it, so per-module figures
say where the time goes in this run, not what a module costs alone.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RECORD = "SUITE_BENCH_RECORD"  # where the plugin below writes each test's times


# -- the plugin: loaded into pytest with -p suite (this file, on PYTHONPATH) -------------

_rows = []


def pytest_runtest_logreport(report):
    node = getattr(report, "node", None)  # xdist: the worker that ran it
    worker = node.gateway.id if node is not None else "main"
    if report.when in ("setup", "call"):
        _rows.append([worker, report.nodeid, report.when, report.start, report.stop])


def pytest_sessionfinish(session):
    if not hasattr(session.config, "workerinput") and os.environ.get(RECORD):
        Path(os.environ[RECORD]).write_text(json.dumps(_rows), "utf-8")


# -- the benchmark ----------------------------------------------------------------------

def cpu_jiffies():
    """(busy, total) jiffies of the whole machine, from /proc/stat's first line."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = fields[3] + fields[4]  # idle and iowait
    return sum(fields) - idle, sum(fields)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", dest="workers", type=int, default=3,
                        help="pytest-xdist workers, as make test's TEST_WORKERS (0: one process)")
    options, args = parser.parse_known_args(argv)  # the rest goes to pytest
    workers = str(options.workers)
    if not (ROOT / "site" / "index.html").is_file():
        sys.exit("suite.py: no site/ yet: run `make build` first")
    cores = os.cpu_count() or 1
    with tempfile.TemporaryDirectory() as tmp:
        record = Path(tmp) / "rows.json"
        env = {**os.environ, RECORD: str(record),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(Path(__file__).parent),
                                                           os.environ.get("PYTHONPATH")]))}
        first, started = cpu_jiffies(), time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "pytest", "-n", workers, "-p", "suite",
                               "-q", "-p", "no:cacheprovider", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True)
        wall = time.monotonic() - started
        busy = (cpu_jiffies()[0] - first[0]) / os.sysconf("SC_CLK_TCK")
        rows = json.loads(record.read_text("utf-8")) if record.is_file() else []
    summary = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    print(f"pytest -n {workers}: {summary}")
    if proc.returncode != 0:
        print(proc.stdout[-3000:] + proc.stderr[-2000:])
    print(f"wall   {wall:7.0f} s")
    print(f"busy   {busy:7.0f} core-seconds, the machine's {cores} cores "
          f"{busy / (wall * cores):.0%} busy")
    print(f"floor  {busy / cores:7.0f} s  (busy / {cores} cores)")
    if not rows:
        return proc.returncode
    t0 = min(r[3] for r in rows)
    end = max(r[4] for r in rows)
    print("\nper worker: busy seconds, idle at the end, the modules it spent over 20 s on")
    by_worker = defaultdict(list)
    for worker, nodeid, _, start, stop_ in rows:
        by_worker[worker].append((start - t0, stop_ - t0, nodeid.split("::")[0]))
    for worker in sorted(by_worker):
        spans = sorted(by_worker[worker])
        modules = defaultdict(float)
        for start, stop_, module in spans:
            modules[module] += stop_ - start
        long = ", ".join(f"{Path(m).stem} {s:.0f}" for m, s in
                         sorted(modules.items(), key=lambda kv: -kv[1]) if s > 20)
        print(f"  {worker:5s} {sum(s - a for a, s, _ in spans):5.0f} s busy, "
              f"{end - t0 - spans[-1][1]:4.0f} s idle at the end: {long}")
    print("\nper module: its tests' time (setup and call), the count of its tests")
    modules, counts = defaultdict(float), defaultdict(set)
    for _, nodeid, _, start, stop_ in rows:
        module = Path(nodeid.split("::")[0]).stem
        modules[module] += stop_ - start
        counts[module].add(nodeid)
    total = sum(modules.values())
    for module, seconds in sorted(modules.items(), key=lambda kv: -kv[1]):
        print(f"  {seconds:6.0f} s {seconds / total:4.0%} {len(counts[module]):5d}  {module}")
    print(f"  {total:6.0f} s in all")
    return proc.returncode


if __name__ == "__main__":
    sys.exit(main())
