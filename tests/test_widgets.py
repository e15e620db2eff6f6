"""The interactive figures in headless Chromium: every number they show is one the
script prints.

Each test runs the script itself (as a reader runs it, a subprocess in this project's
virtualenv) for the settings it moves a widget to, and compares what the script prints
with what the page shows; the widget's data file plays no part in the expected values.
Where the script prints no table for a setting (a factor between the table's columns),
the expected value is computed here, in Python, independently of the page.

Also: a widget loads only when it comes near the screen, asks no other host, writes
nothing to the console, works by keyboard and by touch, says what is wrong with bad
input and keeps its last good state, passes axe-core's WCAG 2.1 A and AA rules while in
use, moves only for readers who have not asked for less motion; and with JavaScript off
the page is as built, every static figure shown.
"""

import gzip
import html
import json
import math
import re
import shutil
import subprocess
import sys
from urllib.parse import urlparse

import numpy as np
import pytest

from helpers import (ROOT, SITE, built_output, cells_of_markdown, load_script, run_axe,
                     run_script, table_blocks)

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
# What axe-core (helpers.run_axe: 4.14, WCAG 2.1 A and AA) checks around the widgets.
AXE_WIDGETS = "{include: [['.rw-widget'], ['section.command-output'], ['figure.diagram']]}"
WIDGET_FILES = ("/assets/widgets/", "/widgets/")  # the code and the data of the widgets


# -- the script's output --------------------------------------------------------------

_runs = {}


def printed(script, *args):
    """What `python3 <script> <args>` prints (once per session; it must succeed): the
    build's run where the build made it (the widget's data came from the same script, so
    a command the build trained for is not trained again), else the script run here as a
    reader runs it (settings no page shows, which the widgets move to)."""
    key = (script, *args)
    if key not in _runs:
        text = built_output(script, *args)
        if text is None:
            result = run_script(script, *args, timeout=300)
            assert result.returncode == 0, f"{script} {' '.join(args)} failed: {result.stderr}"
            text = result.stdout
        _runs[key] = text
    return _runs[key]


def tables(script, *args):
    """Every table the command prints, as rows of cells (the header first)."""
    return [cells_of_markdown(t) for t in table_blocks(printed(script, *args))]


def last_column(table):
    return [row[-1] for row in table[1:]]


# -- the browser -------------------------------------------------------------------------

class Tab:
    """One page in a context of its own, with everything it asked for and complained of."""

    def __init__(self, browser, server, path, **context):
        self.server = server
        self.context = browser.new_context(**{"viewport": {"width": 1280, "height": 900},
                                              **context})
        self.requests, self.console, self.errors = [], [], []
        self.context.on("request", lambda req: self.requests.append(req.url))
        self.page = self.context.new_page()
        self.page.on("console", lambda msg: msg.type in ("error", "warning")
                     and self.console.append(f"{msg.type}: {msg.text}"))
        self.page.on("pageerror", lambda err: self.errors.append(str(err)))
        self.page.goto(server.url + path, wait_until="networkidle")

    def widget(self, name):
        """The widget whose data is <name>.json, scrolled to and mounted."""
        host = self.page.locator(f'.rw-widget[data-src$="/{name}.json"]')
        host.scroll_into_view_if_needed()
        self.page.wait_for_function("(el) => ['ready', 'failed'].includes(el.dataset.state)",
                                    arg=host.element_handle(), timeout=10_000)
        assert host.get_attribute("data-state") == "ready", f"{name} did not start"
        return host

    def check_clean(self):
        foreign = sorted({u for u in self.requests if not self.server.is_local(u)})
        assert not foreign, f"asked another host for {foreign}"
        assert not self.console and not self.errors, self.console + self.errors

    def close(self):
        self.context.close()


@pytest.fixture(scope="module")
def shared(browser, server):
    """shared(path): one light 1280 px page per chapter for the tests that only set a
    widget and read it (each sets every control it reads); opened once."""
    opened = {}

    def get(path):
        if path not in opened:
            opened[path] = Tab(browser, server, path)
        return opened[path]

    yield get
    for t in opened.values():
        t.close()


@pytest.fixture
def tab(browser, server):
    """tab(path, **context): a page in a context of its own (a phone, no JavaScript, ...)."""
    opened = []

    def open_tab(path, **context):
        t = Tab(browser, server, path, **context)
        opened.append(t)
        return t

    yield open_tab
    for t in opened:
        t.close()


def move(host, control, index):
    """Set a widget's slider (data-control) to a position, as a drag does: an input event."""
    host.locator(f'input[data-control="{control}"]').evaluate(
        "(el, i) => { el.value = i; el.dispatchEvent(new Event('input', {bubbles: true})); }",
        index)


SWEEP_JS = """(host, settings) => settings.map((setting) => {
  for (const [control, index] of Object.entries(setting)) {
    const el = host.querySelector(`input[data-control="${control}"]`);
    el.value = index;
    el.dispatchEvent(new Event('input', {bubbles: true}));
  }
  const out = {};
  host.querySelectorAll('[data-value]').forEach((n) => { out[n.dataset.value] = n.textContent; });
  host.querySelectorAll('input[data-control]').forEach((n) => {
    out[n.dataset.control] = n.getAttribute('aria-valuetext'); });
  return out;
})"""


def sweep(host, settings):
    """Move the sliders to each setting ({control: index}) in turn, as move() does, and
    read what the widget shows there: [{data-value or control: text}]. In one call, so
    that a grid of 55 settings takes a moment."""
    return host.evaluate(SWEEP_JS, settings)


def shown(host, name):
    return host.locator(f'[data-value="{name}"]').inner_text()


def data_of(name):
    """A widget's data file as built: only where a test checks the file itself."""
    return json.loads(next(SITE.glob(f"widgets/*/{name}.json")).read_text("utf-8"))


# -- chapter 12: the decay ---------------------------------------------------------------

def test_decay_shows_the_decay_table_at_its_factors_and_distances(shared):
    decay = tables("rnn.py", "--vanish")[0]  # distance, factor 0.5, ..., factor 1.2
    factors = [float(h.split()[-1]) for h in decay[0][1:]]
    t = shared("ch12-rnn/")
    host = t.widget("decay_widget")
    starts = [host.locator(f'input[data-control="{c}"]').get_attribute("value")
              for c in ("param", "distance")]
    assert starts == ["49", "47"], "the widget does not start at the 47-word example, 0.5^47"
    settings = [{"distance": int(row[0]), "param": round(f * 100) - 1}  # 0.01, 0.02, ...
                for row in decay[1:] for f in factors]
    expected = [cell for row in decay[1:] for cell in row[1:]]
    got = [seen["power"] for seen in sweep(host, settings)]
    assert got == expected, [(s, g, e) for s, g, e in zip(settings, got, expected) if g != e]
    t.check_clean()


@pytest.mark.parametrize("hundredths,k", [(1, 0), (1, 100), (37, 13), (93, 47), (101, 99),
                                          (150, 100)])
def test_decay_between_the_tables_columns_is_factor_to_the_k(shared, hundredths, k):
    """No command prints factor 0.93; Python's own power, formatted as the script does."""
    t = shared("ch12-rnn/")
    host = t.widget("decay_widget")
    move(host, "param", hundredths - 1)
    move(host, "distance", k)
    assert shown(host, "power") == f"{(hundredths / 100) ** k:.3e}"
    t.check_clean()


# -- chapter 12: the measured Jacobian over the grid -----------------------------------

def test_every_position_of_the_scales_sliders_is_a_cell_of_rnn_py_scales(shared):
    table = tables("rnn.py", "--scales")[0]
    header, rows = table[0], table[1:]
    t = shared("ch12-rnn/")
    host = t.widget("scales_widget")
    assert host.locator('input[data-control="axis0"]').get_attribute("value") == "6"  # 1.1
    settings = [{"axis0": i, "axis1": j} for j in range(len(header) - 2) for i in range(len(rows))]
    expected = [{"axis0": f"spectral radius {rows[i][0]}", "axis1": header[2 + j],
                 "n0": rows[i][2 + j], "n1": rows[i][1]} for j in range(len(header) - 2)
                for i in range(len(rows))]
    got = sweep(host, settings)
    wrong = [(e, g) for e, g in zip(expected, got) if g != e]
    assert not wrong, f"{len(wrong)} of {len(got)} settings differ, first: {wrong[0]}"
    t.check_clean()


@pytest.mark.parametrize("scale", ["0", "0.1", "0.3", "1", "3"])
def test_the_scales_curves_are_the_measured_ones(scale):
    """The curves the widget draws (its data file, rounded to three digits for drawing)
    against rnn.py --measure at that input scale: the norm after 47 steps and the mean
    factor per step over all 100."""
    data = data_of("scales_widget")
    radii, scales = data["axes"][0]["values"], data["axes"][1]["values"]
    j = scales.index(float(scale))
    measured = tables("rnn.py", "--measure", "--input-scale", scale)[0]
    for row in measured[1:]:
        curve = data["cells"][radii.index(float(row[0]))][j]["lines"][0]
        assert len(curve) == 100
        assert math.isclose(curve[46], float(row[2]), rel_tol=6e-3), (scale, row)
        assert math.isclose(curve[-1] ** (1 / 100), float(row[4]), abs_tol=2e-4), (scale, row)


def test_the_scales_widget_starts_at_the_figure_above(shared):
    """At its default setting the faint curves are the plot's: --measure's radii at its
    input scale, the same networks."""
    data = data_of("scales_widget")
    measure = tables("rnn.py", "--measure")[0]
    radii = data["axes"][0]["values"]
    assert [radii[i] for i in data["context"]["indices"]] == [float(r[0]) for r in measure[1:]]
    assert data["axes"][1]["values"][data["axes"][1]["index"]] == 1.0
    t = shared("ch12-rnn/")
    host = t.widget("scales_widget")
    drawn = host.locator("path.rw-line").evaluate_all("ps => ps.map((p) => p.getAttribute('class'))")
    assert drawn.count("rw-line rw-ref") == len(measure) - 1
    assert drawn.count("rw-line rw-main") == 1 and drawn.count("rw-line rw-dash") == 1
    t.check_clean()


# -- chapter 13: the forget-gate bias ------------------------------------------------------

def test_bias_shows_the_bias_table(shared):
    table = tables("gated.py", "--bias")[0]  # b_f, f = sigma(b_f), f^10, f^47, f^100
    powers = [int(h.split("^")[-1]) for h in table[0][2:]]  # f^10: printed, not typeset
    t = shared("ch13-gated/")
    host = t.widget("bias_widget")
    biases = data_of("bias_widget")["param"]["values"]  # where the slider's positions are
    settings = [{"param": biases.index(float(row[0])), "distance": k}
                for row in table[1:] for k in powers]
    expected = [{"factor": row[1], "power": cell} for row in table[1:] for cell in row[2:]]
    got = [{"factor": g["factor"], "power": g["power"]} for g in sweep(host, settings)]
    assert got == expected, [(s, g, e) for s, g, e in zip(settings, got, expected) if g != e]
    t.check_clean()


@pytest.mark.parametrize("b", ["-2", "-1.5", "0.3", "4.2", "6"])
def test_bias_anywhere_is_the_forget_gate_of_a_step_with_no_input(shared, b):
    """sigma(b) as gated.py prints it: the forget gate of a step whose q is zero."""
    lstm = tables("gated.py", "--step", f"--forget-bias={b}", "--h-prev", "0,0", "--x-t", "0,0")[1]
    f = next(row[-1] for row in lstm if row[0] == "forget f")
    unit = re.fullmatch(r"\(\+(\d\.\d{4}), \+\1\)", f)
    assert unit, f
    t = shared("ch13-gated/")
    host = t.widget("bias_widget")
    biases = data_of("bias_widget")["param"]["values"]
    move(host, "param", biases.index(float(b)))
    move(host, "distance", 33)
    assert shown(host, "factor") == unit.group(1)
    assert shown(host, "power") == f"{(1 / (1 + math.exp(-float(b)))) ** 33:.3e}"
    t.check_clean()


