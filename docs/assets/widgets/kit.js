/* The widget kit: what every interactive figure of the site shares (docs/building.md,
   "Interactive figures"). Plain JavaScript, no library; loaded by ../widgets.js with
   the first widget of a page, before the widget's own file.

     RW.define(kind, mount)     a widget file registers itself; mount(host, data, kit)
                                builds the figure into host from data (its JSON file)
     kit.el(tag, attrs, kids)   an element (kit.svg(...) for SVG)
     kit.fmt                    numbers exactly as the scripts print them (Python's
                                format): fixed(x, 4, true) is f"{x:+.4f}", sci(x, 3) is
                                f"{x:.3e}", vec(v) is the scripts' vec(), (+0.1000, -0.2000)
     kit.slider(o)              a labelled <input type="range"> over a list of values
     kit.numberField(o)         a text field for one number, checked as typed
     kit.choice(o)              a labelled group of radio buttons, one of a few settings
     kit.chart(o)               an SVG line chart, linear x, log or linear y, at the
                                width of its column (redrawn when that changes); a
                                line's optional label is written at its end
     kit.legend(items)          the chart's legend, as a list
     kit.live(root)             a polite live region: announce(text), after a pause
     kit.characters(o)          a text read one character at a time: one tab stop, a
                                visible cursor moved by arrow keys, pointer and tap
     kit.json(url)              a served file's JSON, fetched once per page (widgets
                                that share one file, chapter 14's two, share one fetch)
     kit.share(name, value)     what a widget tells the page's others (chapter 14's
     kit.shared(name, listener) trainer, its parameters); listener(value): the latest
                                now if there is one, then each new one
     kit.frame(figure, title, parts, caption)   what every widget is: its title with
                                the mark "interactive", its own parts in order (controls,
                                readout, chart, ...), its caption; kit.controls(kids) is
                                the row of its controls
     kit.core                   core.js: sigmoid, preprocess, charName, quoted (shared
                                with the trainer's worker)
     kit.spoken(text)           "7.105e-15" as words for a screen reader

   Colours come from widgets.css (the plots' palette, by Material's colour scheme);
   motion only where the reader has not asked for less (prefers-reduced-motion).
   Nothing here writes to the console: bad input is a message in the page. */
