/* "grid": curves and numbers looked up over a grid of settings the script computed, one
   slider per setting. Every position of the sliders shows numbers the script prints
   (chapter 12: rnn.py --scales, spectral radius by input scale). Nothing is computed
   here but the drawing.

   data (generator/chapters/ch12_rnn.py's scales_widget writes it):
     title, caption, command     text; command is what prints the numbers
     axes [{label, name, name_spoken, values, index, digits}]   one slider each (digits:
                                 shown with that many decimals; without, as Python's :g)
     cells[i][j]                 at axes[0].values[i], axes[1].values[j]: {lines: [[y...]],
                                 numbers: [...], y: {min, max}}
     rows[i]                     optional: {lines: [[y...]]}, drawn at every j of row i
     numbers [{html, spoken}]    what each of a cell's numbers is (its format: sci3)
     styles {cell: [cls], row: [cls]}   the classes of the cells' and rows' lines
     context {indices, label}    faint: the first line of cell (i, j) for these i, the
                                 figure above at this setting of the other axis, each
                                 labelled at its end with axes[0]'s name and value
     legend [{cls, text or html}], x {min, max, label}, y {log, label}, mark (an x to
     mark), chart_label (the chart's description, before the setting) */
RW.define("grid", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;
  var show = function (axis) {
    return function (v) { return axis.digits === undefined ? String(v) : fmt.fixed(v, axis.digits); };
  };
  var readout = el("p", { "class": "rw-readout" });
  var chart = kit.chart({ x: d.x, y: d.y });
  var announce;

  function update() {
    var i = sliders[0].index(), j = sliders[1].index(), cell = d.cells[i][j];
    var setting = d.axes.map(function (axis, n) { return axis.name + " = " + show(axis)(axis.values[[i, j][n]]); })
      .join(", ");
    var numbers = cell.numbers.map(function (x) { return fmt.sci(x, 3); });
    readout.textContent = "";
    readout.append(setting + ": ");
    var said = setting + ":";
    numbers.forEach(function (text, n) {
      if (n) readout.append("; ");
      readout.append(el("span", { html: d.numbers[n].html }), " = ",
                     el("span", { "class": "rw-number", "data-value": "n" + n, text: text }));
      said += (n ? "; " : " ") + d.numbers[n].spoken + " " + kit.spoken(text);
    });
    var lines = (d.context ? d.context.indices : []).map(function (c) {
      return { y: d.cells[c][j].lines[0], cls: "rw-ref", x0: d.x.min,
               label: d.axes[0].name + " = " + show(d.axes[0])(d.axes[0].values[c]) };
    });
    (d.rows ? d.rows[i].lines : []).forEach(function (y, n) { lines.push({ y: y, cls: d.styles.row[n] }); });
    cell.lines.forEach(function (y, n) { lines.push({ y: y, cls: d.styles.cell[n] }); });
    chart.draw({ lines: lines, y: cell.y, mark: d.mark && { x: d.mark, y: cell.numbers[0] },
                 label: d.chart_label + " " + said });
    if (announce) announce(said);
  }

  var sliders = d.axes.map(function (axis, n) {
    var s = kit.slider({ label: axis.label, values: axis.values, index: axis.index, text: show(axis),
                         spoken: function (v) { return axis.name_spoken + " " + show(axis)(v); },
                         onInput: update });
    s.input.setAttribute("data-control", "axis" + n);
    s.index = function () { return +s.input.value; };
    return s;
  });

  kit.frame(figure, d.title, [kit.controls(sliders.map(function (s) { return s.root; })), readout,
                              chart.root, kit.legend(d.legend)], d.caption);
  update();
  announce = kit.live(figure);
});
