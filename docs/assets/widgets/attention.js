/* "attention": chapter 17's encoder-decoder with attention, read. For a test string, the
   reader points at (taps, or reaches with the arrow keys) a symbol the model wrote and
   sees the weights a_ji that output step j put on each state h_i of the encoder: the
   source shaded in ten levels (a tenth of weight each) and the weights listed with two
   decimals, as `python3 deeper.py --attention` prints them. Nothing is computed here:
   the weights are the script's record. A browser test compares them with its tables.

   data (generator/chapters/ch17_deeper.py's attention_widget):
     title, caption     text (caption may hold inline markup)
     strings [{source, output, weights (a row per output step), command}]
     index              the string it starts at */
RW.define("attention", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt, charName = kit.core.charName, quoted = kit.core.quoted;
  var source = el("p", { "class": "rw-chars shaded rw-passage", "data-value": "source", "aria-hidden": "true" });
  var readout = el("p", { "class": "rw-readout", "data-value": "attention-readout" });
  var command = el("code", { "data-command": "" });
  var body = el("tbody"), head = el("thead");
  var output = kit.characters({
    label: "what the model wrote: the arrow keys choose the output step whose weights are shown",
    onMove: select, idle: "no output step chosen yet"
  });
  output.root.setAttribute("data-value", "output");

  function level(w) { return Math.max(0, Math.min(9, Math.floor(w * 10))); }

  function select(j) {  // output step j + 1: the source shaded by its weights
    var s = d.strings[choice.index()], row = s.weights[j], src = s.source.split("");
    source.textContent = "";
    src.forEach(function (c, i) { source.appendChild(el("i", { "class": "p" + level(row[i]), text: c })); });
    var top = 0;
    row.forEach(function (w, i) { if (w > row[top]) top = i; });
    readout.textContent = "Output step j = " + (j + 1) + ", " + quoted(s.output[j]) + ": its weights over the " +
      "encoder's states h_1 .. h_" + src.length + " are " + row.map(function (w, i) {
        return src[i] + " (" + (i + 1) + ") " + fmt.fixed(w, 2);
      }).join(", ") + "; the largest on " + quoted(src[top]) + " (" + (top + 1) + ").";
    Array.prototype.forEach.call(body.children, function (tr, k) { tr.classList.toggle("rw-current", k === j); });
    return "output step " + (j + 1) + ", " + charName(s.output[j]) + ": largest weight " + fmt.fixed(row[top], 2) +
      " on " + charName(src[top]) + ", position " + (top + 1);
  }

  function show() {  // the chosen string: its output, its whole table
    var s = d.strings[choice.index()];
    output.show(s.output.split("").map(function (c) { return { text: c }; }), 0);
    command.textContent = "$ " + s.command;
    head.textContent = "";
    head.appendChild(el("tr", {}, [el("th", { scope: "col", text: "j: y_j" })].concat(s.source.split("").map(function (c, i) {
      return el("th", { scope: "col", text: c + " (" + (i + 1) + ")" });
    }))));
    body.textContent = "";
    s.weights.forEach(function (row, j) {
      body.appendChild(el("tr", {}, [el("td", { text: (j + 1) + ": " + s.output[j] })].concat(row.map(function (w) {
        return el("td", { text: fmt.fixed(w, 2) });
      }))));
    });
    select(0);
  }

  var choice = kit.choice({ label: "test string", name: "string", index: d.index, onChange: show,
                            options: d.strings.map(function (s, k) { return { text: s.source, value: k }; }) });
  kit.frame(figure, d.title, [kit.controls([choice.root]),
    el("div", { "class": "inside" }, [el("p", { "class": "rw-label", text: "read (the encoder's input), shaded by the weight:" }),
                                      source, el("p", { "class": "rw-label", text: "written (point at a symbol):" }), output.root]),
    readout, el("p", { "class": "rw-label" }, ["Every output step's weights, as ", command, " prints them:"]),
    el("div", { "class": "rw-scroll" }, [el("table", {}, [head, body])])], d.caption);
  show();
});
