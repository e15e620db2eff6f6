"""Chapters 12 and 13 read their tables in words ("at this input scale even rho = 1.1
vanishes", "the second route adds"); the tables are computed at build time, the words
are written by hand. Each such sentence is checked here against the numbers the built
page shows, so that a change of a script that turns a sentence false fails the tests
instead of being published."""

import pytest

from helpers import html_command_tables, page_html


def table(page, command, n=0):
    """The rows (header first) of the n-th table the page shows under `command`."""
    tables = [rows for cmd, rows in html_command_tables(page_html(page)) if cmd == command]
    assert len(tables) > n, f"{page} shows {len(tables)} tables under `{command}`"
    return tables[n]


def number(cell):
    return float(cell.replace(",", ""))


def vector(cell):
    """'(+0.4100, -0.0500)' -> [0.41, -0.05]"""
    return [float(v) for v in cell.strip("()").split(",")]


# -- chapter 12 -----------------------------------------------------------------------

CH12 = "ch12-rnn.md"


@pytest.fixture(scope="module")
def scales(site):
    """{rho: [norm at 47 for each input scale]}, and the input scales, of 12.5's grid."""
    header, *body = table(CH12, "python3 rnn.py --scales")
    inputs = [float(h.split()[-1]) for h in header[2:]]
    return {number(r[0]): [number(c) for c in r[2:]] for r in body}, inputs, \
        {number(r[0]): number(r[1]) for r in body}


def test_at_the_pages_input_scale_rho_above_one_still_vanishes(site):
    """12.5: 'So at this input scale even rho = 1.1, which the linear theory says explodes,
    vanishes'; 'Faster decay than rho^t' at every radius."""
    header, *body = table(CH12, "python3 rnn.py --measure")
    rows = {number(r[0]): (number(r[1]), number(r[2])) for r in body}
    assert rows[1.1][1] < 1 < rows[1.1][0]
    assert all(measured < predicted for predicted, measured in rows.values())


def test_with_no_input_the_measurement_is_the_linear_theory(scales):
    """12.5: 'With no input at all the product is U^47 itself: it follows rho^47 within a
    constant factor, vanishing below 1 and exploding above.'"""
    grid, inputs, predicted = scales
    none = inputs.index(0.0)
    ratios = [grid[rho][none] / predicted[rho] for rho in grid]
    assert max(ratios) / min(ratios) == pytest.approx(1.0, abs=0.01)  # one constant factor
    assert all(grid[rho][none] < 1 for rho in grid if rho < 1)
    assert all(grid[rho][none] > 1 for rho in grid if rho > 1)


def test_larger_inputs_pull_the_gradient_further_down(scales):
    """12.5: 'The larger the inputs, the further below rho^47 the measurement falls, until
    at an input scale of 3 even rho = 1.5 vanishes.'"""
    grid, inputs, _ = scales
    assert inputs == sorted(inputs)
    for rho, row in grid.items():
        assert row == sorted(row, reverse=True), rho
    assert grid[1.5][inputs.index(3.0)] < 1
    assert grid[1.5][inputs.index(1.0)] < 1 < grid[1.5][inputs.index(0.3)]


def test_exercise_the_first_word_decides_the_first_state(site):
    """Exercise 1: of the three words read first, 'the' gives the largest first unit of
    W x_1 + b_h and 'ran' the smallest."""
    first = {w: vector(table(CH12, f'python3 rnn.py --unroll --sentence {w}')[1][3])[0]
             for w in ("the", "dog", "ran")}
    assert max(first, key=first.get) == "the" and min(first, key=first.get) == "ran"


def test_exercise_no_input_at_all(site):
    """Exercise 7: at input scale 0, tanh' is 1, and the norm falls at rho < 1 and grows
    at rho > 1."""
    header, *body = table(CH12, "python3 rnn.py --measure --input-scale 0")
    for r in body:
        assert number(r[3]) == 1.0
        assert (number(r[2]) < 1) == (number(r[0]) < 1)


# -- chapter 13 -----------------------------------------------------------------------

CH13 = "ch13-gated.md"


def test_the_full_jacobian_keeps_more_than_the_cell_path(site):
    """13.3 and 13.7: 'far more than the path alone', 'the full Jacobian decays more slowly
    than the cell path' at every b_f, for the page's seed and exercise 6's."""
    for command in ("python3 gated.py --measure", "python3 gated.py --measure --seed 1"):
        header, *body = table(CH13, command)
        for r in body:
            assert number(r[4]) > number(r[3]) >= number(r[2]), (command, r)


def test_the_forget_gate_keeps_most_of_the_memory(site):
    """13.4: 'The forget gate sits at ..., so most of the old memory survives the step' (the
    spec's 'near 0.7 to 0.8'); the cell update is kept plus added."""
    gates = {r[0]: vector(r[2]) for r in table(CH13, "python3 gated.py --step", 1)[1:]}
    f = next(v for k, v in gates.items() if k.startswith("forget"))
    assert all(0.69 < v < 0.81 for v in f)
    update = [vector(r[2]) for r in table(CH13, "python3 gated.py --step", 2)[1:]]
    kept, added, C_t = update
    assert all(k > a for k, a in zip(kept, added))  # the past outweighs the new
    assert C_t == pytest.approx([k + a for k, a in zip(kept, added)], abs=2e-4)


