/* "seeds": one cell at one lag of chapter 15's experiment, every seed. The learning curve
   of each seed, and the gradient at the first input before and after training, looked up
   in what memory.py records during the runs the build makes (nothing trained or computed
   here but the summary numbers, as the script computes them: the mean, the lowest and
   highest, the median). A browser test compares them with what memory.py prints.

   data (generator/chapters/ch15_memory.py's memory_widget writes it):
     title, caption              text (caption may hold inline markup)
     models [{name, html, spoken, args}]   the models, in the tables' order; args: what
                                 follows `--row` for it (--cell lstm --forget-bias 2)
     lags, model, lag            the lags; the indices the widget starts at (the figure's)
     steps                       the training steps at which every curve was measured
     runs[m][l]                  model m at lags[l]: [{seed, accuracy, loss, g1_init,
                                 g1_trained, curve: [test accuracy at each step]}]
     learned, chance             a seed has learned at test accuracy >= learned; chance
     x {min, max, label}, y {min, max, label}, reference (the faint lines, in words) */
RW.define("seeds", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;
  var sci = function (x) { return x > 0 ? fmt.sci(x, 1) : "0"; };  // memory.py's sci()
  var mean = function (xs) { return xs.reduce(function (s, x) { return s + x; }, 0) / xs.length; };
  var median = function (xs) {  // numpy's: the middle one, or the mean of the middle two
    var s = xs.slice().sort(function (a, b) { return a - b; }), n = s.length;
    return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
  };
  var spread = function (xs) {  // memory.py's spread(): '0.74 (0.26-1.00)'
    return fmt.fixed(mean(xs), 2) + " (" + fmt.fixed(Math.min.apply(null, xs), 2) + "-" +
      fmt.fixed(Math.max.apply(null, xs), 2) + ")";
  };
  var readout = el("p", { "class": "rw-readout" });
  var chart = kit.chart({ x: d.x, y: d.y });
  var command = el("code", { "data-command": "" });
  var body = el("tbody");
  var announce;

  function number(name, text) { return el("span", { "class": "rw-number rw-nowrap", "data-value": name, text: text }); }

  function update() {
    var m = model.index(), l = lag.index(), runs = d.runs[m][l], M = d.models[m], L = d.lags[l];
    var acc = runs.map(function (r) { return r.accuracy; });
    var k = acc.filter(function (a) { return a >= d.learned; }).length;
    var before = sci(median(runs.map(function (r) { return r.g1_init; })));
    var after = sci(median(runs.map(function (r) { return r.g1_trained; })));
    var learns = k + " of " + runs.length + " seeds " + (k === 1 ? "learns" : "learn");
    readout.textContent = "";
    readout.append(el("span", { html: M.html }), " at lag " + L + ": ", number("learned", learns),
                   " (test accuracy at least " + d.learned + "); mean test accuracy ",
                   number("spread", spread(acc)), "; median ", el("i", { text: "g" }),
                   el("sub", { text: "1" }), " ", number("g1_init", before), " before training, ",
                   number("g1_trained", after), " after.");
    var said = M.spoken + " at lag " + L + ": " + learns + "; mean test accuracy " +
      fmt.fixed(mean(acc), 2) + "; median g 1 " + kit.spoken(before) + " before training, " +
      kit.spoken(after) + " after";
    body.textContent = "";
    runs.forEach(function (r) {
      body.appendChild(el("tr", {}, [String(r.seed), fmt.fixed(r.accuracy, 3), fmt.fixed(r.loss, 3),
                                     sci(r.g1_init), sci(r.g1_trained)].map(function (text) {
        return el("td", { text: text });
      })));
    });
    command.textContent = "$ python3 memory.py --row " + M.args + " --lag " + L;
    var lines = d.models.map(function (other, n) {
      var curves = d.runs[n][l].map(function (r) { return r.curve; });
      return { y: curves[0].map(function (_, s) { return mean(curves.map(function (c) { return c[s]; })); }),
               cls: "rw-ref", x0: d.steps[0], dx: d.steps[1] - d.steps[0] };
    });
    lines.push({ y: d.steps.map(function () { return d.chance; }), cls: "rw-chance", x0: d.steps[0],
                 dx: d.steps[1] - d.steps[0], label: "chance " + d.chance });
    runs.forEach(function (r, s) {
      lines.push({ y: r.curve, cls: "rw-main rw-s" + s, x0: d.steps[0], dx: d.steps[1] - d.steps[0] });
    });
    chart.draw({ lines: lines, label: "Test accuracy against training step, one line per seed, " +
                 "for " + said + ". Faint: " + d.reference + "; dotted: chance, " + d.chance + "." });
    if (announce) announce(said);
  }

  var model = kit.choice({ label: "cell", name: "model", index: d.model, onChange: update,
                           options: d.models.map(function (M, n) { return { html: M.html, value: n }; }) });
  var lag = kit.choice({ label: "lag (steps from the symbol to the query)", name: "lag", index: d.lag,
                         onChange: update,
                         options: d.lags.map(function (L, n) { return { text: String(L), value: n }; }) });
  var head = el("tr", {}, ["seed", "test accuracy", "test loss", "g_1 at init", "g_1 trained"].map(
    function (text) { return el("th", { scope: "col", text: text }); }));

  kit.frame(figure, d.title, [kit.controls([model.root, lag.root]), readout, chart.root,
    kit.legend([0, 1, 2, 3].slice(0, d.runs[0][0].length).map(function (s) {
      return { cls: "rw-main rw-s" + s, text: "seed " + s };
    }).concat([{ cls: "rw-ref", text: d.reference }])),  // chance: labelled on the chart
    el("p", { "class": "rw-label" }, ["Every seed, as ", command, " prints it:"]),
    el("div", { "class": "rw-scroll" }, [el("table", {}, [el("thead", {}, [head]), body])])], d.caption);
  update();
  announce = kit.live(figure);
});
