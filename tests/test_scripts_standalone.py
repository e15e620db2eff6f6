"""What every served script promises a reader, whatever it computes: it runs from
a folder of its own, imports without side effects, says how to install numpy
when numpy is missing, and keeps to argparse's exit statuses."""

import argparse
import ast
import os
import subprocess
import sys

import pytest

from helpers import CHAPTERS, CODE, SCRIPTS, load_script, run_script
from generator.chapter import GeneratorError
from generator.contract import check_harness

# quick to run in full, and need no data file
STEP_SCRIPTS = [ch.script for ch in CHAPTERS
                if not ch.data and tuple(load_script(ch.script).DEFAULT) ==
                tuple(load_script(ch.script).REPORTS)]


@pytest.fixture
def no_numpy(tmp_path):
    """An environment in which `import numpy` fails, as on a machine without it."""
    fake = tmp_path / "fake-site"
    (fake / "numpy").mkdir(parents=True)
    (fake / "numpy" / "__init__.py").write_text(
        "raise ModuleNotFoundError(\"No module named 'numpy'\", name='numpy')\n")
    return {"PYTHONPATH": str(fake), "PATH": "/usr/bin:/bin"}


@pytest.mark.parametrize("script", SCRIPTS)
def test_without_numpy_one_line_and_status_1(script, no_numpy, tmp_path):
    result = run_script(script, cwd=tmp_path, env=no_numpy)
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.strip().splitlines() == [f"{script}: needs numpy: pip install numpy"]


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_still_works_without_numpy(script, no_numpy, tmp_path):
    result = run_script(script, "--help", cwd=tmp_path, env=no_numpy)
    assert result.returncode == 0 and "usage:" in result.stdout


