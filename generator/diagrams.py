"""Cell diagrams as inline SVG, drawn at build time with the chapters' real numbers.

Three diagrams, each returned as one string of HTML: a ``<figure class="diagram"
data-search-exclude>`` holding an ``<svg role="img">`` (with a ``<title>`` and a
``<desc>`` that starts "Diagram:") and a ``<figcaption>``. The markup has no
blank line and no indented line, so it can stand as a raw HTML block in a
Markdown page (leave a blank line before and after it).

    rnn_unrolled(steps, h0=(0.0, 0.0), *, id_prefix="rnn-unrolled", ...)
        chapter 12: "the dog ran" unrolled over three steps. ``steps`` as
        rnn.py's compute_unroll returns them: dicts with t, word, x, h, next.
    lstm_cell(values=None, *, id_prefix="lstm-cell", ...)
        chapter 13: the LSTM cell. ``values`` as gated.py's compute_lstm_step
        returns them (f, i, C_tilde, o, kept, added, C_t, h_t, q), optionally
        with h_prev, x_t and C_prev; without values, the symbols alone.
    gru_cell(values=None, notation="ch13", *, id_prefix="gru-cell", ...)
        the GRU cell in chapter 13's convention (``"ch13"``: z_t, r_t, h~_t,
        h_t = (1 - z_t) * h_{t-1} + z_t * h~_t) or in d2l's, chapter 14's
        (``"d2l"``: R_t, Z_t, H~_t, H_t = Z_t * H_{t-1} + (1 - Z_t) * H~_t).
        ``values`` as compute_gru_step returns them (z, r, h_tilde, h_t), plus
        h_prev and x_t from the caller.

How numbers are written: every vector is drawn as a column, unit 1 above unit
2, each entry signed with four decimals like the chapters' tables (+0.4100,
-0.0500), the minus sign being the typographic U+2212 ("−0.0500"). The
``<desc>`` repeats them in the tables' own form, "(+0.4100, -0.0500)".

How symbols are written: as the page's MathML renders them, in STIX Two Math
(served with the site): single-letter variables and sigma are the Unicode
mathematical italic letters (𝐶 U+1D436, 𝑓, 𝑖, 𝑜, ℎ U+210E, 𝑥, 𝑞, 𝑧, 𝑟, 𝐻, 𝑅,
𝑍, 𝑋, 𝑊, 𝑈, 𝑉, 𝑦, 𝜎), which is what Chromium's MathML shows for <mi>;
subscripts are smaller <tspan>s moved down; "tanh", digits and operators are
upright; the tilde of C~ and h~ is a small drawn path (class ``dg-tilde``)
over the letter; ⊙ is the element-wise product. Layout uses the font's
advance widths, measured once in Chromium and kept in ``_ADVANCE``.

Colours and strokes come from classes styled by docs/assets/diagrams.css with
Material's CSS variables, so one SVG follows the light/dark toggle and prints
black on white. Without that stylesheet the diagram still draws, in the text
colour (``currentColor``). Pure functions: same input, same bytes; no
external reference but the SVG namespace.
"""

import math
import re
from xml.sax.saxutils import escape, quoteattr

SVG_NS = "http://www.w3.org/2000/svg"

# Sizes in viewBox units. Every diagram is at most 440 units wide, so at a
# phone's 358-pixel column the smallest text (13 units) is 10.6 CSS pixels.
WIDTH = 440
MATH_SIZE = 17  # symbols: chip headers, gate boxes
NUM_SIZE = 13  # numbers inside the chips
LABEL_SIZE = 13  # sans labels (gate names, "cell state")
NUM_LEAD = 15  # line spacing of a chip's numbers

# Advance widths of STIX Two Math, in thousandths of an em, measured in
# Chromium with getComputedTextLength (tools: tests/diagram_preview.py --measure).
_ADVANCE = {
    "0": 495, "1": 495, "2": 495, "3": 495, "4": 495, "5": 495, "6": 495, "7": 495,
    "8": 495, "9": 495, ".": 245, ",": 245, "+": 720, "−": 720, "=": 720, "(": 357,
    ")": 357, "[": 349, "]": 349, "⊙": 862, "×": 720, "t": 315, "a": 480, "n": 576,
    "h": 577, "\U0001D436": 656, "\U0001D453": 577, "\U0001D456": 274,
    "\U0001D45C": 486, "\u210E": 569, "\U0001D465": 559, "\U0001D45E": 517,
    "\U0001D461": 338, "\U0001D467": 493, "\U0001D45F": 412, "\U0001D43B": 757,
    "\U0001D445": 620, "\U0001D44D": 606, "\U0001D44B": 637, "\U0001D44A": 913,
    "\U0001D448": 731, "\U0001D449": 640, "\U0001D466": 510, "\U0001D44F": 518,
    "\U0001D70E": 570,
}
_SPACE = 200  # a thin space between operator and operand, thousandths of an em


def _italic(ch):
    """The Unicode mathematical italic form of a Latin letter (h is U+210E)."""
    if ch == "h":
        return "\u210E"
    if "a" <= ch <= "z":
        return chr(0x1D44E + ord(ch) - ord("a"))
    return chr(0x1D434 + ord(ch) - ord("A"))


