/* "clip": chapter 16's clipping, moved by hand. For a threshold of a small grid, a
   spectral radius rho of the starting U and clipping on or off: the row that
   `python3 training.py --clip --threshold X` prints for that model, each seed's raw
   gradient norm over training, and each seed's test accuracy and loss, all looked up in
   the records of the runs the build makes (nothing is trained or computed here). A
   browser test compares the row with what the command prints.

   data (generator/chapters/ch16_training.py's clip_widget):
     title, caption     text (caption may hold inline markup)
     header             the clip table's header, as printed
     runs [{threshold, command, rows: [{radius, clipped, printed (the row's cells),
           accuracy, loss (per seed), norms ([step][seed], every `every` steps)}]}]
     threshold          the index the widget starts at (the page's run)
     every              the steps between two points of a line */
RW.define("clip", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;
  var first = d.runs[0].rows;
  var radii = first.map(function (r) { return r.radius; }).filter(function (r, k, all) { return all.indexOf(r) === k; });
  var steps = first[0].norms.length * d.every, seeds = first[0].accuracy.length;
  var readout = el("p", { "class": "rw-readout" });
  var chart = kit.chart({ x: { min: 0, max: steps, label: "training step" },
                          y: { min: 0.01, max: 100, log: true, label: "raw gradient norm" } });
  var command = el("code", { "data-command": "" });
  var body = el("tbody");
  var announce;

  function row() {
    var run = d.runs[threshold.index()], rho = radii[radius.index()], on = clipping.index() === 1;
    return { run: run, r: run.rows.filter(function (r) { return r.radius === rho && r.clipped === on; })[0] };
  }

  function update() {
    var got = row(), run = got.run, r = got.r;
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
    command.textContent = "$ " + run.command;
    var lines = [{ y: r.norms.map(function () { return run.threshold; }), cls: "rw-chance", x0: 1, dx: d.every,
                   label: "threshold " + run.threshold }];
    for (var s = 0; s < seeds; s++) {
      lines.push({ y: r.norms.map(function (step) { return step[s]; }), cls: "rw-main rw-s" + s, x0: 1, dx: d.every });
    }
    var said = "rho " + r.printed[0] + ", clipping " + r.printed[1] + ": largest norm " + r.printed[4] +
      ", steps above " + run.threshold + " " + r.printed[5] + ", test accuracy " + r.printed[6];
    chart.draw({ lines: lines, label: "Raw gradient norm against training step, one line per seed, for " + said +
                 ". Dotted: the threshold, " + run.threshold + "." });
    if (announce) announce(said);
  }

  var threshold = kit.choice({ label: "threshold", name: "threshold", index: d.threshold, onChange: update,
                               options: d.runs.map(function (run, k) { return { text: String(run.threshold), value: k }; }) });
  var radius = kit.choice({ label: "\u03c1(U) at the start", name: "radius", index: radii.length - 1, onChange: update,
                            options: radii.map(function (r, k) { return { text: String(r), value: k }; }) });
  var clipping = kit.choice({ label: "clipping", name: "clipping", index: 1, onChange: update,
                              options: [{ text: "none", value: 0 }, { text: "at the threshold", value: 1 }] });
  var head = el("tr", {}, ["seed", "test accuracy", "test loss"].map(function (t) {
    return el("th", { scope: "col", text: t });
  }));
  kit.frame(figure, d.title, [kit.controls([threshold.root, radius.root, clipping.root]), readout, chart.root,
    kit.legend([0, 1, 2, 3].slice(0, seeds).map(function (s) { return { cls: "rw-main rw-s" + s, text: "seed " + s }; })),
    // the threshold's dotted line is labelled on the chart, not here
    el("p", { "class": "rw-label" }, ["The row above as ", command, " prints it; each seed:"]),
    el("div", { "class": "rw-scroll" }, [el("table", {}, [el("thead", {}, [head]), body])])], d.caption);
  update();
  announce = kit.live(figure);
});
