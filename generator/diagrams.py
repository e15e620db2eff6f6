"""Cell diagrams as inline SVG templates, filled at build time with the chapters' numbers.

Each diagram is a fixed drawing (a template below: lines, nodes and boxes at fixed
coordinates) with named slots; the build fills the slots with the live numbers and the
symbols, and returns one string of HTML: a ``<figure class="diagram" data-search-exclude>``
holding an ``<svg role="img">``, named by its ``<title>`` (aria-labelledby) and described
by its ``<desc>`` (aria-describedby, in words: "C sub t minus 1", never ``C_{t-1}``), and
a ``<figcaption>``. The markup has no blank and no indented line, so it stands as a raw
HTML block in a Markdown page.

    rnn_unrolled(steps, h0=(0.0, 0.0))   chapter 12: "the dog ran" over three steps;
                                         steps as rnn.py's compute_unroll returns them
    lstm_cell(values=None)               chapter 13: the LSTM cell; values as gated.py's
                                         compute_lstm_step (plus h_prev, x_t, C_prev)
    gru_cell(values=None, letters="lower", convention="d2l")
        the GRU cell; values a plain dict of named vectors: z, r, h_tilde, h_t, h_prev,
        x_t. convention "d2l" (d2l's and PyTorch's: h_t = z * h_prev + (1 - z) * h~_t,
        z near 1 keeps the state) or "chung" (Chung et al.'s: the roles of z and 1 - z
        swapped); letters "lower" (h_t, z_t) or "upper" (d2l's H_t, Z_t).

The template language is SVG plus six shorthand elements, expanded here:
``<chip key tex x y cls/>`` a labelled value on a line (the symbol over the vector as a
column, or the symbol alone); ``<gate tex name x y cls/>`` a layer (a 56 x 40 box); ``<m
tex x y/>`` a formula; ``<times x y/>`` and ``<plus x y/>`` element-wise nodes;
``<wire d/>`` and ``<arrow d/>`` lines, without and with an arrowhead (``hw`` in the
class: the state's path). Symbols are TeX in a foreignObject, typeset by the page's math
hook like every formula (generator/mathml.py: same look, same font); ``@h`` in a TeX
slot is the letter of the chosen case. Numbers are written as the chapters' tables
write them: signed, four decimals, the minus typographic.

Colours come from classes styled by docs/assets/diagrams.css with Material's CSS
variables: one SVG follows the light/dark toggle and prints black on white. Pure
functions: same input, same bytes; no reference to another host.
"""

import re
from xml.sax.saxutils import escape, quoteattr

SVG_NS = "http://www.w3.org/2000/svg"
CHIP = (96, 76)  # the box a chip is centred in; the chip itself is as large as its text
GATE = (66, 40)


def fmt(x):
    """One entry: signed, four decimals, typographic minus: +0.4100, −0.0500."""
    return f"{float(x):+.4f}".replace("-", "\u2212")


def fmt_vec(v):
    """A vector as the chapters' tables print it: (+0.4100, -0.0500)."""
    return "(" + ", ".join(f"{float(x):+.4f}" for x in v) + ")"


def _math(tex):
    """A formula as the page writes it; the math hook (generator/mathml.py) typesets it."""
    return f'<span class="arithmatex">\\({escape(tex)}\\)</span>'


def _column(values):
    """A vector as a column in brackets (drawn by CSS), one entry per line."""
    return ('<span class="dg-vec">' + "".join(f"<math><mn>{fmt(v)}</mn></math>" for v in values)
            + "</span>")


def _box(x, y, size, inner):
    w, h = size
    return (f'<foreignObject x="{x - w / 2:g}" y="{y - h / 2:g}" width="{w}" height="{h}">'
            f'<div class="dg-fo">{inner}</div></foreignObject>')