(function () {
  "use strict";
  var kinds = {};
  var SVG = "http://www.w3.org/2000/svg";
  var count = 0;

  function uid(prefix) { count += 1; return (prefix || "rw") + "-" + count; }

  function build(node, attrs, kids) {
    Object.keys(attrs || {}).forEach(function (name) {
      var v = attrs[name];
      if (v === null || v === undefined || v === false) return;
      if (name === "text") node.textContent = v;
      else if (name === "html") node.innerHTML = v;  // only ever the widget data's own markup
      else node.setAttribute(name, v === true ? "" : String(v));
    });
    (kids || []).forEach(function (kid) {
      if (kid === null || kid === undefined) return;
      node.appendChild(typeof kid === "string" ? document.createTextNode(kid) : kid);
    });
    return node;
  }
  function el(tag, attrs, kids) { return build(document.createElement(tag), attrs, kids); }
  function svg(tag, attrs, kids) { return build(document.createElementNS(SVG, tag), attrs, kids); }

  // -- numbers, as Python formats them ------------------------------------------------
  // toFixed and toExponential round a tie away from zero, Python to even; a double that
  // is exactly a tie has a short exact expansion, so 25 more digits show it.
  function negative(x) { return x < 0 || Object.is(x, -0); }

  function fixed(x, digits, plus) {
    if (x !== x) return "nan";
    var sign = negative(x) ? "-" : (plus ? "+" : "");
    var a = Math.abs(x);
    if (a === Infinity) return sign + "inf";
    var s = a.toFixed(digits);
    var exact = a.toFixed(digits + 25);
    var kept = exact.slice(0, exact.length - 25);
    if (/^50*$/.test(exact.slice(exact.length - 25)) && +kept.replace(".", "").slice(-1) % 2 === 0) {
      s = kept.replace(/\.$/, "");
    }
    return sign + s;
  }

  function sci(x, digits) {
    if (x !== x) return "nan";
    var sign = negative(x) ? "-" : "";
    var a = Math.abs(x);
    if (a === Infinity) return sign + "inf";
    var s = a.toExponential(digits);
    var m = /^(\d)\.?(\d*)e([+-]\d+)$/.exec(a.toExponential(digits + 25));
    var kept = m[1] + m[2].slice(0, digits);
    if (/^50*$/.test(m[2].slice(digits)) && +kept.slice(-1) % 2 === 0) {
      s = m[1] + (digits ? "." + m[2].slice(0, digits) : "") + "e" + m[3];
    }
    var e = /^(.*)e([+-])(\d+)$/.exec(s);
    return sign + e[1] + "e" + e[2] + (e[3].length < 2 ? "0" : "") + e[3];
  }

  function vec(v) { return "(" + v.map(function (x) { return fixed(x, 4, true); }).join(", ") + ")"; }

  function spoken(text) {  // "7.105e-15" -> "7.105 times 10 to the power -15"
    return String(text).replace(/(\d(?:\.\d+)?)e([+-])0*(\d+)/g, function (_, m, s, e) {
      return e === "0" ? m : m + " times 10 to the power " + (s === "-" ? "minus " : "") + e;
    });
  }

  // -- controls -------------------------------------------------------------------
  // o: label (a node or text), values (the list the slider moves over), index (where
  // it starts), text(value) (what the page shows), spoken(value) (aria-valuetext;
  // text by default), onInput(value, index).
  function slider(o) {
    var id = uid("rw-range");
    var input = el("input", { type: "range", id: id, min: 0, max: o.values.length - 1, step: 1,
                              value: o.index });
    var out = el("output", { "for": id, "aria-hidden": "true" });
    var label = el("label", { "for": id }, [o.label]);  // text, or a node
    function show() {
      var v = o.values[+input.value];
      out.textContent = o.text(v);
      input.setAttribute("aria-valuetext", (o.spoken || o.text)(v));
    }
    input.addEventListener("input", function () { show(); o.onInput(o.values[+input.value], +input.value); });
    show();
    return {
      root: el("div", { "class": "rw-slider" }, [label, input, out]),
      input: input,
      value: function () { return o.values[+input.value]; },
      set: function (index) { input.value = index; show(); }
    };
  }

  // A group of radio buttons (a <fieldset> and its <legend>): arrow keys move within
  // it, Tab leaves it. o: label (text), options [{text or html, value}], index (the one
  // checked), name (data-control of each input), onChange(value, index).
  // choice.relabel(k, text): new words for option k.
  function choice(o) {
    var group = uid("rw-choice");
    var inputs = [];
    var items = o.options.map(function (opt, k) {
      var id = uid("rw-radio");
      var input = el("input", { type: "radio", id: id, name: group, value: k,
                                "data-control": o.name, checked: k === o.index });
      input.addEventListener("change", function () { if (input.checked) o.onChange(opt.value, k); });
      inputs.push(input);
      return el("span", { "class": "rw-option" }, [input, el("label", {
        "for": id, html: opt.html || null, text: opt.html ? null : opt.text })]);
    });
    return {
      root: el("fieldset", { "class": "rw-choice" }, [el("legend", { text: o.label })].concat(items)),
      index: function () { for (var k = 0; k < inputs.length; k++) if (inputs[k].checked) return k; return -1; },
      set: function (k) { inputs[k].checked = true; },
      relabel: function (k, text) { items[k].querySelector("label").textContent = text; }
    };
  }

  var NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/;  // what Python's float() reads, less

  // What a field holds: {value, text} or {error}. o: min, max, maxLength.
  function readNumber(raw, o) {
    var text = raw.trim();
    var range = "a number from " + o.min + " to " + o.max;
    if (text === "") return { error: "empty: type " + range };
    if (text.length > o.maxLength) return { error: "too long: at most " + o.maxLength + " characters" };
    if (!NUMBER.test(text)) return { error: "not a number: \u201c" + text + "\u201d; type " + range };
    var x = Number(text) + 0;  // -0 becomes 0, as the scripts read it (gated.py's number())
    if (!(x >= o.min && x <= o.max)) return { error: "out of range: " + text + "; type " + range };
    return { value: x, text: text };
  }

  // o: label, name (in messages), text (the starting text), min, max, maxLength,
  // message (the element whose id aria-describedby names), onChange() (after every edit:
  // read field.error(), or field.value() and field.text(), the last good ones).
  function numberField(o) {
    var id = uid("rw-field");
    // no inputmode="decimal": some phones' decimal pads have no minus sign
    var input = el("input", { type: "text", id: id, autocomplete: "off",
                              spellcheck: "false", value: o.text, size: 7,
                              "aria-describedby": o.message.id });
    var good = readNumber(o.text, o);
    var error = null;
    input.addEventListener("input", function () {
      var got = readNumber(input.value, o);
      error = got.error ? o.name + ": " + got.error : null;
      if (error) input.setAttribute("aria-invalid", "true");
      else { input.removeAttribute("aria-invalid"); good = got; }
      o.onChange();
    });
    return {
      root: el("span", { "class": "rw-field" }, [el("label", { "for": id }, [o.label]), input]),
      input: input,
      error: function () { return error; },
      value: function () { return good.value; },  // the last good one
      text: function () { return good.text; },
      set: function (text) { input.value = text; good = readNumber(text, o); error = null;
                             input.removeAttribute("aria-invalid"); }
    };
  }

  function live(root) {
    var region = el("p", { "class": "rw-live", role: "status" });
    var timer = null;
    root.appendChild(region);
    return function announce(text) {
      clearTimeout(timer);
      timer = setTimeout(function () { region.textContent = text; }, 400);
    };
  }

  // A text the reader steps through one character at a time (chapter 14's): ONE tab
  // stop, not one per character. It is an ARIA slider over the character positions:
  // arrow keys, Home, End, Page Up and Down move a visible cursor, and the slider's
  // aria-valuetext (what a screen reader says as the value changes, without a second
  // live region repeating it) is what o.onMove(i) returns. A pointer over a character,
  // or a tap on it, moves the cursor there. A slider is a widget role, so a screen
  // reader in browse mode hands it the arrow keys; its children are presentational,
  // hence o.label names the text. o: label, onMove(i) -> valuetext, onUse() (called
  // at the first focus, pointer or tap: to load what the readout needs), idle (what is
  // said before a character is chosen).
  // text.show(chars, at): chars [{text, cls, title}], the cursor at `at`;
  // text.move(i); text.at().
  function characters(o) {
    var root = el("p", { role: "slider", tabindex: 0, "aria-label": o.label,
                         "aria-valuemin": 0, "aria-orientation": "horizontal",
                         "class": "rw-chars" });
    var spans = [], at = -1, used = false;
    function use() { if (!used) { used = true; if (o.onUse) o.onUse(); } }
    function move(i) {
      if (!spans.length) return;
      i = Math.max(0, Math.min(spans.length - 1, i));
      if (at >= 0 && spans[at]) spans[at].removeAttribute("data-at");
      at = i;
      spans[at].setAttribute("data-at", "");
      root.setAttribute("aria-valuenow", at);
      var said = o.onMove(at);
      if (said) root.setAttribute("aria-valuetext", said);
    }
    function show(chars, start) {
      root.textContent = "";
      spans = chars.map(function (c, i) {
        var span = el("i", { "class": c.cls || null, "data-i": i, text: c.text });  // site.css's shading
        root.appendChild(span);
        return span;
      });
      root.setAttribute("aria-valuemax", Math.max(0, spans.length - 1));
      at = -1;
      if (start !== null && start !== undefined) move(start);
      else {  // a slider has a value (ARIA); none chosen yet is said so
        root.setAttribute("aria-valuenow", 0);
        root.setAttribute("aria-valuetext", o.idle || "no character chosen yet");
      }
    }
    function target(e) {
      var node = e.target && e.target.closest ? e.target.closest("[data-i]") : null;
      return node && root.contains(node) ? +node.getAttribute("data-i") : null;
    }
    var KEYS = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, PageDown: 10, PageUp: -10 };
    root.addEventListener("keydown", function (e) {
      var i = null;
      if (e.key in KEYS) i = (at < 0 ? 0 : at + KEYS[e.key]);
      else if (e.key === "Home") i = 0;
      else if (e.key === "End") i = spans.length - 1;
      if (i === null || e.altKey || e.ctrlKey || e.metaKey) return;
      e.preventDefault();
      use();
      move(i);
    });
    root.addEventListener("focus", function () { use(); if (at >= 0) move(at); });  // its readout
    root.addEventListener("pointermove", function (e) {  // a mouse or pen moved (not a redraw under it)
      var i = target(e);
      if (i !== null && e.pointerType !== "touch") { use(); move(i); }
    });
    root.addEventListener("click", function (e) {  // a tap, or a click
      var i = target(e);
      use();
      if (i !== null) move(i);
    });
    return { root: root, show: show, move: move, at: function () { return at; },
             refresh: function () { if (at >= 0) move(at); } };
  }

  var fetched = {};
  function json(url) {  // once per page; a failure is forgotten, so a retry fetches again
    if (!fetched[url]) {
      fetched[url] = fetch(url).then(function (r) {
        if (!r.ok) throw new Error(r.status);
        return r.json();
      });
      fetched[url].catch(function () { delete fetched[url]; });
    }
    return fetched[url];
  }

  // -- what the widgets of a page tell each other ---------------------------------------
  // A CustomEvent "rw-share" on document, detail {name, value}; the latest value kept
  // for a widget mounted later (they mount as they near the screen). null: none now.
  var latest = {};
  function share(name, value) {
    latest[name] = value;
    document.dispatchEvent(new CustomEvent("rw-share", { detail: { name: name, value: value } }));
  }
  function shared(name, listener) {
    if (Object.prototype.hasOwnProperty.call(latest, name)) listener(latest[name]);
    document.addEventListener("rw-share", function (e) { if (e.detail.name === name) listener(e.detail.value); });
  }

  // -- the frame ------------------------------------------------------------------
  // Every widget's title carries one mark, "interactive" by a slider's icon: the figure
  // answers the reader (static figures have none). The mark is aria-hidden; the figure's
  // own name says it once instead ("Interactive figure: <title>").
  function badge() {
    var icon = svg("svg", { "class": "rw-badge-icon", viewBox: "0 0 16 16", width: 12, height: 12,
                            focusable: "false" }, [
      svg("path", { d: "M1.5 5h13M1.5 11h13" }),
      svg("circle", { cx: 10.5, cy: 5, r: 2.2 }), svg("circle", { cx: 5.5, cy: 11, r: 2.2 })]);
    return el("span", { "class": "rw-badge", "aria-hidden": "true" }, [icon, "interactive"]);
  }
  function frame(figure, title, parts, caption) {
    figure.setAttribute("aria-label", "Interactive figure: " + title);
    figure.appendChild(el("p", { "class": "rw-title" }, [el("span", { text: title }), " ", badge()]));
    parts.forEach(function (part) { figure.appendChild(part); });
    figure.appendChild(el("figcaption", { html: caption }));
  }
  function controls(kids) { return el("div", { "class": "rw-controls" }, kids); }

  function reducedMotion() {
    return window.matchMedia && window.matchMedia("(prefers-reduced-motion: reduce)").matches;
  }

  // -- the chart ------------------------------------------------------------------
  // o: x {min, max, label}, y {min, max, log, label}, height (px, optional).
  // chart.draw(spec): spec.lines [{y: [...], x0 (x of y[0], default x.min), dx (default 1),
  // cls ("rw-main", "rw-ref", "rw-dash"), label (optional: text written on the chart at the
  // line's end, in its colour, "_" and "^" as in the axis labels: a reference line says
  // what it stands for, its value from the widget's data)}], spec.mark {x, y}, spec.y
  // {min, max} (overrides o.y's range), spec.label (what the chart shows, for a screen reader).
  function niceStep(span, most) {
    var steps = [1, 2, 5];
    for (var p = Math.pow(10, Math.floor(Math.log10(span / most))); ; p *= 10) {
      for (var k = 0; k < steps.length; k++) if (span / (steps[k] * p) <= most) return steps[k] * p;
    }
  }

  // An axis label with TeX-like sub- and superscripts: "\u2016\u2202h_t / \u2202h_0\u2016", "factor^k".
  function scripted(node, text) {
    var re = /([_^])(\{[^}]*\}|.)/g, from = 0, m;
    while ((m = re.exec(text))) {
      if (m.index > from) node.appendChild(svg("tspan", { text: text.slice(from, m.index) }));
      node.appendChild(svg("tspan", { "baseline-shift": m[1] === "_" ? "sub" : "super", "font-size": "75%",
                                      text: m[2].replace(/^\{|\}$/g, "") }));
      from = m.index + m[0].length;
    }
    if (from < text.length) node.appendChild(svg("tspan", { text: text.slice(from) }));
    return node;
  }

  // The labels of a chart's lines: each at its line's last point inside the plot, right
  // aligned there (left aligned past it where the line ends near the left edge), clear of
  // the line over the label's width: above it, or below where the line falls towards its
  // end, or on the other side where that side has no room. Then kept 13 px apart, within
  // the plot or the margin above it.
  var LABEL_GAP = 13, LABEL_TOP = 12, LABEL_EM = 6.6;  // px: a line of labels, a character
  function lineLabels(lines, s) {
    var placed = [];
    lines.forEach(function (line) {
      if (!line.label) return;
      var x0 = line.x0 === undefined ? s.xmin : line.x0, dx = line.dx || 1;
      var seen = function (v) { return (s.log ? v > 0 : true) && isFinite(v) && s.sy(v) >= s.top - 0.5 &&
                                       s.sy(v) <= s.bottom + 0.5; };
      for (var k = line.y.length - 1; k >= 0 && !(seen(line.y[k]) && s.sx(x0 + k * dx) <= s.right + 0.5); k--);
      if (k < 0) return;  // nothing of it in view
      var px = s.sx(x0 + k * dx), py = s.sy(line.y[k]);
      var width = LABEL_EM * line.label.replace(/[_^]/g, "").length + 4;
      var start = px - s.left < width + 20;
      var high = py, low = py, first = py;  // the line's extent under the label
      for (var j = k; j >= 0 && Math.abs(px - s.sx(x0 + j * dx)) <= width + 2; j--) {
        if (!seen(line.y[j])) continue;
        first = s.sy(line.y[j]);
        high = Math.min(high, first);
        low = Math.max(low, first);
      }
      if (start) high = low = py;  // past the end: the line is not under it
      var above = high - 5, below = low + 13;  // baselines; above may reach into the top margin
      var falling = first < py - 0.5;
      placed.push({ line: line, x: start ? px + 4 : px - 2, anchor: start ? "start" : "end",
                    y: (falling && below <= s.bottom - 2) || above < LABEL_TOP ? below : above });
    });
    placed.sort(function (a, b) { return a.y - b.y; });
    var k;
    for (k = 0; k < placed.length; k++) {  // down from the top, then back up from the bottom
      placed[k].y = Math.max(placed[k].y, LABEL_TOP, k ? placed[k - 1].y + LABEL_GAP : -Infinity);
    }
    for (k = placed.length - 1; k >= 0; k--) {
      placed[k].y = Math.min(placed[k].y, s.bottom - 4, k < placed.length - 1 ? placed[k + 1].y - LABEL_GAP : Infinity);
    }
    return placed.map(function (p) {
      return scripted(svg("text", { "class": "rw-line-label " + (p.line.cls || "rw-main"), x: s.n(p.x),
                                    y: s.n(p.y), "text-anchor": p.anchor, "data-label": p.line.label }),
                      p.line.label);
    });
  }

  function chart(o) {
    var root = el("div", { "class": "rw-chart" });
    var clip = uid("rw-clip");
    var box = svg("svg", { role: "img", "class": "rw-svg", focusable: "false" });
    root.appendChild(box);
    var spec = null, width = 0, drawnWidth = 0;  // width: the column's, as last observed
    var scale = null, paths = [], drawnKey = null;  // the last render's: to move its lines only

    function pathOf(line) {  // a line's path in the last render's scales
      var d = "", x0 = line.x0 === undefined ? o.x.min : line.x0, dx = line.dx || 1, pen = "M";
      line.y.forEach(function (v, k) {
        if (!(scale.log ? v > 0 : isFinite(v)) || !isFinite(v)) { pen = "M"; return; }
        var py = Math.max(-1e4, Math.min(1e4, scale.sy(v)));
        d += pen + scale.n(scale.sx(x0 + k * dx)) + " " + scale.n(py);
        pen = "L";
      });
      return d;
    }

    function frameKey(s) {  // what a render draws besides the lines' points
      var yr = s.y || o.y;
      return JSON.stringify([drawnWidth, o.x, yr.min, yr.max, !!s.mark, (s.lines || []).map(function (l) {
        return l.cls || "rw-main";
      })]);
    }

    function render() {
      if (!spec) return;
      var W = Math.max(260, Math.round(width || root.clientWidth || 640));
      var phone = W < 520;
      var H = o.height || (phone ? 250 : 300);
      var L = phone ? 46 : 56, R = 18, T = 28, B = 44;  // the y label sits above the plot;
      // R: half a four-digit tick label ("1500"), centred on the right end of the axis
      var yr = spec.y || o.y, log = !!o.y.log;
      var ylo = log ? Math.log10(yr.min) : yr.min, yhi = log ? Math.log10(yr.max) : yr.max;
      var sx = function (x) { return L + (x - o.x.min) / (o.x.max - o.x.min) * (W - L - R); };
      var sy = function (y) { var v = log ? Math.log10(y) : y; return T + (yhi - v) / (yhi - ylo) * (H - T - B); };
      var n = function (v) { return Math.round(v * 10) / 10; };
      drawnWidth = W;
      scale = { sx: sx, sy: sy, n: n, log: log };
      box.setAttribute("viewBox", "0 0 " + W + " " + H);
      box.setAttribute("width", W);
      box.setAttribute("height", H);
      box.setAttribute("aria-label", spec.label || "");
      var kids = [svg("defs", {}, [svg("clipPath", { id: clip }, [
        svg("rect", { x: L, y: T, width: W - L - R, height: H - T - B })])])];
      var grid = svg("g", { "class": "rw-grid" }), ticks = svg("g", { "class": "rw-ticks" });
      var xs = niceStep(o.x.max - o.x.min, phone ? 5 : 10);
      for (var x = Math.ceil(o.x.min / xs) * xs; x <= o.x.max + 1e-9; x += xs) {
        grid.appendChild(svg("line", { x1: n(sx(x)), x2: n(sx(x)), y1: T, y2: H - B }));
        ticks.appendChild(svg("text", { x: n(sx(x)), y: H - B + 16, "text-anchor": "middle", text: String(x) }));
      }
      var ys = log ? Math.max(1, niceStep(yhi - ylo, phone ? 5 : 7)) : niceStep(yhi - ylo, 6);
      for (var y = Math.ceil(ylo / ys) * ys; y <= yhi + 1e-9; y += ys) {
        var at = n(sy(log ? Math.pow(10, y) : y));
        grid.appendChild(svg("line", { x1: L, x2: W - R, y1: at, y2: at }));
        var label = svg("text", { x: L - 6, y: at + 4, "text-anchor": "end" });
        if (log) {
          var e = Math.round(y);
          label.appendChild(svg("tspan", { text: "10" }));
          label.appendChild(svg("tspan", { dy: -6, "font-size": "0.75em",
                                           text: (e < 0 ? "\u2212" : "") + Math.abs(e) }));
        } else label.textContent = String(Math.round(y * 1e6) / 1e6);
        ticks.appendChild(label);
      }
      kids.push(grid, ticks,
                svg("path", { "class": "rw-axis", d: "M" + L + " " + T + "V" + (H - B) + "H" + (W - R) }),
                scripted(svg("text", { "class": "rw-axis-label", x: (L + W - R) / 2, y: H - 6,
                                       "text-anchor": "middle" }), o.x.label),
                scripted(svg("text", { "class": "rw-axis-label", x: 4, y: 14 }), o.y.label));
      var plot = svg("g", { "clip-path": "url(#" + clip + ")" });
      paths = (spec.lines || []).map(function (line) {
        return plot.appendChild(svg("path", { "class": "rw-line " + (line.cls || "rw-main"), d: pathOf(line) }));
      });
      drawnKey = frameKey(spec);
      kids.push(plot);
      var labels = lineLabels(spec.lines || [], { sx: sx, sy: sy, n: n, log: log, xmin: o.x.min,
                                                  left: L, right: W - R, top: T, bottom: H - B });
      if (labels.length) kids.push(svg("g", { "class": "rw-line-labels" }, labels));
      if (spec.mark) {
        var mx = sx(spec.mark.x), v = spec.mark.y;
        var inside = (log ? v > 0 : isFinite(v)) && sy(v) >= T - 0.5 && sy(v) <= H - B + 0.5;
        var my = inside ? sy(v) : (log && !(v > 0)) || sy(v) > H - B ? H - B : T;
        kids.push(svg("line", { "class": "rw-mark-line", x1: n(mx), x2: n(mx), y1: T, y2: H - B }),
                  svg("circle", { "class": "rw-mark" + (inside ? "" : " rw-off"), r: 5,
                                  cx: 0, cy: 0, style: "transform: translate(" + n(mx) + "px," + n(my) + "px)" }));
      }
      var old = box.querySelector("circle.rw-mark");  // kept, so that it can move (widgets.css)
      while (box.firstChild) box.removeChild(box.firstChild);
      kids.forEach(function (kid) {
        if (old && kid.classList && kid.classList.contains("rw-mark")) {
          old.setAttribute("class", kid.getAttribute("class"));
          old.setAttribute("style", kid.getAttribute("style"));
          kid = old;
        }
        box.appendChild(kid);
      });
    }

    if (window.ResizeObserver) {  // redrawn at the new width; never measured while drawing
      new ResizeObserver(function (entries) {
        width = entries[0].contentRect.width;
        if (Math.max(260, Math.round(width)) !== drawnWidth) render();
      }).observe(root);
    }
    // draw(s): a new frame, or, where only the lines' points changed (a run that grows),
    // those lines moved in place: the page restyles two paths, not a whole chart.
    return { root: root, draw: function (s) {
      var same = spec && !s.mark && frameKey(s) === drawnKey &&
        !(s.lines || []).some(function (line) { return line.label; });  // labels: placed anew
      spec = s;
      if (!same) return render();
      s.lines.forEach(function (line, k) { paths[k].setAttribute("d", pathOf(line)); });
      box.setAttribute("aria-label", s.label || "");
    } };
  }

  // items: [{cls, text}]: a swatch of the line's style, and what it is.
  function legend(items) {
    return el("ul", { "class": "rw-legend" }, items.map(function (item) {
      return el("li", {}, [el("span", { "class": "rw-swatch " + item.cls, "aria-hidden": "true" }),
                           el("span", { html: item.html || null, text: item.html ? null : item.text })]);
    }));
  }

  var kit = { el: el, svg: svg, uid: uid, fmt: { fixed: fixed, sci: sci, vec: vec },
              spoken: spoken, slider: slider, choice: choice, numberField: numberField, readNumber: readNumber,
              chart: chart, legend: legend, live: live, reducedMotion: reducedMotion,
              characters: characters, json: json, share: share, shared: shared, frame: frame, controls: controls,
              core: window.RWCore };

  window.RW = {
    kit: kit,
    define: function (kind, mount) { kinds[kind] = mount; },
    // Called by widgets.js once the kit, the widget's file and its data have loaded. The
    // widget is built away from the page and shown whole, or not at all.
    mount: function (kind, host, data) {
      var figure = el("figure", { "class": "rw-figure" });
      kinds[kind](figure, data, kit);
      host.appendChild(figure);
      host.setAttribute("data-state", "ready");
    }
  };
})();