# -- chapter 13: the cell step -----------------------------------------------------------

STEP = "python3 gated.py --step"
FIELDS = {"x_t": "--x-t", "h_prev": "--h-prev", "C_prev": "--c-prev", "b_f": "--forget-bias"}


def page_step_tables(page, command):
    """The value column of every table under the label `$ command`, in page order."""
    return page.evaluate("""(cmd) => [...document.querySelectorAll('p.command code')]
      .filter((c) => c.textContent.trim() === '$ ' + cmd)
      .map((c) => [...c.parentNode.nextElementSibling.querySelector('table').tBodies[0].rows]
        .map((tr) => tr.cells[tr.cells.length - 1].textContent.trim()))""", command)


def chips(page, figure, key):
    """A value chip of a step diagram, as the tables write it: (+0.7311, +0.6900)."""
    texts = page.locator(f'#{figure} [data-key="{key}"] .dg-vec mn').all_text_contents()
    return "(" + ", ".join(t.replace("\u2212", "-") for t in texts) + ")"


def step_widget(t):
    """The step widget of the shared page, back at the page's step."""
    host = t.widget("step_widget")
    host.get_by_role("button", name="Back to the page\u2019s step").click()
    return host


def type_inputs(host, values):
    for name, numbers in values.items():
        for n, text in enumerate(numbers):
            field = host.locator(f'input[data-input="{name}.{n}"]')
            field.fill("")
            field.type(text)  # key by key, as a reader types


def expected_step(values):
    """The command for these inputs, built here, and what it prints: {table: value column}."""
    args = []
    for name, flag in FIELDS.items():
        if name in values:
            text = ",".join(values[name])
            args.append(f"{flag}={text}" if text.startswith("-") else f"{flag} {text}")
    argv = [a for arg in args for a in arg.split(" ", 1)]
    printed_tables = [last_column(t) for t in tables("gated.py", "--step", *argv)]
    return " ".join([STEP, *args]), dict(zip(("weights", "lstm", "cell_update", "gru",
                                              "gru_chung"), printed_tables))


STEP_CASES = {
    "the issue's example": {"x_t": ["0.2", "-0.3"], "b_f": ["2"]},
    "every input": {"x_t": ["-0.7", "0.05"], "h_prev": ["0.9", "-0.9"],
                    "C_prev": ["-4", "1.5"], "b_f": ["-3"]},
    "the edges": {"x_t": ["10", "-10"], "h_prev": ["-10", "10"], "C_prev": ["10", "-0"],
                  "b_f": ["10"]},
    "ties and exponents": {"x_t": ["0.03125", "-0.00005"], "h_prev": ["1e-1", "+.5"]},
}


@pytest.mark.parametrize("case", list(STEP_CASES))
def test_the_step_tables_and_diagrams_are_what_the_command_prints(shared, case):
    values = STEP_CASES[case]
    command, want = expected_step(values)
    t = shared("ch13-gated/")
    host = step_widget(t)
    # what it keeps up to date: 4 + 6 + 3 + 4 + 4 table rows, 11 + 6 vectors on the two
    # diagrams (two numbers each), and the same 17 in the diagrams' descriptions
    assert host.locator("figure").get_attribute("data-bound") == "21 34 17"
    type_inputs(host, values)
    assert host.locator("[data-command]").inner_text() == "$ " + command
    got = page_step_tables(t.page, command)
    assert len(got) == 5, f"{len(got)} tables under `{command}`"
    assert sorted(got) == sorted(want.values()), f"`{command}`: the page shows {got}"
    rows = dict(zip(("f", "i", "C_tilde", "o", "C_t", "h_t"), want["lstm"]))
    rows.update(zip(("kept", "added"), want["cell_update"]))
    rows.update(zip(("h_prev", "C_prev", "x_t"), want["weights"]))
    for key, value in rows.items():
        assert chips(t.page, "lstm-step", key) == value, f"the LSTM diagram's {key}"
    gru = dict(zip(("z", "r", "h_tilde", "h_t"), want["gru"]))
    gru.update(h_prev=want["weights"][0], x_t=want["weights"][2])
    for key, value in gru.items():
        assert chips(t.page, "gru-step", key) == value, f"the GRU diagram's {key}"
    assert [shown(host, v) for v in ("f", "C_t", "h_t", "gru_h_t")] == \
        [rows["f"], rows["C_t"], rows["h_t"], gru["h_t"]], "the widget's own summary"
    desc = t.page.locator("#lstm-step desc").text_content()
    assert all(value in desc for value in rows.values()), desc  # read out as well as drawn
    host.get_by_role("button", name="Back to the page\u2019s step").click()
    default, at_default = expected_step({})
    assert sorted(page_step_tables(t.page, default)) == sorted(at_default.values())
    t.check_clean()


BAD = [("", "empty"), ("abc", "not a number"), ("12", "out of range"), ("-10.5", "out of range"),
       ("1,2", "not a number"), ("0.1234567890123", "too long"), ("nan", "not a number"),
       ("1e5", "out of range")]


@pytest.mark.parametrize("text,says", BAD)
def test_bad_input_says_so_and_keeps_the_last_good_step(shared, text, says):
    good = {"x_t": ["0.2", "-0.3"]}
    command, want = expected_step(good)
    t = shared("ch13-gated/")
    host = step_widget(t)
    type_inputs(host, good)
    field = host.locator('input[data-input="x_t.1"]')
    field.fill(text)
    message = host.locator(".rw-error")
    assert message.is_visible() and says in message.inner_text(), message.inner_text()
    assert "x_t, unit 2" in message.inner_text()
    assert field.get_attribute("aria-invalid") == "true"
    assert message.get_attribute("id") in field.get_attribute("aria-describedby")
    assert sorted(page_step_tables(t.page, command)) == sorted(want.values()), \
        "the tables left the last good step"
    assert host.locator("[data-command]").inner_text() == "$ " + command
    if text.strip() and says != "too long":  # the script refuses it too (a long number it
        # reads: the page's limit is the field's, 12 characters, enough for any setting)
        refused = run_script("gated.py", "--step", f"--x-t=0.2,{text}")
        assert refused.returncode == 2, (text, refused.stdout[:200])
    field.fill("-0.3")
    assert not message.is_visible() and field.get_attribute("aria-invalid") is None
    t.check_clean()


# -- chapter 14: the trained model ---------------------------------------------------------
#
# The widget draws from numpy's own random numbers (default_rng(seed): PCG64 seeded by
# SeedSequence, written out in textgen.js), not from uniforms handed to it, so that a
# reader's seed in the page is the seed of gru.py's predict(). The expected values come
# from gru.py itself, run on the served weights with the lines the code page tells a
# reader to run; the widget's data file plays no part.

def usage_lines():
    """The Python lines the code page shows under gru-trained.json, as a reader copies
    them (the highlighted block, its markup removed)."""
    page = (SITE / "code" / "gru" / "index.html").read_text("utf-8")
    after = page[page.index('id="gru-trainedjson"'):]
    block = re.search(r"<pre>.*?<code>(.*?)</code>", after, re.S).group(1)
    return html.unescape(re.sub(r"<[^>]+>", "", block))


def run_python(code, tmp_path):
    """`python3 -c code` in a folder holding gru.py and the served gru-trained.json."""
    shutil.copyfile(ROOT / "docs" / "code" / "gru.py", tmp_path / "gru.py")
    shutil.copyfile(SITE / "code" / "gru-trained.json", tmp_path / "gru-trained.json")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    return result.stdout


# What gru.py makes of each case (prompt, characters, temperature, seed): its predict(),
# greedy and drawn, and softmax of the logits after the prompt, by its own forward().
EXPECTED_JS = """
import json, sys
cases = json.loads(sys.argv[1]) if len(sys.argv) > 1 else CASES
out = []
for prompt, n, t, seed in cases:
    text = gru.preprocess(prompt)
    ids = gru.token_ids(text)[:, None]
    Hs, _, _ = gru.forward(params, 'gru', ids, gru.zero_state(params, 'gru', 1))
    P = np.exp(gru.log_softmax(Hs[-1] @ params['W_hq'] + params['b_q']))[0]
    out.append({'greedy': gru.predict(params, 'gru', text, n),
                'sampled': gru.predict(params, 'gru', text, n, t, np.random.default_rng(seed)),
                'p': {m['vocab'][v]: float(P[v]) for v in range(len(P))}})
print(json.dumps(out))
"""

MODEL_CASES = [("it has", 20, 0.5, 0), ("it has", 160, 1.0, 7), ("the time traveller", 80, 0.1, 1),
               ("Said the Psychologist!", 40, 2.0, 4294967295), ("q", 10, 1.35, 12345),
               ("  x", 20, 0.75, 3)]
TEMPS = [round(0.05 * k, 2) for k in range(2, 41)]  # the slider's positions, 0.1 to 2
LENGTHS = [10, 20, 40, 80, 160]


@pytest.fixture(scope="module")
def expected_model(tmp_path_factory):
    code = usage_lines() + "\nCASES = " + repr(MODEL_CASES) + "\n" + EXPECTED_JS
    lines = run_python(code, tmp_path_factory.mktemp("trained")).splitlines()
    return lines[:2], json.loads(lines[-1])  # what the usage prints, then the cases


def model_widget(t):
    host = t.widget("model_widget")
    return host, host.locator("figure")


def set_model(host, prompt, n, t, seed):
    host.locator('input[data-input="prompt"]').fill(prompt)
    move(host, "temperature", TEMPS.index(t))
    move(host, "length", LENGTHS.index(n))
    host.locator('input[data-input="seed"]').fill(str(seed))
    host.page.wait_for_function("(f) => f.dataset.model === 'ready'",
                                arg=host.locator("figure").element_handle(), timeout=10_000)


def model_shows(host):
    return host.evaluate("""(h) => ({
      greedy: h.querySelector('[data-value="greedy"]').dataset.text,
      sampled: h.querySelector('[data-value="sampled"]').dataset.text,
      python: h.querySelector('[data-value="python"]').textContent,
      top: [...h.querySelectorAll('.rw-top li')].map((li) => [li.dataset.char, +li.dataset.p,
                                                       li.querySelector('.rw-p').textContent])})""")


def test_the_code_pages_lines_print_the_samples_tables_last_greedy_row(expected_model):
    """What the code page says its lines print is what they print, and the greedy line is
    the samples table's last row (epoch 50) of `python3 gru.py`."""
    usage_printed, _ = expected_model
    samples = next(t for t in tables("gru.py") if t[0][:2] == ["epoch", "greedy"])
    assert samples[-1][0] == "50"
    assert usage_printed[0] == samples[-1][1].strip('"')
    page = (SITE / "code" / "gru" / "index.html").read_text("utf-8")
    after = html.unescape(re.sub(r"<[^>]+>", "", page[page.index('id="gru-trainedjson"'):]))
    assert "\n".join(usage_printed) in after


