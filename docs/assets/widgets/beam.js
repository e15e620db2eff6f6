/* "beam": chapter 17's beam search, one decoder step at a time. For a string and a
   width, the beams kept after step j, likeliest first, with log P(y_1 .. y_j) as
   `python3 deeper.py --beam` prints them, each marked if it leads to greedy decoding's
   output (width 1's) or to the output this width ends with. The marks are the only thing
   computed here (a prefix test); a browser test compares everything with the tables.

   data (generator/chapters/ch17_deeper.py's beam_widget):
     title, caption, command
     traces [{source, target, widths, steps (per width, per step: [[output so far, log P]]),
              outputs (per width)}] */
RW.define("beam", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;
  var body = el("tbody"), summary = el("p", { "class": "rw-readout", "data-value": "beam-summary" });
  var announce = kit.live(figure);
  var string = kit.choice({ label: "string", name: "string", index: 0, onChange: restart,
                            options: d.traces.map(function (t, k) { return { text: t.source, value: k }; }) });
  var width = kit.choice({ label: "width", name: "width", index: d.traces[0].widths.length - 1, onChange: restart,
                           options: d.traces[0].widths.map(function (w, k) { return { text: String(w), value: k }; }) });
  var steps = [];
  for (var j = 1; j <= 12; j++) steps.push(j);
  var slider = null;

  function trace() { return d.traces[string.index()]; }

  function marks(written) {
    var t = trace(), w = width.index(), out = [];
    if (t.outputs[0].indexOf(written) === 0) out.push("greedy");
    if (t.outputs[w].indexOf(written) === 0) out.push("final");
    return out;
  }

  function show(j) {  // after step j (1 .. n)
    var t = trace(), w = width.index(), kept = t.steps[w][j - 1];
    body.textContent = "";
    kept.forEach(function (beam, r) {
      var m = marks(beam[0]);
      body.appendChild(el("tr", { "class": m.length ? "rw-mark-" + m.join("-") : null }, [
        el("td", { text: String(r + 1) }), el("td", { "class": "rw-left", text: beam[0] }),
        el("td", { text: fmt.fixed(beam[1], 2) }), el("td", { "class": "rw-left", text: m.join(", ") })]));
    });
    var parted = 0;
    while (parted < t.target.length && t.outputs[0][parted] === t.outputs[w][parted]) parted++;
    summary.textContent = "'" + t.source + "', to be written '" + t.target + "'. Width " + t.widths[w] +
      " after step " + j + " of " + t.target.length + ": " + kept.length + " kept. Greedy writes '" + t.outputs[0] +
      "'; this width ends with '" + t.outputs[w] + "'" +
      (parted === t.target.length ? ", the same." : ", which parts from greedy's at step " + (parted + 1) + ".");
    return "step " + j + ": the likeliest kept is " + kept[0][0] + ", log P " + fmt.fixed(kept[0][1], 2);
  }

  function restart() {
    var n = trace().target.length;
    var old = slider;
    slider = kit.slider({ label: "after decoder step j", values: steps.slice(0, n), index: 0,
                          text: function (j) { return j + " of " + n; },
                          onInput: function (j) { announce(show(j)); } });
    slider.input.setAttribute("data-control", "step");
    if (old) old.root.replaceWith(slider.root);
    show(1);
    return slider.root;
  }

  var table = el("table", {}, [el("thead", {}, [el("tr", {}, ["rank", "kept: y_1 .. y_j", "log P", "leads to"].map(
    function (h) { return el("th", { scope: "col", text: h }); }))]), body]);
  var row = kit.controls([string.root, width.root]);
  kit.frame(figure, d.title, [row, restart(), summary, el("div", { "class": "rw-scroll", "data-value": "beam-kept" }, [table]),
    el("p", { "class": "rw-label" }, ["Every step of every width, as ", el("code", { "data-command": "", text: "$ " + d.command }), " prints it."])],
    d.caption);
});
