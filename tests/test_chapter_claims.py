"""Chapter 15's prose reads its tables ("the GRU learns lag 20 in every seed and lag 50 in
none"); the tables are computed at build time, the prose is written by hand. Each claim is
checked here against the table the built page shows, so that a change of the experiment
that turns a sentence false fails the build's tests instead of publishing it. Claims about
the pilot are checked against the pilot's own page, whose numbers are PyTorch's, kept as
they were measured."""

import math
import re

import pytest

from helpers import DOCS, html_command_tables, page_html

PAGE = "ch15-memory.md"
PILOT = "long-lag-pilot.md"
LEARNED = 0.95  # a seed has learned (the page's own threshold: generator/chapters/ch15)
MODELS = ["plain RNN", "LSTM b_f=0", "LSTM b_f=1", "LSTM b_f=2", "GRU"]


def soup(page):
    from bs4 import BeautifulSoup

    return BeautifulSoup(page_html(page), "html.parser")


def command_tables(command):
    return [rows for cmd, rows in html_command_tables(page_html(PAGE)) if cmd == command]


def shown(command):
    """{row key: {model: (mean, lowest, highest)}} of the table under `command`."""
    tables = command_tables(command)
    assert len(tables) == 1, f"{PAGE} shows {len(tables)} tables under `{command}`"
    header, *body = tables[0]
    models = [h.replace("$", "") for h in header[1:]]
    assert models == MODELS, header
    table = {}
    for key, *cells in body:
        parsed = [re.fullmatch(r"([0-9.]+) \(([0-9.]+)-([0-9.]+)\)", c) for c in cells]
        assert all(parsed), cells
        table[int(key.replace(",", ""))] = {
            m: tuple(float(x) for x in p.groups()) for m, p in zip(MODELS, parsed)}
    return table


def row_table(command):
    """[(seed, accuracy, loss, g_1 at init, g_1 trained)] of an exercise's row table."""
    tables = command_tables(command)
    assert len(tables) == 1, command
    return [tuple(float(c) for c in row) for row in tables[0][1:]]


def text_of(element):
    return " ".join(element.get_text().split())


@pytest.fixture(scope="module")
def accuracy(site):
    return shown("python3 memory.py --accuracy")


@pytest.fixture(scope="module")
def curves(site):
    return shown("python3 memory.py --curves")


def every_seed(cell):
    return cell[1] >= LEARNED


def some_seed(cell):
    return cell[2] >= LEARNED


def test_at_lag_20_the_plain_rnn_and_the_unbiased_lstm_fail_where_two_gated_cells_learn(
        accuracy):
    """15.2 and 15.5: 'at lag 20 the plain RNN and the LSTM without a forget-gate bias are
    near chance, or stuck at partial solutions, while the GRU and the LSTM with b_f = 2 have
    learned the task in every seed'; 15.5: 'with b_f = 1 it learns lag 20 in some seeds
    only' (not 'the gated cells learn it in every seed')."""
    at20 = accuracy[20]
    for model in ("plain RNN", "LSTM b_f=0"):
        assert not some_seed(at20[model]) and at20[model][0] < 0.5, (model, at20[model])
    for model in ("GRU", "LSTM b_f=2"):
        assert every_seed(at20[model]), (model, at20[model])
    assert some_seed(at20["LSTM b_f=1"]) and not every_seed(at20["LSTM b_f=1"])


def test_the_plain_rnn_fails_gradually(accuracy):
    """'The plain RNN learns a lag of 10 in some seeds'; every seed at lag 5."""
    assert every_seed(accuracy[5]["plain RNN"])
    assert some_seed(accuracy[10]["plain RNN"]) and not every_seed(accuracy[10]["plain RNN"])


def test_the_gru_sits_between_the_lstm_with_bias_1_and_with_bias_2(accuracy):
    """'The GRU learns lag 20 in every seed and lag 50 in none: it sits between the LSTM
    with b_f = 1 and the LSTM with b_f = 2.'"""
    assert every_seed(accuracy[20]["GRU"]) and not some_seed(accuracy[50]["GRU"])
    assert not every_seed(accuracy[20]["LSTM b_f=1"])
    assert some_seed(accuracy[50]["LSTM b_f=2"])


