"""Chapter 14's trainer in headless Chromium: the GRU trained by the page (gru-train.js in
a Web Worker) is gru.py's `--updates` run, update for update.

For two settings (the book at batch 1, and a reader's own paragraph at batch 8) the page
trains 200 updates; then the command the page shows is run as a reader runs it, and its
printed rows and samples must be the page's, character for character, and the page's
parameters must equal those of numpy's train_updates (in this process, float64) to 1e-9
relative; and the page's text generator, switched to the reader's GRU, writes what
gru.py's predict writes with numpy's parameters of the same run. Also: what the page says of a text it cannot use, that the page stays
responsive while it trains (no main-thread task does over 50 ms of work, measured in a
Chromium trace as the thread's own time: the wall time of a task on a machine shared
with other work counts that work too), pause and resume, and that nothing reaches the
console or another host.
"""

import json
import shlex

import numpy as np
import pytest

from helpers import CODE, SITE, cells_of_markdown, load_script, run_script, table_blocks
from test_widgets import Tab, model_shows, model_widget, run_python, set_model

pytestmark = pytest.mark.browser

PAGE = "ch14-gru-lm/"
OWN_TEXT = ("The rain had stopped by the time we reached the harbour, and the boats lay still "
            "on water as grey as the sky. Nobody spoke. The old man at the end of the pier "
            "was mending a net, and he did not look up when we passed; the gulls did it for "
            "him, wheeling and crying over the masts. We walked to the end and back again, "
            "slowly, because there was nowhere else to go and nothing else to do until the "
            "ferry came in.")
TOLERANCE = 1e-9  # relative: max |page - numpy| / max |numpy|, per parameter


@pytest.fixture(scope="module")
def gru():
    return load_script("gru.py")


@pytest.fixture
def tab(browser, server):
    t = Tab(browser, server, PAGE)
    yield t
    t.close()


def trainer(tab):
    return tab.widget("trainer_widget")


def choose(host, control, value):
    host.locator(f'input[data-control="{control}"] + label', has_text=str(value)).first.click()


def slide(host, control, values, value):
    host.locator(f'input[data-control="{control}"]').fill(str(values.index(value)))


def train(tab, host, batch, text=None):
    """Set the controls, press Start, wait for the 200 updates; the command shown."""
    if text is not None:
        host.locator('textarea[data-control="text"]').fill(text)
    choose(host, "hidden", 32)
    choose(host, "batch", batch)
    choose(host, "updates", 200)
    host.locator('button[data-control="start"]').click()
    tab.page.wait_for_function("el => el.querySelector('figure').rwTrainer.state() === 'done'",
                               arg=host.element_handle(), timeout=120_000)
    return host.locator("[data-command]").inner_text()


def main_thread_tasks(trace):
    """The page's main-thread tasks in a Chromium trace: (wall ms, thread ms) each. The
    thread time is the page's own work; the wall time adds whatever else the machine ran
    meanwhile (on a loaded machine, several times the work)."""
    events = json.loads(trace)
    events = events["traceEvents"] if isinstance(events, dict) else events
    main = {(e["pid"], e["tid"]) for e in events
            if e.get("name") == "thread_name" and e["args"]["name"] == "CrRendererMain"}
    return [(e["dur"] / 1000, e.get("tdur", e["dur"]) / 1000) for e in events
            if e.get("name") == "RunTask" and (e["pid"], e["tid"]) in main and "dur" in e]


def page_params(host):
    return host.evaluate("""el => { const p = el.querySelector('figure').rwTrainer.params();
        return Object.fromEntries(Object.entries(p).map(([k, v]) => [k, Array.from(v)])); }""")


def page_table(host, name):
    rows = host.locator(f'table[data-table="{name}"] tr')
    return [[c.strip() for c in rows.nth(i).locator("th, td").all_inner_texts()]
            for i in range(rows.count())]


def numpy_run(gru, args, tmp_path, text=None):
    """numpy's train_updates, in this process, for the arguments of the trainer's command
    (the reader's text, if any, saved as my-text.txt in tmp_path): (params, run)."""
    parsed = gru.parse_args(args[:-2] + ["--corpus", str(tmp_path / "my-text.txt")]
                            if text is not None else args)
    config = gru.model_config(parsed, gru.base_config(parsed), "gru")
    return gru.train_updates(gru.corpus_for(parsed), config)


def param_gaps(host, params):
    """The page's parameters against numpy's: max |page - numpy| / max |numpy|, each."""
    mine = page_params(host)
    gaps = {}
    for name, p in params.items():
        q = np.array(mine[name]).reshape(p.shape)
        gaps[name] = float(np.abs(q - p).max() / np.abs(p).max())
    return gaps


