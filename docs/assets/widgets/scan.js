/* "scan": Blelloch's parallel scan of h_t = a_t h_{t-1} + b_t, one round at a time.
   Chapter 18. The slider moves over the rounds the script ran (recurrence.py's
   compute_scan_trace records the pair (A_t, B_t) every position holds after each round);
   the page looks them up and shows them, the positions a round changed marked, and
   below them the loop's h_t. Nothing is computed here; a browser test holds every number
   shown equal to the script's.

   data (generator/chapters/ch18_recurrence.py's scan_widget):
     title, caption      text (caption may hold inline markup)
     T                   positions
     a, b, h_loop        the steps and the loop's states, one number each per position
     stages [{name, changed, A, B}]   every round: its name, the positions it changed,
                         and the pair every position holds after it
     h_scan              the scan's states, a_t B_t + b_t, shown after the last round */
RW.define("scan", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;
  var num = function (x) { return fmt.fixed(x, 4, true); };
  var readout = el("p", { "class": "rw-readout" });
  var table = el("table", { tabindex: "0" });  // it scrolls sideways on a narrow screen
  var announce;

  function row(label, cells, key, changed) {
    return el("tr", {}, [el("th", { scope: "row", text: label })].concat(cells.map(function (x, t) {
      return el("td", { "class": changed && changed.indexOf(t) >= 0 ? "rw-changed" : null,
                        "data-value": key + t, text: x === null ? "" : num(x) });
    })));
  }

  function update(k) {
    var s = d.stages[k], last = k === d.stages.length - 1;
    var head = el("tr", {}, [el("th", { scope: "col", text: "t" })].concat(
      d.a.map(function (_, t) { return el("th", { scope: "col", text: String(t + 1) }); })));
    table.textContent = "";
    table.append(head, row("a_t", d.a, "a"), row("b_t", d.b, "b"),
                 row("A (after this round)", s.A, "A", s.changed),
                 row("B (after this round)", s.B, "B", s.changed),
                 row("h_t, the scan", last ? d.h_scan : d.a.map(function () { return null; }), "h"),
                 row("h_t, the loop", d.h_loop, "loop"));
    readout.textContent = "";
    readout.append(el("span", { "data-value": "round", text: s.name }), ": " +
                   (s.changed.length ? s.changed.length + " position" + (s.changed.length > 1 ? "s" : "") +
                    " changed" : "nothing changed yet") + ".");
    if (announce) announce(s.name + ", " + s.changed.length + " positions changed");
  }

  var stage = kit.slider({
    label: "round", values: d.stages.map(function (_, k) { return k; }), index: 0,
    text: function (k) { return (k + 1) + " of " + d.stages.length; },
    spoken: function (k) { return "round " + (k + 1) + " of " + d.stages.length + ": " + d.stages[k].name; },
    onInput: update
  });
  stage.input.setAttribute("data-control", "stage");

  kit.frame(figure, d.title, [kit.controls([stage.root]), readout,
                              el("div", { "class": "rw-scroll" }, [table])], d.caption);
  update(0);
  announce = kit.live(figure);
});