_NAMES = {"odot": ("⊙", False), "sigma": ("\U0001D70E", False), "tanh": ("tanh", False)}
# Where a tilde sits over an italic letter: its centre as a fraction of the
# advance (italic letters lean right, so their top is right of the middle) and
# its height above the baseline in em (h's ascender is taller than a capital).
_TILDE_AT = {"\U0001D436": (0.62, 0.84), "\u210E": (0.56, 0.93),
             "\U0001D43B": (0.60, 0.86)}


# ---------------------------------------------------------------------------
# Numbers
# ---------------------------------------------------------------------------

def fmt(x):
    """One entry: signed, four decimals, typographic minus: +0.4100, −0.0500."""
    return f"{float(x):+.4f}".replace("-", "\u2212")


def fmt_vec(v):
    """A vector as the chapters' tables print it: (+0.4100, -0.0500)."""
    return "(" + ", ".join(f"{float(x):+.4f}" for x in v) + ")"


def _floats(v):
    return None if v is None else [float(x) for x in v]


# ---------------------------------------------------------------------------
# Math text: a tiny TeX-like notation laid out with the font's widths
# ---------------------------------------------------------------------------
# Letters are italic variables; "_" takes a subscript (one character or a
# {group}); "~" puts a tilde over the next letter; \odot, \sigma, \tanh; "-"
# is a minus sign; a space is a thin space.

def _atoms(src, size, shift=0.0):
    """[(text, size, baseline shift, tilde?)], one per character or name."""
    out, i, tilde = [], 0, False
    while i < len(src):
        c = src[i]
        if c == "\\":
            m = re.match(r"[a-z]+", src[i + 1:])
            text, _ = _NAMES[m.group(0)]
            out.append((text, size, shift, False))
            i += 1 + len(m.group(0))
            continue
        if c == "~":
            tilde = True
        elif c == "_":
            if src[i + 1] == "{":
                end = src.index("}", i)
                group = src[i + 2:end]
                i = end
            else:
                group = src[i + 1]
                i += 1
            out.extend(_atoms(group, size * 0.74, shift + size * 0.24))
        elif c == " ":
            out.append(("", size, shift, False))
        elif c.isalpha():
            out.append((_italic(c), size, shift, tilde))
            tilde = False
        else:
            out.append(("\u2212" if c == "-" else c, size, shift, False))
        i += 1
    return out


def _advance(text, size):
    if text == "":
        return _SPACE * size / 1000
    return sum(_ADVANCE.get(ch, 520) for ch in text) * size / 1000


def math_width(src, size=MATH_SIZE):
    return sum(_advance(t, s) for t, s, _, _ in _atoms(src, size))


def _n(v):
    """A coordinate: at most two decimals, no trailing zeros (stable bytes)."""
    text = f"{v:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