def _fill(template, prefix, slots, values):
    """The template with its shorthand elements expanded and its slots filled."""

    def tex(a):
        return re.sub(r"@(\w)", lambda m: slots.get(m.group(1), m.group(1)), a["tex"])

    def expand(match):
        kind, a = match.group(1), dict(re.findall(r'(\w+)="([^"]*)"', match.group(2)))
        x, y = float(a.get("x", 0)), float(a.get("y", 0))
        if kind == "chip":
            vector = values.get(a["key"]) if values else None
            inner = _math(tex(a)) + (_column(vector) if vector else "")
            return _box(x, y, CHIP, f'<div class="dg-chip {a["cls"]}" data-key='
                                    f'{quoteattr(a["key"])}>{inner}</div>')
        if kind == "gate":
            name = f'<span>{a["name"]}</span>' if a.get("name") else ""
            return _box(x, y, GATE, f'<div class="dg-gate {a.get("cls", "")}">'
                                    f'{_math(tex(a))}{name}</div>')
        if kind == "word":
            return _box(x, y, (90, 30), f'<code class="dg-word">{escape(a["text"])}</code>')
        if kind == "m":
            return _box(x, y, (float(a.get("w", 140)), 30), _math(tex(a)))
        if kind in ("times", "plus"):
            hw = " dg-node-hw" if "hw" in a.get("cls", "") else ""
            mark = (f'<circle class="dg-node-mark" cx="{x:g}" cy="{y:g}" r="2.3"/>'
                    if kind == "times" else
                    f'<path class="dg-node-mark" d="M{x - 5:g} {y:g}h10M{x:g} {y - 5:g}v10"/>')
            return f'<circle class="dg-node{hw}" cx="{x:g}" cy="{y:g}" r="9"/>{mark}'
        cls = "dg-hw" if "hw" in a.get("cls", "") else "dg-wire"
        end = f' marker-end="url(#{prefix}-{cls})"' if kind == "arrow" else ""
        return f'<path class="{cls}" d="{a["d"]}"{end}/>'

    return re.sub(r"<(chip|gate|m|word|times|plus|wire|arrow)\b([^>]*)/>", expand, template)


def _svg(prefix, template, slots, values, width, height, title, description):
    markers = "".join(
        f'<marker id="{prefix}-{cls}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="{s}" '
        f'markerHeight="{s}" orient="auto-start-reverse"><path class="{cls}-head" '
        f'd="M0 0L10 5L0 10z"/></marker>' for cls, s in (("dg-wire", 5), ("dg-hw", 3.5)))
    lines = [f'<svg xmlns="{SVG_NS}" class="dg" viewBox="0 0 {width} {height}" width="{width}" '
             f'height="{height}" role="img" aria-labelledby="{prefix}-title" '
             f'aria-describedby="{prefix}-desc">',
             f'<title id="{prefix}-title">{escape(title)}</title>',
             f'<desc id="{prefix}-desc">{escape(description)}</desc>', f"<defs>{markers}</defs>"]
    lines += [line.strip() for line in _fill(template, prefix, slots, values).splitlines()
              if line.strip()]
    return "\n".join(lines + ["</svg>"])


def _figure(prefix, svg, caption):
    if not re.fullmatch(r"[A-Za-z][A-Za-z0-9_-]*", prefix or ""):
        raise ValueError(f"id_prefix must start with a letter and hold only letters, digits, "
                         f"'-' and '_': {prefix!r}")
    return (f'<figure class="diagram" id={quoteattr(prefix)} data-search-exclude>\n'
            f"{svg}\n<figcaption>{caption}</figcaption>\n</figure>")


def _numbers(v, parts):
    """' The numbers of one step: C sub t minus 1 = (+0.5000, +0.3000); ...' """
    return " The numbers of one step: " + "; ".join(
        f"{words} = {fmt_vec(v[key])}" for words, key in parts if v.get(key)) + "."


def _vectors(values, keys):
    return {k: [float(x) for x in values[k]] for k in keys if values.get(k) is not None}


COLUMN_NOTE = " The numbers are this section's step, each vector written as a column, unit 1 above unit 2."

# ---------------------------------------------------------------------------
# Chapter 12: the recurrent network unrolled over three words
# ---------------------------------------------------------------------------

