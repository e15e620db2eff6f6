/* "trainer": chapter 14's GRU trained in the page, on the book or on the reader's own
   text. gru-train.js runs gru.py's train_updates() in float64 in a Web Worker (the page
   never waits for it), from the initial parameters and the random generator's state that
   `python3 gru.py --init --hidden H` exports; the page shows the command that prints the
   same run, and draws the training and validation perplexity as they come, with a row and
   samples every `every` updates, formatted as the command prints them. A browser test
   holds the page's parameters after 200 updates equal to numpy's.

   Each row's parameters are shared with the page's other widgets (kit.share, as
   "gru-params": {params, update, hidden, vocab, command}; null after a reset), so that
   the text generator (textgen.js) can write with the reader's GRU.

   The reader's text is checked before it is used: characters at most max_chars; after
   gru.py's preprocessing (every run of non-letters one space, lower case) at least one
   letter, and at least min_windows windows of T + 1 characters. The windows are split
   as the command is told to: the last tenth validates (at most val_max windows), the
   rest trains (at most train_max).

   data (generator/chapters/ch14_gru_lm.py's trainer_widget):
     title, caption, book (the first characters of timemachine.txt, as the file has them)
     init {H: url}              the record of `gru.py --init --hidden H` for each size offered
     vocab, T, prefix, num_preds, temperatures (the script's samples), every, seed
     hidden, batch, lr, clip, updates, temperature   {values, index}: the controls
     max_chars, min_windows, val_share, val_max, train_max   the text's limits and split */