def test_at_lag_100_only_the_lstm_with_bias_2_gets_anywhere(accuracy):
    at100 = accuracy[100]
    assert some_seed(at100["LSTM b_f=2"])
    for model in MODELS:
        if model != "LSTM b_f=2":
            assert at100[model][2] < 0.5, (model, at100[model])  # no seed even half-way


def test_the_forget_bias_orders_the_three_lstms(accuracy):
    """'The three LSTMs differ in nothing else, and they span the whole range': at every
    lag a larger b_f does at least as well on average."""
    for lag, row in accuracy.items():
        means = [row[f"LSTM b_f={b}"][0] for b in (0, 1, 2)]
        assert means == sorted(means), (lag, means)


def test_the_lstm_with_bias_2_decides_early_but_not_all_at_once(curves):
    """15.3: 'the seeds that learn lag 50 have learned it within the first few hundred
    steps and keep it, while the others sit on partial solutions'. The old 'learns at once
    ... or not at all' is what this replaced. (It also said a partial seed 'still climbs to
    a better one later': true of one build, not of a build on another CPU, whose float32
    sums differ in the last bits; a claim about one seed's path is not made any more.)"""
    b2 = {step: cell for step, cell in ((s, curves[s]["LSTM b_f=2"]) for s in curves)}
    early = [s for s in b2 if s <= 300]
    assert early and some_seed(b2[early[-1]])  # a seed has learned by step 300
    assert all(b2[s][2] >= LEARNED for s in b2 if s >= early[-1])  # and keeps it
    last = max(b2)
    assert 0.4 < b2[last][1] < LEARNED  # the lowest seed ends on a partial solution
    for model in ("plain RNN", "LSTM b_f=0", "GRU"):
        assert max(curves[s][model][0] for s in curves) < 0.35, model  # near chance
    assert not any(some_seed(curves[s]["LSTM b_f=1"]) for s in curves)  # partial at most


def gradients(command_table):
    """{model: {lag: g_1}} of one of the --gradient tables."""
    header, *body = command_table
    lags = [int(h.split()[-1]) for h in header[1:]]
    return {row[0].replace("$", ""): dict(zip(lags, map(float, row[1:]))) for row in body}


@pytest.fixture(scope="module")
def g1(site):
    tables = command_tables("python3 memory.py --gradient")
    assert len(tables) == 3  # at initialisation, after training, the share
    return gradients(tables[0]), gradients(tables[1])


def test_where_the_first_gradient_starts_near_1e_12_nothing_is_learned(g1, accuracy):
    """15.4: 'Wherever g_1 at initialisation has fallen to around 1e-12 or below, nothing
    was learned, in any seed'; and the LSTM with b_f = 2 keeps g_1 within a factor of ten
    of its short-lag value all the way to lag 100."""
    init, _ = g1
    gone = [(m, lag) for m in MODELS for lag, g in init[m].items() if g <= 1e-11]
    assert gone
    for model, lag in gone:
        assert not some_seed(accuracy[lag][model]), (model, lag, init[model][lag])
    assert init["LSTM b_f=2"][100] * 10 >= init["LSTM b_f=2"][5]


def test_the_grus_first_gradient_grows_by_orders_of_magnitude_at_lag_20(g1):
    """'its g_1 there starts hardly larger than the plain RNN's' and, after training,
    'has grown by orders of magnitude'."""
    init, trained = g1
    assert init["GRU"][20] < 10 * init["plain RNN"][20]
    assert trained["GRU"][20] >= 100 * init["GRU"][20]


def pilot_tables(design, step):
    """{model: {lag: [accuracy per seed]}} of the pilot page's table for `design` (a
    design's name in backticks opens its paragraph) at `step`."""
    page = soup(PILOT)
    start = next(p for p in page.find_all("p") if p.find("code", string=design))
    for p in start.find_all_next("p"):
        if text_of(p) == f"at step {step}":
            table = p.find_next("table")
            break
    rows = [[text_of(c) for c in tr.find_all(["th", "td"])] for tr in table.find_all("tr")]
    lags = [int(h.split()[-1]) for h in rows[0][1:]]
    return {r[0]: {lag: [float(x) for x in cell.split()] for lag, cell in zip(lags, r[1:])
                   if cell} for r in rows[1:]}


