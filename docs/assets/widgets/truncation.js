/* "truncation": chapter 16's truncation on the recall task, moved by hand. For a model
   and a k of the grid (the backward pass cut after the last k steps): the row that
   `python3 training.py --truncation` prints for them, each seed's training loss over
   training, and each seed's test accuracy and loss, all looked up in the record of the
   run the build makes (nothing is trained or computed here). A browser test compares
   the row with what the command prints.

   data (generator/chapters/ch16_training.py's truncation_widget):
     title, caption     text (caption may hold inline markup)
     command            the command that prints the table
     header             the truncation table's header, as printed
     models [{name, html}], ks, length (k = length: the whole sequence)
     rows [{model, k, printed (the row's cells), accuracy, loss (per seed),
            curve ([block][seed], the mean training loss of each block of `every` steps)}]
     model, k           the indices the widget starts at
     every, steps       the steps of a block, of training
     ylim               the chart's loss axis, [lowest, highest] (log)
     chance, chance_loss   a guess's test accuracy and loss, from the record */
RW.define("truncation", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;
  var seeds = d.rows[0].accuracy.length;
  var readout = el("p", { "class": "rw-readout" });
  var chart = kit.chart({ x: { min: 0, max: d.steps, label: "training step" },
                          y: { min: d.ylim[0], max: d.ylim[1], log: true, label: "training loss" } });
  var command = el("code", { "data-command": "", text: "$ " + d.command });
  var body = el("tbody");
  var announce;

  function kText(k) { return k === d.length ? k + " (all)" : String(k); }

  function row() {
    var name = d.models[model.index()].name, k = d.ks[+slider.input.value];
    return d.rows.filter(function (r) { return r.model === name && r.k === k; })[0];
  }

  function update() {
    var r = row();
    readout.textContent = "";
    readout.append.apply(readout, d.header.map(function (name, k) {
      return el("span", { "class": "rw-pair" }, [name + ": ", el("span", {
        "class": "rw-number", "data-value": "col" + k, text: r.printed[k] })]);
    }).reduce(function (all, span) { return all.concat(all.length ? ["; ", span] : [span]); }, []));
    body.textContent = "";
    r.accuracy.forEach(function (a, s) {
      body.appendChild(el("tr", {}, [String(s), fmt.fixed(a, 3), fmt.fixed(r.loss[s], 3)].map(function (t) {
        return el("td", { text: t });
      })));
    });
    var chance = fmt.fixed(d.chance_loss, 2);
    var lines = [{ y: r.curve.map(function () { return d.chance_loss; }), cls: "rw-chance", x0: d.every, dx: d.every,
                   label: "chance " + chance }];
    for (var s = 0; s < seeds; s++) {
      lines.push({ y: r.curve.map(function (block) { return block[s]; }), cls: "rw-main rw-s" + s,
                   x0: d.every, dx: d.every });
    }
    var said = r.printed[0] + ", k = " + r.printed[1] + ": test loss " + r.printed[2] +
      ", test accuracy " + r.printed[3] + " (chance: " + d.chance + ")";
    chart.draw({ lines: lines, label: "Training loss against training step, log scale, one line per seed, for " +
                 said + ". Dotted: chance, the loss of a guess, " + chance + "." });
    if (announce) announce(said);
  }

  var model = kit.choice({ label: "model", name: "model", index: d.model, onChange: update,
                           options: d.models.map(function (m, n) { return { html: m.html, value: n }; }) });
  var slider = kit.slider({ label: "k, the steps the gradient goes back", values: d.ks, index: d.k, text: kText,
                            spoken: function (k) {
                              return "k " + k + (k === d.length ? ", all the steps" : k === 1 ? ", the query's step" : "");
                            }, onInput: update });
  slider.input.setAttribute("data-control", "k");
  var head = el("tr", {}, ["seed", "test accuracy", "test loss"].map(function (t) {
    return el("th", { scope: "col", text: t });
  }));
  kit.frame(figure, d.title, [kit.controls([model.root, slider.root]), readout, chart.root,
    kit.legend([0, 1, 2, 3].slice(0, seeds).map(function (s) { return { cls: "rw-main rw-s" + s, text: "seed " + s }; })),
    // chance's dotted line is labelled on the chart, not here
    el("p", { "class": "rw-label" }, ["The row above as ", command, " prints it; each seed, where a guess scores ",
      el("span", { "data-value": "chance", text: String(d.chance) }), " and a loss of ",
      el("span", { "data-value": "chance_loss", text: fmt.fixed(d.chance_loss, 2) }), ":"]),
    el("div", { "class": "rw-scroll" }, [el("table", {}, [el("thead", {}, [head]), body])])], d.caption);
  update();
  announce = kit.live(figure);
});