(function () {
  "use strict";
  var worker = new URL("gru-train.js", document.currentScript.src).href;

RW.define("trainer", function (figure, d, kit) {
  var el = kit.el, fmt = kit.fmt;
  var unk = d.vocab.indexOf("<unk>"), run = null, chartX = { min: 0, max: d.updates.values[d.updates.index], label: "update" };
  var textId = kit.uid("rw-text"), messageId = kit.uid("rw-msg");
  var message = el("p", { "class": "rw-message", id: messageId, role: "status" });
  var area = el("textarea", { id: textId, rows: 6, spellcheck: "false", "aria-describedby": messageId,
                              "data-control": "text" });
  var shown = d.book.replace(/^\s+/, "");  // the book's first lines are blank: shown from its title
  area.value = shown;
  var file = el("input", { type: "file", accept: ".txt,text/plain", "aria-label": "open a text file to train on" });
  var bookButton = el("button", { type: "button", "data-control": "book", text: "Back to the book" });
  var startButton = el("button", { type: "button", "data-control": "start", text: "Start" });
  var pauseButton = el("button", { type: "button", "data-control": "pause", text: "Pause", disabled: true });
  var resetButton = el("button", { type: "button", "data-control": "reset", text: "Reset", disabled: true });
  var readout = el("p", { "class": "rw-readout", "data-value": "progress" });
  var command = el("code", { "data-command": "" });
  var link = el("a", { download: "my-text.txt", href: "#", text: "save the text as my-text.txt" });
  var save = el("span", { hidden: true }, [" (", link, ")"]);
  var rowsBody = el("tbody"), samplesBody = el("tbody");
  var chart = kit.chart({ x: chartX, y: { min: 1, max: 100, log: true, label: "perplexity" } });
  var announce = function () {};

  function settings() {
    return { hidden: d.hidden.values[hidden.index()], batch: d.batch.values[batch.index()],
             lr: lr.value(), clip: clip.value(), updates: d.updates.values[updates.index()] };
  }

  // -- the text: gru.py's preprocess, token_ids and make_dataset's limits ----------------
  var preprocess = kit.core.preprocess;
  function plural(n, word) { return n.toLocaleString("en-US") + " " + word + (n === 1 ? "" : "s"); }

  function corpus() {  // {ids, numTrain, numVal} or {error}
    var raw = area.value === shown ? d.book : area.value;  // the book: as gru.py reads the file
    if (raw.length > d.max_chars) {
      return { error: "Too long: " + plural(raw.length, "character") + "; the trainer takes at most " +
               d.max_chars.toLocaleString("en-US") + " (it reads windows from the start: cut the text down)." };
    }
    var text = preprocess(raw);
    if (!/[a-z]/.test(text)) {
      return { error: "Nothing left to train on: gru.py reads only the letters a to z (every other run of " +
               "characters becomes one space), and this text has none." };
    }
    var n = text.length - d.T;
    if (n < d.min_windows) {
      return { error: "Too short: " + plural(text.length, "character") + " after preprocessing make " +
               plural(Math.max(n, 0), "window") + " of " + (d.T + 1) + " characters; the trainer needs at least " +
               d.min_windows + " (" + (d.min_windows + d.T) + " characters)." };
    }
    var numVal = Math.min(d.val_max, Math.max(1, Math.floor(n / d.val_share)));
    var numTrain = Math.min(d.train_max, n - numVal);
    var ids = [];
    for (var i = 0; i < numTrain + numVal + d.T; i++) {
      var k = d.vocab.indexOf(text[i]);
      ids.push(k < 0 ? unk : k);
    }
    return { ids: ids, numTrain: numTrain, numVal: numVal, chars: text.length, own: raw !== d.book };
  }

  function commandFor(s, c) {
    return "$ python3 gru.py --updates " + s.updates + " --float64 --hidden " + s.hidden + " --batch-size " +
      s.batch + " --lr " + s.lr + " --clip " + s.clip + " --num-train " + c.numTrain + " --num-val " + c.numVal +
      (c.own ? " --corpus my-text.txt" : "");
  }

  function check() {  // the message under the text, and the command the settings make
    var c = corpus();
    message.textContent = c.error || (plural(c.chars, "character") + " after preprocessing: " +
      plural(c.numTrain, "training window") + " and " + plural(c.numVal, "validation window") + ".");
    message.classList.toggle("rw-error", !!c.error);
    area.setAttribute("aria-invalid", c.error ? "true" : "false");
    startButton.disabled = !!c.error || !!run;
    if (!c.error && !run) command.textContent = commandFor(settings(), c);
    save.hidden = !!c.error || !c.own;
    return c;
  }

  // -- the run ----------------------------------------------------------------------
  function sample(ids) { return "\"" + ids.map(function (i) { return d.vocab[i]; }).join("") + "\""; }  // gru.py's quoted()
  function ppl(x) { return x < 1e6 ? fmt.fixed(x, 2) : fmt.sci(x, 2); }   // gru.py's format_ppl
  function norm(x) { return x < 1e5 ? fmt.fixed(x, 3) : fmt.sci(x, 2); }  // .. format_norm
  function cells(tr, texts) { texts.forEach(function (t) { tr.appendChild(el("td", { text: t })); }); return tr; }

  function draw() {  // binned training perplexity (at most 200 points), and the rows' validation
    if (!run) {  // the same two lines, empty: a run's first points only move them (kit.chart)
      chart.draw({ lines: [{ y: [], cls: "rw-main" }, { y: [], cls: "rw-dash" }], label: "No training yet." });
      return;
    }
    var n = run.losses.length, bin = Math.max(1, Math.ceil(n / 200)), train = [], val = [];
    for (var i = 0; i < n; i += bin) {
      var s = 0, m = Math.min(bin, n - i);
      for (var k = i; k < i + m; k++) s += run.losses[k];
      train.push(Math.exp(s / m));
    }
    run.rows.forEach(function (r) { val.push(r.val_ppl); });
    var last = run.rows[run.rows.length - 1];
    chart.draw({ lines: [{ y: train, x0: bin, dx: bin, cls: "rw-main" },
                         { y: val, x0: d.every, dx: d.every, cls: "rw-dash" }],
                 label: "Training perplexity (mean over " + bin + " updates) and validation perplexity " +
                   "against update, " + n + " updates so far" + (last ? "; validation " + ppl(last.val_ppl) : "") + "." });
  }
  function render() {  // what came from the worker, into the page: new rows, the readout, the chart
    if (run) {
      run.rows.slice(rowsBody.children.length).forEach(function (r) {
        rowsBody.appendChild(cells(el("tr"), [String(r.update), String(r.epoch), ppl(r.train_ppl), ppl(r.val_ppl),
                                              norm(r.max_grad_norm)]));
        samplesBody.appendChild(cells(el("tr"), [String(r.update)].concat(r.ids.map(sample), [sample(r.yours)])));
      });
      show();
    }
    draw();
  }
  var pending = false, drawn = 0;
  function redraw() {  // at most every 300 ms, in a frame: the page's own work stays small
    if (pending) return;
    pending = true;
    setTimeout(function () {
      requestAnimationFrame(function () { pending = false; drawn = Date.now(); render(); });
    }, Math.max(0, 300 - (Date.now() - drawn)));
  }

  function show() {
    var n = run.losses.length, last = run.rows[run.rows.length - 1];
    readout.textContent = "Update " + n + " of " + run.s.updates + (run.state === "paused" ? " (paused)" : "") +
      (run.state === "done" ? " (done)" : "") + "; last training loss " +
      (n ? fmt.fixed(run.losses[n - 1], 4) : "-") + (last ? "; validation perplexity " + ppl(last.val_ppl) +
      " at update " + last.update : "") + ".";
    pauseButton.textContent = run.state === "paused" ? "Resume" : "Pause";
    pauseButton.disabled = run.state === "done" || run.state === "failed";
  }

  function onMessage(e) {
    var m = e.data;
    if (m.type === "losses") {
      Array.prototype.push.apply(run.losses, m.losses);
    } else if (m.type === "row") {
      var r = m.row;
      run.rows.push(r);
      run.params = m.params;
      kit.share("gru-params", { params: m.params, update: r.update, hidden: run.s.hidden, vocab: d.vocab,
                                command: run.command });
      announce("update " + r.update + ": validation perplexity " + ppl(r.val_ppl) + "; greedy: " +
               sample(r.ids[0]));
    } else if (m.type === "done") {
      run.state = "done";
      announce("done: " + m.update + " updates");
    } else if (m.type === "failed") {
      run.state = "failed";
      message.textContent = m.message + ".";
      message.classList.add("rw-error");
    }
    if (run.state === "done" || run.state === "failed") render();  // at once: the run's last state
    else redraw();
  }

  function start() {
    var c = check();
    if (c.error || run) return;
    var s = settings(), url = d.init[s.hidden];
    run = { s: s, losses: [], rows: [], state: "loading", params: null, worker: null };
    startButton.disabled = true;
    resetButton.disabled = false;
    command.textContent = run.command = commandFor(s, c);
    chartX.max = s.updates;
    readout.textContent = "Loading the initial parameters (" + url.split("/").pop() + ")...";
    var mine = run;
    kit.json(url).then(function (init) {
      if (run !== mine) return;
      mine.worker = new Worker(worker);
      mine.worker.onmessage = onMessage;
      mine.worker.onerror = function (e) { e.preventDefault(); onMessage({ data: { type: "failed", message: "the trainer stopped: " + e.message } }); };
      mine.worker.postMessage({ type: "start", temperature: temperature.value(), init: init, ids: c.ids, config: {
        hidden: s.hidden, lr: s.lr, clip: s.clip, batch: s.batch, updates: s.updates, numTrain: c.numTrain,
        numVal: c.numVal, T: d.T, seed: d.seed, every: d.every, numPreds: d.num_preds, temperatures: d.temperatures,
        unk: unk, V: d.vocab.length,
        prefix: preprocess(d.prefix).split("").map(function (ch) { return d.vocab.indexOf(ch); }) } });
      mine.state = "running";
      show();
    }, function () {
      if (run !== mine) return;
      readout.textContent = "Could not load the initial parameters: press Reset, then Start to try again.";
    });
    redraw();
  }

  function reset() {
    if (run && run.worker) run.worker.terminate();
    if (run && run.params) kit.share("gru-params", null);  // the text generator's "your GRU": none now
    run = null;
    rowsBody.textContent = ""; samplesBody.textContent = "";
    readout.textContent = "Not started.";
    chartX.max = settings().updates;
    resetButton.disabled = true; pauseButton.disabled = true; pauseButton.textContent = "Pause";
    check();
    redraw();
  }

  function pause() {
    if (!run || !run.worker || run.state === "done" || run.state === "failed") return;
    run.state = run.state === "paused" ? "running" : "paused";
    run.worker.postMessage({ type: run.state === "paused" ? "pause" : "resume" });
    show();
  }

  function changed() { if (run) reset(); else check(); }  // new settings: a new run

  // -- the controls -----------------------------------------------------------------
  function pick(label, name, o) {
    return kit.choice({ label: label, name: name, index: o.index, onChange: changed,
                        options: o.values.map(function (v) { return { text: String(v), value: v }; }) });
  }
  var hidden = pick("hidden units", "hidden", d.hidden);
  var batch = pick("batch size", "batch", d.batch);
  var updates = pick("updates", "updates", d.updates);
  var lr = kit.slider({ label: "learning rate", values: d.lr.values, index: d.lr.index, text: String, onInput: changed });
  var clip = kit.slider({ label: "clip to norm", values: d.clip.values, index: d.clip.index, text: String, onInput: changed });
  var temperature = kit.slider({ label: "temperature of your samples", values: d.temperature.values,
                                 index: d.temperature.index, text: function (v) { return fmt.fixed(v, 2); },
                                 onInput: function (v) { if (run && run.worker) run.worker.postMessage({ type: "temperature", value: v }); } });
  lr.input.setAttribute("data-control", "lr");
  clip.input.setAttribute("data-control", "clip");
  temperature.input.setAttribute("data-control", "temperature");

  area.addEventListener("input", changed);
  file.addEventListener("change", function () {
    var f = file.files && file.files[0];
    if (!f) return;
    if (f.size > 4 * d.max_chars) {
      message.textContent = "Too long: " + f.name + " has " + plural(f.size, "byte") + "; the trainer takes at most " +
        d.max_chars.toLocaleString("en-US") + " characters.";
      message.classList.add("rw-error");
      return;
    }
    f.arrayBuffer().then(function (bytes) {
      try {  // as gru.py reads a corpus: UTF-8, a byte order mark kept (it becomes a space)
        area.value = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch (err) {
        message.textContent = "Cannot read " + f.name + ": not UTF-8 text.";
        message.classList.add("rw-error");
        return;
      }
      changed();
    });
  });
  bookButton.addEventListener("click", function () { area.value = shown; changed(); });
  startButton.addEventListener("click", start);
  pauseButton.addEventListener("click", pause);
  resetButton.addEventListener("click", reset);
  link.addEventListener("click", function () {  // the text as typed, for --corpus
    link.href = URL.createObjectURL(new Blob([area.value], { type: "text/plain" }));
  });

  var head = function (names) {
    return el("thead", {}, [el("tr", {}, names.map(function (t) { return el("th", { scope: "col", text: t }); }))]);
  };
  kit.frame(figure, d.title, [
    el("div", { "class": "rw-corpus" }, [el("label", { "for": textId, text: "Text to train on " +
      "(type or paste your own, or open a file):" }), area, el("span", {}, [file, " ", bookButton])]),
    message, kit.controls([hidden.root, batch.root, updates.root, lr.root, clip.root, temperature.root]),
    el("div", { "class": "rw-actions" }, [startButton, " ", pauseButton, " ", resetButton]), readout, chart.root,
    kit.legend([{ cls: "rw-main", text: "training perplexity" },
                { cls: "rw-dash", text: "validation perplexity, every " + d.every + " updates" }]),
    el("p", { "class": "rw-label" }, ["The same run in numpy: ", command, save]),
    el("div", { "class": "rw-scroll rw-rows", tabindex: 0, "aria-label": "the rows" }, [el("table", { "data-table": "updates" }, [
      head(["update", "epoch", "train ppl", "val ppl", "max grad norm"]), rowsBody])]),
    el("div", { "class": "rw-scroll rw-rows", tabindex: 0, "aria-label": "the samples" }, [el("table", { "data-table": "samples" }, [
      head(["update", "greedy"].concat(d.temperatures.map(function (t) { return "temperature " + t; }), ["yours"])),
      samplesBody])])], d.caption);
  figure.classList.add("rw-trainer");
  reset();
  announce = kit.live(figure);
  figure.rwTrainer = {  // for the browser test: the run as the page holds it
    params: function () { return run && run.params; },
    losses: function () { return run ? run.losses.slice() : []; },
    state: function () { return run ? run.state : "idle"; }
  };
});
})();