@pytest.mark.parametrize("case", range(len(MODEL_CASES)))
def test_the_model_in_the_page_writes_what_gru_py_writes(shared, expected_model, case):
    """Greedy and drawn text equal gru.py's predict() for the same prompt, length,
    temperature and seed; the five likeliest next characters are numpy's, to 1e-9."""
    prompt, n, temp, seed = MODEL_CASES[case]
    want = expected_model[1][case]
    t = shared("ch14-gru-lm/")
    host, _ = model_widget(t)
    set_model(host, prompt, n, temp, seed)
    got = model_shows(host)
    assert (got["greedy"], got["sampled"]) == (want["greedy"], want["sampled"])
    top = sorted(want["p"].items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [c for c, _, _ in got["top"]] == [c for c, _ in top]
    for (c, p, text), (_, q) in zip(got["top"], top):
        assert p == pytest.approx(q, rel=1e-9) and text == f"{q:.4f}", (c, p, q)
    t.check_clean()


def test_the_python_lines_under_the_text_print_the_text(shared, tmp_path):
    """The widget's "same in Python" lines, run after the code page's, print what the
    widget shows."""
    t = shared("ch14-gru-lm/")
    host, _ = model_widget(t)
    set_model(host, "Hello, World", 40, 0.85, 99)
    got = model_shows(host)
    printed = run_python(usage_lines() + "\n" + got["python"], tmp_path).splitlines()
    assert printed[2:] == [got["greedy"], got["sampled"]]
    assert got["greedy"].startswith("hello world")


def test_the_model_starts_at_the_samples_table_and_loads_only_when_used(tab):
    """Mounted, the widget shows the samples table's last greedy row (what gru.py writes
    after "it has" at epoch 50), said to be the text the model writes when run, and has
    not asked for the weights; its main button, first after the prompt, runs the model:
    the weights load once and it writes that same text. A key in the prompt is a first use
    too."""
    samples = next(x for x in tables("gru.py") if x[0][:2] == ["epoch", "greedy"])
    row = samples[-1][1].strip('"')
    t = tab("ch14-gru-lm/")
    host, figure = model_widget(t)
    assert figure.get_attribute("data-model") == "waiting"
    preview = host.locator('[data-value="preview"]')
    assert preview.is_visible() and preview.inner_text() == row
    assert host.locator('[data-value="greedy"]').is_hidden()
    assert "when run" in host.locator('[data-value="writer"]').inner_text()
    assert not [u for u in t.requests if u.endswith("/gru-trained.json")]
    main = host.locator("button").first
    assert main.get_attribute("data-action") == "run" and main.inner_text().startswith("Run the model")
    main.click()
    t.page.wait_for_function("(f) => f.dataset.model === 'ready'", arg=figure.element_handle())
    assert model_shows(host)["greedy"] == row
    assert preview.is_hidden() and host.locator('[data-value="greedy"]').is_visible()
    assert host.locator('[data-value="writer"]').inner_text().startswith("Written by the chapter's GRU")
    main.click()  # again: the weights are not fetched twice
    assert len([u for u in t.requests if u.endswith("/gru-trained.json")]) == 1
    t.check_clean()

    t = tab("ch14-gru-lm/")
    host, figure = model_widget(t)
    prompt = host.locator('input[data-input="prompt"]')
    prompt.press("End")
    prompt.press("Backspace")
    prompt.type("s")  # "it has" again
    t.page.wait_for_function("(f) => f.dataset.model === 'ready'", arg=figure.element_handle())
    assert model_shows(host)["greedy"] == row
    assert len([u for u in t.requests if u.endswith("/gru-trained.json")]) == 1
    t.check_clean()


MODEL_BAD = [("", "prompt: empty"), ("123 !?", None), ("x" * 201, "prompt: too long")]


@pytest.mark.parametrize("text,says", MODEL_BAD)
def test_a_bad_prompt_says_so_and_keeps_the_last_text(shared, text, says):
    t = shared("ch14-gru-lm/")
    host, _ = model_widget(t)
    set_model(host, "it has", 20, 0.5, 0)
    before = model_shows(host)
    prompt = host.locator('input[data-input="prompt"]')
    prompt.fill(text)
    message = host.locator(f'#{prompt.get_attribute("aria-describedby").split()[0]}')
    if says is None:  # only non-letters: read as one space, said so, and written after it
        note = host.locator(f'#{prompt.get_attribute("aria-describedby").split()[1]}')
        assert "Read as \u201c \u201d" in note.inner_text()
        assert prompt.get_attribute("aria-invalid") is None and not message.is_visible()
        assert model_shows(host)["greedy"].startswith(" ")
    else:
        assert message.is_visible() and message.inner_text().startswith(says)
        assert prompt.get_attribute("aria-invalid") == "true"
        assert model_shows(host) == before, "the text left the last good prompt"
    seed_field = host.locator('input[data-input="seed"]')
    seed_message = host.locator(f'#{seed_field.get_attribute("aria-describedby")}')
    for seed, error in (("1.5", "seed: not a whole number"), ("-1", "seed: out of range"),
                        ("", "seed: empty")):
        seed_field.fill(seed)
        assert seed_message.inner_text().startswith(error)
    host.locator('input[data-input="seed"]').fill("0")
    prompt.fill("it has")
    assert not message.is_visible() and model_shows(host)["greedy"] == before["greedy"]
    t.check_clean()


def test_the_model_works_by_keyboard_and_announces_its_text(tab, expected_model):
    t = tab("ch14-gru-lm/")
    host, figure = model_widget(t)
    prompt = host.get_by_label("prompt", exact=True)  # not the figure, "...: type a prompt"
    prompt.focus()
    t.page.keyboard.press("Tab")  # the main button, then the model (one stop), then the temperature
    assert t.page.evaluate("document.activeElement.dataset.action") == "run"
    t.page.keyboard.press("Tab")
    assert t.page.evaluate("document.activeElement.dataset.control") == "model"
    t.page.keyboard.press("Tab")
    assert t.page.evaluate("document.activeElement.dataset.control") == "temperature"
    t.page.keyboard.press("ArrowRight")  # 0.50 -> 0.55, and the model loads
    t.page.wait_for_function("(f) => f.dataset.model === 'ready'", arg=figure.element_handle())
    assert host.get_by_label("temperature").get_attribute("aria-valuetext") == "temperature 0.55"
    t.page.keyboard.press("ArrowLeft")  # back to the first case: "it has", 20, 0.5, seed 0
    want = expected_model[1][0]
    assert model_shows(host)["sampled"] == want["sampled"]
    host.locator('button[data-action="again"]').press("Enter")  # seed 1
    assert host.locator('input[data-input="seed"]').input_value() == "1"
    status = host.locator('[role="status"]')
    t.page.wait_for_function("(el) => el.textContent.startsWith('greedy: ')",
                             arg=status.element_handle(), timeout=5000)
    assert want["greedy"][len("it has"):] in status.inner_text()
    t.check_clean()


TOPS_JS = """(h) => Object.fromEntries(Object.entries({
  preview: '[data-value="preview"]', greedy: '[data-value="greedy"]', sampled: '[data-value="sampled"]',
  top: '.rw-top', z: '[data-value="z"]', temperature: 'input[data-control="temperature"]',
  length: 'input[data-control="length"]', again: 'button[data-action="again"]'})
  .map(([k, sel]) => { const r = h.querySelector(sel).getBoundingClientRect();
                       return [k, r.height ? [r.top, r.bottom] : null]; }))"""


def test_the_model_fits_a_phone(tab):
    """At 390 px: nothing runs off the screen, and what the model writes and its readout
    come before the sliders and buttons, idle and in use, so that a setting and what it
    changes share a screen."""
    t = tab("ch14-gru-lm/", viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    host, figure = model_widget(t)
    idle = host.evaluate(TOPS_JS)
    assert idle["preview"][1] <= min(idle[k][0] for k in ("temperature", "length", "again")), idle
    host.locator('button[data-action="run"]').tap()
    t.page.wait_for_function("(f) => f.dataset.model === 'ready'", arg=figure.element_handle())
    used = host.evaluate(TOPS_JS)
    settings = min(used[k][0] for k in ("temperature", "length", "again"))
    assert max(used[k][1] for k in ("greedy", "sampled", "top", "z")) <= settings, used
    assert settings - used["sampled"][0] < PHONE["height"], "the drawn text and its slider apart"
    move(host, "length", len(LENGTHS) - 1)  # the longest text wraps
    assert host.evaluate("(el) => el.getBoundingClientRect().right") <= PHONE["width"]
    assert t.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    t.check_clean()


# -- chapter 14: every character's numbers ------------------------------------------------
#
# The expected values are a numpy forward pass of the GRU written here, from the served
# weights (gru-trained.json) and the page's equations, d2l's
#   Z_t = sigma(x_t W_xz + H_prev W_hz + b_z), R_t = sigma(x_t W_xr + H_prev W_hr + b_r),
#   H~_t = tanh(x_t W_xh + (R_t * H_prev) W_hh + b_h), H_t = Z_t * H_prev + (1 - Z_t) * H~_t,
# with sigma as 1 / (1 + exp(-a)) (gru.py and textgen.js compute it through tanh), one
# character at a time: neither textgen.js nor gru.py's code. The texts themselves are held
# equal to gru.py's predict() by the tests above.

def served_model():
    return json.loads((SITE / "code" / "gru-trained.json").read_text("utf-8"))


def numpy_reading(text):
    """For each character t of text read from a zero state: the distribution of the next
    character (softmax of H_t W_hq + b_q) and the mean over the units of Z_t."""
    m = served_model()
    w = {name: np.array(v, np.float64) for name, v in m["weights"].items()}
    H = np.zeros(len(w["b_z"]))
    out = []
    for c in text:
        x = m["vocab"].index(c)  # a one-hot x_t picks row x of each W_x?
        Z = 1 / (1 + np.exp(-(w["W_xz"][x] + H @ w["W_hz"] + w["b_z"])))
        R = 1 / (1 + np.exp(-(w["W_xr"][x] + H @ w["W_hr"] + w["b_r"])))
        H_tilde = np.tanh(w["W_xh"][x] + (R * H) @ w["W_hh"] + w["b_h"])
        H = Z * H + (1 - Z) * H_tilde
        logits = H @ w["W_hq"] + w["b_q"]
        P = np.exp(logits - logits.max())
        out.append(({m["vocab"][v]: float(p) for v, p in enumerate(P / P.sum())}, float(Z.mean())))
    return out


def gate_level(z):
    """The static passage's shading (ch14_gru_lm.py's inside): tenths of the value as
    --inside prints it, to 4 decimals; level 0 is white."""
    return min(9, int(round(z, 4) * 10))


DETAIL_JS = """(h) => {
  const label = h.querySelector('[data-value="detail-label"]');
  const z = h.querySelector('[data-value="z"]');
  return {name: label.dataset.textName, t: +label.dataset.t, label: label.textContent,
          z: +z.dataset.z, zText: z.textContent,
          top: [...h.querySelectorAll('.rw-top li')].map((li) => [li.dataset.char, +li.dataset.p,
                                                           li.querySelector('.rw-p').textContent])};
}"""

TEXTS_JS = """(h) => Object.fromEntries(['greedy', 'sampled'].map((name) => {
  const p = h.querySelector(`[data-value="${name}"]`);
  return [name, {text: p.dataset.text, valuenow: p.getAttribute('aria-valuenow'),
                 said: p.getAttribute('aria-valuetext'),
                 classes: [...p.querySelectorAll('i')].map((i) => i.className)}];
}))"""

DETAIL_CASES = [("it has", 20, 0.5, 0), ("the time traveller", 40, 1.0, 7), ("q", 10, 1.35, 12345)]


def check_detail(got, want, where):
    """The readout for one character against numpy's numbers there."""
    P, z = want
    top = sorted(P.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [c for c, _, _ in got["top"]] == [c for c, _ in top], (where, got["top"], top)
    for (c, p, text), (_, q) in zip(got["top"], top):
        assert p == pytest.approx(q, rel=1e-6) and text == f"{q:.4f}", (where, c, p, q)
    assert got["z"] == pytest.approx(z, rel=1e-6) and got["zText"] == f"{z:.4f}", (where, got["z"], z)


def test_every_characters_next_five_and_mean_gate_are_numpys(shared):
    """For characters of the prompt and of both continuations (the first, the prompt's
    last, the first written, the last...), pointed at with the mouse: the five likeliest
    next characters and the mean update gate are those of the numpy GRU above, to 1e-6;
    every character of both texts is shaded at the level of its own mean gate."""
    t = shared("ch14-gru-lm/")
    host, _ = model_widget(t)
    for prompt, n, temp, seed in DETAIL_CASES:
        set_model(host, prompt, n, temp, seed)
        texts = host.evaluate(TEXTS_JS)
        start = host.evaluate(DETAIL_JS)  # as it starts: after the prompt, in the greedy text
        p = len(gru_preprocessed(prompt))
        assert (start["name"], start["t"]) == ("greedy", p - 1)
        for name, seen in texts.items():
            reading = numpy_reading(seen["text"])
            assert seen["classes"] == [f"p{gate_level(z)}" + (" rw-w" if i >= p else "")
                                       for i, (_, z) in enumerate(reading)], (prompt, name)
            for i in sorted({0, p // 2, p - 1, p, p + 3, len(seen["text"]) - 1}):
                host.locator(f'[data-value="{name}"] i[data-i="{i}"]').hover()
                got = host.evaluate(DETAIL_JS)
                assert (got["name"], got["t"]) == (name, i)
                assert f"\u2018{seen['text'][i]}\u2019 at step t = {i} " in got["label"]
                check_detail(got, reading[i], (prompt, name, i))
    t.check_clean()


def gru_preprocessed(prompt):
    return re.sub("[^A-Za-z]+", " ", prompt).lower()  # the page's note says so; tested above


def test_the_texts_are_one_tab_stop_each_and_move_by_arrow_keys(tab):
    """The two texts are two tab stops, not one per character: each a slider over its
    characters, moved by the arrow keys, Home and End, its value said in words with the
    numbers of the readout (2 decimals) and numpy's."""
    t = tab("ch14-gru-lm/")
    host, figure = model_widget(t)
    set_model(host, "it has", 20, 0.5, 0)
    greedy = host.locator('[data-value="greedy"]')
    assert greedy.get_attribute("role") == "slider" and greedy.get_attribute("tabindex") == "0"
    stops = host.evaluate("(h) => [...h.querySelectorAll('input, button, [tabindex]')]"
                          ".filter((e) => !e.closest('[hidden]') && e.tabIndex >= 0)"
                          ".filter((e) => e.type !== 'radio' || e.checked).length")  # a group: one stop
    assert stops <= 10, f"{stops} tab stops in the text generator"
    greedy.focus()
    text = host.evaluate(TEXTS_JS)["greedy"]["text"]
    reading = numpy_reading(text)
    for key, at in (("End", len(text) - 1), ("ArrowLeft", len(text) - 2), ("Home", 0),
                    ("ArrowRight", 1), ("PageDown", 11)):
        t.page.keyboard.press(key)
        got = host.evaluate(DETAIL_JS)
        assert (got["name"], got["t"]) == ("greedy", at), key
        assert greedy.get_attribute("aria-valuenow") == str(at)
        check_detail(got, reading[at], ("keyboard", at))
        P, z = reading[at]
        said = greedy.get_attribute("aria-valuetext")
        first = max(P, key=P.get)
        assert said.startswith(f"character {text[at] if text[at] != ' ' else 'space'}, step {at}, ")
        assert f"next {first if first != ' ' else 'space'} {P[first]:.2f}" in said
        assert said.endswith(f"mean update gate {z:.2f}"), said
        assert host.locator(f'[data-value="greedy"] i[data-i="{at}"]').get_attribute("data-at") == ""
    t.page.keyboard.press("Tab")  # the drawn text next, not the greedy text's next character
    assert t.page.evaluate("document.activeElement.dataset.value") == "sampled"
    assert host.evaluate(DETAIL_JS)["name"] == "sampled"  # focused, its numbers are read out
    t.page.keyboard.press("End")
    assert host.evaluate(DETAIL_JS)["name"] == "sampled"
    t.check_clean()


# -- chapter 14: how far back each prediction reaches ---------------------------------------
#
# The GRU's expected values are gru.py's compute_reach, run here on the served weights of
# --export and the validation text gru.py reads (its read_corpus): a second path to the
# numbers of --reach's record. The LSTM's and the plain RNN's weights are not served, so
# theirs are the record's (gru-reach.json), which tests/test_gru.py holds to compute_reach
# and compute_reach to finite differences, cell by cell.

CELL_NAMES = ["GRU", "LSTM", "plain RNN"]


def served_reach():
    return json.loads((SITE / "code" / "gru-reach.json").read_text("utf-8"))


@pytest.fixture(scope="module")
def expected_reach():
    """(passage with the character after it, {model name: reach})."""
    gru = load_script("gru.py")
    m, r = served_model(), served_reach()
    w = {name: np.array(v) for name, v in m["weights"].items()}
    params = {"W_x": np.stack([w["W_xz"], w["W_xr"], w["W_xh"]]),
              "W_h": np.stack([w["W_hz"], w["W_hr"], w["W_hh"]]),
              "b": np.stack([w["b_z"], w["b_r"], w["b_h"]]), "W_hq": w["W_hq"], "b_q": w["b_q"]}
    validation = gru.read_corpus(gru.CORPUS)[m["config"]["num_train"]:]
    start = validation.index(r["passage"])
    passage = validation[start:start + len(r["passage"]) + 1]  # and the next, the last one's target
    reach = {x["model"]: x["reach"] for x in r["models"]}
    assert list(reach) == CELL_NAMES and passage[-1] == r["next_char"]
    assert gru.compute_reach(params, "gru", passage) == reach["GRU"]
    return passage, reach


def test_the_reach_passage_is_whole_words_from_the_validation_texts_first(expected_reach):
    """The passage starts at the first word that begins in the validation text (the
    split from the training text falls mid-word) and ends at the end of a word."""
    gru = load_script("gru.py")
    validation = gru.read_corpus(gru.CORPUS)[served_model()["config"]["num_train"]:]
    passage, _ = expected_reach
    start = validation.index(passage)
    assert start > 0 and validation[start - 1] == " " and " " not in validation[:start - 1]
    assert passage[0] != " " and passage[-1] == " " and passage[-2] != " "
    assert len(passage) - 1 > gru.INSIDE_PASSAGE - 20


def reach_widget(t):
    return t.widget("reach_widget")


REACH_JS = """(h) => {
  const readout = h.querySelector('[data-value="reach-readout"]');
  const p = h.querySelector('[data-value="passage"]');
  return {t: +readout.dataset.t, readout: readout.textContent,
          top: h.querySelector('[data-value="reach-top"]').textContent,
          topK: +h.querySelector('[data-value="reach-top-k"]').textContent,
          said: p.getAttribute('aria-valuetext'), valuenow: p.getAttribute('aria-valuenow'),
          cell: h.querySelector('[data-value="reach-cell"]').textContent,
          lines: [...h.querySelectorAll('path.rw-line')].map((l) => ({cls: l.getAttribute('class').replace('rw-line ', '')})),
          chars: [...p.querySelectorAll('i')].map((i) => [i.className, i.dataset.g === undefined ? null : +i.dataset.g]),
          rows: [...h.querySelectorAll('[data-value="reach-values"] tbody tr')].map((tr) =>
            [+tr.dataset.k, ...[...tr.cells].map((c) => c.textContent)])};
}"""


def reach_level(share, scale, decades):
    """The shading the widget's caption states: per prediction, a share of its largest;
    log: ten levels over `decades` decades; linear: tenths."""
    if scale == "linear":
        return min(9, math.floor(share * 10))
    return max(0, min(9, math.floor(10 + math.log10(share) * 10 / decades))) if share > 0 else 0


def check_reach(got, t, rows, passage, scale, decades, cell="GRU"):
    """The widget at prediction t: the characters shaded by `cell`'s row, the readout's
    largest, and the table's row per k with every model's value."""
    row = rows[cell][t]
    assert got["t"] == t and got["valuenow"] == str(t) and got["cell"] == cell
    top = max(row)
    for i, (cls, g) in enumerate(got["chars"]):
        k = t - i
        if 0 <= k < len(row):
            assert g == pytest.approx(row[k], rel=1e-9), (t, k, g, row[k])
            assert cls == f"n{reach_level(row[k] / top, scale, decades)}", (t, k, cls, scale)
        else:
            assert g is None and cls == ("rw-next" if i == t + 1 else ""), (t, i, cls)
    assert got["topK"] == row.index(top) and float(got["top"]) == pytest.approx(top, rel=1e-9)
    if t + 1 < len(got["chars"]):  # the last character's next one is not on the page
        assert f"character \u2018{passage[t]}\u2019, predicting the next, \u2018{passage[t + 1]}\u2019" \
            in got["readout"]
    else:
        assert f"character \u2018{passage[t]}\u2019: " in got["readout"]
    ks = [k for k in (0, 1, 2, 4, 8, 16, 32, 63) if k < len(row)]
    assert [r[0] for r in got["rows"]] == ks
    for k, k_text, char, *values in got["rows"]:
        assert k_text == str(k) and char == passage[t - k].replace(" ", "\u2423")
        assert [float(v) for v in values] == [pytest.approx(rows[c][t][k], rel=1e-9)
                                              for c in CELL_NAMES], (t, k)
    assert [line["cls"].split()[0] for line in got["lines"]] == \
        ["rw-main" if c == cell else "rw-ref" for c in CELL_NAMES]


REACH_TARGETS = [3, 40, 63, 100, 200, 250]


def test_how_far_back_shows_gru_pys_compute_reach(shared, expected_reach):
    """Before it is used, it shows the last character's prediction (its numbers come with
    the page) and says how to choose another; pointed at, each of several characters of
    the passage shows, over the characters before it, compute_reach's gradient norms
    (the number on each, and its shading at the scale the page states, log then linear)
    in each of the three models, and the readout's numbers."""
    passage, reach = expected_reach
    t = shared("ch14-gru-lm/")
    host = reach_widget(t)
    figure = host.locator("figure")
    last = len(passage) - 2
    assert figure.get_attribute("data-model") == "waiting"
    check_reach(host.evaluate(REACH_JS), last, reach, passage, "log", 5)
    assert "Point at any other character" in host.locator('[data-value="reach-cue"]').inner_text()
    label = host.locator('input[data-control="scale"] + label')
    decades = int(re.search(r"log scale, (\d+) decades", label.first.inner_text()).group(1))
    host.locator(f'[data-value="passage"] i[data-i="{REACH_TARGETS[0]}"]').hover()
    t.page.wait_for_function("(f) => f.dataset.model === 'ready'", arg=figure.element_handle(),
                             timeout=10_000)
    assert not host.locator('[data-value="reach-cue"]').is_visible()
    for cell in CELL_NAMES:
        choose(host, "cell", cell)
        for scale in ("log", "linear"):
            label.nth(0 if scale == "log" else 1).click()
            for target in REACH_TARGETS:
                host.locator(f'[data-value="passage"] i[data-i="{target}"]').hover()
                check_reach(host.evaluate(REACH_JS), target, reach, passage, scale, decades, cell)
    label.nth(0).click()
    choose(host, "cell", "GRU")
    t.check_clean()


def test_how_far_back_means_are_the_records(shared, expected_reach):
    """The table under the view (`gru.py --reach`, which test_page_matches_script holds to
    the command) prints each model's mean over the passage of compute_reach's rows."""
    _, reach = expected_reach
    t = shared("ch14-gru-lm/")
    rows = t.page.evaluate(PAGE_TABLES_JS, "python3 gru.py --reach")[0]
    assert rows[0] == ["k"] + [c.replace(" ", "") for c in CELL_NAMES]
    for k, *means in rows[1:]:
        k = int(k)
        assert [float(v) for v in means] == [
            pytest.approx(np.mean([row[k] for row in reach[c] if len(row) > k]), rel=6e-3)
            for c in CELL_NAMES], k


def test_how_far_back_by_keyboard_and_touch(tab, expected_reach):
    """One tab stop: focused, it loads the gradients and stays at the last character;
    the arrow keys move, the value is said in words. On a 390 px phone, a tap chooses."""
    passage, reach = expected_reach
    t = tab("ch14-gru-lm/")
    host = reach_widget(t)
    chars = host.locator('[data-value="passage"]')
    assert chars.get_attribute("role") == "slider"
    assert not [u for u in t.requests if u.endswith("/gru-reach.json")]  # not until used
    result = run_axe(t.page, AXE_WIDGETS)  # as it waits, showing the last character's prediction
    assert not [(v["id"], [n["target"] for n in v["nodes"]][:3]) for v in result["violations"]]
    chars.focus()
    t.page.wait_for_function("(f) => f.dataset.model === 'ready'",
                             arg=host.locator("figure").element_handle(), timeout=10_000)
    last = len(passage) - 2
    for key, at in (("ArrowLeft", last - 1), ("Home", 0), ("ArrowRight", 1), ("End", last)):
        t.page.keyboard.press(key)
        got = host.evaluate(REACH_JS)
        check_reach(got, at, reach, passage, "log", 5)
        k = reach["GRU"][at].index(max(reach["GRU"][at]))
        assert got["said"].startswith(f"GRU, character {passage[at] if passage[at] != ' ' else 'space'}, "
                                      f"step {at}"), got["said"]
        assert f"{k} back " in got["said"]
    t.check_clean()
    phone = tab("ch14-gru-lm/", viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    host = reach_widget(phone)
    host.locator('[data-value="passage"] i[data-i="100"]').tap()
    phone.page.wait_for_function("(f) => f.dataset.model === 'ready'",
                                 arg=host.locator("figure").element_handle(), timeout=10_000)
    check_reach(host.evaluate(REACH_JS), 100, reach, passage, "log", 5)
    host.locator('[data-value="passage"] i[data-i="40"]').tap()
    check_reach(host.evaluate(REACH_JS), 40, reach, passage, "log", 5)
    model, _ = model_widget(phone)  # and the text generator's characters, by touch
    model.locator('button[data-action="run"]').tap()
    phone.page.wait_for_function("(f) => f.dataset.model === 'ready'",
                                 arg=model.locator("figure").element_handle())
    model.locator('[data-value="sampled"] i[data-i="9"]').tap()
    got = model.evaluate(DETAIL_JS)
    assert (got["name"], got["t"]) == ("sampled", 9)
    check_detail(got, numpy_reading(model.evaluate(TEXTS_JS)["sampled"]["text"])[9], "tap")
    for h in (host, model):
        assert h.evaluate("(el) => el.getBoundingClientRect().right") <= PHONE["width"]
    assert phone.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    for served in ("gru-reach.json", "gru-trained.json"):  # each fetched once
        assert len([u for u in phone.requests if u.endswith("/" + served)]) == 1, served
    phone.check_clean()


SHADES_JS = """(h) => {
  const colour = (sel) => Object.fromEntries([...document.querySelectorAll(sel)].map((i) =>
    [i.className.split(' ')[0], getComputedStyle(i).backgroundColor]));
  return {page: colour('.inside:not(.rw-results) > p.shaded i'),
          model: colour('.rw-results .rw-chars i'), reach: colour('.rw-passage i')};
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_shading_is_the_static_passages_in_both_schemes(tab, theme):
    """A level of the texts' gate shading, and of the reach, has the colour of the same
    level in the static passage of 14.6 (site.css), in either colour scheme."""
    t = tab("ch14-gru-lm/", color_scheme=theme)
    host, figure = model_widget(t)
    set_model(host, "the time traveller", 160, 1.0, 7)
    reach = reach_widget(t)
    reach.locator('[data-value="passage"] i[data-i="200"]').hover()
    t.page.wait_for_function("(f) => f.dataset.model === 'ready'",
                             arg=reach.locator("figure").element_handle(), timeout=10_000)
    shades = t.page.evaluate(SHADES_JS)
    for widget in ("model", "reach"):
        common = sorted(set(shades[widget]) & set(shades["page"]) - {"p0", "n0", "rw-next", ""})
        assert len(common) >= 3, (widget, sorted(shades[widget]))
        for level in common:
            assert shades[widget][level] == shades["page"][level], (widget, level, theme)
        assert shades[widget][common[-1]] != "rgba(0, 0, 0, 0)", (widget, "not shaded")
    t.check_clean()


def css_colour(text):
    """A computed colour, "rgb(...)", "rgba(...)" or color-mix's "color(srgb ...)", as
    ((r, g, b) in 0..255, alpha)."""
    m = re.fullmatch(r"color\(srgb ([\d.e-]+) ([\d.e-]+) ([\d.e-]+)(?: / ([\d.]+))?\)", text)
    if m:
        return tuple(float(v) * 255 for v in m.groups()[:3]), float(m.group(4) or 1)
    m = re.fullmatch(r"rgba?\(([\d.]+), ([\d.]+), ([\d.]+)(?:, ([\d.]+))?\)", text)
    assert m, text
    return tuple(float(v) for v in m.groups()[:3]), float(m.group(4) or 1)


def over(colour, under):
    """A colour with alpha composited over an opaque one."""
    rgb, a = colour
    return tuple(a * c + (1 - a) * u for c, u in zip(rgb, under))


def contrast(x, y):
    """WCAG 2.1's contrast ratio of two opaque colours."""
    def luminance(rgb):
        lin = [(c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4)
               for c in rgb]
        return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]
    hi, lo = sorted((luminance(x), luminance(y)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


LEVELS_JS = """() => {
  const passage = document.querySelector('.inside:not(.rw-results) > p.shaded');
  const out = {page: getComputedStyle(document.body).backgroundColor, levels: {}};
  for (const sign of ['p', 'n']) for (let k = 1; k <= 9; k++) {
    const i = document.createElement('i');  // a character of the passage at level k
    i.className = sign + k;
    i.textContent = 'a';
    passage.appendChild(i);
    out.levels[sign + k] = [getComputedStyle(i).backgroundColor, getComputedStyle(i).color];
    i.remove();
  }
  return out;
}"""


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_shading_reads_and_its_legends_are_true_in_both_schemes(tab, theme):
    """On every level of the shading (orange and blue, the passage's and so the widgets'),
    the text keeps WCAG AA's 4.5:1 against the shade (both composited over the page); at
    night the darkest level stands out from the page by at least 3:1 (WCAG's ratio for the
    parts of a graphic), as #9a6400 (2.7:1) did not; the readout's mean-gate box is
    readable too; and the legends (the passage's label, the text generator's hint, the
    reach's caption) call level 0 nothing the page is not: no "white" on a dark page."""
    t = tab("ch14-gru-lm/", color_scheme=theme)
    host, _ = model_widget(t)
    set_model(host, "the time traveller", 40, 1.0, 7)
    got = t.page.evaluate(LEVELS_JS)
    page = over(css_colour(got["page"]), (255, 255, 255))
    for level, (background, colour) in got["levels"].items():
        shade = over(css_colour(background), page)
        assert contrast(over(css_colour(colour), shade), shade) >= 4.5, (theme, level, background, colour)
    if theme == "dark":
        for sign in "pn":
            shade = over(css_colour(got["levels"][sign + "9"][0]), page)
            assert contrast(shade, page) >= 3, (sign + "9", contrast(shade, page))
    box = host.locator('[data-value="z"]').evaluate(
        "(el) => [getComputedStyle(el).backgroundColor, getComputedStyle(el).color]")
    shade = over(css_colour(box[0]), page)
    assert contrast(over(css_colour(box[1]), shade), shade) >= 4.5, box
    legends = [t.page.locator(".inside .shaded-label").first.text_content(),
               host.locator(".rw-hint").inner_text(),
               reach_widget(t).locator("figcaption").inner_text()]
    if page != (255, 255, 255):
        assert not [x for x in legends if re.search(r"\bwhite\b", x)], legends
    assert "unshaded" in legends[0] and "unshaded" in legends[1]
    t.check_clean()


# -- chapter 15: the experiment, one cell and lag at a time -------------------------------
#
# The expected values are the page's own tables (15.2's accuracy, 15.4's gradients, 15.3's
# curves), which tests/test_page_matches_script.py holds equal to what memory.py prints, and, for a
# few short rows, `memory.py --row` run here (a few seconds each): its per-seed rows are
# those of the grid the build trains (the same networks, the same float32 arithmetic).

PAGE_TABLES_JS = """(cmd) => [...document.querySelectorAll('p.command code')]
  .filter((c) => c.textContent.trim() === '$ ' + cmd)
  .map((c) => [...c.parentNode.nextElementSibling.querySelector('table').rows]
    .map((tr) => [...tr.cells].map((td) => td.textContent.replace(/\\s+/g, ''))))"""

MEMORY_JS = """(host) => ({
  model: host.querySelector('input[data-control="model"]:checked + label').textContent.replace(/\\s+/g, ''),
  lag: host.querySelector('input[data-control="lag"]:checked + label').textContent,
  learned: host.querySelector('[data-value="learned"]').textContent,
  spread: host.querySelector('[data-value="spread"]').textContent.replace(/\\s+/g, ''),
  g1_init: host.querySelector('[data-value="g1_init"]').textContent,
  g1_trained: host.querySelector('[data-value="g1_trained"]').textContent,
  command: host.querySelector('[data-command]').textContent,
  rows: [...host.querySelectorAll('tbody tr')].map((tr) => [...tr.cells].map((td) => td.textContent))})"""

LEARNED = 0.95  # the page's threshold: "a seed ... learned a lag when its test accuracy is at least 0.95"


def memory_widget(t):
    return t.widget("memory_widget")


def choose(host, control, label):
    """Check the radio button of a group whose label reads `label` (spaces ignored), by a
    click on its label, as a reader does."""
    options = host.locator(f'input[data-control="{control}"] + label')
    texts = [re.sub(r"\s+", "", x) for x in options.all_text_contents()]
    options.nth(texts.index(re.sub(r"\s+", "", label))).click()


def test_memory_widget_shows_the_pages_tables_at_every_cell_and_lag(shared):
    """All 25 settings: the mean (lowest-highest) final accuracy is 15.2's table's cell, the
    medians of g_1 before and after training 15.4's two tables' cells."""
    t = shared("ch15-memory/")
    host = memory_widget(t)
    assert "Counting a seed as having learned a lag when its test accuracy is at least " \
        f"{LEARNED:g}" in (SITE / "ch15-memory" / "index.html").read_text("utf-8")
    accuracy = t.page.evaluate(PAGE_TABLES_JS, "python3 memory.py --accuracy")[0]
    init, trained = t.page.evaluate(PAGE_TABLES_JS, "python3 memory.py --gradient")[:2]
    models, lags = accuracy[0][1:], [row[0] for row in accuracy[1:]]
    assert len(models) == 5 and lags == ["5", "10", "20", "50", "100"]
    wrong = []
    for m, model in enumerate(models):
        for n, lag in enumerate(lags):
            choose(host, "model", model)
            choose(host, "lag", lag)
            got = host.evaluate(MEMORY_JS)
            assert (got["model"], got["lag"]) == (model, lag)
            g_row = [r for r in init if r[0] == model], [r for r in trained if r[0] == model]
            want = {"spread": accuracy[1 + n][1 + m], "g1_init": g_row[0][0][1 + n],
                    "g1_trained": g_row[1][0][1 + n]}
            seen = {k: got[k] for k in want}
            if seen != want:
                wrong.append((model, lag, seen, want))
    assert not wrong, f"{len(wrong)} of 25 settings differ, first: {wrong[0]}"
    t.check_clean()


ROWS = [("rnn", None, 50), ("lstm", "0", 10), ("gru", None, 5), ("lstm", "2", 20)]


@pytest.mark.parametrize("cell,b_f,lag", ROWS)
def test_memory_widget_rows_are_what_memory_py_row_prints(shared, cell, b_f, lag):
    """Every seed's accuracy, loss and g_1 before and after, the command that prints them,
    and how many seeds learned: memory.py --row, run here."""
    argv = ["--row", "--cell", cell] + (["--forget-bias", b_f] if b_f else []) + ["--lag", str(lag)]
    out = printed("memory.py", *argv)
    model = re.match(r"(.*) at lag (\d+),", out).group(1)  # "LSTM b_f=0 at lag 10, ..."
    row = tables("memory.py", *argv)[0]
    assert row[0] == ["seed", "test accuracy", "test loss", "g_1 at init", "g_1 trained"]
    accs = [float(r[1]) for r in row[1:]]
    k = sum(a >= LEARNED for a in accs)
    t = shared("ch15-memory/")
    host = memory_widget(t)
    choose(host, "model", model.replace("b_f=", "bf="))
    choose(host, "lag", str(lag))
    got = host.evaluate(MEMORY_JS)
    assert got["command"] == "$ python3 memory.py " + " ".join(argv)
    assert got["rows"] == row[1:]
    assert got["learned"] == f"{k} of {len(accs)} seeds {'learns' if k == 1 else 'learn'}"
    mean = re.search(r"mean test accuracy (\d\.\d\d)", out).group(1)
    assert got["spread"].startswith(mean + "("), (got["spread"], mean)
    t.check_clean()


CURVE_POINTS_JS = """(host) => {
  const svg = host.querySelector('svg.rw-svg');
  const scale = (anchor, attr, shift) => {  // an axis's value at a coordinate, from its ticks
    const ticks = [...svg.querySelectorAll(`.rw-ticks text[text-anchor="${anchor}"]`)]
      .map((t) => [+t.textContent, +t.getAttribute(attr) - shift]);
    const [v0, c0] = ticks[0], [v1, c1] = ticks[ticks.length - 1];
    return (c) => v0 + (c - c0) * (v1 - v0) / (c1 - c0);
  };
  const sx = scale('middle', 'x', 0), sy = scale('end', 'y', 4);
  const points = (p) => p.getAttribute('d').slice(1).split('L')
    .map((xy) => [Math.round(sx(+xy.split(' ')[0])), sy(+xy.split(' ')[1])]);
  return {seeds: [...svg.querySelectorAll('path.rw-main')].map(points),
          means: [...svg.querySelectorAll('path.rw-ref')].map(points),
          chance: [...svg.querySelectorAll('path.rw-chance')].map(points)};
}"""


def test_memory_widget_starts_at_the_curves_figure_and_draws_its_numbers(shared):
    """At its start, the figure's lag and its five means faint; for every cell at that lag,
    the seeds' drawn curves (read back from the SVG, to the drawing's 0.1 px) give the
    page's curves table: mean (lowest-highest) at its steps."""
    t = shared("ch15-memory/")
    html_text = (SITE / "ch15-memory" / "index.html").read_text("utf-8")
    lag = re.search(r"<figcaption>Lag (\d+)\. Lines: mean", html_text).group(1)
    curves = t.page.evaluate(PAGE_TABLES_JS, "python3 memory.py --curves")[0]
    t.page.reload(wait_until="networkidle")  # the widget as it starts
    host = memory_widget(t)
    got = host.evaluate(MEMORY_JS)
    assert got["lag"] == lag and got["model"] == "LSTMbf=2"
    steps = [int(r[0].replace(",", "")) for r in curves[1:]]
    tol = 0.005 + 0.002  # the table's rounding, and the drawing's
    for m, model in enumerate(curves[0][1:]):
        choose(host, "model", model)
        drawn = host.evaluate(CURVE_POINTS_JS)
        assert len(drawn["seeds"]) == 4 and len(drawn["means"]) == 5 and len(drawn["chance"]) == 1
        assert all(abs(v - 0.25) < 0.002 for _, v in drawn["chance"][0])
        seeds = [dict(curve) for curve in drawn["seeds"]]  # step (read off the x axis) -> value
        for k, step in enumerate(steps):
            at = [curve[step] for curve in seeds]
            mean, low, high = (float(x) for x in re.findall(r"\d\.\d\d", curves[1 + k][1 + m]))
            assert abs(sum(at) / 4 - mean) <= tol and abs(min(at) - low) <= tol \
                and abs(max(at) - high) <= tol, (model, step, at, curves[1 + k][1 + m])
            assert abs(dict(drawn["means"][m])[step] - mean) <= tol, (model, step)
    t.check_clean()


def test_memory_widget_works_by_keyboard_and_announces_the_key_numbers(tab):
    t = tab("ch15-memory/")
    host = memory_widget(t)
    host.locator('input[data-control="model"]:checked').focus()
    t.page.keyboard.press("ArrowRight")  # LSTM b_f = 2 -> GRU
    t.page.keyboard.press("Tab")  # to the lag group's checked button
    assert t.page.evaluate("document.activeElement.dataset.control") == "lag"
    t.page.keyboard.press("ArrowLeft")  # 50 -> 20
    got = host.evaluate(MEMORY_JS)
    assert (got["model"], got["lag"]) == ("GRU", "20")
    status = host.locator('[role="status"]')
    t.page.wait_for_function("(el) => el.textContent.startsWith('GRU at lag 20: ')",
                             arg=status.element_handle(), timeout=5000)
    said = status.inner_text()
    assert got["learned"] in said and "before training" in said, said
    assert got["g1_trained"].split("e")[0] in said, said
    t.check_clean()


def test_memory_widget_fits_a_phone_and_works_by_touch(tab):
    t = tab("ch15-memory/", viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    host = memory_widget(t)
    host.locator('input[data-control="model"] + label').first.tap()  # the plain RNN
    host.locator('input[data-control="lag"] + label').last.tap()  # lag 100
    got = host.evaluate(MEMORY_JS)
    assert (got["model"], got["lag"]) == ("plainRNN", "100")
    assert got["learned"] == "0 of 4 seeds learn"
    for box in host.locator('input[type="radio"] + label').evaluate_all(
            "ls => ls.map((l) => l.parentNode.getBoundingClientRect())"):
        assert box["height"] >= 35 and box["right"] <= PHONE["width"], box  # a finger's target
    assert host.evaluate("(el) => el.getBoundingClientRect().right") <= PHONE["width"]
    table = host.locator("table")  # the seeds' rows whole, without scrolling sideways
    assert table.evaluate("(t) => t.scrollWidth <= t.clientWidth && t.getBoundingClientRect().right"
                          " <= document.documentElement.clientWidth")
    assert t.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    t.check_clean()


# -- loading, weight, no JavaScript ------------------------------------------------------

# -- chapter 18: the scan, round by round ----------------------------------------------

def test_the_scan_widget_shows_what_recurrence_py_scan_prints_every_round(shared):
    """Every round's name and B_t, then the scan's and the loop's h_t, against the table
    `recurrence.py --scan` prints ('trace')."""
    trace = next(t for t in tables("recurrence.py", "--scan") if t[0][1] == "what it does")
    header, rows = trace[0], trace[1:]
    T, rounds = len(header) - 2, [r for r in rows if r[0] != ""]
    t = shared("ch18-recurrence/")
    host = t.widget("scan_widget")
    got = sweep(host, [{"stage": k} for k in range(len(rounds))])
    for row, seen in zip(rounds, got):
        assert (seen["round"], [seen[f"B{j}"] for j in range(T)]) == (row[1], row[2:])
    assert [got[-1][f"h{j}"] for j in range(T)] == rows[-2][2:]  # a_t B_t + b_t
    assert [got[-1][f"loop{j}"] for j in range(T)] == rows[-1][2:]
    assert not any(got[0][f"h{j}"] for j in range(T)), "h_t shown before the last round"
    t.check_clean()


WIDGETS = {"ch12-rnn/": ("decay_widget", "scales_widget"),
           "ch13-gated/": ("bias_widget", "step_widget"),
           "ch14-gru-lm/": ("model_widget", "reach_widget", "trainer_widget"),
           "ch15-memory/": ("memory_widget",),
           "ch16-training/": ("clip_widget", "truncation_widget"),
           "ch17-deeper/": ("attention_widget", "recall_widget", "beam_widget"),
           "ch18-recurrence/": ("scan_widget",)}


@pytest.mark.parametrize("page_path", list(WIDGETS))
def test_widgets_load_when_they_come_near_the_screen(tab, page_path):
    """Nothing of a widget is fetched as the page opens; scrolled to, each one starts."""
    t = tab(page_path)
    early = [u for u in t.requests if any(w in urlparse(u).path for w in WIDGET_FILES)]
    assert not early, f"/{page_path} fetched widget files before they were in view: {early}"
    for name in WIDGETS[page_path]:
        t.widget(name)
    fetched = {urlparse(u).path.rsplit("/", 1)[-1] for u in t.requests}
    assert {"core.js", "kit.js", "widgets.css"} <= fetched
    assert {f"{n}.json" for n in WIDGETS[page_path]} <= fetched
    t.check_clean()


WIDGET_BUDGET = 36_000  # bytes sent, gzip-compressed as GitHub Pages serves text


def test_each_widget_weighs_under_its_budget():
    """Code, styles and data of each widget, loaded on demand: bounded all the same, in
    the bytes a reader downloads (each file gzip-compressed, level 6, as a web server
    sends it; benchmarks/lighthouse.py serves the site so). Counted raw, the bound was
    100,000 bytes, and the kit's comments counted against every widget: the largest,
    chapter 12's scales (55 curves of 100 points), sat within 100 bytes of it."""
    assets = SITE / "assets" / "widgets"

    def sent(path):
        return len(gzip.compress(path.read_bytes(), 6, mtime=0))
    shared = sum(sent(assets / f) for f in ("core.js", "kit.js", "widgets.css"))
    for page, names in WIDGETS.items():
        for name in names:
            data = next(SITE.glob(f"widgets/*/{name}.json"))
            kind = re.search(r'data-widget="(\w+)" data-src="[^"]*/' + name,
                             (SITE / page / "index.html").read_text("utf-8")).group(1)
            total = shared + sent(assets / f"{kind}.js") + sent(data)
            assert total < WIDGET_BUDGET, f"{name}: {total:,} bytes sent"


@pytest.mark.parametrize("page_path", list(WIDGETS))
def test_without_javascript_the_page_is_as_built(tab, page_path):
    t = tab(page_path, java_script_enabled=False)
    html = (SITE / page_path / "index.html").read_text("utf-8")
    plots = t.page.locator("figure.plot img")
    figures = len(re.findall(r'<figure class="plot[ "]', html))  # the lead picture too
    assert plots.count() == figures * 2  # light and dark
    for n in range(plots.count()):
        img = plots.nth(n)
        folded = img.evaluate("(i) => !!i.closest('details:not([open])')")  # one click away
        if img.get_attribute("src").endswith("#only-light") and not folded:
            img.scroll_into_view_if_needed()  # laid out, then loaded, a frame or two later
            img.wait_for(state="visible", timeout=5000)  # (site.css: content-visibility: auto)
            t.page.wait_for_function("(i) => i.complete && i.naturalWidth > 0",
                                     arg=img.element_handle(), timeout=5000)
    assert t.page.locator("figure.diagram svg").count() == html.count('<figure class="diagram"')
    assert t.page.locator(".rw-figure").count() == 0
    heights = t.page.locator(".rw-widget").evaluate_all("hs => hs.map((h) => h.offsetHeight)")
    assert heights and set(heights) == {0}, heights
    assert not [u for u in t.requests if any(w in urlparse(u).path for w in WIDGET_FILES)]


# -- accessibility, keyboard, touch, motion, both schemes ----------------------------------

def axe_problems(page):
    return [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
            for v in run_axe(page, AXE_WIDGETS)["violations"]]


@pytest.mark.parametrize("width", [1280, 390])
@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("page_path", list(WIDGETS))
def test_axe_finds_nothing_with_the_widgets_idle_and_in_use(tab, page_path, theme, width):
    """axe-core 4.14 on every widget as it starts (idle) and after a reader has moved
    every control (in use), at 1280 px and on a 390 px phone, in both schemes."""
    phone = dict(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    t = tab(page_path, color_scheme=theme, **(phone if width == 390 else {}))
    hosts = [t.widget(name) for name in WIDGETS[page_path]]
    idle = axe_problems(t.page)
    assert not idle, f"/{page_path} ({theme}, {width} px, idle): {idle}"
    for host in hosts:
        for control in host.locator("input[data-control]").all():
            control.press("End")
    if page_path == "ch13-gated/":
        type_inputs(hosts[1], {"x_t": ["0.2", "oops"]})  # a message on screen too
    if page_path == "ch14-gru-lm/":  # the text written, and a message on screen too
        t.page.wait_for_function("(h) => h.querySelector('figure').dataset.model === 'ready'",
                                 arg=hosts[0].element_handle(), timeout=10_000)
        hosts[0].locator('[data-value="sampled"]').press("End")  # a character's numbers shown
        hosts[0].locator('input[data-input="seed"]').fill("1.5")
        hosts[1].locator('[data-value="passage"]').focus()  # how far back, in use
        t.page.wait_for_function("(h) => h.querySelector('figure').dataset.model === 'ready'",
                                 arg=hosts[1].element_handle(), timeout=10_000)
        hosts[1].locator('[data-value="passage"]').press("ArrowLeft")
        hosts[2].locator('button[data-control="start"]').click()  # the trainer, training
        hosts[2].locator('table[data-table="updates"] tbody tr').first.wait_for(timeout=60_000)
    if page_path == "ch15-memory/":  # another cell and lag, by keyboard
        hosts[0].locator('input[data-control="model"]:checked').press("ArrowRight")
        hosts[0].locator('input[data-control="lag"]:checked').press("ArrowLeft")
    assert t.page.locator("body").get_attribute("data-md-color-scheme") == \
        {"light": "default", "dark": "slate"}[theme]
    result = run_axe(t.page, AXE_WIDGETS)  # the widgets, and what they change
    bad = [(v["id"], v["impact"], [n["target"] for n in v["nodes"]][:3])
           for v in result["violations"]]
    assert not bad, f"/{page_path} ({theme}, {width} px, in use): {bad}"
    assert result["passes"], "axe checked nothing"
    t.check_clean()


# -- one visual language: the mark of a figure that moves, labels on reference lines ---------

def widget_pages():
    """Every page of the built site that holds a widget, with its widgets' names (the
    hosts the build wrote, not WIDGETS: a widget missing there is counted here too)."""
    pages = {}
    for index in sorted(SITE.glob("*/index.html")):
        names = re.findall(r'<div class="rw-widget" data-widget="\w+" data-src="[^"]*/(\w+)\.json"',
                           index.read_text("utf-8"))
        if names:
            pages[index.parent.name + "/"] = names
    return pages


# WCAG's contrast of an element's colour (its text's, or an SVG text's fill) against what
# lies under it: the backgrounds of it and its ancestors, composited over the canvas.
CONTRAST_JS = """(el) => {
  const rgba = (c) => { const m = c.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const over = (top, under) => top.slice(0, 3).map((v, i) => v * top[3] + under[i] * (1 - top[3]));
  let bg = [255, 255, 255];
  const chain = [];
  for (let n = el; n; n = n.parentElement) chain.unshift(getComputedStyle(n).backgroundColor);
  chain.forEach((c) => { bg = over(rgba(c), bg); });
  const style = getComputedStyle(el);
  const fg = over(rgba(el instanceof SVGElement ? style.fill : style.color), bg);
  const lum = (c) => c.map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; })
    .reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i], 0);
  const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
  return (a + 0.05) / (b + 0.05);
}"""

MARKS_JS = """(hosts) => ({
  widgets: hosts.map((h) => {
    const figure = h.querySelector('figure.rw-figure'), marks = h.querySelectorAll('.rw-badge');
    const mark = marks[0], box = mark && mark.getBoundingClientRect(), frame = figure.getBoundingClientRect();
    return {marks: marks.length, text: mark ? mark.textContent : null,
            hidden: mark ? mark.getAttribute('aria-hidden') : null,
            inTitle: !!(mark && mark.closest('.rw-title')), seen: !!(mark && mark.checkVisibility()),
            inside: !!box && box.width > 0 && box.left >= frame.left && box.right <= frame.right,
            name: figure.getAttribute('aria-label'),
            title: figure.querySelector('.rw-title > span:not(.rw-badge)').textContent};
  }),
  all: document.querySelectorAll('.rw-badge').length,
  outside: [...document.querySelectorAll('.rw-badge')].filter((m) => !m.closest('.rw-widget')).length,
  static: document.querySelectorAll('figure.plot, figure.diagram').length,
  staticMarked: document.querySelectorAll(':is(figure.plot, figure.diagram) .rw-badge').length,
})"""


@pytest.mark.parametrize("theme,width", [("light", 1280), ("dark", 1280), ("light", 390)])
def test_every_widget_carries_one_interactive_mark_and_no_static_figure_does(tab, theme, width):
    """On every page with widgets: each widget's title has exactly one mark, "interactive",
    hidden from screen readers, whose figure's name says it instead; no static figure (plot
    or diagram) has one; the mark's text is AA (4.5:1) on its background in both schemes,
    and it stays inside the frame on a phone."""
    phone = dict(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    pages = widget_pages()
    assert set(WIDGETS) <= set(pages), "a page of WIDGETS has no widget in the built site"
    for page_path, names in pages.items():
        t = tab(page_path, color_scheme=theme, **(phone if width == 390 else {}))
        hosts = [t.widget(name) for name in names]
        seen = t.page.evaluate(MARKS_JS, [h.element_handle() for h in hosts])
        assert seen["all"] == len(names) and seen["outside"] == 0, (page_path, seen)
        assert seen["static"] > 0 and seen["staticMarked"] == 0, (page_path, seen)
        for name, got in zip(names, seen["widgets"]):
            assert got["marks"] == 1 and got["text"] == "interactive" and got["hidden"] == "true", (name, got)
            assert got["inTitle"] and got["seen"] and got["inside"], (name, got)
            assert got["name"] == "Interactive figure: " + got["title"], (name, got)
        for name, host in zip(names, hosts):
            ratio = host.locator(".rw-badge").evaluate(CONTRAST_JS)
            assert ratio >= 4.5, f"{name}'s mark: {ratio:.2f}:1 in the {theme} scheme"
        t.check_clean()
        t.close()


LABELS_JS = """(host) => {
  const svg = host.querySelector('svg.rw-svg'), frame = svg.getBoundingClientRect();
  const points = (p) => p.getAttribute('d').split(/[ML]/).filter(Boolean).map((xy) => xy.split(' ').map(Number));
  return {labels: [...svg.querySelectorAll('text.rw-line-label')].map((t) => {
            const b = t.getBBox(), r = t.getBoundingClientRect();
            return {text: t.textContent, cls: t.getAttribute('class'), x: b.x, right: b.x + b.width,
                    y: b.y + b.height / 2, inside: r.left >= frame.left - 0.5 && r.right <= frame.right + 0.5 &&
                    r.top >= frame.top - 0.5 && r.bottom <= frame.bottom + 0.5, box: [b.x, b.y, b.width, b.height]}; }),
          lines: [...svg.querySelectorAll('path.rw-ref, path.rw-chance')].map(points)};
}"""


def check_labels(host, want, near=30):
    """The chart's line labels are `want`, in the order of the reference lines they
    label, each at its line's end (right aligned there) and beside the line over its
    width (within `near` px of it: labels are pushed apart), inside the chart, none over
    another."""
    got = host.evaluate(LABELS_JS)
    labels = got["labels"]
    by_text = {label["text"]: label for label in labels}
    assert sorted(by_text) == sorted(want) and len(labels) == len(want), (labels, want)
    lines = got["lines"][-len(want):]  # the labelled lines are the last of the faint ones
    for text, points in zip(want, lines):
        label, (x_end, _) = by_text[text], points[-1]
        under = [y for x, y in points if label["x"] - 1 <= x <= label["right"] + 3] or [points[-1][1]]
        assert label["inside"], label
        assert min(under) - near <= label["y"] <= max(under) + near, (text, label, under)
        assert label["x"] - 2 <= x_end <= label["right"] + 6, (text, label, x_end)
    for a in labels:
        for b in labels:
            (ax, ay, aw, ah), (bx, by, bw, bh) = a["box"], b["box"]
            assert a is b or ax + aw <= bx or bx + bw <= ax or ay + ah <= by + 3 or by + bh <= ay + 3, (a, b)
    return labels


@pytest.mark.parametrize("width", [1280, 390])
def test_reference_lines_are_labelled_at_their_ends_with_their_values(tab, width):
    """Each reference line of the widgets' charts says on the chart what it stands for,
    its value the script's: the decay's factors (rnn.py --vanish's columns), the bias's
    b_f (gated.py --bias's rows), the scales' radii (rnn.py --measure's), the clip
    widget's threshold (the one chosen), the memory widget's chance (the static figure's),
    the truncation widget's chance as a loss (-ln of the accuracy training.py prints)."""
    phone = dict(viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    context = phone if width == 390 else {}
    t = tab("ch12-rnn/", **context)
    factors = [float(h.split()[-1]) for h in tables("rnn.py", "--vanish")[0][0][1:]]
    check_labels(t.widget("decay_widget"), [f"factor {f:g}" for f in factors])
    radii = [float(row[0]) for row in tables("rnn.py", "--measure")[0][1:]]
    check_labels(t.widget("scales_widget"), [f"\u03c1 = {r:g}" for r in radii], near=40)
    t.check_clean()
    t = tab("ch13-gated/", **context)
    biases = [float(row[0]) for row in tables("gated.py", "--bias")[0][1:]]
    host = t.widget("bias_widget")
    check_labels(host, [f"bf = {b:g}" for b in biases])  # b_f: the f a subscript
    assert host.locator("text.rw-line-label tspan[baseline-shift='sub']").all_text_contents() == \
        ["f"] * len(biases)
    t.check_clean()
    t = tab("ch15-memory/", **context)
    chance = re.search(r"chance at ([\d.]+)", (SITE / "ch15-memory" / "index.html").read_text("utf-8"))
    host = memory_widget(t)
    check_labels(host, [f"chance {chance.group(1)}"])
    choose(host, "lag", "100")
    check_labels(host, [f"chance {chance.group(1)}"])
    t.check_clean()
    t = tab("ch16-training/", **context)
    host = t.widget("clip_widget")
    for x in CLIP_THRESHOLDS:
        choose(host, "threshold", x)
        (label,) = check_labels(host, [f"threshold {x}"], near=12)
    guess = float(re.search(r"Chance: ([\d.]+)\.", printed("training.py", "--truncation")).group(1))
    host = t.widget("truncation_widget")  # chance as a loss: -ln of a guess's accuracy
    check_labels(host, [f"chance {-math.log(guess):.2f}"], near=12)
    assert shown(host, "chance") == f"{guess:g}"
    t.check_clean()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_line_labels_are_in_the_lines_colour_and_aa(tab, theme):
    """A reference line's label is the grey of its line, darkened to AA (4.5:1) for text."""
    t = tab("ch12-rnn/", color_scheme=theme)
    host = t.widget("decay_widget")
    for label in host.locator("text.rw-line-label").all():
        ratio = label.evaluate(CONTRAST_JS)
        assert ratio >= 4.5, f"{label.text_content()}: {ratio:.2f}:1 ({theme})"
    line = host.locator("path.rw-ref").first.evaluate("(p) => getComputedStyle(p).stroke")
    fill = host.locator("text.rw-line-label").first.evaluate("(p) => getComputedStyle(p).fill")
    grey = [[int(v) for v in re.findall(r"\d+", c)[:3]] for c in (line, fill)]
    assert all(max(c) - min(c) <= 20 for c in grey), grey  # both grey, the label darker or lighter
    t.check_clean()


def test_sliders_work_by_keyboard_with_labels_and_spoken_values(tab):
    t = tab("ch12-rnn/")
    host = t.widget("decay_widget")
    factor = host.get_by_label("per-step factor")
    distance = host.get_by_label("distance k (steps)")
    factor.focus()
    factor.press("ArrowRight")  # 0.50 -> 0.51
    assert factor.get_attribute("aria-valuetext") == "per-step factor 0.51"
    factor.press("Tab")
    assert distance.evaluate("(el) => el === document.activeElement")
    distance.press("ArrowLeft")  # 47 -> 46
    assert shown(host, "power") == f"{0.51 ** 46:.3e}"
    distance.press("Home")
    assert shown(host, "power") == "1.000e+00" and distance.get_attribute("aria-valuetext") == "0 steps"
    status = host.locator('[role="status"]')  # once the keys pause
    t.page.wait_for_function("(el) => el.textContent === '0.51 to the power 0: 1.000'",
                             arg=status.element_handle(), timeout=5000)
    t.check_clean()


def test_fields_work_by_keyboard_and_announce_the_step(tab):
    t = tab("ch13-gated/")
    host = t.widget("step_widget")
    first = host.locator('input[data-input="x_t.0"]')
    first.focus()
    t.page.keyboard.press("Control+a")
    t.page.keyboard.type("0.2")
    t.page.keyboard.press("Tab")
    t.page.keyboard.press("Control+a")
    t.page.keyboard.type("-0.3")
    assert t.page.evaluate("document.activeElement.dataset.input") == "x_t.1"
    command, want = expected_step({"x_t": ["0.2", "-0.3"]})
    assert sorted(page_step_tables(t.page, command)) == sorted(want.values())
    status = host.locator('[role="status"]')  # once typing pauses, the new forget gate
    t.page.wait_for_function("([el, f]) => el.textContent.startsWith('forget gate ' + f)",
                             arg=[status.element_handle(), want["lstm"][0]], timeout=5000)
    t.check_clean()


def test_a_phone_works_by_touch_and_nothing_runs_off_the_screen(tab):
    t = tab("ch12-rnn/", viewport=PHONE, device_scale_factor=2, is_mobile=True, has_touch=True)
    host = t.widget("decay_widget")
    factor = host.locator('input[data-control="param"]')
    box = factor.bounding_box()
    factor.tap(position={"x": box["width"] - 2, "y": box["height"] / 2})  # the far end
    assert factor.input_value() == "149" and shown(host, "power") == f"{1.5 ** 47:.3e}"
    for name in ("decay_widget", "scales_widget"):
        right = t.widget(name).evaluate("(el) => el.getBoundingClientRect().right")
        assert right <= PHONE["width"], f"{name} runs to {right} px"
    assert t.page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    assert host.locator("svg.rw-svg").evaluate("(s) => s.getBoundingClientRect().width") <= PHONE["width"]
    t.check_clean()


@pytest.mark.parametrize("motion,seconds", [("reduce", "0s"), ("no-preference", "0.12s")])
def test_the_marker_moves_only_for_readers_who_allow_motion(tab, motion, seconds):
    t = tab("ch12-rnn/", reduced_motion=motion)
    host = t.widget("decay_widget")
    duration = host.locator("circle.rw-mark").evaluate("(c) => getComputedStyle(c).transitionDuration")
    assert duration == seconds
    t.check_clean()


@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_widgets_follow_the_colour_scheme(tab, theme):
    t = tab("ch12-rnn/", color_scheme=theme)
    host = t.widget("decay_widget")
    line = host.locator("path.rw-line.rw-main").evaluate("(p) => getComputedStyle(p).stroke")
    text = host.locator(".rw-readout").evaluate("(p) => getComputedStyle(p).color")
    assert line == {"light": "rgb(0, 114, 178)", "dark": "rgb(86, 180, 233)"}[theme]
    assert text == t.page.locator(".md-typeset p").first.evaluate("(p) => getComputedStyle(p).color")
    t.check_clean()


# -- chapter 16: clipping by hand ------------------------------------------------------

CLIP_THRESHOLDS = ("0.25", "1", "4")


def test_clip_widget_rows_are_what_training_py_clip_prints(shared):
    """Every threshold of the grid, both radii, clipped or not: the readout is the row of
    `training.py --clip --threshold X` run here, the command is that command, and the
    seeds' mean and extremes are the row's 'test accuracy' cell."""
    t = shared("ch16-training/")
    host = t.widget("clip_widget")
    wrong = []
    for x in CLIP_THRESHOLDS:
        header, *rows = tables("training.py", "--clip", "--threshold", x)[0]
        choose(host, "threshold", x)
        for row in rows:
            choose(host, "radius", row[0])
            choose(host, "clipping", "none" if row[1] == "none" else "at the threshold")
            shown = [host.locator(f'[data-value="col{k}"]').inner_text() for k in range(len(header))]
            if shown != row:
                wrong.append((x, row, shown))
            assert host.locator("[data-command]").inner_text() == \
                f"$ python3 training.py --clip --threshold {x}"
            accuracy = [float(c) for c in host.locator("tbody tr td:nth-child(2)").all_inner_texts()]
            mean, low, high = (float(v) for v in re.findall(r"[\d.]+", row[-1])[:3])
            assert (round(sum(accuracy) / len(accuracy), 2), min(accuracy), max(accuracy)) == \
                pytest.approx((mean, low, high), abs=0.0051)
    assert not wrong, wrong
    t.check_clean()


# -- chapter 16: truncation by hand ---------------------------------------------------

def set_k(host, index):
    """Move the k slider to `index`, as a reader's drag does (an input event)."""
    host.locator('input[data-control="k"]').fill(str(index))


def test_truncation_widget_rows_are_what_training_py_truncation_prints(shared):
    """Every model and every k of the grid: the readout is the row of `training.py
    --truncation` run here, the command is that command, and the seeds' mean and
    extremes are the row's 'test loss' and 'test accuracy' cells."""
    t = shared("ch16-training/")
    host = t.widget("truncation_widget")
    header, *rows = tables("training.py", "--truncation")[0]
    models = list(dict.fromkeys(row[0] for row in rows))
    ks = list(dict.fromkeys(row[1] for row in rows))
    assert host.locator('input[data-control="model"]').count() == len(models)
    assert host.locator('input[data-control="k"]').get_attribute("max") == str(len(ks) - 1)
    wrong = []
    for row in rows:
        host.locator('input[data-control="model"] + label').nth(models.index(row[0])).click()
        set_k(host, ks.index(row[1]))
        shown = [host.locator(f'[data-value="col{k}"]').inner_text() for k in range(len(header))]
        if shown != row:
            wrong.append((row, shown))
        assert host.locator("[data-command]").inner_text() == "$ python3 training.py --truncation"
        for column, cell in ((2, row[2]), (3, row[3])):  # test accuracy, test loss
            seeds = [float(c) for c in host.locator(
                f"tbody tr td:nth-child({3 if column == 2 else 2})").all_inner_texts()]
            mean, low, high = (float(v) for v in re.findall(r"[\d.]+", cell)[:3])
            assert (round(sum(seeds) / len(seeds), 2), min(seeds), max(seeds)) == \
                pytest.approx((mean, low, high), abs=0.0051), (row, column)
        assert host.locator("path.rw-line.rw-main").count() == 4
    assert not wrong, wrong
    t.check_clean()


def test_truncation_widget_works_by_keyboard_and_announces_the_row(tab):
    """Arrow keys move k over the grid and the model; the live region says the row."""
    t = tab("ch16-training/")
    host = t.widget("truncation_widget")
    header, *rows = tables("training.py", "--truncation")[0]
    k = host.locator('input[data-control="k"]')
    k.focus()
    k.press("ArrowRight")  # k = 1 -> 2
    k.press("End")  # -> the whole sequence
    assert [shown(host, f"col{j}") for j in range(len(header))] == rows[len(rows) // 2 - 1]
    assert k.get_attribute("aria-valuetext").endswith("all the steps")
    host.locator('input[data-control="model"]:checked').press("ArrowRight")  # -> the GRU
    assert [shown(host, f"col{j}") for j in range(len(header))] == rows[-1]
    status = host.locator('[role="status"]')
    want = f"{rows[-1][0]}, k = {rows[-1][1]}: test loss {rows[-1][2]}"
    t.page.wait_for_function("([el, w]) => el.textContent.startsWith(w)",
                             arg=[status.element_handle(), want], timeout=5000)
    t.check_clean()


# -- chapter 17: attention, read -------------------------------------------------------

def test_attention_widget_weights_are_what_deeper_py_attention_prints(shared):
    """For the strings whose weights the script prints (the first of --attention, and the
    one of --string abcab), every output step's weights in the readout and the widget's
    table are the printed table's row; pointing at a symbol moves the readout."""
    t = shared("ch17-deeper/")
    host = t.widget("attention_widget")
    for args, source in ((("--attention",), None), (("--attention", "--string", "abcab"), "abcab")):
        table = tables("deeper.py", *args)[0 if source is None else -2]
        header, rows = table[0], table[1:]
        string = "".join(h.split(" ")[0] for h in header[1:])
        choose(host, "string", source or string)
        assert host.locator("[data-command]").inner_text() == "$ python3 deeper.py " + " ".join(args)
        shown = [[c.strip() for c in r] for r in t.page.evaluate(
            "h => [...h.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent))",
            host.element_handle())]
        assert shown == rows
        output = host.locator('[data-value="output"] i')
        for j, row in enumerate(rows):
            output.nth(j).click()
            readout = host.locator('[data-value="attention-readout"]').inner_text()
            listed = re.findall(r"\(\d+\) (\d\.\d\d)", readout)
            assert listed == row[1:], (j, readout)
    t.check_clean()

def test_recall_widget_weights_are_what_deeper_py_recall_prints(shared):
    """Every lag and sequence: the answers are the examples table's row, and stepping
    through t by the arrow keys reads x_t and a_t of the lag's weights table."""
    t = shared("ch17-deeper/")
    host = t.widget("recall_widget")
    printed_tables = tables("deeper.py", "--recall")
    examples = next(tb for tb in printed_tables if tb[0][0] == "lag" and "sequence" in tb[0])
    weights = [tb for tb in printed_tables if tb[0][0] == "t"]
    lags = sorted({int(row[0]) for row in examples[1:]})
    assert len(weights) == len(lags)
    assert host.locator("[data-command]").inner_text() == "$ python3 deeper.py --recall"
    for lag, table in zip(lags, weights):
        choose(host, "lag", str(lag))
        for row in (r for r in examples[1:] if int(r[0]) == lag):
            k = int(row[1])
            choose(host, "sequence", str(k))
            summary = shown(host, "recall-summary")
            assert f"Lag {lag}, sequence {k}: answer {row[3]}, the model answers {row[4]}." in summary
            assert "".join(host.locator('[data-value="tokens"] i').all_inner_texts()) == row[2]
            column = table[0].index(f"a_t ({k})")
            host.locator('[data-value="tokens"]').focus()
            t.page.keyboard.press("Home")
            for step, cells in enumerate(table[1:]):
                if step:
                    t.page.keyboard.press("ArrowRight")
                readout = shown(host, "recall-readout")
                assert readout.startswith(f"t = {cells[0]}, x_t = {cells[column - 1]}: "
                                          f"a_t = {cells[column]}"), (lag, k, readout)
            heights = host.locator('[data-value="recall-bars"] rect').evaluate_all(
                "rs => rs.map(r => +r.getAttribute('height'))")
            a = [float(c[column]) for c in table[1:]]
            assert len(heights) == len(a) and max(heights) == 1
            assert heights.index(1) in [n for n, x in enumerate(a) if x == max(a)]
    t.check_clean()


def test_beam_widget_keeps_what_deeper_py_beam_prints_at_every_step(shared):
    """Every string, width and step: the kept beams, their log P and their marks are the
    printed table's rows; the slider moves by the arrow keys."""
    t = shared("ch17-deeper/")
    host = t.widget("beam_widget")
    text = printed("deeper.py", "--beam")
    steps = [tb for tb in tables("deeper.py", "--beam") if tb[0][:2] == ["width", "step j"]]
    sources = re.findall(r"Step by step \(seed 0\), '([a-j]+)'", text)
    assert len(sources) == len(steps) >= 1
    assert host.locator("[data-command]").inner_text() == "$ python3 deeper.py --beam"
    for source, table in zip(sources, steps):
        choose(host, "string", source)
        for width in sorted({int(r[0]) for r in table[1:]}):
            choose(host, "width", str(width))
            rows = [r for r in table[1:] if int(r[0]) == width]
            for j in range(1, len(source) + 1):
                move(host, "step", j - 1)
                want = [[str(n), r[2], r[3], r[4]] for n, r in
                        enumerate((r for r in rows if int(r[1]) == j), 1)]
                got = [[c.strip() for c in r] for r in host.evaluate(
                    "h => [...h.querySelectorAll('tbody tr')].map(r => [...r.cells].map(c => c.textContent))")]
                assert got == want, (source, width, j)
            assert f"'{source}', to be written '{source[::-1]}'. Width {width} " in shown(host, "beam-summary")
    slider = host.locator('input[data-control="step"]')
    slider.focus()
    t.page.keyboard.press("Home")
    t.page.keyboard.press("ArrowRight")
    assert "after step 2 of" in shown(host, "beam-summary")
    t.check_clean()