class _Svg:
    """Collects the elements of one diagram, back to front, as lines of markup."""

    def __init__(self, prefix, width, height):
        self.prefix, self.width, self.height = prefix, width, height
        self.layers = {"band": [], "wire": [], "shape": [], "text": []}

    def add(self, layer, markup):
        self.layers[layer].append(markup)

    # -- lines ---------------------------------------------------------------
    def wire(self, points, cls="dg-wire", arrow=True, layer="wire"):
        """A polyline; with an arrowhead whose tip is the last point."""
        pts = [tuple(p) for p in points]
        if arrow:
            (x0, y0), (x1, y1) = pts[-2], pts[-1]
            length = math.hypot(x1 - x0, y1 - y0)
            ux, uy = (x1 - x0) / length, (y1 - y0) / length
            head, half = 7.5, 3.6
            bx, by = x1 - ux * head, y1 - uy * head
            pts[-1] = (x1 - ux * head * 0.6, y1 - uy * head * 0.6)
        d = "M" + " L".join(f"{_n(x)} {_n(y)}" for x, y in pts)
        self.add(layer, f'<path class="{cls}" d="{d}" fill="none" stroke="currentColor"/>')
        if arrow:
            tri = [(x1, y1), (bx - uy * half, by + ux * half), (bx + uy * half, by - ux * half)]
            d = "M" + " L".join(f"{_n(x)} {_n(y)}" for x, y in tri) + "Z"
            self.add(layer, f'<path class="{cls}-head" d="{d}" fill="currentColor"/>')

    def junction(self, x, y, cls="dg-wire-head"):
        self.add("shape", f'<circle class="{cls}" cx="{_n(x)}" cy="{_n(y)}" r="2.6" '
                          'fill="currentColor"/>')

    def node(self, x, y, op, highway=False, r=9):
        """An element-wise product (a circle with a dot, ⊙) or a sum (⊕)."""
        cls = "dg-node dg-node-hw" if highway else "dg-node"
        out = [f'<circle class="{cls}" cx="{_n(x)}" cy="{_n(y)}" r="{r}" fill="none" '
               'stroke="currentColor"/>']
        if op == "*":
            out.append(f'<circle class="dg-node-mark" cx="{_n(x)}" cy="{_n(y)}" r="2.3" '
                       'fill="currentColor"/>')
        else:
            a = r * 0.58
            out.append(f'<path class="dg-node-stroke" d="M{_n(x - a)} {_n(y)} H{_n(x + a)} '
                       f'M{_n(x)} {_n(y - a)} V{_n(y + a)}" fill="none" stroke="currentColor"/>')
        self.add("shape", "".join(out))

    def box(self, cx, cy, w, h, cls, rx=5, layer="shape"):
        self.add(layer, f'<rect class="{cls}" x="{_n(cx - w / 2)}" y="{_n(cy - h / 2)}" '
                        f'width="{_n(w)}" height="{_n(h)}" rx="{rx}" fill="none" '
                        'stroke="currentColor"/>')

    # -- text ----------------------------------------------------------------
    def math(self, cx, baseline, src, size=MATH_SIZE, cls="dg-m", anchor="middle"):
        """Math laid out by hand: each run of equal size gets its own x, tildes drawn."""
        atoms = _atoms(src, size)
        total = sum(_advance(t, s) for t, s, _, _ in atoms)
        x = {"middle": cx - total / 2, "start": cx, "end": cx - total}[anchor]
        runs, tildes = [], []
        for text, s, shift, tilde in atoms:
            if tilde:
                adv = _advance(text, s)
                at, up = _TILDE_AT.get(text, (0.55, 0.84))
                tildes.append((x + adv * at, baseline + shift - up * s, s))
            if text and runs and runs[-1][1] == s and runs[-1][2] == shift and runs[-1][4]:
                runs[-1][3] += text
            elif text:
                runs.append([x, s, shift, text, True])
            elif runs:
                runs[-1][4] = False  # a space closes the run: the next one gets its own x
            x += _advance(text, s)
        spans = []
        for rx, s, shift, text, _ in runs:
            size_attr = "" if s == size else f' font-size="{_n(s)}"'
            spans.append(f'<tspan x="{_n(rx)}" y="{_n(baseline + shift)}"{size_attr}>'
                         f'{escape(text)}</tspan>')
        self.add("text", f'<text class="{cls}" font-size="{_n(size)}">' + "".join(spans)
                 + "</text>")
        for tx, y, s in tildes:
            w, a = 0.42 * s, 0.07 * s
            d = (f"M{_n(tx - w / 2)} {_n(y + a)} C{_n(tx - w / 6)} {_n(y - 2.2 * a)} "
                 f"{_n(tx + w / 6)} {_n(y + 2.2 * a)} {_n(tx + w / 2)} {_n(y - a)}")
            self.add("text", f'<path class="dg-tilde" d="{d}" fill="none" '
                             'stroke="currentColor"/>')
        return total

    def label(self, x, baseline, text, cls="dg-label", anchor="middle"):
        """Words in the page's sans."""
        self.add("text", f'<text class="{cls}" x="{_n(x)}" y="{_n(baseline)}" '
                         f'text-anchor="{anchor}" font-size="{LABEL_SIZE}">{escape(text)}</text>')

    def word(self, cx, cy, text):
        """A word of the sentence, styled like inline code on the page."""
        w = 9 + 8.2 * len(text)
        self.box(cx, cy, w, 20, "dg-word-box", rx=3, layer="shape")
        self.add("text", f'<text class="dg-word" x="{_n(cx)}" y="{_n(cy + 4.5)}" '
                         f'text-anchor="middle" font-size="{LABEL_SIZE}">{escape(text)}</text>')

    # -- value chips -------------------------------------------------------------
    def chip(self, cx, cy, header, values, cls, key):
        """A labelled value on a wire: the symbol, then the vector as a column.

        Drawn on top of everything, as one group whose data-key names the
        value (the key of the dict it came from).
        """
        saved, group = self.layers, []
        self.layers = {name: group for name in saved}
        try:
            size = self._chip(cx, cy, header, values, cls)
        finally:
            self.layers = saved
        self.add("text", f'<g class="dg-chip-g" data-key="{escape(key)}">\n'
                 + "\n".join(group) + "\n</g>")
        return size

    def _chip(self, cx, cy, header, values, cls):
        w, h = chip_size(header, values)
        self.box(cx, cy, w, h, f"dg-chip {cls}", rx=4)
        top = cy - h / 2
        self.math(cx, top + 21, header)
        if values:
            ys = [top + 39 + NUM_LEAD * k for k in range(len(values))]
            for y, value in zip(ys, values):
                self.math(cx, y, fmt(value), size=NUM_SIZE, cls="dg-num")
            # square brackets: the entries form one column vector
            half = max(_advance(fmt(x), NUM_SIZE) for x in values) / 2 + 2.5
            y0, y1 = ys[0] - 11, ys[-1] + 4
            for side in (-1, 1):
                x = cx + side * half
                d = (f"M{_n(x - side * 2.5)} {_n(y0)} H{_n(x)} V{_n(y1)} "
                     f"H{_n(x - side * 2.5)}")
                self.add("text", f'<path class="dg-bracket" d="{d}" fill="none" '
                                 'stroke="currentColor"/>')
        return w, h

    # -- the whole -----------------------------------------------------------
    def render(self, title, desc):
        p = self.prefix
        head = (f'<svg xmlns="{SVG_NS}" class="dg" viewBox="0 0 {self.width} {self.height}" '
                f'width="{self.width}" height="{self.height}" role="img" '
                f'aria-labelledby="{p}-title {p}-desc">')
        lines = [head, f'<title id="{p}-title">{escape(title)}</title>',
                 f'<desc id="{p}-desc">{escape(desc)}</desc>']
        for layer in ("band", "wire", "shape", "text"):
            lines.extend(self.layers[layer])
        lines.append("</svg>")
        return "\n".join(lines)


