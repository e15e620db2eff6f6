/* "cellstep": chapter 13's LSTM step and GRU step with inputs the reader types. The step
   is computed here, from the weights of gated.py's record, with the chapter's equations
   (gated.py's compute_lstm_step and compute_gru_step, the site's one GRU convention:
   h_t = z * h_{t-1} + (1 - z) * h~, W_z = -W_f); the page's own tables and diagrams
   then show it, and their command labels name the command that prints the same numbers.
   A browser test runs that command and compares.

   data (generator/chapters/ch13_gated.py's step_widget writes it):
     title, intro, note          text (may hold inline markup)
     command                     "python3 gated.py --step": the labels of the tables to follow
     weights                     {W_f, W_i, W_C, W_o, b_i, b_o, W_z, W_r, W_h}
     inputs [{name, html, label, flag, default: [...]}]   the fields, in gated.py's option
                                 order; b_f is one number for both units
     limits {min, max, maxLength}
     tables [{cells: [last column, as printed], rows: [{row, value, suffix}]}]
                                 value: a path into the step ("lstm.f", "x_t")
     diagrams [{id, keys: {chip key: path}}]   figure#id's value chips: diagrams.py's
                                 slots, [data-key] holding one <mn> per unit in .dg-vec;
                                 and the vectors its <desc> writes, (+0.7311, +0.6900) */