RNN = """
<text class="dg-label dg-muted" x="4" y="28">predicts</text>
<text class="dg-label dg-muted" x="4" y="356">reads</text>
<arrow d="M4 170H81" cls="hw"/><arrow d="M129 170H196" cls="hw"/>
<arrow d="M244 170H311" cls="hw"/><arrow d="M359 170H436" cls="hw"/>
CELLS
<chip key="h0" tex="h_0" x="44" y="112" cls="dg-c-state"/>
<chip key="h1" tex="h_1" x="162" y="112" cls="dg-c-state"/>
<chip key="h2" tex="h_2" x="277" y="112" cls="dg-c-state"/>
<chip key="h3" tex="h_3" x="396" y="112" cls="dg-c-state"/>
"""
RNN_CELL = """
<rect class="dg-cell" x="XLEFT" y="142" width="48" height="56" rx="5"/>
<m tex="W, U" x="XMID" y="160"/><m tex="t = STEP" x="XMID" y="184"/>
<arrow d="MXMID 142V64"/><m tex="V" x="XV" y="100" w="20"/>
<m tex="y_STEP" x="XMID" y="48" w="40"/><word text="NEXTWORD" x="XMID" y="22"/>
<arrow d="MXMID 338V198"/><chip key="xSTEP" tex="x_STEP" x="XMID" y="268" cls="dg-c-input"/>
<word text="READWORD" x="XMID" y="352"/>
"""


def rnn_unrolled(steps, h0=(0.0, 0.0), *, id_prefix="rnn-unrolled",
                 title="The recurrent network unrolled over “the dog ran”"):
    """Chapter 12's three steps: one cell per word, the hidden state passed along.
    ``steps``: dicts with t, word, x (the embedding), h (the new state) and next (the
    predicted word), as rnn.py's compute_unroll returns them (other keys ignored)."""
    if len(steps) != 3:
        raise ValueError("rnn_unrolled draws three steps")
    cells, values = [], {"h0": [float(v) for v in h0]}
    for k, s in enumerate(steps):
        x = 105 + 115 * k
        cell = (RNN_CELL.replace("XLEFT", f"{x - 24}").replace("XMID", f"{x}")
                .replace("XV", f"{x + 14}").replace("STEP", str(s["t"]))
                .replace("NEXTWORD", escape(s["next"])).replace("READWORD", escape(s["word"])))
        cells.append(cell)
        values[f"h{s['t']}"], values[f"x{s['t']}"] = list(s["h"]), list(s["x"])
    words = " ".join(s["word"] for s in steps)
    description = (
        f"Diagram: the recurrent network unrolled over the sentence “{words}”. Three copies "
        "of one cell stand side by side, each with the same weights W and U; above each, the "
        "same V turns the new hidden state into the output y, a distribution over the next "
        "word. Below each cell, the word read and its embedding x, the cell's input. The "
        "hidden state runs left to right through the cells: h sub 0 = "
        f"{fmt_vec(values['h0'])} goes in; " + "; ".join(
            f"after “{s['word']}”, h sub {s['t']} = {fmt_vec(s['h'])}" for s in steps)
        + ". The embeddings: " + "; ".join(
            f"x sub {s['t']} = {fmt_vec(s['x'])} for “{s['word']}”" for s in steps)
        + ". The most likely next word after each step: "
        + ", ".join(f"“{s['next']}”" for s in steps) + ".")
    caption = (f"Reading “{words}”: one cell, copied once per word, with the same "
               "<em>W</em>, <em>U</em> and <em>V</em> at every step. The numbers are the "
               "table's, each vector written as a column, unit 1 above unit 2.")
    svg = _svg(id_prefix, RNN.replace("CELLS", "".join(cells)), {}, values, 440, 370,
               title, description)
    return _figure(id_prefix, svg, caption)


# ---------------------------------------------------------------------------
# Chapter 13: the LSTM cell
# ---------------------------------------------------------------------------