def test_the_two_gru_notations_are_one_step(site):
    """13.5: the same h_t in both notations, and Chung's update gate is 1 - z."""
    ours = [vector(r[2]) for r in table(CH13, "python3 gated.py --step", 3)[1:]]
    chung = [vector(r[2]) for r in table(CH13, "python3 gated.py --step", 4)[1:]]
    assert ours[1:] == chung[1:]  # r, h~, h_t
    assert [1 - z for z in ours[0]] == pytest.approx(chung[0], abs=1e-4)


def test_exercise_with_nothing_in_every_gate_is_its_bias(site):
    """Exercise 1: f = sigma(1) in both units, i = o = 0.5, C~ = 0."""
    gates = [vector(r[2]) for r in
             table(CH13, "python3 gated.py --step --h-prev 0,0 --x-t 0,0")[1:]]
    f, i, C_tilde, o = gates[:4]
    assert f[0] == f[1] == pytest.approx(0.7311, abs=1e-4)
    assert i == o == [0.5, 0.5] and C_tilde == [0.0, 0.0]


def test_a_gru_is_three_quarters_of_an_lstm(site):
    """13.6 and exercise 5: three blocks against four, at any size."""
    for command in ("python3 gated.py --params",
                    "python3 gated.py --params --input 300 --hidden 1000"):
        counts = {r[0]: number(r[2]) for r in table(CH13, command)[1:]}
        assert counts["GRU"] / counts["LSTM"] == 0.75
        assert counts["GRU"] == 3 * counts["plain RNN"]


# -- the second cure, named where the first is ----------------------------------------

def test_chapters_12_and_13_name_initialisation_beside_the_gates(site):
    """12.6 and 13's opening: the vanishing gradient is cured by architecture *or* by a
    start near a factor of 1, with a link to chapter 16's measurement (issue 28, finding
    7), where the IRNN did learn chapter 15's task at lag 50 in most seeds."""
    from bs4 import BeautifulSoup

    for page, words in ((CH12, "a start whose factor per step is near 1"),
                        ("ch13-gated.md", "start the plain network where its factor is")):
        soup = BeautifulSoup(page_html(page), "html.parser")
        paragraph = next(p for p in soup.find_all("p") if words in " ".join(p.text.split()))
        links = [a["href"] for a in paragraph.find_all("a")]
        assert any(h.endswith("ch16-training/#165-initialisation-the-other-cure")
                   for h in links), links
    header, *body = table("ch16-training.md", "python3 training.py --init")
    irnn = next(r for r in body if r[0] == "U = I, ReLU" and r[1] == "50")
    assert int(irnn[3].split()[0]) >= 3


# -- the conventions page: one GRU step in every notation ------------------------------

def sigmoid(a):
    import numpy as np
    return 1 / (1 + np.exp(-a))


def test_the_notation_map_is_one_step_computed_in_each_notation(site):
    """Each row of the conventions page's table against this test's own step in that
    notation, from chapter 13's weights (gated.py's settings): d2l's rows and Chung's
    z' = 1 - z give chapter 13's h_t; chapter 12's tanh(W x + U h) is the candidate with
    the reset gate open; PyTorch's reset-after candidate is another number."""
    import numpy as np

    from helpers import load_script

    g = load_script("gated.py")
    h, x = np.array(g.h_prev), np.array(g.x_t)
    W_z, W_r, W_h = (np.array(w) for w in (g.W_z, g.W_r, g.W_h))
    n = len(h)
    z, r = sigmoid(W_z[:, :n] @ h + W_z[:, n:] @ x), sigmoid(W_r[:, :n] @ h + W_r[:, n:] @ x)
    cand = np.tanh(W_h[:, :n] @ (r * h) + W_h[:, n:] @ x)
    new = z * h + (1 - z) * cand
    plain = np.tanh(W_h[:, n:] @ x + W_h[:, :n] @ h)
    n_pt = np.tanh(W_h[:, n:] @ x + r * (W_h[:, :n] @ h))
    expected = [(z, r, cand, new), (z, r, cand, new), (None, None, plain, plain),
                (1 - z, r, cand, new), (z, r, n_pt, (1 - z) * n_pt + z * h)]
    header, *body = table("conventions.md", "python3 gated.py --notation")
    assert len(body) == len(expected)
    for row, want in zip(body, expected):
        for cell, value in zip(row[1:], want):
            if value is None:
                assert cell == "none"
            else:
                assert vector(cell) == pytest.approx(value, abs=6e-5), row[0]
    assert vector(body[4][4]) != pytest.approx(new, abs=1e-4)  # another function