def chip_size(header, values):
    """(width, height) of a chip: the header alone, or the header over a column."""
    w = math_width(header) + 12
    if values:
        w = max(w, max(_advance(fmt(x), NUM_SIZE) for x in values) + 15)
        return w, 32 + NUM_LEAD * len(values)
    return w, 30


def _check_prefix(prefix):
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", prefix or ""):
        raise ValueError(f"id_prefix must start with a letter and hold only letters, digits, "
                         f"'-' and '_': {prefix!r}")


def _figure(prefix, svg, caption):
    """The SVG in a figure that Material's search skips; no blank or indented line."""
    cap = f"\n<figcaption>{caption}</figcaption>" if caption else ""
    return (f'<figure class="diagram" id={quoteattr(prefix)} data-search-exclude>\n'
            f"{svg}{cap}\n</figure>")


# ---------------------------------------------------------------------------
# Chapter 12: the RNN unrolled
# ---------------------------------------------------------------------------

def rnn_unrolled(steps, h0=(0.0, 0.0), *, id_prefix="rnn-unrolled",
                 title="The recurrent network unrolled over “the dog ran”",
                 description=None, caption=None):
    """Chapter 12's three steps: one cell per word, the hidden state passed along.

    ``steps``: a list of dicts with t, word, x (the embedding), h (the new
    state) and next (the predicted word), as rnn.py's compute_unroll returns
    them (other keys are ignored). ``h0``: the state before the first word.
    Every vector is written with four decimals, like the unroll table.
    """
    _check_prefix(id_prefix)
    steps = [{"t": int(s["t"]), "word": str(s["word"]), "x": _floats(s["x"]),
              "h": _floats(s["h"]), "next": str(s["next"])} for s in steps]
    h0 = _floats(h0)
    n = len(steps)
    if not 1 <= n <= 3:
        raise ValueError("rnn_unrolled draws one to three steps")
    names = [f"h_{steps[0]['t'] - 1}"] + [f"h_{s['t']}" for s in steps]
    states = [h0] + [s["h"] for s in steps]
    chip_w = max(chip_size(hn, hv)[0] for hn, hv in zip(names, states))
    chip_h = max(chip_size(hn, hv)[1] for hn, hv in zip(names, states))
    x_h = max(chip_size(f"x_{s['t']}", s["x"])[1] for s in steps)
    cell_w, cell_h = 48, 56
    gap = chip_w + 16  # between two cells: an arrow with the state above it
    left = chip_w + 12  # the first cell's left edge
    width = round(left + n * cell_w + (n - 1) * gap + chip_w + 12)
    y_pred = 14  # the predicted words
    y_cell = 72 + chip_h  # centre line of the cells and of the state arrows
    y_x = y_cell + cell_h / 2 + 22 + x_h / 2  # the embeddings
    y_word = y_x + x_h / 2 + 26
    height = round(y_word + 14)
    svg = _Svg(id_prefix, width, height)

    svg.label(2, y_word + 4.5, "reads", cls="dg-label dg-muted", anchor="start")
    svg.label(2, y_pred + 4.5, "predicts", cls="dg-label dg-muted", anchor="start")
    edges = [left + k * (cell_w + gap) for k in range(n)]
    # the state: h_0 in from the left, from cell to cell, h_n out on the right
    starts = [2] + [x + cell_w for x in edges]
    ends = edges + [width - 2]
    for k, (a, b) in enumerate(zip(starts, ends)):
        svg.wire([(a, y_cell), (b, y_cell)], cls="dg-state")
        svg.chip((a + b) / 2, y_cell - 7 - chip_h / 2, names[k], states[k], "dg-c-state",
                 names[k])
    for k, s in enumerate(steps):
        cx = edges[k] + cell_w / 2
        # the cell: the same weights at every step
        svg.box(cx, y_cell, cell_w, cell_h, "dg-cell")
        svg.math(cx, y_cell - 4, "W, U")
        svg.math(cx, y_cell + 18, f"t = {s['t']}", size=15)
        # input: the word, its embedding, up into the cell
        svg.word(cx, y_word, s["word"])
        svg.wire([(cx, y_word - 10), (cx, y_x)], arrow=False)
        svg.wire([(cx, y_x), (cx, y_cell + cell_h / 2)])
        svg.chip(cx, y_x, f"x_{s['t']}", s["x"], "dg-c-input", f"x_{s['t']}")
        # output: V, then the distribution y_t and the word it makes most likely
        svg.wire([(cx, y_cell - cell_h / 2), (cx, y_pred + 34)])
        svg.math(cx + 5, (y_cell - cell_h / 2 + y_pred + 34) / 2 + 6, "V", anchor="start")
        svg.math(cx, y_pred + 29, f"y_{s['t']}")
        svg.word(cx, y_pred, s["next"])

    words = " ".join(s["word"] for s in steps)
    if description is None:
        description = (
            f"Diagram: the recurrent network unrolled over the sentence “{words}”. "
            + ("One cell, with the weights W and U; " if n == 1 else
               f"{('Two', 'Three')[n - 2]} copies of one cell stand side by side, each with "
               "the same weights W and U; ")
            + "above each, the same V turns the new hidden state into the output y, a "
            "distribution over the next word. Below each cell the word read and its "
            "embedding x, the cell's input. The hidden state runs left to right through the "
            f"cells: h_{steps[0]['t'] - 1} = {fmt_vec(h0)} goes in; "
            + "; ".join(f"after “{s['word']}”, h_{s['t']} = {fmt_vec(s['h'])}" for s in steps)
            + ". The embeddings: "
            + "; ".join(f"x_{s['t']} = {fmt_vec(s['x'])} for “{s['word']}”" for s in steps)
            + ". The most likely next word after each step: "
            + ", ".join(f"“{s['next']}”" for s in steps) + ".")
    if caption is None:
        caption = (f"Reading “{words}”: one cell, copied once per word, with the same "
                   "<em>W</em>, <em>U</em> and <em>V</em> at every step. The numbers are the "
                   "table's, each vector written as a column, unit 1 above unit 2.")
    return _figure(id_prefix, svg.render(title, description), caption)