def pilot_budget_row(command):
    """(mean after 6,000 steps, mean after 1,500) of the pilot's section-6 row `command`."""
    page = soup(PILOT)
    for tr in page.find_all("tr"):
        cells = [text_of(c) for c in tr.find_all(["td", "th"])]
        if cells and cells[0] == command:
            return float(cells[2]), float(cells[3].split()[0])
    raise AssertionError(f"{PILOT} has no row {command}")


def test_the_first_gradient_is_a_correlate_with_exceptions(site, g1, accuracy):
    """15.4 and 15.5: 'in the pilot, four times the budget left the LSTM with b_f = 1 at
    lag 50 where it was although its g_1 there is of the same order as the plain RNN's at
    lag 20, which the extra steps helped (exercise 3)'."""
    init, _ = g1
    ratio = init["LSTM b_f=1"][50] / init["plain RNN"][20]
    assert 0.1 < ratio < 10, ratio  # the same order ("starts from as much", exercise 5)
    assert 1e-7 < init["plain RNN"][20] < 1e-5  # "starts around 1e-6"
    after, before = pilot_budget_row("--cell lstm --forget-bias 1 --lag 50 --steps 6000")
    assert abs(after - before) < 0.05  # where it was
    longer = row_table("python3 memory.py --row --cell rnn --lag 20 --steps 6000")
    assert sum(a >= LEARNED for _, a, *_ in longer) > 0 and not some_seed(accuracy[20]["plain RNN"])
    assert sum(a for _, a, *_ in longer) / len(longer) > accuracy[20]["plain RNN"][0] + 0.1


def test_the_gru_with_an_update_bias_learns_lag_50_only_with_the_pilots_longer_budget(
        site, accuracy):
    """15.1: 'in the pilot it learns lag 50 in some seeds, but only with the pilot's longer
    budget; at the pilot's checkpoint of this page's budget it learns lag 50 in no seed,
    like the GRU without the bias here'."""
    steps = int(re.search(r"([0-9,]+) steps, it learns lag 50", text_of(soup(PAGE).body)
                          ).group(1).replace(",", ""))
    at_budget = pilot_tables("uadam_bz1", steps)["gru b_z=1"][50]
    longer = pilot_tables("uadam_bz1", 2000)["gru b_z=1"][50]
    assert max(at_budget) < LEARNED and max(longer) >= LEARNED
    assert not some_seed(accuracy[50]["GRU"])


def test_the_pilot_had_run_three_designs_in_full_when_the_choice_was_made(site):
    """15.1 says what the write-up says: three designs ran in full, the chosen one in part,
    before the choice."""
    chapter, pilot = text_of(soup(PAGE).body), text_of(soup(PILOT).body)
    assert "`site`, `uniform` and `adam` had been run in full" in pilot.replace(
        "site, uniform and adam", "`site`, `uniform` and `adam`")
    assert "three designs" in chapter and "had run in full, and the chosen one in part" in chapter
    assert "before this page was written" not in chapter


def test_the_pilot_page_says_its_numbers_are_not_the_builds(site):
    pilot = text_of(soup(PILOT).body)
    assert "Not computed by the build" in pilot and "PyTorch" in pilot
    link = soup(PAGE).find("a", href=re.compile(r"long-lag-pilot/?$"))
    assert link is not None, "chapter 15 does not link the pilot's page"
    assert soup(PILOT).find("a", href=re.compile(r"code/long_lag_pilot\.py$")) is not None


def test_adam_taking_the_size_out_is_worded_as_a_hypothesis(site):
    """16.9: that Adam 'takes the size out of the update' is a hypothesis (Adam rescales per
    parameter, not per lag): the page says so where it gives the reason."""
    chapter = text_of(soup(PAGE).body)
    assert "takes part of the size out of the update" not in chapter
    knob = chapter[chapter.index("Adam's learning rate at"):][:900]
    assert "is a hypothesis, not a finding" in knob and "per parameter, not per lag" in knob


