/* "reach": how far back a prediction of chapter 14's trained GRU reaches, Distill's
   connectivity view, over the validation passage that section 14.6 shades. Point at,
   tap, or move the cursor (arrow keys) to a character t: each character before it, t - k,
   is shaded by the norm of the gradient of the log-probability the model gives the
   character after t with respect to the one-hot input X_(t-k) (the page's X_t); the readout and the chart
   give the numbers. They are gru.py's compute_reach (its own backward steps), computed
   at build time and served in gru-trained.json (`reach[t][k]`, `mean_reach[k]`); the page
   only looks them up. The passage above, shaded by the update gate, stays as built.

   The shading is per prediction: each value as a share of that prediction's largest,
   in the ten levels of the passage above (n0 .. n9, site.css), either on a log scale
   (ten levels over d.decades decades: the values fall by orders of magnitude within a
   few characters, which a linear scale hides) or linear (tenths of the largest).

   The gradients (gru-trained.json, 256 KB, the file the text generator above loads; one
   fetch serves both) load at the first pointer, tap or focus on the passage.

   data (generator/chapters/ch14_gru_lm.py's reach_widget):
     title, caption         text (caption may hold inline markup)
     model {url, bytes}     the served record of `python3 gru.py --export`
     passage                its `passage`, the one the page shades (checked on load)
     reach_back             how many inputs back each prediction is measured
     scales [{text}], index the two scales, by name, and the one it starts with
     decades                the log scale's span
     ks                     the distances the readout lists (those a prediction has) */