# ---------------------------------------------------------------------------
# Chapter 13: the LSTM cell
# ---------------------------------------------------------------------------

_LSTM_KEYS = ("f", "i", "C_tilde", "o", "C_t", "h_t")


def _cell_frame(id_prefix, width, height, cell_l, cell_r, yH, bottom):
    """A cell's drawing: its rounded outline from just above the state path (yH) down to
    bottom."""
    svg = _Svg(id_prefix, width, height)
    svg.box((cell_l + cell_r) / 2, (yH - 28 + bottom) / 2, cell_r - cell_l, bottom - yH + 28,
            "dg-cell dg-cell-outline", rx=12, layer="band")
    return svg


def _highway(svg, y, x_in, x_mul, x_add, x_out):
    """The state's path across the top of a cell: in, a product node, a sum node, out."""
    svg.add("band", f'<path class="dg-highway-band" d="M{_n(x_in)} {_n(y)} H{_n(x_out)}" '
                    'fill="none" stroke="currentColor"/>')
    svg.wire([(x_in, y), (x_mul - 9, y)], cls="dg-highway")
    svg.wire([(x_mul + 9, y), (x_add - 9, y)], cls="dg-highway")
    svg.wire([(x_add + 9, y), (x_out, y)], cls="dg-highway", arrow=False)
    svg.node(x_mul, y, "*", highway=True)
    svg.node(x_add, y, "+", highway=True)


def _lstm_values(values):
    v = {k: _floats(values[k]) for k in _LSTM_KEYS}
    C_prev = _floats(values.get("C_prev"))
    kept = _floats(values.get("kept"))
    if kept is None:
        if C_prev is None:
            raise KeyError("lstm_cell values need kept or C_prev")
        kept = [a * b for a, b in zip(v["f"], C_prev)]
    added = _floats(values.get("added"))
    if added is None:
        added = [a * b for a, b in zip(v["i"], v["C_tilde"])]
    q = _floats(values.get("q"))
    half = len(v["h_t"])
    v["kept"], v["added"] = kept, added
    v["h_prev"] = _floats(values.get("h_prev")) or (q[:half] if q else None)
    v["x_t"] = _floats(values.get("x_t")) or (q[half:] if q else None)
    v["C_prev"] = C_prev if C_prev is not None else [k / g for k, g in zip(kept, v["f"])]
    return v


