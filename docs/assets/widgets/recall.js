/* "recall": chapter 15's recall task read by attention (chapter 17). For a lag and one of
   seed 0's first test sequences, the weights a_t = softmax over t of h_T . h_t that the
   query put on each state h_1 .. h_T, as bars; the reader steps through t (arrow keys,
   pointer, tap) and reads x_t and a_t, as `python3 deeper.py --recall` prints them.
   Nothing is computed here but the largest weight; a browser test compares the rest.

   data (generator/chapters/ch17_deeper.py's recall_widget):
     title, caption, command
     lags                 the lags, in order
     examples [{lag, sequence, tokens (x_1 .. x_T), answer, given, weights (a_1 .. a_T)}] */
RW.define("recall", function (figure, d, kit) {
  "use strict";
  var el = kit.el, svg = kit.svg, fmt = kit.fmt;
  var bars = svg("svg", { "class": "rw-bars", "aria-hidden": "true", preserveAspectRatio: "none",
                          "data-value": "recall-bars" });
  var summary = el("p", { "class": "rw-readout", "data-value": "recall-summary" });
  var readout = el("p", { "class": "rw-readout", "data-value": "recall-readout" });
  var tokens = kit.characters({ label: "the sequence x_1 to x_T: the arrow keys choose the step t whose weight is shown",
                                onMove: step, idle: "no step chosen yet" });
  tokens.root.setAttribute("data-value", "tokens");
  var lag = kit.choice({ label: "lag", name: "lag", index: 0, onChange: show,
                         options: d.lags.map(function (l) { return { text: String(l), value: l }; }) });
  var sequence = kit.choice({ label: "test sequence", name: "sequence", index: 0, onChange: show,
                              options: [1, 2, 3].map(function (k) { return { text: String(k), value: k }; }) });

  function current() {
    var l = d.lags[lag.index()], k = sequence.index() + 1;
    return d.examples.filter(function (e) { return e.lag === l && e.sequence === k; })[0];
  }

  function step(t) {  // step t + 1: x_t and its weight
    var e = current(), a = e.weights[t];
    Array.prototype.forEach.call(bars.children, function (bar, i) { bar.classList.toggle("rw-at", i === t); });
    readout.textContent = "t = " + (t + 1) + ", x_t = " + e.tokens[t] + ": a_t = " + fmt.fixed(a, 3) +
      (t === 0 ? " (h_1, the state after the symbol)" : t === e.tokens.length - 1 ? " (h_T, the query's own state)" : "");
    return "step " + (t + 1) + ", " + e.tokens[t] + ": weight " + fmt.fixed(a, 3);
  }

  function show() {
    var e = current(), T = e.weights.length, top = 0;
    e.weights.forEach(function (w, i) { if (w > e.weights[top]) top = i; });
    bars.textContent = "";
    bars.setAttribute("viewBox", "0 0 " + T + " 1");
    e.weights.forEach(function (w, i) {
      var h = w / e.weights[top];
      bars.appendChild(svg("rect", { x: i + 0.1, y: 1 - h, width: 0.8, height: h }));
    });
    summary.textContent = "Lag " + e.lag + ", sequence " + e.sequence + ": answer " + e.answer +
      ", the model answers " + e.given + ". On h_1 (after " + e.answer + "): a_1 = " + fmt.fixed(e.weights[0], 3) +
      "; the largest weight, a_" + (top + 1) + " = " + fmt.fixed(e.weights[top], 3) + ", at t = " + (top + 1) +
      " of " + T + " (the tallest bar).";
    tokens.show(e.tokens.split("").map(function (c) { return { text: c }; }), 0);
  }

  kit.frame(figure, d.title, [kit.controls([lag.root, sequence.root]), summary,
    el("p", { "class": "rw-label", text: "the weight a_t on each state h_t, against the largest:" }), bars,
    el("p", { "class": "rw-label", text: "the sequence x_1 .. x_T (point at a step):" }), tokens.root, readout,
    el("p", { "class": "rw-label" }, ["The weights as ", el("code", { "data-command": "", text: "$ " + d.command }), " prints them."])],
    d.caption);
  show();
});