RW.define("cellstep", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt, W = d.weights;

  // -- the step, as gated.py computes it ------------------------------------------
  function matvec(M, v) {
    return M.map(function (row) { return row.reduce(function (s, w, k) { return s + w * v[k]; }, 0); });
  }
  function add(a, b) { return a.map(function (x, k) { return x + b[k]; }); }
  function mul(a, b) { return a.map(function (x, k) { return x * b[k]; }); }
  function sigmoid(a) { return a.map(kit.core.sigmoid); }
  function tanh(a) { return a.map(Math.tanh); }

  function step(h_prev, C_prev, x_t, b) {
    var b_f = [b, b];  // --forget-bias: one number for both units
    var q = h_prev.concat(x_t);  // [h_{t-1}, x_t]
    var f = sigmoid(add(matvec(W.W_f, q), b_f));  // forget gate
    var i = sigmoid(add(matvec(W.W_i, q), W.b_i));  // input gate
    var C_tilde = tanh(matvec(W.W_C, q));  // candidate
    var o = sigmoid(add(matvec(W.W_o, q), W.b_o));  // output gate
    var kept = mul(f, C_prev), added = mul(i, C_tilde);
    var C_t = add(kept, added);  // reached by addition
    var h_t = mul(o, tanh(C_t));
    var z = sigmoid(matvec(W.W_z, q));  // update gate: z near 1 keeps h_{t-1}
    var r = sigmoid(matvec(W.W_r, q));  // reset gate
    var h_tilde = tanh(matvec(W.W_h, mul(r, h_prev).concat(x_t)));  // candidate state
    var one_minus_z = z.map(function (v) { return 1 - v; });
    var h_gru = add(mul(z, h_prev), mul(one_minus_z, h_tilde));
    return { h_prev: h_prev, C_prev: C_prev, x_t: x_t, b_f: b_f,
             lstm: { q: q, f: f, i: i, C_tilde: C_tilde, o: o, kept: kept, added: added,
                     C_t: C_t, h_t: h_t },
             gru: { z: z, z_chung: one_minus_z, r: r, h_tilde: h_tilde, h_t: h_gru } };
  }
  function at(s, path) { return path.split(".").reduce(function (v, k) { return v[k]; }, s); }

  // -- what it changes on the page ------------------------------------------------
  var labels = [].filter.call(document.querySelectorAll("p.command code"), function (code) {
    return code.textContent.trim() === "$ " + d.command;
  });
  var cells = [];  // {td, value, suffix}
  labels.forEach(function (code) {
    var section = code.parentNode.nextElementSibling;
    var table = section && section.querySelector("table");
    if (!table) return;
    var last = [].map.call(table.tBodies[0].rows, function (tr) { return tr.cells[tr.cells.length - 1]; });
    var texts = last.map(function (td) { return td.textContent.trim(); });
    d.tables.forEach(function (spec) {
      if (texts.join("\n") !== spec.cells.join("\n")) return;
      spec.rows.forEach(function (row) { cells.push({ node: last[row.row], value: row.value, suffix: row.suffix }); });
    });
  });
  var chips = [];  // {node (a chip's <mn>), value, unit}
  var descs = [];  // {node, pieces: [text or {value}]}
  d.diagrams.forEach(function (spec) {
    var fig = document.getElementById(spec.id);
    if (!fig) return;
    var vecs = {};
    Object.keys(spec.keys).forEach(function (key) {
      var chip = fig.querySelector('[data-key="' + key + '"]');  // diagrams.py's named slot
      var numbers = chip ? chip.querySelectorAll(".dg-vec mn") : [];  // one per unit
      if (!numbers.length) return;
      vecs["(" + [].map.call(numbers, function (n) { return n.textContent.replace(/\u2212/g, "-"); })
        .join(", ") + ")"] = spec.keys[key];
      [].forEach.call(numbers, function (node, unit) { chips.push({ node: node, value: spec.keys[key], unit: unit }); });
    });
    var desc = fig.querySelector("desc");
    if (desc) {
      var pieces = [], rest = desc.textContent, m, re = /\((?:[+-]\d+\.\d{4}(?:, )?)+\)/g, from = 0;
      while ((m = re.exec(rest))) {
        if (!vecs[m[0]]) continue;
        pieces.push(rest.slice(from, m.index), { value: vecs[m[0]] });
        from = m.index + m[0].length;
      }
      pieces.push(rest.slice(from));
      descs.push({ node: desc, pieces: pieces });
    }
  });

  function flash(node) {
    node.classList.remove("rw-changed");
    void node.offsetWidth;  // restart the fade
    node.classList.add("rw-changed");
    setTimeout(function () { node.classList.remove("rw-changed"); }, 700);
  }

  function show(s, command) {
    cells.forEach(function (c) {
      var text = fmt.vec(at(s, c.value)) + c.suffix;
      if (c.node.textContent !== text) { c.node.textContent = text; flash(c.node); }
    });
    chips.forEach(function (c) {
      var text = fmt.fixed(at(s, c.value)[c.unit], 4, true).replace("-", "\u2212");
      if (c.node.textContent !== text) c.node.textContent = text;
    });
    descs.forEach(function (desc) {
      desc.node.textContent = desc.pieces.map(function (p) {
        return typeof p === "string" ? p : fmt.vec(at(s, p.value));
      }).join("");
    });
    labels.forEach(function (code) { code.textContent = "$ " + command; });
    shown.textContent = "$ " + command;
    summary(s);
  }

  var readout = el("p", { "class": "rw-readout" });
  function summary(s) {  // the step at a glance, for a reader who cannot see the tables now
    readout.textContent = "";
    [["LSTM: ", "f", s.lstm.f], [", ", "C_t", s.lstm.C_t], [", ", "h_t", s.lstm.h_t],
     ["; GRU: ", "h_t", s.gru.h_t]].forEach(function (part, n) {
      var name = part[1].split("_");
      readout.append(part[0], el("i", { text: name[0] }), name[1] ? el("sub", { text: name[1] }) : "",
                     " = ", el("span", { "class": "rw-number", "data-value": ["f", "C_t", "h_t", "gru_h_t"][n],
                                         text: fmt.vec(part[2]) }));
    });
  }

  // -- the form -------------------------------------------------------------------
  var message = el("p", { "class": "rw-error", id: kit.uid("rw-msg") });
  var fields = [];  // {input: name, n, field}
  var sets = d.inputs.map(function (input) {
    var legend = el("legend", { html: input.html });
    var kids = [legend];
    input["default"].forEach(function (v, n) {
      var field = kit.numberField({
        label: input["default"].length > 1 ? "unit " + (n + 1) : "both units",
        name: input.label + (input["default"].length > 1 ? ", unit " + (n + 1) : ""),
        text: String(v), min: d.limits.min, max: d.limits.max, maxLength: d.limits.maxLength,
        message: message, onChange: changed
      });
      field.input.setAttribute("data-input", input.name + "." + n);
      fields.push({ input: input, n: n, field: field });
      kids.push(field.root);
    });
    return el("fieldset", {}, kids);
  });
  var shown = el("code", { "data-command": "" });
  var reset = el("button", { type: "button", text: "Back to the page\u2019s step" });
  var announce = function () {};

  function values(name) {
    return fields.filter(function (f) { return f.input.name === name; })
      .map(function (f) { return f.field.value(); });
  }

  function command() {
    var parts = [d.command];
    d.inputs.forEach(function (input) {
      var mine = fields.filter(function (f) { return f.input === input; });
      var same = mine.every(function (f) { return f.field.value() === input["default"][f.n]; });
      if (same) return;
      var text = mine.map(function (f) { return f.field.text(); }).join(",");
      parts.push(input.flag + (text.charAt(0) === "-" ? "=" : " ") + text);  // argparse reads =-0.2,0.3
    });
    return parts.join(" ");
  }

  function changed() {
    var errors = fields.map(function (f) { return f.field.error(); }).filter(Boolean);
    message.textContent = errors.join(". ") + (errors.length ? "." : "");
    if (errors.length) {  // the tables and diagrams keep the last good step
      announce(message.textContent);
      return;
    }
    var s = step(values("h_prev"), values("C_prev"), values("x_t"), values("b_f")[0]);
    show(s, command());
    announce("forget gate " + fmt.vec(s.lstm.f) + "; C_t " + fmt.vec(s.lstm.C_t) + "; LSTM h_t " +
             fmt.vec(s.lstm.h_t) + "; GRU h_t " + fmt.vec(s.gru.h_t));
  }

  reset.addEventListener("click", function () {
    fields.forEach(function (f) { f.field.set(String(f.input["default"][f.n])); });
    changed();
  });

  kit.frame(figure, d.title, [
    el("p", { html: d.intro }), el("div", { "class": "rw-fields" }, sets), message, readout,
    el("div", { "class": "rw-actions" }, [reset, el("span", {}, [shown, " " + d.prints])])], d.note);
  shown.textContent = "$ " + d.command;
  summary(step(values("h_prev"), values("C_prev"), values("x_t"), values("b_f")[0]));
  figure.setAttribute("data-bound", [cells.length, chips.length, descs.reduce(function (n, x) {
    return n + x.pieces.filter(function (p) { return typeof p !== "string"; }).length;
  }, 0)].join(" "));  // what it found to keep up to date: table cells, chip numbers, vectors in descs
  announce = kit.live(figure);
});