def lstm_cell(values=None, *, id_prefix="lstm-cell", title="The LSTM cell, one step",
              description=None, caption=None):
    """The LSTM cell in chapter 13's notation, with one step's numbers if given.

    ``values``: gated.py's compute_lstm_step() dict: f, i, C_tilde, o, kept,
    added, C_t and h_t (vectors), and q = [h_{t-1}, x_t]. h_prev, x_t and
    C_prev may be added; if not, h_prev and x_t are read off q (its first and
    second half) and C_prev as kept / f. None: the symbols alone.
    """
    _check_prefix(id_prefix)
    v = _lstm_values(values) if values is not None else None

    def val(key):
        return v[key] if v else None

    ch = max(chip_size("x", val(k))[1] for k in ("f", "C_t"))  # chip height
    side_w = max(chip_size(h, val(k))[0] for h, k in (("C_{t-1}", "C_prev"), ("C_t", "C_t"),
                                                         ("h_{t-1}", "h_prev"), ("h_t", "h_t")))
    width = WIDTH
    x_l, x_r = side_w / 2 + 2, width - side_w / 2 - 2  # chips outside the cell
    cell_l, cell_r = side_w + 8, width - side_w - 8
    x_f, x_i, x_c, x_o = 104, 172, 240, 308  # the four layers' columns
    x_add = x_c  # i_t ⊙ C~_t is made above the candidate and added straight up
    yH = max(36, ch / 2 + 6)  # the cell-state highway
    y_mul = yH + 9 + ch + 16 + 9  # i ⊙ C~, and o ⊙ tanh(C_t)
    y_chips = y_mul + 9 + 12 + ch / 2  # the gates' values
    y_gate = y_chips + ch / 2 + 22 + 13  # the four layers
    y_bus = y_gate + 13 + 34  # q_t
    bottom = y_bus + 30
    x_h = chip_size("x_t", val("x_t"))[1]
    y_x = bottom + 12 + x_h / 2
    height = round(y_x + x_h / 2 + 3)
    svg = _cell_frame(id_prefix, width, height, cell_l, cell_r, yH, bottom)
    _highway(svg, yH, x_l, x_f, x_add, x_r)  # C_{t-1} -> (⊙ f_t) -> (+ i_t ⊙ C~_t) -> C_t
    svg.label((x_add + x_o) / 2 + 2, yH - 13, "cell state", cls="dg-label")
    svg.chip(x_l, yH, "C_{t-1}", val("C_prev"), "dg-c-cell", "C_prev")
    svg.chip(x_r, yH, "C_t", val("C_t"), "dg-c-cell", "C_t")
    svg.chip((x_f + x_add) / 2, yH, "f_t \\odot C_{t-1}", val("kept"), "dg-c-cell", "kept")
    svg.chip(x_add, (yH + y_mul) / 2, "i_t \\odot ~C_t", val("added"), "dg-c-cell", "added")

    # four layers read q_t = [h_{t-1}, x_t]
    gate_w, gate_h = 46, 26
    gates = ((x_f, "\\sigma", "forget", "dg-f", "f_t", "f"),
             (x_i, "\\sigma", "input", "dg-i", "i_t", "i"),
             (x_c, "\\tanh", "candidate", "dg-c", "~C_t", "C_tilde"),
             (x_o, "\\sigma", "output", "dg-o", "o_t", "o"))
    for x, fn, name, cls, _, _ in gates:
        svg.wire([(x, y_bus), (x, y_gate + gate_h / 2)])
        svg.junction(x, y_bus)
        svg.box(x, y_gate, gate_w, gate_h, f"dg-gate {cls}")
        svg.math(x, y_gate + 5, fn)
        svg.label(x, y_gate + gate_h / 2 + 16, name, cls="dg-label dg-halo")
    svg.wire([(x_f, y_gate - gate_h / 2), (x_f, yH + 9)])
    svg.wire([(x_i, y_gate - gate_h / 2), (x_i, y_mul), (x_add - 9, y_mul)])
    svg.wire([(x_c, y_gate - gate_h / 2), (x_c, y_mul + 9)])
    svg.node(x_add, y_mul, "*")
    svg.wire([(x_add, y_mul - 9), (x_add, yH + 9)])
    # the output: tanh(C_t) from the highway, times o_t, leaves as h_t
    y_tanh = (yH + y_mul) / 2
    svg.junction(x_o, yH)
    svg.wire([(x_o, yH), (x_o, y_tanh - 12)])
    svg.box(x_o, y_tanh, 44, 24, "dg-gate")
    svg.math(x_o, y_tanh + 5, "\\tanh")
    svg.wire([(x_o, y_tanh + 12), (x_o, y_mul - 9)])
    svg.wire([(x_o, y_gate - gate_h / 2), (x_o, y_mul + 9)])
    svg.node(x_o, y_mul, "*")
    svg.wire([(x_o + 9, y_mul), (x_r, y_mul)], arrow=False)
    svg.chip(x_r, y_mul, "h_t", val("h_t"), "dg-c-state", "h_t")
    for x, _, _, cls, hdr, key in gates:
        svg.chip(x, y_chips, hdr, val(key), cls, key)

    # the inputs: h_{t-1} from the left, x_t from below, side by side in q_t
    x_join = (x_f + x_i) / 2
    svg.wire([(x_l, y_bus), (x_o, y_bus)], arrow=False)
    svg.junction(x_join, y_bus)
    svg.chip(x_l, y_bus, "h_{t-1}", val("h_prev"), "dg-c-state", "h_prev")
    svg.wire([(x_join, y_x), (x_join, y_bus)], arrow=False)
    svg.chip(x_join, y_x, "x_t", val("x_t"), "dg-c-input", "x_t")
    svg.math((x_i + x_o) / 2 + 6, y_bus + 21, "q_t = [h_{t-1}, x_t]")

    if description is None:
        description = (
            "Diagram: the LSTM cell. The cell state runs along the top, from C_{t-1} on the "
            "left to C_t on the right. On the way it is multiplied element-wise by the forget "
            "gate f_t, then the product of the input gate i_t and the candidate C~_t is "
            "added: C_t = f_t ⊙ C_{t-1} + i_t ⊙ C~_t, with no weight matrix on that path. "
            "Below, the previous hidden state h_{t-1}, coming in from the left, and the input "
            "x_t, from below, join into q_t = [h_{t-1}, x_t], which feeds four layers side "
            "by side: sigma for the forget gate f_t, sigma for the input gate i_t, tanh for "
            "the candidate C~_t and sigma for the output gate o_t. On the right, C_t also "
            "goes down through tanh and is multiplied by o_t: h_t = o_t ⊙ tanh(C_t), the new "
            "hidden state, leaves on the right.")
        if v:
            parts = [("h_{t-1}", "h_prev"), ("x_t", "x_t"), ("C_{t-1}", "C_prev"),
                     ("f_t", "f"), ("i_t", "i"), ("C~_t", "C_tilde"), ("o_t", "o"),
                     ("f_t ⊙ C_{t-1}", "kept"), ("i_t ⊙ C~_t", "added"), ("C_t", "C_t"),
                     ("h_t", "h_t")]
            description += " The numbers of one step: " + "; ".join(
                f"{name} = {fmt_vec(v[key])}" for name, key in parts if v[key]) + "."
    if caption is None:
        caption = ("The LSTM cell. Along the top, the cell state is changed only by an "
                   "element-wise product (⊙) with the forget gate and by a sum.")
        if v:
            caption += (" The numbers are this section's step, each vector written as a "
                        "column, unit 1 above unit 2.")
    return _figure(id_prefix, svg.render(title, description), caption)


