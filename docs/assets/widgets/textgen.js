/* "textgen": chapter 14's trained GRU, writing in the page. The reader types a prompt
   and sees what the model writes after it, greedy and drawn at a temperature, and the
   five likeliest next characters. The page runs gru.py's own predict() (the same GRU
   step, in float64, on the weights of code/gru-trained.json) and draws from the same
   random numbers: numpy's default_rng(seed), PCG64 seeded by SeedSequence, written out
   in numpy-random.js, so that a seed here is a seed there. A browser test holds the page's text and
   probabilities equal to the script's for the same prompt, temperature and seed.

   Every character of the prompt and of both continuations has its own numbers: the
   five likeliest next characters after it (the model's distribution, softmax of the
   logits of the step that reads it) and the mean over the units of that step's update
   gate Z_t (d2l's H_t = Z_t * H_prev + (1 - Z_t) * H~_t), shown for the character under
   the pointer, tapped, or under the cursor the arrow keys move (kit.characters: one tab
   stop per text). The texts are shaded by that mean, in the ten levels of the static
   passage of section 14.6 (site.css's .inside .shaded, p0 .. p9).

   The weights (gru-trained.json, about 140 KB) load when the reader first uses a
   control (the main button, "Run the model", first of all), not with the widget: until
   then the widget shows the greedy text this model writes after its starting prompt,
   which gru.py --export computed at build time (its `greedy`), unshaded: the same text
   the page writes when run, then with every character's numbers.

   Which model writes: the chapter's GRU (gru-trained.json), or, once the page's trainer
   (trainer.js) has parameters, the reader's own: the trainer shares them after each
   row (kit.shared("gru-params"): gru.py's stacked float64 parameters, the same
   vocabulary), and the text follows them as training goes on. Picked before any
   training, the reader's GRU is a message, and the text stays the chapter's. A line
   above the texts says which model wrote them.

   On a phone the texts and the readout come before the sliders and buttons (the page's
   order is the order on every screen: the prompt and the main button, the texts, the
   readout, then the settings), so that a control and its result share a screen.

   data (generator/chapters/ch14_gru_lm.py's model_widget):
     title, caption          text (caption may hold inline markup)
     model {url, bytes}      the served record of `python3 gru.py --export`
     prefix                  the prompt it starts with ("it has", the samples table's)
     max_length              the longest prompt taken, in characters
     temperature {values, index}, length {values, index}   the sliders
     seed                    the seed it starts with
     top                     how many likeliest next characters it lists
     greedy                  gru.py --export's greedy continuation of prefix (the prefix
                             and length[index] characters), shown before the weights load
     vocab                   the model's vocabulary (a shared model's must be the same)
     chapter                 the chapter's model, in words ("the chapter's GRU (...)")
     trainer                 the page's trainer's title (no choice of model without it) */