LSTM = """
<rect class="dg-cell dg-cell-outline" x="82" y="14" width="276" height="376" rx="12"/>
<path class="dg-highway-band" d="M40 46H400"/>
<arrow d="M40 46H101" cls="hw"/><arrow d="M119 46H241" cls="hw"/><wire d="M259 46H400" cls="hw"/>
<times x="110" y="46" cls="hw"/><plus x="250" y="46" cls="hw"/>
<text class="dg-label" x="290" y="31" text-anchor="middle">cell state</text>
<arrow d="M320 46V86"/><gate tex="\\tanh" x="320" y="100" cls="fn"/><arrow d="M320 114V161"/>
<times x="320" y="170"/><wire d="M329 170H400"/>
<arrow d="M250 161V55"/><times x="250" y="170"/>
<arrow d="M180 280V170H241"/><arrow d="M110 280V55"/>
<arrow d="M250 280V179"/><arrow d="M320 280V179"/>
<wire d="M40 346H320"/><wire d="M145 420V346"/>
<arrow d="M110 346V320"/><arrow d="M180 346V320"/><arrow d="M250 346V320"/><arrow d="M320 346V320"/>
<circle class="dg-junction" cx="110" cy="346" r="2.6"/><circle class="dg-junction" cx="180" cy="346" r="2.6"/>
<circle class="dg-junction" cx="250" cy="346" r="2.6"/><circle class="dg-junction" cx="320" cy="346" r="2.6"/>
<circle class="dg-junction" cx="145" cy="346" r="2.6"/><circle class="dg-junction" cx="320" cy="46" r="2.6"/>
<gate tex="\\sigma" name="forget" x="110" y="300" cls="dg-f"/>
<gate tex="\\sigma" name="input" x="180" y="300" cls="dg-i"/>
<gate tex="\\tanh" name="candidate" x="250" y="300" cls="dg-c"/>
<gate tex="\\sigma" name="output" x="320" y="300" cls="dg-o"/>
<m tex="q_t = [h_{t-1}, x_t]" x="262" y="370" w="150"/>
<chip key="C_prev" tex="C_{t-1}" x="42" y="46" cls="dg-c-cell"/>
<chip key="kept" tex="f_t \\odot C_{t-1}" x="180" y="46" cls="dg-c-cell"/>
<chip key="C_t" tex="C_t" x="398" y="46" cls="dg-c-cell"/>
<chip key="added" tex="i_t \\odot \\tilde{C}_t" x="250" y="106" cls="dg-c-cell"/>
<chip key="h_t" tex="h_t" x="398" y="170" cls="dg-c-state"/>
<chip key="f" tex="f_t" x="110" y="222" cls="dg-f"/>
<chip key="i" tex="i_t" x="180" y="222" cls="dg-i"/>
<chip key="C_tilde" tex="\\tilde{C}_t" x="250" y="222" cls="dg-c"/>
<chip key="o" tex="o_t" x="320" y="222" cls="dg-o"/>
<chip key="h_prev" tex="h_{t-1}" x="42" y="346" cls="dg-c-state"/>
<chip key="x_t" tex="x_t" x="145" y="430" cls="dg-c-input"/>
"""
LSTM_PARTS = [("h sub t minus 1", "h_prev"), ("x sub t", "x_t"), ("C sub t minus 1", "C_prev"),
              ("f sub t", "f"), ("i sub t", "i"), ("C tilde sub t", "C_tilde"), ("o sub t", "o"),
              ("f sub t element-wise times C sub t minus 1", "kept"),
              ("i sub t element-wise times C tilde sub t", "added"), ("C sub t", "C_t"),
              ("h sub t", "h_t")]