# ---------------------------------------------------------------------------
# The GRU cell, in chapter 13's notation and in d2l's (chapter 14's)
# ---------------------------------------------------------------------------

_GRU_SYMBOLS = {  # key: (chapter 13, d2l)
    "z": ("z_t", "Z_t"), "r": ("r_t", "R_t"), "h_tilde": ("~h_t", "~H_t"),
    "h_t": ("h_t", "H_t"), "h_prev": ("h_{t-1}", "H_{t-1}"), "x_t": ("x_t", "X_t"),
}


def gru_cell(values=None, notation="ch13", *, id_prefix="gru-cell", title=None,
             description=None, caption=None):
    """The GRU cell in chapter 13's notation ("ch13") or d2l's ("d2l", chapter 14).

    ch13: h_t = (1 - z_t) ⊙ h_{t-1} + z_t ⊙ h~_t, lower-case symbols; d2l:
    H_t = Z_t ⊙ H_{t-1} + (1 - Z_t) ⊙ H~_t, upper-case. ``values``: a dict
    with z, r, h_tilde and h_t, as gated.py's compute_gru_step returns them,
    plus h_prev and x_t from the caller (without them those two show their
    symbol only). The keys are the same in both notations. None: symbols only.
    """
    _check_prefix(id_prefix)
    if notation not in ("ch13", "d2l"):
        raise ValueError(f"notation must be 'ch13' or 'd2l', not {notation!r}")
    d2l = notation == "d2l"
    sym = {k: pair[1 if d2l else 0] for k, pair in _GRU_SYMBOLS.items()}
    v = None
    if values is not None:
        v = {k: _floats(values.get(k)) for k in _GRU_SYMBOLS}
        missing = [k for k in ("z", "r", "h_tilde", "h_t") if v[k] is None]
        if missing:
            raise KeyError(f"gru_cell values lack {', '.join(missing)}")

    def val(key):
        return v[key] if v else None

    ch = max(chip_size("x", val(k))[1] for k in ("z", "h_t"))
    side_w = max(chip_size(sym[k], val(k))[0] for k in ("h_prev", "h_t"))
    width = WIDTH
    x_l, x_r = side_w / 2 + 2, width - side_w / 2 - 2
    cell_l, cell_r = side_w + 8, width - side_w - 8
    x_drop, x_r_gate, x_z, x_mix = 84, 138, 210, 318  # columns
    yH = max(36, ch / 2 + 6)  # the state path along the top
    y_mix = yH + 9 + 16 + 22 + 16 + 9  # z ⊙ h~ (d2l: (1 - Z) ⊙ H~)
    y_ht = y_mix + 9 + 10 + ch / 2  # h~ value
    y_cand = y_ht + ch / 2 + 12 + 13  # candidate layer, and r ⊙ h_{t-1}
    y_chips = y_cand + 9 + 10 + ch / 2  # r and z values
    y_gate = y_chips + ch / 2 + 22 + 13  # the two gate layers
    y_bus = y_gate + 13 + 34  # [h_{t-1}, x_t]
    y_xline = y_bus + 20  # x_t on its way to the candidate
    bottom = y_xline + 14
    x_h = chip_size(sym["x_t"], val("x_t"))[1]
    y_x = bottom + 12 + x_h / 2
    height = round(y_x + x_h / 2 + 3)
    svg = _cell_frame(id_prefix, width, height, cell_l, cell_r, yH, bottom)
    _highway(svg, yH, x_l, x_z, x_mix, x_r)  # h_{t-1} -> (⊙ keep) -> (+ new) -> h_t
    svg.label((x_z + x_mix) / 2, yH - 13, "hidden state", cls="dg-label")
    svg.chip(x_l, yH, sym["h_prev"], val("h_prev"), "dg-c-state", "h_prev")
    svg.chip(x_r, yH, sym["h_t"], val("h_t"), "dg-c-state", "h_t")

    # two gate layers read [h_{t-1}, x_t]
    gate_w, gate_h = 46, 26
    svg.junction(x_drop, yH)
    svg.wire([(x_drop, yH), (x_drop, y_bus), (x_z, y_bus)], arrow=False)
    for x, name, cls in ((x_r_gate, "reset", "dg-r"), (x_z, "update", "dg-z")):
        svg.wire([(x, y_bus), (x, y_gate + gate_h / 2)])
        svg.junction(x, y_bus)
        svg.box(x, y_gate, gate_w, gate_h, f"dg-gate {cls}")
        svg.math(x, y_gate + 5, "\\sigma")
        svg.label(x, y_gate + gate_h / 2 + 16, name, cls="dg-label dg-halo")
    # x_t: up into the gates' input, and along the bottom into the candidate
    x_join = (x_drop + x_r_gate) / 2
    svg.junction(x_join, y_bus)
    svg.junction(x_join, y_xline)
    svg.wire([(x_join, y_x), (x_join, y_bus)], arrow=False)
    svg.wire([(x_join, y_xline), (x_mix, y_xline), (x_mix, y_cand + gate_h / 2)])
    # reset: r_t ⊙ h_{t-1}, into the candidate from the left
    svg.junction(x_drop, y_cand)
    svg.wire([(x_drop, y_cand), (x_r_gate - 9, y_cand)])
    svg.wire([(x_r_gate, y_gate - gate_h / 2), (x_r_gate, y_cand + 9)])
    svg.node(x_r_gate, y_cand, "*")
    svg.wire([(x_r_gate + 9, y_cand), (x_mix - gate_w / 2, y_cand)])
    # update: its line passes over the reset product's (a gap shows they do not meet)
    svg.add("wire", f'<path class="dg-gap" d="M{_n(x_z)} {_n(y_cand - 7)} '
                    f'V{_n(y_cand + 7)}" fill="none" stroke="currentColor"/>')
    svg.junction(x_z, y_mix)
    if d2l:
        svg.wire([(x_z, y_gate - gate_h / 2), (x_z, yH + 9)])
        x_one = (x_z + x_mix) / 2
        svg.wire([(x_z, y_mix), (x_one - 17, y_mix)], arrow=False)
        svg.wire([(x_one + 17, y_mix), (x_mix - 9, y_mix)])
        svg.box(x_one, y_mix, 34, 22, "dg-gate dg-z")
        svg.math(x_one, y_mix + 5, "1 -")
    else:
        y_one = (yH + y_mix) / 2
        svg.wire([(x_z, y_gate - gate_h / 2), (x_z, y_one + 11)], arrow=False)
        svg.wire([(x_z, y_one - 11), (x_z, yH + 9)])
        svg.box(x_z, y_one, 34, 22, "dg-gate dg-z")
        svg.math(x_z, y_one + 5, "1 -")
        svg.wire([(x_z, y_mix), (x_mix - 9, y_mix)])
    # the candidate, then its product with the update gate, added to the state
    svg.box(x_mix, y_cand, gate_w, gate_h, "dg-gate dg-c")
    svg.math(x_mix, y_cand + 5, "\\tanh")
    svg.label(x_mix, y_cand + gate_h / 2 + 16, "candidate", cls="dg-label dg-halo")
    svg.wire([(x_mix, y_cand - gate_h / 2), (x_mix, y_mix + 9)])
    svg.node(x_mix, y_mix, "*")
    svg.wire([(x_mix, y_mix - 9), (x_mix, yH + 9)])
    svg.chip(x_mix, y_ht, sym["h_tilde"], val("h_tilde"), "dg-c", "h_tilde")
    svg.chip(x_r_gate, y_chips, sym["r"], val("r"), "dg-r", "r")
    svg.chip(x_z, y_chips, sym["z"], val("z"), "dg-z", "z")
    svg.chip(x_join, y_x, sym["x_t"], val("x_t"), "dg-c-input", "x_t")

    H, Z, R, X, Hp, Ht = (s.replace("~", "") for s in (sym["h_t"], sym["z"], sym["r"],
                                                        sym["x_t"], sym["h_prev"],
                                                        sym["h_tilde"]))
    Ht = Ht[0] + "~" + Ht[1:]
    if title is None:
        title = "The GRU cell, " + ("d2l's notation" if d2l else "chapter 13's notation")
    if description is None:
        keep, new = (Z, f"(1 - {Z})") if d2l else (f"(1 - {Z})", Z)
        description = (
            f"Diagram: the GRU cell in {'d2l' if d2l else 'chapter 13'}'s notation. The "
            f"hidden state runs along the top, from {Hp} on the left to {H} on the right: it "
            f"is multiplied element-wise by {keep}, then {new} ⊙ {Ht}, the candidate "
            f"weighted, is added: {H} = {keep} ⊙ {Hp} + {new} ⊙ {Ht}. Below, {Hp} comes "
            f"down and meets the input {X}, coming up from below; together they feed two "
            f"sigma layers side by side, the reset gate {R} and the update gate {Z}. The "
            f"reset gate multiplies {Hp} element-wise, and that product, whose line crosses "
            f"the update gate's without joining it, and {X}, along the bottom, feed the tanh "
            f"layer that makes the candidate {Ht}. The update gate's line goes "
            + ("straight up to the product on the state path, and through a 1 - box to the "
               "candidate's product." if d2l else
               "up through a 1 - box to the product on the state path, and straight to the "
               "candidate's product."))
        if v:
            parts = [(Hp, "h_prev"), (X, "x_t"), (Z, "z"), (R, "r"), (Ht, "h_tilde"),
                     (H, "h_t")]
            description += " The numbers of one step: " + "; ".join(
                f"{name} = {fmt_vec(v[key])}" for name, key in parts if v[key]) + "."
    if caption is None:
        if d2l:
            caption = ("The GRU cell in d2l's notation: <em>Z</em><sub>t</sub> near 1 keeps "
                       "the state, 1 − <em>Z</em><sub>t</sub> weighs the candidate.")
        else:
            caption = ("The GRU cell in this chapter's notation: 1 − <em>z</em><sub>t</sub> "
                       "keeps the state, <em>z</em><sub>t</sub> weighs the candidate.")
        if v:
            caption += (" The numbers are this section's step, each vector written as a "
                        "column, unit 1 above unit 2.")
    return _figure(id_prefix, svg.render(title, description), caption)