def check_against_numpy(gru, host, command, tmp_path, text=None):
    argv = shlex.split(command)
    assert argv[:3] == ["$", "python3", "gru.py"], command
    args = argv[3:]
    if text is not None:  # the reader saves the text as my-text.txt
        assert args[-2:] == ["--corpus", "my-text.txt"], command
        (tmp_path / "my-text.txt").write_text(text, "utf-8")
    else:
        assert "--corpus" not in args, command
    result = run_script("gru.py", *args, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    printed = [cells_of_markdown(t) for t in table_blocks(result.stdout)]
    updates, samples = printed[1], printed[2]
    shown = page_table(host, "updates")
    assert shown == updates, (shown, updates)
    shown_samples = [row[:-1] for row in page_table(host, "samples")]  # less the reader's column
    assert shown_samples == samples

    params, run = numpy_run(gru, args, tmp_path, text)
    gaps = param_gaps(host, params)
    assert max(gaps.values()) < TOLERANCE, gaps
    losses = np.array(host.evaluate("el => el.querySelector('figure').rwTrainer.losses()"))
    assert len(losses) == 200
    assert np.abs(losses - run.losses).max() / np.abs(run.losses).max() < TOLERANCE
    return gaps


def test_the_book_at_batch_1_is_numpys_run(gru, tab, tmp_path):
    host = trainer(tab)
    browser = tab.context.browser
    browser.start_tracing(page=tab.page, categories=["devtools.timeline",
                                                     "disabled-by-default-devtools.timeline"])
    command = train(tab, host, 1)
    tasks = main_thread_tasks(browser.stop_tracing())
    assert len(tasks) > 20, "the trace saw the training"
    work = max(thread for _, thread in tasks)
    print(f"main thread while training: {len(tasks)} tasks, the longest {work:.1f} ms of work "
          f"({max(wall for wall, _ in tasks):.1f} ms of wall time)")
    assert work < 50, f"a main-thread task of {work:.1f} ms while training"
    gaps = check_against_numpy(gru, host, command, tmp_path)
    print("largest relative gap after 200 updates, batch 1, the book:", max(gaps.values()))
    tab.check_clean()


def test_own_text_at_batch_8_is_numpys_run(gru, tab, tmp_path):
    host = trainer(tab)
    command = train(tab, host, 8, OWN_TEXT)
    gaps = check_against_numpy(gru, host, command, tmp_path, OWN_TEXT)
    print("largest relative gap after 200 updates, batch 8, own text:", max(gaps.values()))
    tab.check_clean()


@pytest.mark.parametrize("text, says", [
    ("1234 5678 !!! ... 42", "Nothing left to train on"),
    ("a short line of text", "Too short"),
    ("word " * 40_001, "Too long"),
])
def test_a_text_it_cannot_use_is_said_so(tab, text, says):
    host = trainer(tab)
    host.locator('textarea[data-control="text"]').fill(text)
    message = host.locator(".rw-message")
    assert message.inner_text().startswith(says)
    assert host.locator('button[data-control="start"]').is_disabled()
    host.locator('button[data-control="book"]').click()
    assert not host.locator('button[data-control="start"]').is_disabled()
    tab.check_clean()


def test_a_file_not_utf8_is_refused(tab, tmp_path):
    host = trainer(tab)
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\u00e9 au lait, encore".encode("latin-1"))
    host.locator('input[type="file"]').set_input_files(str(bad))
    host.locator(".rw-message", has_text="not UTF-8").wait_for()
    tab.check_clean()


def test_pause_stops_and_resume_goes_on(tab):
    host = trainer(tab)
    choose(host, "updates", 1000)
    host.locator('button[data-control="start"]').click()
    figure = host.element_handle()
    tab.page.wait_for_function("el => el.querySelector('figure').rwTrainer.losses().length > 20",
                               arg=figure, timeout=60_000)
    host.locator('button[data-control="pause"]').click()
    tab.page.wait_for_timeout(300)  # what the worker had under way arrives
    held = len(host.evaluate("el => el.querySelector('figure').rwTrainer.losses()"))
    tab.page.wait_for_timeout(500)
    assert len(host.evaluate("el => el.querySelector('figure').rwTrainer.losses()")) == held
    assert host.locator('button[data-control="pause"]').inner_text() == "Resume"
    host.locator('button[data-control="pause"]').click()
    tab.page.wait_for_function(f"el => el.querySelector('figure').rwTrainer.losses().length > {held}",
                               arg=figure, timeout=60_000)
    host.locator('button[data-control="reset"]').click()
    assert host.evaluate("el => el.querySelector('figure').rwTrainer.state()") == "idle"
    tab.check_clean()


# -- the text generator, with the reader's GRU ------------------------------------------

WRITER_JS = "el => { const w = el.querySelector('[data-value=\"writer\"]'); return [w.dataset.model, w.dataset.update]; }"


def pick_model(gen, k):
    gen.locator('input[data-control="model"]').nth(k).check()


def test_your_gru_before_any_training_is_said_so(tab):
    """Picked before the trainer has trained, the reader's GRU is a message on screen, and
    the text stays the chapter's, which says so."""
    gen, _ = model_widget(tab)
    set_model(gen, "it has", 20, 0.5, 0)
    chapter = model_shows(gen)
    pick_model(gen, 1)
    message = gen.locator('[role="alert"]', has_text="Your GRU has not trained yet")
    assert message.is_visible()
    assert gen.evaluate(WRITER_JS)[0] == "chapter"
    assert gen.locator('[data-value="writer"]').inner_text().startswith("Written by the chapter's GRU")
    assert model_shows(gen) == chapter
    tab.check_clean()


def test_the_text_generator_writes_with_your_gru(gru, tab, tmp_path):
    """After 200 updates of the trainer (the book, batch 1, the settings of the first test
    above), the text generator switched to the reader's GRU writes what gru.py's predict
    writes with numpy's parameters of the same run (train_updates for the command the
    trainer shows), greedy and drawn; the page's parameters are numpy's; the text says
    which model wrote it, and the Python lines under it print it. A reset takes the
    reader's GRU away again, and says so."""
    gen, _ = model_widget(tab)
    prompt, n, temperature, seed = "the time traveller", 40, 1.0, 7
    set_model(gen, prompt, n, temperature, seed)
    chapter = model_shows(gen)
    host = trainer(tab)
    command = train(tab, host, 1)
    pick_model(gen, 1)
    tab.page.wait_for_function(f"el => ({WRITER_JS})(el)[0] === 'yours'", arg=gen.element_handle())
    assert gen.evaluate(WRITER_JS) == ["yours", "200"]
    assert "your GRU, after 200 updates" in gen.locator('[data-value="writer"]').inner_text()
    assert gen.locator('input[data-control="model"] + label').nth(1).inner_text() == \
        "your GRU (after 200 updates)"

    params, _ = numpy_run(gru, shlex.split(command)[3:], tmp_path)
    gaps = param_gaps(host, params)
    assert max(gaps.values()) < TOLERANCE, gaps
    got = model_shows(gen)
    assert got["greedy"] == gru.predict(params, "gru", prompt, n)
    assert got["sampled"] == gru.predict(params, "gru", prompt, n, temperature,
                                         np.random.default_rng(seed))
    assert got["greedy"] != chapter["greedy"], "the reader's GRU writes as the chapter's"

    (tmp_path / "timemachine.txt").write_bytes((CODE / "timemachine.txt").read_bytes())
    printed = run_python(got["python"], tmp_path).splitlines()
    assert printed == [got["greedy"], got["sampled"]]

    host.locator('button[data-control="reset"]').click()
    assert gen.evaluate(WRITER_JS)[0] == "chapter"
    assert model_shows(gen)["greedy"] == chapter["greedy"]
    assert gen.locator('[role="alert"]', has_text="Your GRU has not trained yet").is_visible()
    tab.check_clean()


REACH_YOURS_JS = """h => ({update: h.querySelector('figure').dataset.yours,
  cell: h.querySelector('[data-value="reach-cell"]').textContent,
  header: [...h.querySelectorAll('[data-value="reach-values"] th')].map((th) => th.textContent),
  chars: [...h.querySelectorAll('[data-value="passage"] i')].map((i) => i.dataset.g === undefined ? null : +i.dataset.g)})"""


def test_how_far_back_reads_your_gru(gru, tab, tmp_path):
    """After 200 updates of the trainer (the book, batch 1), "how far back" with the
    reader's GRU shades each earlier character by gru.py's compute_reach run here on
    numpy's parameters of the same run (train_updates for the trainer's command), at
    several characters of the passage; before any training it says so; a reset takes
    the reader's GRU away again."""
    reach = tab.widget("reach_widget")
    reach.locator('[data-value="passage"]').focus()
    tab.page.wait_for_function("el => el.querySelector('figure').dataset.model === 'ready'",
                               arg=reach.element_handle(), timeout=10_000)
    choose(reach, "cell", "your GRU")
    assert reach.locator('[role="alert"]', has_text="Your GRU has not trained yet").is_visible()
    host = trainer(tab)
    command = train(tab, host, 1)
    tab.page.wait_for_function("el => el.querySelector('figure').dataset.yours === '200'",
                               arg=reach.element_handle(), timeout=30_000)
    assert not reach.locator('[role="alert"]', has_text="Your GRU").is_visible()
    params, _ = numpy_run(gru, shlex.split(command)[3:], tmp_path)
    record = json.loads((SITE / "code" / "gru-reach.json").read_text("utf-8"))
    want = gru.compute_reach(params, "gru", record["passage"] + record["next_char"])
    chapter = record["models"][0]["reach"]
    for t in (4, 63, 150, len(record["passage"]) - 1):
        reach.locator(f'[data-value="passage"] i[data-i="{t}"]').hover()
        got = reach.evaluate(REACH_YOURS_JS)
        assert got["update"] == "200" and got["cell"] == "your GRU"
        assert got["header"][-1] == "your GRU"
        shown = [g for g in got["chars"][:t + 1][::-1] if g is not None]  # k = 0, 1, ...
        assert len(shown) == len(want[t])
        assert shown == [pytest.approx(w, rel=5.1e-3) for w in want[t]], t  # numpy's, to 3 digits
        assert shown != pytest.approx(chapter[t], rel=0.05), "the chapter's GRU, not yours"
    host.locator('button[data-control="reset"]').click()
    tab.page.wait_for_function("el => !el.querySelector('figure').dataset.yours",
                               arg=reach.element_handle())
    assert reach.locator('[role="alert"]', has_text="Your GRU has not trained yet").is_visible()
    tab.check_clean()
