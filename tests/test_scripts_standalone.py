"""What every served script promises a reader, whatever it computes: it runs from
a folder of its own, imports without side effects, says how to install numpy
when numpy is missing, and keeps to argparse's exit statuses."""

import pytest

from conftest import CODE, load_script, run_script

SCRIPTS = ["rnn.py", "gated.py", "gru.py"]
STEP_SCRIPTS = ["rnn.py", "gated.py"]  # quick, and need no data file


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
    assert result.stderr.strip().splitlines() == [f"{script} needs numpy: pip install numpy"]


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


@pytest.mark.parametrize("script", SCRIPTS)
def test_import_defines_the_api_and_prints_nothing(script, capsys):
    module = load_script(script)
    assert callable(module.main) and module.__doc__.startswith(f"{script}: ")
    assert [n for n in dir(module) if n.startswith("compute_")]
    assert [n for n in dir(module) if n.startswith("format_")]
    assert capsys.readouterr() == ("", "")


@pytest.mark.parametrize("script", STEP_SCRIPTS)
def test_output_closed_early_is_not_an_error(script):
    import subprocess
    import sys

    proc = subprocess.run(f'"{sys.executable}" "{CODE / script}" | head -n 1', shell=True,
                          capture_output=True, text=True)
    assert proc.stdout.startswith("Step 1") and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_served_gru_trains_in_an_empty_folder_to_the_spec(site, tmp_path):
    """python3 site/code/gru.py with only the corpus beside it: a perplexity row per
    epoch, ending at or below 6.8 (the spec), then a sample."""
    from conftest import SITE

    for name in ("gru.py", "timemachine.txt"):
        (tmp_path / name).write_bytes((SITE / "code" / name).read_bytes())
    result = run_script(str(tmp_path / "gru.py"), cwd=tmp_path)
    assert result.returncode == 0 and result.stderr == ""
    rows = [line.split("|")[1:4] for line in result.stdout.splitlines()
            if line.startswith("|") and line.split("|")[1].strip().isdigit()]
    rows = [r for r in rows if len(r) == 3 and r[1].strip().replace(".", "").isdigit()]
    assert [int(r[0]) for r in rows] == list(range(1, 51))
    assert float(rows[-1][2]) <= 6.8
    sample = [line for line in result.stdout.splitlines() if line.startswith("sample")]
    assert len(sample) == 1 and '"it has' in sample[0]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["gru.py", "timemachine.txt"]
