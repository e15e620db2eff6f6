"""The suite's own machinery for several workers (tests/conftest.py, tests/helpers.py): the
modules that share a costly fixture stay together, and a notebook runs once per session
whichever worker reaches it first."""

import json
from types import SimpleNamespace

import conftest
import helpers


def test_the_scheduler_keeps_each_shared_fixture_s_modules_on_one_worker(monkeypatch):
    from xdist.scheduler import LoadScopeScheduling

    monkeypatch.setattr(LoadScopeScheduling, "__init__", lambda self, config, log=None: None)
    scope = conftest.pytest_xdist_make_scheduler(None, None)._split_scope  # what xdist calls
    assert scope("tests/test_browser.py::test_math_is_rendered[light-ch12-rnn/]") == \
        scope("tests/test_browser.py::test_requests_stay_on_the_local_server[dark-index]")
    assert scope("tests/test_build_failures.py::test_killed_build") == \
        scope("tests/test_serve.py::test_editor_files_are_not_served")  # one built project
    assert scope("tests/test_rnn.py::test_a") != scope("tests/test_rnn.py::test_b")  # free
    assert set(conftest.TOGETHER) <= conftest.SLOW_MODULES | {"test_browser"}


def test_a_notebook_is_run_by_the_first_claim_and_read_by_the_others(tmp_path, monkeypatch):
    ran = []

    def run(ch):
        ran.append(ch.stem)
        return {"# $ python3 rnn.py --vanish": "printed\n"}

    monkeypatch.setattr(helpers, "_run_notebook", run)
    monkeypatch.setattr(helpers, "SHARED_RUNS", tmp_path / "notebooks-session")
    ch = SimpleNamespace(stem="rnn", notebook="code/rnn.ipynb")
    first = helpers.claim_notebook(ch)
    assert first == {"# $ python3 rnn.py --vanish": "printed\n"}
    assert helpers.claim_notebook(ch) is None  # claimed already: another worker's to read
    assert helpers.shared_notebook_run(ch, timeout=5) == first
    assert ran == ["rnn"]  # run once
    assert json.loads((tmp_path / "notebooks-session" / "rnn.json").read_text("utf-8")) == first


def test_a_failed_notebook_fails_the_worker_that_reads_it_too(tmp_path, monkeypatch):
    def run(ch):
        raise AssertionError("code/rnn.ipynb did not run: boom")

    monkeypatch.setattr(helpers, "_run_notebook", run)
    monkeypatch.setattr(helpers, "SHARED_RUNS", tmp_path / "notebooks-session")
    ch = SimpleNamespace(stem="rnn", notebook="code/rnn.ipynb")
    try:
        helpers.claim_notebook(ch)
    except AssertionError:
        pass
    else:
        raise AssertionError("the claimant's failure was swallowed")
    try:
        helpers.shared_notebook_run(ch, timeout=5)
    except AssertionError as error:
        assert "in another worker" in str(error) and "boom" in str(error)
    else:
        raise AssertionError("the reader did not fail")