def verdict(block_text):
    return re.match(r"\**(Yes|No|In some seeds|Partly|Not in this budget)\b", block_text)


def answer_after(command):
    """The text of the answer that follows the table under `command`."""
    page = soup(PAGE)
    label = next(p for p in page.select("p.command")
                 if p.get_text(strip=True).removeprefix("$").strip() == command)
    return text_of(label.find_next("table").find_next("p"))


def test_exercise_gru_at_lag_30_answers_what_its_numbers_say(site, accuracy):
    """The review's catch: 0.23 is below both the lag-20 and the lag-50 results, at chance:
    the answer is 'no', not 'between them'. The words are computed; here they are checked
    against the numbers the page shows."""
    command = "python3 memory.py --row --cell gru --lag 30"
    runs = row_table(command)
    text = answer_after(command)
    learned = sum(a >= LEARNED for _, a, *_ in runs)
    mean = round(sum(a for _, a, *_ in runs) / len(runs), 2)
    want = "No" if learned == 0 else "Yes" if learned == len(runs) else "In some seeds"
    assert verdict(text).group(1) == want, text
    at20, at50 = accuracy[20]["GRU"][0], accuracy[50]["GRU"][0]
    assert f"{mean:.2f}" in text and f"{at20:.2f}" in text and f"{at50:.2f}" in text
    where = ("below both" if mean < min(at20, at50) else "above both" if mean > max(at20, at50)
             else "between them")
    assert where in text, text
    assert ("at chance" in text) == (max(a for _, a, *_ in runs) < 0.35), text


def test_exercise_bias_3_answers_what_its_numbers_say(site, accuracy):
    command = "python3 memory.py --row --cell lstm --forget-bias 3 --lag 100"
    runs = row_table(command)
    text = answer_after(command)
    k3 = sum(a >= LEARNED for _, a, *_ in runs)
    counts = re.findall(r"with b_?f = [23], (no seed|every seed|(\d) seeds of 4)", text)
    assert len(counts) == 2, text
    k2 = {"no seed": 0, "every seed": 4}.get(counts[1][0]) or int(counts[1][1])
    # b_f = 2's count, as the table shows it: every seed, none, or some in between
    low, high = accuracy[100]["LSTM b_f=2"][1:]
    assert (k2 == 4) == (low >= LEARNED) and (k2 == 0) == (high < LEARNED)
    want = "Yes" if k3 > k2 else "No" if k3 < k2 else "Not in this budget"
    assert verdict(text).group(1) == want, text


def test_exercise_budget_answers_what_its_numbers_say(site, accuracy):
    command = "python3 memory.py --row --cell rnn --lag 20 --steps 6000"
    runs = row_table(command)
    text = answer_after(command)
    learned = sum(a >= LEARNED for _, a, *_ in runs)
    want = "Partly" if 0 < learned < len(runs) else "Yes" if learned == len(runs) else "No"
    assert verdict(text).group(1) == want, text
    pairs = sum(abs(a - 0.5) < 0.06 and abs(loss - math.log(2)) < 0.06 for _, a, loss, *_ in runs)
    assert (f"{pairs} of the others" in text) == (pairs > 0), text


def test_partial_solutions_are_read_off_the_loss(site):
    """16.11: 'accuracy 0.50 with loss ln 2 means the four symbols sorted into two pairs
    (two symbols told apart would give 0.75)'. The block's counts, recounted here from the
    records the build made, with the losses derived here."""
    from test_memory import build_record

    text = text_of(soup(PAGE).body)
    block = text[text.index("Accuracies near 0.50 and 0.75 are partial solutions"):][:1000]
    assert "sorted the four symbols into two pairs" in block
    assert "near 0.75 with a loss near (ln 2)/2" in block and "name two symbols" in block
    got = re.search(r"Of the (\d+) seeds .*?, (\d+) have an accuracy near 0.50 .*?: (\d+) "
                    r"seeds? here\)\. (\d+) are near 0.75", block)
    assert got, block
    acc, _ = build_record("--accuracy")
    pairs = one = two = partial = 0
    for name in acc["models"]:
        for accs, losses in zip(acc["accuracy"][name], acc["loss"][name]):
            for a, loss in zip(accs, losses):
                if 0.4 <= a < LEARNED:
                    partial += 1
                    pairs += abs(a - 0.5) < 0.06 and abs(loss - math.log(2)) < 0.06
                    one += abs(a - 0.5) < 0.06 and abs(loss - 0.75 * math.log(3)) < 0.06
                    two += abs(a - 0.75) < 0.06 and abs(loss - math.log(2) / 2) < 0.06
    assert [int(g) for g in got.groups()] == [partial, pairs, one, two]
    assert pairs >= 1 and two >= 1  # both kinds occur in the grid