@pytest.mark.parametrize("script", STEP_SCRIPTS)
def test_runs_alone_in_an_empty_folder(script, tmp_path):
    copy = tmp_path / script
    copy.write_bytes((CODE / script).read_bytes())
    result = run_script(str(copy), cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    assert result.stdout == run_script(script).stdout  # the copy prints what the original does
    assert sorted(p.name for p in tmp_path.iterdir()) == [script]  # and writes nothing


def without_times(text):
    return "".join(line for line in text.splitlines(True) if not line.startswith("time:"))


@pytest.mark.parametrize("script", [s for s in STEP_SCRIPTS if len(load_script(s).REPORTS) > 1])
def test_two_reports_print_what_each_prints_alone_two_blank_lines_apart(script):
    """The harness's promise (run's docstring): the chosen reports one after the other,
    two blank lines between them; inside a report, one blank line between blocks."""
    first, second = list(load_script(script).REPORTS)[:2]
    alone = [without_times(run_script(script, f"--{flag}").stdout) for flag in (first, second)]
    together = without_times(run_script(script, f"--{first}", f"--{second}").stdout)
    assert "\n\n" in alone[0] and "\n\n\n" not in alone[0] + alone[1]
    assert together == alone[0] + "\n\n" + alone[1]


@pytest.mark.parametrize("kind, text, said", [
    (int, "many", "invalid int value: 'many'"), (int, "2.5", "invalid int value: '2.5'"),
    (int, "9", "must be from 1 to 5, got 9"), (float, "x", "invalid float value: 'x'"),
    (float, "nan", "must be from 1 to 5, got nan"), (float, "0.5", "must be from 1 to 5, got 0.5")])
def test_a_bad_number_is_named_by_argparse_in_one_line(kind, text, said, capsys):
    """The harness's number(kind, low, high) as an argparse type: what a reader sees."""
    parser = argparse.ArgumentParser(prog="x.py")
    parser.add_argument("--n", type=load_script("rnn.py").number(kind, 1, 5))
    with pytest.raises(SystemExit) as exit_:
        parser.parse_args(["--n", text])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == f"x.py: error: argument --n: {said}"
    assert parser.parse_args(["--n", "5"]).n == kind(5)


def top_level_functions(script):
    """{name: ast.FunctionDef} of the functions a script defines at its top level, read
    from its source (not from what importing it leaves in the module)."""
    tree = ast.parse((CODE / script).read_text("utf-8"))
    return {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}


@pytest.mark.parametrize("script", SCRIPTS)
def test_import_defines_the_conventions_and_prints_nothing(script, capsys):
    """Every report the script defines is a flag of its command line, wired to it; every
    table a report prints is made by a format_* function of the script; the docstring
    lists every flag; importing prints nothing."""
    module = load_script(script)
    assert callable(module.main) and module.__doc__.startswith(f"{script}: ")
    functions = top_level_functions(script)
    defined = sorted(name[len("report_"):] for name in functions if name.startswith("report_"))
    assert defined == sorted(module.REPORTS), \
        f"{script}: report_* functions {defined}, command-line reports {sorted(module.REPORTS)}"
    assert set(module.DEFAULT) <= set(module.REPORTS)
    for flag, (help_text, report) in module.REPORTS.items():
        assert report is getattr(module, f"report_{flag}"), f"--{flag} runs {report.__name__}"
        assert help_text[:1].islower()
        assert f"--{flag}" in module.__doc__, f"{script}'s docstring does not list --{flag}"
        for call in ast.walk(functions[f"report_{flag}"]):
            if (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
                    and call.func.attr == "table"):
                made = call.args[1] if len(call.args) > 1 else None
                assert (isinstance(made, ast.Call) and isinstance(made.func, ast.Name)
                        and made.func.id.startswith("format_") and made.func.id in functions), \
                    f"{script}:{call.lineno}: report_{flag} prints a table no format_* made"
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_unknown_flag_is_a_usage_error_in_one_place(script):
    """argparse's usage and its one error line, status 2, nothing on stdout."""
    result = run_script(script, "--frobnicate")
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.startswith("usage: " + script)
    assert result.stderr.rstrip().splitlines()[-1] == \
        f"{script}: error: unrecognized arguments: --frobnicate"
    assert "Traceback" not in result.stderr


def test_a_drifted_harness_fails_the_build_naming_the_script_and_line():
    text = (CODE / "rnn.py").read_text("utf-8")
    line = '        self.gap = "\\n"'
    at = text.split("\n").index(line) + 1
    drifted = text.replace(line, '        self.gap = "\\n\\n"')
    with pytest.raises(GeneratorError, match=rf"^docs/code/rnn.py:{at}: the harness differs"):
        check_harness("rnn.py", drifted)
    with pytest.raises(GeneratorError, match="has no harness"):
        check_harness("rnn.py", text.replace("# The harness: the same", "# The harness, the same"))


@pytest.mark.parametrize("script", STEP_SCRIPTS)
def test_output_closed_early_is_not_an_error(script):
    first = run_script(script).stdout.splitlines()[0]
    proc = subprocess.run(f'"{sys.executable}" "{CODE / script}" | head -n 1', shell=True,
                          capture_output=True, text=True)
    assert proc.stdout.strip() == first and "Traceback" not in proc.stderr




@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs Linux's /dev/full")
@pytest.mark.parametrize("script", STEP_SCRIPTS)
def test_a_full_disk_is_one_line_and_status_1(script):
    """Output that cannot be written (/dev/full: every write fails with ENOSPC) is the
    harness's one line, not a traceback, and status 1."""
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, str(CODE / script)], stdout=full,
                              stderr=subprocess.PIPE, text=True)
    assert proc.returncode == 1
    assert proc.stderr.splitlines() == [f"{script}: cannot write the output: "
                                        "No space left on device"], proc.stderr


@pytest.mark.skipif(not os.environ.get("OPENBLAS_CORETYPE"), reason="not an x86 machine: "
                    "OpenBLAS chooses its kernel there (generator.runs.blas_kernel)")
def test_a_readers_run_sets_the_builds_blas_kernel_itself(tmp_path):
    """`python3 deeper.py --reverse` in a shell that sets nothing prints the build's table:
    the script picks the BLAS kernel the build uses. Chapter 17's reversal is chaotic: with
    OpenBLAS's AVX-512 kernels (which it picks where the CPU has them, as on the machine
    this was written on) the seeds end elsewhere, so without the script's own setting this
    fails on such a CPU: with OPENBLAS_CORETYPE=SkylakeX in the environment, what that CPU
    picks, it was seen to fail there."""
    from helpers import built_output

    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
    done = subprocess.run([sys.executable, str(CODE / "deeper.py"), "--reverse"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    built = built_output("deeper.py", "--reverse")
    assert built is not None, "the build has not run deeper.py --reverse: make build"
    strip = lambda text: [l for l in text.splitlines() if not l.startswith("time:")]  # noqa
    assert strip(done.stdout) == strip(built)