def lstm_cell(values=None, *, id_prefix="lstm-cell", title="The LSTM cell, one step"):
    """The LSTM cell in chapter 13's notation, with one step's numbers if given.

    ``values``: gated.py's compute_lstm_step() as a dict (f, i, C_tilde, o, kept, added,
    C_t, h_t, and q = [h_{t-1}, x_t]); h_prev, x_t and C_prev may be added, else h_prev
    and x_t are read off q and C_prev is kept / f. None: the symbols alone.
    """
    v = None
    if values is not None:
        v = _vectors(values, [k for _, k in LSTM_PARTS] + ["q"])
        q, half = v.get("q"), len(v["h_t"])
        v.setdefault("h_prev", q[:half] if q else None)
        v.setdefault("x_t", q[half:] if q else None)
        v.setdefault("C_prev", [k / f for k, f in zip(v["kept"], v["f"])])
    description = (
        "Diagram: the LSTM cell. The cell state runs along the top, from C sub t minus 1 on "
        "the left to C sub t on the right. On the way it is multiplied element-wise by the "
        "forget gate f sub t, then the product of the input gate i sub t and the candidate "
        "C tilde sub t is added: C sub t equals f sub t element-wise times C sub t minus 1 "
        "plus i sub t element-wise times C tilde sub t, with no weight matrix on that path. "
        "Below, the previous hidden state h sub t minus 1, coming in from the left, and the "
        "input x sub t, from below, join into q sub t, which feeds four layers side by "
        "side: sigma for the forget gate, sigma for the input gate, tanh for the candidate "
        "and sigma for the output gate o sub t. On the right, C sub t also goes down through "
        "tanh and is multiplied by o sub t: h sub t, the new hidden state, leaves on the "
        "right." + (_numbers(v, LSTM_PARTS) if v else ""))
    caption = ("The LSTM cell. Along the top, the cell state is changed only by an "
               "element-wise product (⊙) with the forget gate and by a sum."
               + (COLUMN_NOTE if v else ""))
    svg = _svg(id_prefix, LSTM, {}, v, 440, 470, title, description)
    return _figure(id_prefix, svg, caption)


# ---------------------------------------------------------------------------
# The GRU cell
# ---------------------------------------------------------------------------

GRU = """
<rect class="dg-cell dg-cell-outline" x="82" y="14" width="276" height="442" rx="12"/>
<path class="dg-highway-band" d="M40 46H400"/>
<arrow d="M40 46H221" cls="hw"/><arrow d="M239 46H311" cls="hw"/><wire d="M329 46H400" cls="hw"/>
<times x="230" y="46" cls="hw"/><plus x="320" y="46" cls="hw"/>
<text class="dg-label" x="275" y="33">hidden state</text>
<circle class="dg-junction" cx="100" cy="46" r="2.6"/>
<wire d="M100 46V420H230"/><circle class="dg-junction" cx="100" cy="235" r="2.6"/>
<arrow d="M100 235H151"/><times x="160" y="235"/><arrow d="M169 235H288"/>
<arrow d="M160 350V244"/><path class="dg-gap" d="M230 228V242"/>
KEEP
<arrow d="M320 215V119"/><times x="320" y="110"/><arrow d="M320 101V55"/>
<gate tex="\\tanh" name="candidate" x="320" y="235" cls="dg-c"/>
<arrow d="M130 440H320V255"/><wire d="M130 490V420"/>
<circle class="dg-junction" cx="130" cy="420" r="2.6"/><circle class="dg-junction" cx="130" cy="440" r="2.6"/>
<circle class="dg-junction" cx="160" cy="420" r="2.6"/><circle class="dg-junction" cx="230" cy="420" r="2.6"/>
<arrow d="M160 420V390"/><arrow d="M230 420V390"/>
<gate tex="\\sigma" name="reset" x="160" y="370" cls="dg-r"/>
<gate tex="\\sigma" name="update" x="230" y="370" cls="dg-z"/>
<chip key="h_prev" tex="@h_{t-1}" x="42" y="46" cls="dg-c-state"/>
<chip key="h_t" tex="@h_t" x="398" y="46" cls="dg-c-state"/>
<chip key="h_tilde" tex="\\tilde{@h}_t" x="320" y="166" cls="dg-c"/>
<chip key="r" tex="@r_t" x="160" y="300" cls="dg-r"/>
<chip key="z" tex="@z_t" x="230" y="300" cls="dg-z"/>
<chip key="x_t" tex="@x_t" x="130" y="500" cls="dg-c-input"/>
"""
# Where the update gate's line goes: straight up to the state's product (it keeps the
# state, d2l) or through a "1 -" box to it (chung); the other way to the candidate's.
KEEPS = {
    "d2l": """<arrow d="M230 350V55"/><circle class="dg-junction" cx="230" cy="110" r="2.6"/>
<wire d="M230 110H256"/><gate tex="1 -" x="275" y="110" cls="dg-z small"/><arrow d="M294 110H311"/>""",
    "chung": """<arrow d="M230 350V95"/><gate tex="1 -" x="230" y="80" cls="dg-z small"/>
<arrow d="M230 67V55"/><circle class="dg-junction" cx="230" cy="110" r="2.6"/>
<arrow d="M230 110H311"/>""",
}


