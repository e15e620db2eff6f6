/* "powers": a per-step factor raised to the distance, moved by hand. Chapter 12's decay
   (the factor itself on the slider) and chapter 13's forget-gate bias (the slider sets
   b_f, the factor is sigma(b_f)). The page recomputes factor^k, as the script does
   (rnn.py's compute_decay, gated.py's compute_bias); a browser test holds the two equal.

   data (written by the chapter module; generator/chapters/ch12_rnn.py's decay_widget):
     title, caption          text (caption may hold inline markup)
     param {label, html, values, index, digits}   the slider: the factor, or b_f (label:
                             plain, for aria-valuetext; html, optional, what the page shows)
     sigmoid                 true: the factor is sigma(param), shown with 4 decimals
     distance {label, values, index}
     reference {values, label, name}   the curves of the figure above, drawn faintly,
                             each labelled at its end name + its value ("factor 0.5")
     x {min, max, label}, y {min, max, log, label}
     line_label, legend      the reader's curve, as the chart's description and the legend
                             name it */
RW.define("powers", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;
  var factorOf = function (p) { return d.sigmoid ? kit.core.sigmoid(p) : p; };
  var paramText = function (p) { return fmt.fixed(p, d.param.digits); };
  var readout = el("p", { "class": "rw-readout" });
  var chart = kit.chart({ x: d.x, y: d.y });
  var announce;

  function curve(f) {
    var ys = [];
    for (var k = d.x.min; k <= d.x.max; k++) ys.push(Math.pow(f, k));
    return ys;
  }

  function update() {
    var p = param.value(), k = distance.value(), f = factorOf(p);
    var power = fmt.sci(Math.pow(f, k), 3);
    var base = d.sigmoid ? "\u03c3(" + paramText(p) + ")" : paramText(p);
    var said = (d.sigmoid ? "sigma of " : "") + paramText(p);
    readout.textContent = "";
    if (d.sigmoid) {
      readout.append(base + " = ", el("span", { "class": "rw-number", "data-value": "factor",
                                                text: fmt.fixed(f, 4) }), ", and ");
      said += " is " + fmt.fixed(f, 4) + ";";
    }
    readout.append(base, el("sup", { text: String(k) }), " = ",
                   el("span", { "class": "rw-number", "data-value": "power", text: power }));
    said += " to the power " + k + ": " + kit.spoken(power);
    var lines = d.reference.values.map(function (r) {
      return { y: curve(factorOf(r)), cls: "rw-ref", label: d.reference.name + " " + r };
    });
    lines.push({ y: curve(f), cls: "rw-main" });
    chart.draw({
      lines: lines,
      mark: { x: k, y: Math.pow(f, k) },
      label: d.line_label + " " + paramText(p) + ", for k from " + d.x.min + " to " + d.x.max +
             " on a log scale: " + said + ". Faint: " + d.reference.label + "."
    });
    if (announce) announce(said);
  }

  var param = kit.slider({
    label: d.param.html ? el("span", { html: d.param.html }) : d.param.label, values: d.param.values, index: d.param.index, text: paramText,
    spoken: function (p) { return d.param.label + " " + paramText(p); }, onInput: update
  });
  var distance = kit.slider({
    label: d.distance.label, values: d.distance.values, index: d.distance.index, text: String,
    spoken: function (k) { return k + " steps"; }, onInput: update
  });
  param.input.setAttribute("data-control", "param");
  distance.input.setAttribute("data-control", "distance");

  kit.frame(figure, d.title, [kit.controls([param.root, distance.root]), readout, chart.root, kit.legend([
    { cls: "rw-main", text: d.legend },
    { cls: "rw-mark", text: "the value at k" },
    { cls: "rw-ref", text: d.reference.label }
  ])], d.caption);
  update();
  announce = kit.live(figure);
});