RW.define("reach", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;
  var passage = d.passage.split(""), n = passage.length;
  var model = null, pending = null, scale = d.index, loading = null, range = null;

  function level(share) {  // a share of the largest, 0 .. 1, to one of ten levels
    if (!(share > 0)) return 0;
    if (scale === 1) return Math.min(9, Math.floor(share * 10));  // linear: its tenth
    return Math.max(0, Math.min(9, Math.floor(10 + Math.log10(share) * 10 / d.decades)));
  }

  function g3(v) {  // Python's f"{v:.3g}" (the values are stored to 3 significant digits)
    if (v === 0) return "0";
    var e = Math.floor(Math.log10(Math.abs(v)));
    if (e < -4 || e >= 3) return fmt.sci(v, 2).replace(/\.?0+e/, "e");  // 1.50e-05 -> 1.5e-05
    var f = v.toFixed(Math.max(0, 2 - e));
    return f.indexOf(".") < 0 ? f : f.replace(/\.?0+$/, "");  // 1.40 -> 1.4
  }

  function input() { return el("span", {}, ["X", el("sub", { text: "t\u2212k" })]); }  // the page's X_t

  var charName = kit.core.charName, quoted = kit.core.quoted;

  var chars = kit.characters({
    label: "the passage: the arrow keys choose the character whose prediction is shown",
    onMove: select, onUse: load,
    idle: "no character chosen yet"
  });
  chars.root.classList.add("shaded", "rw-passage");
  chars.root.setAttribute("data-value", "passage");
  chars.show(passage.map(function (c) { return { text: c }; }), null);
  var spans = chars.root.children;

  var readout = el("p", { "class": "rw-readout", "data-value": "reach-readout",
                          text: "Point at a character (or tap it, or tab to the passage and use the arrow keys)." });
  var values = el("div", { "class": "rw-scroll rw-reach-values", "data-value": "reach-values" });
  var status = el("p", { "class": "rw-status", text: "The gradients load (with the model, " +
                         Math.round(d.model.bytes / 1000) + " KB) when you first point at the passage." });
  var chart = kit.chart({ x: { min: 0, max: d.reach_back - 1, label: "k, characters back" },
                          y: { min: 1e-12, max: 10, log: true, label: "\u2016\u2202 log P / \u2202X_{t\u2212k}\u2016" },
                          height: 240 });
  var choice = kit.choice({
    label: "shading", name: "scale", index: d.index,
    options: d.scales.map(function (s, k) { return { text: s.text, value: k }; }),
    onChange: function (k) { scale = k; chars.refresh(); }
  });

  function select(t) {  // the prediction made after character t; returns what is said
    if (!model) { pending = t; return "character " + charName(passage[t]) + ", step " + t + ": loading"; }
    var row = model.reach[t], top = Math.max.apply(null, row), kTop = row.indexOf(top);
    for (var i = 0; i < n; i++) {
      var k = t - i, span = spans[i];
      if (k >= 0 && k < row.length) {
        span.className = "n" + level(row[k] / top);
        span.setAttribute("data-g", String(row[k]));
      } else {
        span.className = i === t + 1 ? "rw-next" : "";
        span.removeAttribute("data-g");
      }
    }
    var next = t + 1 < n ? passage[t + 1] : null;  // the last one predicts a character not shown
    readout.textContent = "";
    readout.setAttribute("data-t", t);
    readout.append("Step t = " + t + ", character " + quoted(passage[t]) +
                   (next ? ", predicting the next, " + quoted(next) : "") + ": the norm of the gradient of " +
                   "its log-probability with respect to each earlier input ", input(), " is largest at k = ",
                   el("span", { "class": "rw-number", "data-value": "reach-top-k", text: String(kTop) }),
                   " (" + quoted(passage[t - kTop]) + "), ",
                   el("span", { "class": "rw-number", "data-value": "reach-top", text: g3(top) }), ".");
    values.textContent = "";
    var body = el("tbody");
    d.ks.filter(function (k) { return k < row.length; }).forEach(function (k) {
      body.appendChild(el("tr", { "data-k": k, "data-g": String(row[k]) }, [
        el("td", { text: String(k) }),
        el("td", { text: passage[t - k] === " " ? "\u2423" : passage[t - k], "aria-label": charName(passage[t - k]) }),
        el("td", { text: g3(row[k]) }), el("td", { text: g3(model.mean_reach[k]) })]));
    });
    values.appendChild(el("table", {}, [
      el("thead", {}, [el("tr", {}, [["k"], ["input ", input()], ["this prediction"], ["mean over the passage"]]
        .map(function (h) { return el("th", { scope: "col" }, h); }))]), body]));
    chart.draw({
      y: range,
      lines: [{ y: model.mean_reach, cls: "rw-ref rw-dash" }, { y: row, cls: "rw-main" }],
      mark: { x: kTop, y: top },
      label: "The norm of the gradient of the prediction after step " + t + " against k, " +
             "characters back, log scale, with the mean over the passage dashed"
    });
    var said = [kTop + " back " + g3(top) + " (the largest)"];
    [8, 16, 32].forEach(function (k) { if (k < row.length) said.push(k + " back " + g3(row[k])); });
    return kit.spoken("character " + charName(passage[t]) + ", step " + t +
                      (next ? ", predicting " + charName(next) : "") + ": " + said.join(", "));
  }

  function load() {
    if (!loading) {
      figure.setAttribute("data-model", "loading");
      status.textContent = "Loading the gradients\u2026";
      loading = kit.json(d.model.url).then(function (m) {
        if (m.passage !== d.passage || m.reach.length !== n) throw new Error("not this passage");
        model = m;
        var all = [].concat.apply([], m.reach).filter(function (v) { return v > 0; });
        range = { min: Math.pow(10, Math.floor(Math.log10(Math.min.apply(null, all)))),
                  max: Math.pow(10, Math.ceil(Math.log10(Math.max.apply(null, all)))) };  // every row on one scale
        status.textContent = "";
        status.hidden = true;
        shown.hidden = false;
        figure.setAttribute("data-model", "ready");
        chars.move(pending === null ? (chars.at() >= 0 ? chars.at() : n - 1) : pending);
      }).catch(function () {
        loading = null;
        status.textContent = "The gradients did not load (gru-trained.json); try again, or run gru.py --export.";
        figure.setAttribute("data-model", "failed");
      });
    }
    return loading;
  }

  var shown = el("div", { hidden: true }, [
    chart.root, kit.legend([
      { cls: "rw-main", text: "this prediction" },
      { cls: "rw-ref rw-dash", text: "mean over the passage" },
      { cls: "rw-mark", text: "its largest" }]),
    values
  ]);
  kit.frame(figure, d.title, [el("div", { "class": "inside" }, [chars.root]), kit.controls([choice.root]),
                              status, readout, shown], d.caption);
  figure.setAttribute("data-model", "waiting");
});