def gru_cell(values=None, letters="lower", convention="d2l", *, id_prefix="gru-cell",
             title=None):
    """The GRU cell: ``values`` a dict of z, r, h_tilde, h_t (and h_prev, x_t, else their
    symbols alone), or None for the symbols alone; see the module's docstring."""
    if letters not in ("lower", "upper") or convention not in KEEPS:
        raise ValueError(f"letters must be 'lower' or 'upper' and convention 'd2l' or "
                         f"'chung', not {letters!r}, {convention!r}")
    v = None
    if values is not None:
        v = _vectors(values, ("z", "r", "h_tilde", "h_t", "h_prev", "x_t"))
        missing = [k for k in ("z", "r", "h_tilde", "h_t") if k not in v]
        if missing:
            raise KeyError(f"gru_cell values lack {', '.join(missing)}")
    slots = {c: (c.upper() if letters == "upper" else c) for c in "hzrx"}
    h, z, r, x = (slots[c] for c in "hzrx")
    keep, new = (f"{z} sub t", f"1 minus {z} sub t")
    if convention == "chung":
        keep, new = new, keep
    description = (
        f"Diagram: the GRU cell. The hidden state runs along the top, from {h} sub t minus 1 "
        f"on the left to {h} sub t on the right: it is multiplied element-wise by {keep}, then "
        f"the candidate {h} tilde sub t, weighted by {new}, is added: {h} sub t equals "
        f"{keep}, element-wise times {h} sub t minus 1, plus {new}, element-wise times {h} "
        f"tilde sub t. Below, {h} sub t minus 1 comes down and meets the input {x} sub t, "
        f"coming up from below; together they feed two sigma layers side by side, the reset "
        f"gate {r} sub t and the update gate {z} sub t. The reset gate multiplies {h} sub t "
        f"minus 1 element-wise, and that product, whose line crosses the update gate's "
        f"without joining it, and {x} sub t, along the bottom, feed the tanh layer that makes "
        f"the candidate. The update gate's line goes "
        + ("straight up to the product on the state path, and through a 1 minus box to the "
           "candidate's product." if convention == "d2l" else
           "up through a 1 minus box to the product on the state path, and straight to the "
           "candidate's product.")
        + (_numbers(v, [(f"{h} sub t minus 1", "h_prev"), (f"{x} sub t", "x_t"),
                        (f"{z} sub t", "z"), (f"{r} sub t", "r"),
                        (f"{h} tilde sub t", "h_tilde"), (f"{h} sub t", "h_t")]) if v else ""))
    zz = f"<em>{z}</em><sub>t</sub>"
    caption = (f"The GRU cell: {zz} near 1 keeps the state, 1 − {zz} weighs the candidate."
               if convention == "d2l" else
               f"The GRU cell: 1 − {zz} keeps the state, {zz} weighs the candidate.")
    svg = _svg(id_prefix, GRU.replace("KEEP", KEEPS[convention]), slots, v, 440, 536,
               title or "The GRU cell, one step", description)
    return _figure(id_prefix, svg, caption + (COLUMN_NOTE if v else ""))
