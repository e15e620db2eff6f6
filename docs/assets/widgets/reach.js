/* "reach": how far back a prediction reaches in chapter 14's three trained models (the
   GRU, the LSTM and the plain RNN), Distill's connectivity view, over the validation
   passage that section 14.6 shades. Point at, tap, or move the cursor (arrow keys) to a
   character t: each character before it, t - k, is shaded by the norm of the gradient of
   the log-probability the chosen model gives the character after t with respect to the
   one-hot input X_(t-k) (the page's X_t); the chart draws that prediction in all three
   models, and the readout and the table give the numbers. They are gru.py's
   compute_reach (each cell's own backward steps), computed at build time and served in
   gru-reach.json (`models[i].reach[t][k]`); the page only looks them up. The passage
   above, shaded by the update gate, stays as built.

   The shading is per prediction: each value as a share of that prediction's largest,
   in the ten levels of the passage above (n0 .. n9, site.css), either on a log scale
   (ten levels over d.decades decades: the values fall by orders of magnitude within a
   few characters, which a linear scale hides) or linear (tenths of the largest).

   Until the reader first points at the passage, taps it or tabs to it, the widget shows
   the last character's prediction, whose rows come with the page (d.start); the rest
   (gru-reach.json) loads then.

   Once the page's trainer has trained (kit.shared "gru-params", trainer.js), the reader's
   own GRU is a fourth model: its rows are gru.py's compute_reach computed in the page,
   by gru-train.js's Model.reach in a Web Worker (the trainer's file), again after each of
   the trainer's rows while it is the model shown.

   data (generator/chapters/ch14_gru_lm.py's reach_widget):
     title, caption         text (caption may hold inline markup)
     model {url, bytes}     the served record of `python3 gru.py --reach`
     passage                its `passage`, the one the page shades (checked on load)
     reach_back             how many inputs back each prediction is measured
     cells, cell            the models' names, in the record's order, and the one shaded first
     start {t, rows}        the prediction shown before the record loads: rows[i] is
                            models[i].reach[t]
     scales [{text}], index the two scales, by name, and the one it starts with
     decades                the log scale's span
     ks                     the distances the table lists (those a prediction has)
     range {min, max}       the chart's y range: the decades that hold every value
     next                   the character after the passage (the last prediction's target)
     trainer                the title of the page's trainer, whose GRU the reader can choose */