RW.define("textgen", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt, core = kit.core;
  var sigmoid = core.sigmoid, preprocess = core.preprocess, charName = core.charName, quoted = core.quoted;

  // -- gru.py's model: preprocess, gru_step, predict -------------------------------------
  // model: the one writing now, models.chapter (gru-trained.json) or models.yours (the
  // trainer's); both on the vocabulary of the data.
  var vocab = d.vocab, unk = vocab.indexOf("<unk>");
  var models = { chapter: null, yours: null }, model = null, yours = null;

  function build(w) {  // weights under the equations' names, as gru-trained.json has them
    var table = ["z", "r", "h"].map(function (g) {  // row v: W_x?[v] + b_?, as predict() adds them
      return w["W_x" + g].map(function (row) { return row.map(function (x, j) { return x + w["b_" + g][j]; }); });
    });
    return { table: table, W_hz: w.W_hz, W_hr: w.W_hr, W_hh: w.W_hh, W_hq: w.W_hq, b_q: w.b_q,
             h: w.b_z.length, V: vocab.length };
  }

  // gru.py's stacked parameters (gru-train.js: flat, C order; W_x (3, V, h) = [W_xz, W_xr,
  // W_xh], W_h (3, h, h), b (3, h), W_hq (h, V), b_q (V)) under the equations' names.
  function unstack(p) {
    var V = p.b_q.length, h = p.b.length / 3;
    function rows(a, from, n, m) {
      var out = [];
      for (var i = 0; i < n; i++) out.push(Array.prototype.slice.call(a, from + i * m, from + (i + 1) * m));
      return out;
    }
    return { W_xz: rows(p.W_x, 0, V, h), W_xr: rows(p.W_x, V * h, V, h), W_xh: rows(p.W_x, 2 * V * h, V, h),
             W_hz: rows(p.W_h, 0, h, h), W_hr: rows(p.W_h, h * h, h, h), W_hh: rows(p.W_h, 2 * h * h, h, h),
             b_z: rows(p.b, 0, 1, h)[0], b_r: rows(p.b, h, 1, h)[0], b_h: rows(p.b, 2 * h, 1, h)[0],
             W_hq: rows(p.W_hq, 0, h, V), b_q: Array.prototype.slice.call(p.b_q) };
  }

  function times(H, W, j) { var s = 0; for (var i = 0; i < H.length; i++) s += H[i] * W[i][j]; return s; }

  function step(H, x) {  // gru_step: Z, R, the candidate, the new state; and mean(Z)
    var h = model.h, Z = [], R = [], RH = [], out = [], j, zSum = 0;
    for (j = 0; j < h; j++) {
      Z.push(sigmoid(model.table[0][x][j] + times(H, model.W_hz, j)));
      R.push(sigmoid(model.table[1][x][j] + times(H, model.W_hr, j)));
      RH.push(R[j] * H[j]);
      zSum += Z[j];
    }
    for (j = 0; j < h; j++) {
      var Ht = Math.tanh(model.table[2][x][j] + times(RH, model.W_hh, j));
      out.push(Z[j] * H[j] + (1 - Z[j]) * Ht);
    }
    out.zMean = zSum / h;  // the mean update gate of this step, as --inside averages it
    return out;
  }

  function logits(H) {
    var out = [];
    for (var v = 0; v < model.V; v++) out.push(times(H, model.W_hq, v) + model.b_q[v]);
    return out;
  }

  function ids(text) { return text.split("").map(function (c) { var i = vocab.indexOf(c); return i < 0 ? unk : i; }); }

  // Reading a text character by character: after step t (which reads character t), the
  // state, the logits of the next character and the mean of Z_t. One record per
  // character, so that every character of what the page shows has its own.
  function read(H, x, steps) {
    var next = step(H, x);
    steps.push({ logits: logits(next), z: next.zMean });
    return next;
  }

  function prompted(prefix) {  // the prompt read from a zero state: its steps, and the state
    var got = ids(prefix), H = [], steps = [], k;
    for (k = 0; k < model.h; k++) H.push(0);
    for (k = 0; k < got.length; k++) H = read(H, got[k], steps);
    return { ids: got, H: H, steps: steps };
  }

  // predict(params, 'gru', prefix, n, temperature, default_rng(seed)): the prefix and n
  // characters, greedy when temperature is null. predict() steps on the prompt, then on
  // each character it writes, and draws the next from each step's logits: the same
  // steps as here, which also read the last character written (its own next-character
  // distribution, which predict() never needs). steps[t]: character t's record.
  function predict(start, n, temperature, seed) {
    var got = start.ids.slice(), H = start.H, steps = start.steps.slice(), k, v;
    var random = temperature === null ? null : window.RWRandom.seeded([seed]).random;
    for (k = 0; k < n; k++) {
      var L = steps[steps.length - 1].logits, top = Math.max.apply(null, L);
      if (temperature === null) got.push(L.indexOf(top));  // argmax: the first largest
      else {
        var cumulative = [], sum = 0;
        for (v = 0; v < L.length; v++) { sum += v === unk ? 0 : Math.exp((L[v] - top) / temperature); cumulative.push(sum); }
        var u = random() * sum, at = 0;  // searchsorted(cumulative, u, side='right')
        while (at < cumulative.length && cumulative[at] <= u) at++;
        got.push(Math.min(at, L.length - 1));
      }
      H = read(H, got[got.length - 1], steps);
    }
    var tokens = got.map(function (i) { return vocab[i]; });
    return { text: tokens.join(""), tokens: tokens, steps: steps };
  }

  function distribution(L) {  // softmax, as log_softmax computes it
    var top = Math.max.apply(null, L), sum = 0;
    L.forEach(function (x) { sum += Math.exp(x - top); });
    var logSum = Math.log(sum);
    return L.map(function (x) { return Math.exp(x - top - logSum); });
  }

  // -- the controls ------------------------------------------------------------------------
  var message = el("p", { "class": "rw-error", id: kit.uid("rw-msg"), role: "alert" });
  var note = el("p", { "class": "rw-note", id: kit.uid("rw-note") });
  var promptId = kit.uid("rw-prompt");
  var prompt = el("input", { type: "text", id: promptId, value: d.prefix, autocomplete: "off",
                             spellcheck: "false", "data-input": "prompt",
                             // a paste is cut at one character past the limit: the browser
                             // never holds a 1 MB prompt, and "too long" is still said
                             maxlength: String(d.max_length + 1),
                             "aria-describedby": message.id + " " + note.id });
  var good = { prefix: d.prefix };
  var temperature = kit.slider({
    label: "temperature", values: d.temperature.values, index: d.temperature.index,
    text: function (t) { return fmt.fixed(t, 2); },
    spoken: function (t) { return "temperature " + fmt.fixed(t, 2); }, onInput: use
  });
  var length = kit.slider({
    label: "characters written", values: d.length.values, index: d.length.index, text: String,
    spoken: function (n) { return n + " characters"; }, onInput: use
  });
  temperature.input.setAttribute("data-control", "temperature");
  length.input.setAttribute("data-control", "length");
  var seedMessage = el("p", { "class": "rw-error", id: kit.uid("rw-msg"), role: "alert" });
  var seed = kit.numberField({ label: "seed", name: "seed", text: String(d.seed), min: 0,
                               max: 4294967295, maxLength: 10, message: seedMessage, onChange: use });
  seed.input.setAttribute("data-input", "seed");
  var goodSeed = d.seed;
  var again = el("button", { type: "button", "data-action": "again", text: "Sample again (next seed)" });
  var run = el("button", { type: "button", "class": "rw-primary", "data-action": "run",
                           text: "Run the model (loads " + Math.round(d.model.bytes / 1000) + " KB)" });

  // Which model writes: the chapter's, or the reader's from the trainer (once it has some).
  var which = "chapter", YOURS = 1;
  var choiceMessage = el("p", { "class": "rw-error", id: kit.uid("rw-msg"), role: "alert" });
  var choice = d.trainer ? kit.choice({
    label: "model", name: "model", index: 0,
    options: [{ text: d.chapter, value: "chapter" }, { text: "your GRU (not trained yet)", value: "yours" }],
    onChange: function (v) { which = v; use(); }
  }) : null;
  var writer = el("p", { "class": "rw-writer", "data-value": "writer", "data-model": "build" });

  var topList = el("ol", { "class": "rw-top" }), texts = {};
  var detailLabel = el("p", { "class": "rw-label", "data-value": "detail-label" });
  var zOut = el("span", { "class": "rw-zbox", "data-value": "z" });
  var greedyView = textView("greedy", "greedy text: arrow keys move through its characters");
  var sampledView = textView("sampled", "drawn text: arrow keys move through its characters");
  // Before the weights load: the greedy text of the starting prompt, as gru.py --export
  // wrote it at build time (unshaded: its numbers come with the model).
  var written = d.greedy.slice(d.prefix.length);
  var preview = el("p", { "class": "rw-chars rw-text shaded", "data-value": "preview", "data-text": d.greedy },
                   [el("i", { text: d.prefix }), el("i", { "class": "rw-w", text: written })]);
  greedyView.root.hidden = true;
  var python = el("pre", { "class": "rw-python", tabindex: 0 });  // scrolls on a phone: by keys too
  var pythonLabel = el("p", { "class": "rw-label" });
  var readout = el("div", { hidden: true }, [  // shown once the model has written
    el("p", { "class": "rw-label", "data-value": "sampled-label" }), sampledView.root,
    el("p", { "class": "rw-hint", text: "Shaded by the mean update gate Z of the step that reads each " +
              "character (unshaded near 0: the units take the candidate; full orange near 1: they keep " +
              "their state), as the passage of 14.6 is; underlined: what the model wrote. Point at or tap a " +
              "character, or tab to a text and use the arrow keys, for its numbers here:" }),
    detailLabel, topList,
    el("p", { "class": "rw-readout rw-z" }, ["mean update gate at that step, the mean over the units of Z",
              el("sub", { text: "t" }), ": ", zOut])
  ]);
  var results = el("div", { "class": "rw-results inside" }, [
    el("p", { "class": "rw-label", text: "Greedy (the likeliest character each time):" }), preview, greedyView.root,
    readout
  ]);
  var inPython = el("div", { hidden: true }, [pythonLabel, python]);
  var status = el("p", { "class": "rw-status" });
  var announce;


  // The ten levels of the static passage of section 14.6 (ch14_gru_lm.py's `inside`):
  // the tenth of the mean update gate, rounded to 4 decimals as --inside prints it.
  function level(z) { return Math.min(9, Math.floor(Math.round(z * 1e4) / 1e4 * 10)); }

  function ranked(P) {
    return P.map(function (p, i) { return i; }).sort(function (a, b) { return P[b] - P[a] || a - b; });
  }

  // One text (greedy or drawn): every character shaded by the mean update gate of the
  // step that reads it, the characters the model wrote underlined; a cursor on one.
  function textView(name, label) {
    var view = { name: name, text: "", steps: [], prefix: 0 };
    view.chars = kit.characters({
      label: label,
      onMove: function (t) { return detail(view, t); }
    });
    view.chars.root.classList.add("rw-text", "shaded");
    view.chars.root.setAttribute("data-value", name);
    view.root = view.chars.root;
    texts[name] = view;
    return view;
  }

  function showText(view, written, prefix) {
    var full = written.text, steps = written.steps;
    view.text = written.tokens;
    view.steps = steps;
    view.prefix = prefix.length;
    view.chars.root.setAttribute("data-text", full);
    view.chars.show(written.tokens.map(function (c, t) {
      return { text: c, cls: "p" + level(steps[t].z) + (t >= prefix.length ? " rw-w" : "") };
    }), null);
  }

  // What the readout shows for character t of a text: the five likeliest next
  // characters (the model's own distribution, softmax of the logits, before any
  // temperature) and the mean update gate; returns what a screen reader says.
  function detail(view, t) {
    var c = view.text[t], P = distribution(view.steps[t].logits), z = view.steps[t].z;
    var order = ranked(P).slice(0, d.top), where = t < view.prefix ? "typed" : "written";
    current = view.name;
    Object.keys(texts).forEach(function (name) {  // the cursor shown in the text read out only
      texts[name].chars.root.classList.toggle("rw-current", name === view.name);
    });
    detailLabel.textContent = (view.name === "greedy" ? "Greedy text" : "Drawn text") +
      ", character " + quoted(c) + " at step t = " + t + " (" + where + "): the " + d.top +
      " likeliest next characters";
    detailLabel.setAttribute("data-t", t);
    detailLabel.setAttribute("data-text-name", view.name);
    topList.textContent = "";
    order.forEach(function (i) {
      topList.appendChild(el("li", { "data-char": vocab[i], "data-p": String(P[i]) }, [
        el("span", { "class": "rw-char", text: vocab[i] === " " ? "\u2423" : vocab[i],
                     "aria-label": charName(vocab[i]) }),
        el("span", { "class": "rw-p", text: fmt.fixed(P[i], 4) }),
        el("span", { "class": "rw-bar", style: "width:" + (P[i] * 10).toFixed(2) + "em", "aria-hidden": "true" })
      ]));
    });
    zOut.textContent = fmt.fixed(z, 4);
    zOut.setAttribute("data-z", String(z));
    zOut.style.setProperty("--level", level(z));
    zOut.setAttribute("data-level", level(z));  // its text colour at night (widgets.css)
    return "character " + charName(c) + ", step " + t + ", " + where + ": next " +
      order.map(function (i) { return charName(vocab[i]) + " " + fmt.fixed(P[i], 2); }).join(", ") +
      "; mean update gate " + fmt.fixed(z, 2);
  }

  // The texts, by the model chosen (the reader's once the trainer has some, else the
  // chapter's). quiet: the reader's GRU moved on (a row of the trainer): the texts are
  // rewritten, the cursors stay where they were and nothing is announced.
  var current = "greedy";  // the text the readout reads
  function render(quiet) {
    var mine = which === "yours" && !!models.yours;
    model = mine ? models.yours : models.chapter;
    if (!model) return;
    var prefix = good.prefix, n = length.value(), t = temperature.value();
    var start = prompted(prefix), was = current;
    var at = { greedy: texts.greedy.chars.at(), sampled: texts.sampled.chars.at() };
    var greedy = predict(start, n, null, 0);
    var sampled = predict(start, n, t, goodSeed);
    showText(texts.greedy, greedy, prefix);
    showText(texts.sampled, sampled, prefix);
    preview.hidden = true;
    texts.greedy.root.hidden = readout.hidden = inPython.hidden = false;
    results.querySelector('[data-value="sampled-label"]').textContent =
      "Drawn at temperature " + fmt.fixed(t, 2) + ", seed " + goodSeed + ":";
    if (quiet && at[was] >= 0) {  // the other text's cursor, then the one read out
      var other = was === "greedy" ? "sampled" : "greedy";
      texts[other].chars.move(at[other] >= 0 ? at[other] : prefix.length - 1);
      texts[was].chars.move(at[was]);
    } else {
      texts.sampled.chars.move(prefix.length - 1);
      texts.greedy.chars.move(prefix.length - 1);  // the readout: after the prompt, as it starts
    }
    writer.textContent = mine ? "Written by your GRU, after " + yours.update + " updates (" + yours.hidden +
      " hidden units), trained in this page." : "Written by " + d.chapter + ".";
    writer.setAttribute("data-model", mine ? "yours" : "chapter");
    writer.setAttribute("data-update", mine ? String(yours.update) : "");
    var q = JSON.stringify(prefix), lines = "print(gru.predict(params, 'gru', " + q + ", " + n + "))\n" +
      "print(gru.predict(params, 'gru', " + q + ", " + n + ", " + fmt.fixed(t, 2) +
      ", np.random.default_rng(" + goodSeed + ")))";
    if (mine) {  // a run to update u is the first u updates of the trainer's run
      var argv = yours.command.replace(/^\$ python3 gru\.py /, "").replace(/--updates \d+/, "--updates " + yours.update);
      pythonLabel.textContent = "The same in Python, in a folder with gru.py and " +
        (/--corpus/.test(argv) ? "my-text.txt" : "timemachine.txt") + ": numpy trains your GRU (gru.py's train_updates), then writes:";
      python.textContent = "import numpy as np\nimport gru\n\nargs = gru.parse_args(" + JSON.stringify(argv) +
        ".split())\nparams, _ = gru.train_updates(gru.corpus_for(args), gru.model_config(args, gru.base_config(args), 'gru'))\n" + lines;
    } else {
      pythonLabel.textContent = "The same in Python, with the lines of the code page that load the model:";
      python.textContent = lines;
    }
    python.setAttribute("data-value", "python");
    if (announce && !quiet) {
      announce("greedy: " + greedy.text.slice(prefix.length) + ". Drawn: " + sampled.text.slice(prefix.length) +
               ". " + writer.textContent);
    }
  }

  function check() {  // the prompt and the seed as typed; a message, or the new good state
    var raw = prompt.value, errors = [];
    var tooLong = raw.length > d.max_length;  // measured first: a 1 MB paste is never read
    var read = tooLong ? "" : preprocess(raw);
    note.textContent = "";
    if (tooLong) errors.push("prompt: too long: at most " + d.max_length + " characters");
    else if (!read.length) errors.push("prompt: empty: type at least one letter or space");
    else if (read !== raw) note.textContent = "Read as \u201c" + read + "\u201d: the model knows lower-case letters and spaces only, and reads every run of other characters as one space, as gru.py's preprocess() does.";
    if (errors.length) prompt.setAttribute("aria-invalid", "true");
    else { prompt.removeAttribute("aria-invalid"); good.prefix = read; }
    message.textContent = errors.join(" ");
    var seedError = seed.error();
    if (!seedError && !Number.isInteger(seed.value())) {
      seedError = "seed: not a whole number: type a whole number from 0 to 4294967295";
      seed.input.setAttribute("aria-invalid", "true");
    } else if (!seedError) goodSeed = seed.value();
    seedMessage.textContent = seedError || "";
  }

  var loading = null;
  function load() {  // once: the chapter's weights, then the text
    if (!loading) {
      status.textContent = "Loading the model\u2026";
      figure.setAttribute("data-model", "loading");
      loading = kit.json(d.model.url).then(function (m) {
        models.chapter = build(m.weights);
        status.textContent = "";
        run.textContent = "Run the model";
        figure.setAttribute("data-model", "ready");
      }, function () {
        loading = null;
        status.textContent = "The model did not load (gru-trained.json); try again, or run gru.py.";
        figure.setAttribute("data-model", "failed");
      });
    }
    return loading;
  }

  function use() {
    check();
    choiceMessage.textContent = which === "yours" && !models.yours ? "Your GRU has not trained yet: press " +
      "Start in the trainer on this page (\u201c" + d.trainer + "\u201d). Until its first row, " + d.chapter +
      " writes; then yours does, and the texts follow it as it trains." : "";
    if ((which === "yours" && models.yours) || models.chapter) render();
    else load().then(function () { if (models.chapter) render(); });
  }

  // The trainer's parameters, after each of its rows (null after a reset): the reader's
  // GRU, on the same vocabulary (the build checks the trainer's is this model's).
  kit.shared("gru-params", function (v) {
    if (!choice) return;
    yours = v && v.vocab.join("\n") === vocab.join("\n") ? v : null;
    models.yours = yours ? build(unstack(yours.params)) : null;
    choice.relabel(YOURS, yours ? "your GRU (after " + yours.update + " updates)" : "your GRU (not trained yet)");
    if (which !== "yours") return;
    if (yours) { choiceMessage.textContent = ""; render(true); }
    else use();  // a reset: the chapter's again, and said so
  });

  prompt.addEventListener("input", use);
  run.addEventListener("click", use);
  again.addEventListener("click", function () {
    check();
    goodSeed = goodSeed >= 4294967295 ? 0 : goodSeed + 1;
    seed.set(String(goodSeed));
    seedMessage.textContent = "";
    use();
  });

  writer.textContent = "Written at build time by python3 gru.py --export: what this GRU writes here when run.";
  status.textContent = "Run the model for every character's numbers, and a text drawn at a temperature.";
  kit.frame(figure, d.title, [
    el("div", { "class": "rw-prompt" }, [el("label", { "for": promptId, text: "prompt" }), prompt, run]),
    message, note, choice ? choice.root : null, choiceMessage, writer, results, status,
    kit.controls([temperature.root, length.root]),
    el("div", { "class": "rw-actions" }, [seed.root, again]), seedMessage, inPython].filter(Boolean), d.caption);
  figure.setAttribute("data-model", "waiting");
  announce = kit.live(figure);
});