def test_every_partial_seed_is_accounted_for(site):
    """Issue 28, finding 9: the seeds neither pattern explains are named, each with its
    lag, accuracy and loss, so that the counts add up to the partial seeds."""
    from test_memory import build_record

    text = text_of(soup(PAGE).body)
    block = text[text.index("Accuracies near 0.50 and 0.75 are partial solutions"):][:1500]
    acc, _ = build_record("--accuracy")
    other = []
    for name in acc["models"]:
        for lag, accs, losses in zip(acc["lags"], acc["accuracy"][name], acc["loss"][name]):
            for a, loss in zip(accs, losses):
                kinds = [(0.5, math.log(2)), (0.5, 0.75 * math.log(3)), (0.75, math.log(2) / 2)]
                if 0.4 <= a < LEARNED and not any(abs(a - ka) < 0.06 and abs(loss - kl) < 0.06
                                                  for ka, kl in kinds):
                    other.append((lag, a, loss))
    number = r"([0-9]+(?:\.[0-9]+)?)"  # not the full stop after it
    named = re.findall(rf"at lag (\d+), an accuracy of {number} with a loss of {number}", block)
    assert [(int(lag), float(a), float(l)) for lag, a, l in named] == \
        [(lag, round(a, 3), round(loss, 2)) for lag, a, loss in other]
    if other:
        assert ("The other one fits neither pattern" if len(other) == 1
                else f"The other {len(other)} fit neither pattern") in block


def test_every_reference_is_cited_in_the_text():
    source = (DOCS / PAGE).read_text("utf-8")
    body, references = source.split("## References")
    for entry in re.findall(r"^- (.+?)\(\d{4}\)", references, re.M):
        first_author = entry.split(",")[0].strip()
        assert first_author in body, f"{first_author} is listed but never cited"


def test_the_chapter_opens_with_its_argument_in_five_lines():
    source = (DOCS / PAGE).read_text("utf-8")
    after_title = source.split("\n# ", 1)[1].split("\n", 1)[1].strip()
    opening = after_title.split("\n\n")[0]
    assert len(opening.splitlines()) <= 5, opening


def test_the_tables_a_plot_shows_are_one_click_away(site):
    page = soup(PAGE)
    for command in ("python3 memory.py --accuracy", "python3 memory.py --curves"):
        label = next(p for p in page.select("p.command")
                     if p.get_text(strip=True).removeprefix("$").strip() == command)
        assert label.find_parent("details") is not None, command
    first_gradient = next(p for p in page.select("p.command")
                          if p.get_text(strip=True).endswith("--gradient"))
    assert first_gradient.find_parent("details") is not None


def test_references_to_exercises_name_the_exercise_they_mean(site):
    """'(exercise N)' beside a claim about the budget, the batched trainer or partial
    solutions names the exercise that runs that command (the exercises were renumbered
    once and two references kept their old numbers)."""
    page = soup(PAGE)
    exercises = page.find("h2", id="exercises").find_next("ol").find_all("li", recursive=False)
    text = text_of(page.find("article"))
    wanted = {"four times the budget": "--steps 6000", "which the extra steps helped":
              "--steps 6000", "checks against the first": "--agree", "find such seeds in 15.2":
              "--steps 6000"}
    for phrase, command in wanted.items():
        where = text.lower().index(phrase.lower())
        n = int(re.search(r"exercise (\d+)", text[where:where + 300]).group(1))
        assert command in text_of(exercises[n - 1]), (phrase, n)