(function () {
  "use strict";
  var trainer = new URL("gru-train.js", document.currentScript.src).href;

RW.define("reach", function (figure, d, kit) {
  var el = kit.el, fmt = kit.fmt;
  var passage = d.passage.split(""), n = passage.length;
  var model = null, scale = d.index, cell = d.cell, loading = null;
  var STYLE = ["rw-s0", "rw-s1", "rw-s2", "rw-s3"];  // solid, dashed, dotted: the static figures'
  var YOURS = d.cells.length;  // the reader's GRU, after the chapter's models
  var yours = { shared: null, reach: null, update: null, worker: null, busy: false };

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

  function rowsAt(t) {  // each model's row for prediction t (yours last, once computed), or null
    var rows = model ? model.models.map(function (m) { return m.reach[t]; }) : t === d.start.t ? d.start.rows : null;
    return rows && yours.reach ? rows.concat([yours.reach[t]]) : rows;
  }

  function names() {  // the models the rows are of
    return yours.reach ? d.cells.concat(["your GRU"]) : d.cells;
  }

  var chars = kit.characters({
    label: "the passage: the arrow keys choose the character whose prediction is shown",
    onMove: select, onUse: load,
    idle: "no character chosen yet"
  });
  chars.root.classList.add("shaded", "rw-passage");
  chars.root.setAttribute("data-value", "passage");
  chars.show(passage.map(function (c) { return { text: c }; }), null);
  var spans = chars.root.children;

  var readout = el("p", { "class": "rw-readout", "data-value": "reach-readout" });
  var values = el("div", { "class": "rw-scroll rw-reach-values", "data-value": "reach-values" });
  var status = el("p", { "class": "rw-status rw-cue", "data-value": "reach-cue",
                         text: "Shown: the prediction after the passage's last character. Point at any " +
                               "other character (or tap it, or tab to the passage and use the arrow keys) " +
                               "to see how far back its prediction reaches; the gradients of all three " +
                               "models (" + Math.round(d.model.bytes / 1000) + " KB) load then." });
  var chart = kit.chart({ x: { min: 0, max: d.reach_back - 1, label: "k, characters back" },
                          y: { min: 1e-12, max: 10, log: true, label: "\u2016\u2202 log P / \u2202X_{t\u2212k}\u2016" },
                          height: 240 });
  var scaleChoice = kit.choice({
    label: "shading", name: "scale", index: d.index,
    options: d.scales.map(function (s, k) { return { text: s.text, value: k }; }),
    onChange: function (k) { scale = k; chars.refresh(); }
  });
  var cellChoice = kit.choice({
    label: "model", name: "cell", index: d.cell,
    options: d.cells.map(function (name, k) { return { text: name, value: k }; })
      .concat([{ text: "your GRU (not trained yet)", value: YOURS }]),
    onChange: function (k) { cell = k; load(); mine(); chars.refresh(); }
  });
  var yoursStatus = el("p", { "class": "rw-status", "data-value": "yours-status", role: "status" });
  var yoursMessage = el("p", { "class": "rw-error", role: "alert", "data-value": "yours-message" });

  // The reader's GRU: its reach over the passage, computed in a worker from the trainer's
  // latest parameters; again when newer ones come while it is the model shown.
  function mine() {
    var v = yours.shared;
    yoursMessage.textContent = cell === YOURS && !v ? "Your GRU has not trained yet: press Start in the " +
      "trainer on this page (\u201c" + d.trainer + "\u201d). Until its first row, the shading stays " +
      "the " + d.cells[d.cell] + "'s." : "";
    if (cell !== YOURS || !v || yours.busy || yours.update === v.update) return;
    var ids = (d.passage + d.next).split("").map(function (c) { var i = v.vocab.indexOf(c); return i < 0 ? v.vocab.indexOf("<unk>") : i; });
    if (!yours.worker) {
      yours.worker = new Worker(trainer);
      yours.worker.onmessage = function (e) {
        if (e.data.type !== "reach") return;
        yours.busy = false;
        yours.reach = e.data.reach;
        yours.update = e.data.id;
        cellChoice.relabel(YOURS, "your GRU (after " + yours.update + " updates)");
        yoursStatus.textContent = "Your GRU after " + yours.update + " updates: its gradients, computed here.";
        figure.setAttribute("data-yours", String(yours.update));
        chars.refresh();
        mine();  // newer parameters came meanwhile
      };
    }
    yours.busy = true;
    yoursStatus.textContent = "Computing your GRU's gradients (after " + v.update + " updates)\u2026";
    yours.worker.postMessage({ type: "reach", id: v.update, params: v.params, V: v.vocab.length, h: v.hidden,
                               ids: ids, back: d.reach_back });
  }
  kit.shared("gru-params", function (v) {
    yours.shared = v && v.vocab.length ? v : null;
    if (!yours.shared) {  // a reset: no model of the reader's now
      yours.reach = null; yours.update = null;
      cellChoice.relabel(YOURS, "your GRU (not trained yet)");
      yoursStatus.textContent = "";
      figure.removeAttribute("data-yours");
      chars.refresh();
    } else {
      cellChoice.relabel(YOURS, "your GRU (after " + v.update + " updates)");
    }
    mine();
  });

  function select(t) {  // the prediction made after character t; returns what is said
    var rows = rowsAt(t), models = names();
    if (!rows) return "character " + charName(passage[t]) + ", step " + t + ": loading";
    var shown = cell < rows.length ? cell : d.cell;  // yours, once computed; until then the first
    var row = rows[shown], top = Math.max.apply(null, row), kTop = row.indexOf(top);
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
                   (next ? ", predicting the next, " + quoted(next) : "") + ": in the ",
                   el("span", { "data-value": "reach-cell", text: models[shown] }),
                   ", the norm of the gradient of its log-probability with respect to each earlier input ",
                   input(), " is largest at k = ",
                   el("span", { "class": "rw-number", "data-value": "reach-top-k", text: String(kTop) }),
                   " (" + quoted(passage[t - kTop]) + "), ",
                   el("span", { "class": "rw-number", "data-value": "reach-top", text: g3(top) }), ".");
    values.textContent = "";
    var body = el("tbody");
    d.ks.filter(function (k) { return k < row.length; }).forEach(function (k) {
      body.appendChild(el("tr", { "data-k": k }, [
        el("td", { text: String(k) }),
        el("td", { text: passage[t - k] === " " ? "\u2423" : passage[t - k], "aria-label": charName(passage[t - k]) })
      ].concat(rows.map(function (r) { return el("td", { text: g3(r[k]) }); }))));
    });
    values.appendChild(el("table", {}, [
      el("thead", {}, [el("tr", {}, [["k"], ["input ", input()]].concat(models.map(function (name) { return [name]; }))
        .map(function (h) { return el("th", { scope: "col" }, h); }))]), body]));
    chart.draw({
      y: d.range,
      lines: rows.map(function (r, c) { return { y: r, cls: (c === shown ? "rw-main " : "rw-ref ") + STYLE[c] }; }),
      mark: { x: kTop, y: top },
      label: "The norm of the gradient of the prediction after step " + t + " against k, " +
             "characters back, log scale, in the " + models.join(", the ") + "; the " +
             models[shown] + " drawn bold"
    });
    var said = [kTop + " back " + g3(top) + " (the largest)"];
    [8, 16, 32].forEach(function (k) { if (k < row.length) said.push(k + " back " + g3(row[k])); });
    return kit.spoken(models[shown] + ", character " + charName(passage[t]) + ", step " + t +
                      (next ? ", predicting " + charName(next) : "") + ": " + said.join(", "));
  }

  function load() {
    if (!loading) {
      figure.setAttribute("data-model", "loading");
      status.textContent = "Loading the gradients\u2026";
      loading = kit.json(d.model.url).then(function (m) {
        if (m.passage !== d.passage || m.models.length !== d.cells.length ||
            m.models.some(function (x, c) { return x.model !== d.cells[c] || x.reach.length !== n; })) {
          throw new Error("not this passage");
        }
        model = m;
        status.textContent = "";
        status.hidden = true;
        figure.setAttribute("data-model", "ready");
        chars.refresh();
      }).catch(function () {
        loading = null;
        status.textContent = "The gradients did not load (gru-reach.json); try again, or run gru.py --reach.";
        figure.setAttribute("data-model", "failed");
      });
    }
    return loading;
  }

  kit.frame(figure, d.title, [el("div", { "class": "inside" }, [chars.root]), status,
                              kit.controls([cellChoice.root, scaleChoice.root]), yoursMessage, yoursStatus,
                              readout, chart.root, kit.legend(d.cells.concat(["your GRU, once trained"]).map(function (name, c) {
                                return { cls: "rw-main " + STYLE[c], text: name };
                              }).concat([{ cls: "rw-mark", text: "the largest, in the model shaded" }])),
                              values], d.caption);
  chars.move(d.start.t);
  figure.setAttribute("data-model", "waiting");
});
})();
