/* "textgen": chapter 14's trained GRU, writing in the page. The reader types a prompt
   and sees what the model writes after it, greedy and drawn at a temperature, and the
   five likeliest next characters. The page runs gru.py's own predict() (the same GRU
   step, in float64, on the weights of code/gru-trained.json) and draws from the same
   random numbers: numpy's default_rng(seed), PCG64 seeded by SeedSequence, written out
   below, so that a seed here is a seed there. A browser test holds the page's text and
   probabilities equal to the script's for the same prompt, temperature and seed.

   The weights (gru-trained.json, about 250 KB) load when the reader first uses a
   control, not with the widget: until then the widget shows what it will do.

   data (generator/chapters/ch14_gru_lm.py's model_widget):
     title, caption          text (caption may hold inline markup)
     model {url, bytes}      the served record of `python3 gru.py --export`
     prefix                  the prompt it starts with ("it has", the samples table's)
     max_length              the longest prompt taken, in characters
     temperature {values, index}, length {values, index}   the sliders
     seed                    the seed it starts with
     top                     how many likeliest next characters it lists */
RW.define("textgen", function (figure, d, kit) {
  "use strict";
  var el = kit.el, fmt = kit.fmt;

  // -- numpy's default_rng(seed).random(), for a seed from 0 to 2**32 - 1 ------------
  // SeedSequence (numpy/random/bit_generator.pyx) hashes the seed into 8 words; PCG64
  // (pcg64.h) takes a 128-bit state and increment from them; random() is the top 53 bits
  // of the next 64-bit output over 2**53.
  function mul32(a, b) { return Math.imul(a, b) >>> 0; }
  function seedWords(seed, n) {
    var h = 0x43b0d7e5, pool = [], i, j, out = [], g = 0x8b51f9dd, v;
    function hashmix(x) {
      x = (x ^ h) >>> 0; h = mul32(h, 0x931e8875); x = mul32(x, h); return (x ^ (x >>> 16)) >>> 0;
    }
    function mix(x, y) {
      var r = (mul32(0xca01f9dd, x) - mul32(0x4973f715, y)) >>> 0; return (r ^ (r >>> 16)) >>> 0;
    }
    for (i = 0; i < 4; i++) pool.push(hashmix(i === 0 ? seed >>> 0 : 0));
    for (i = 0; i < 4; i++) for (j = 0; j < 4; j++) if (i !== j) pool[j] = mix(pool[j], hashmix(pool[i]));
    for (i = 0; i < n; i++) {
      v = (pool[i % 4] ^ g) >>> 0; g = mul32(g, 0x58f38ded); v = mul32(v, g); out.push((v ^ (v >>> 16)) >>> 0);
    }
    return out;
  }
  var M128 = (BigInt(1) << BigInt(128)) - BigInt(1), M64 = (BigInt(1) << BigInt(64)) - BigInt(1);
  var MULT = BigInt("0x2360ED051FC65DA44385DF649FCCF645");
  var B = function (n) { return BigInt(n); };
  function defaultRng(seed) {
    var w = seedWords(seed, 8).map(B);
    var v = [0, 1, 2, 3].map(function (k) { return w[2 * k] | (w[2 * k + 1] << B(32)); });
    var inc = ((((v[2] << B(64)) | v[3]) << B(1)) | B(1)) & M128, state = B(0);
    function step() { state = (state * MULT + inc) & M128; }
    step();
    state = (state + ((v[0] << B(64)) | v[1])) & M128;
    step();
    return function random() {
      step();
      var x = ((state >> B(64)) ^ state) & M64, r = state >> B(122);
      x = ((x >> r) | (x << ((B(64) - r) & B(63)))) & M64;
      return Number(x >> B(11)) / 9007199254740992;
    };
  }

  // -- gru.py's model: preprocess, gru_step, predict -------------------------------------
  var model = null, vocab = null, unk = 1;
  function preprocess(text) { return text.replace(/[^A-Za-z]+/g, " ").toLowerCase(); }

  function setModel(m) {
    var w = m.weights;
    vocab = m.vocab;
    unk = vocab.indexOf("<unk>");
    var table = ["z", "r", "h"].map(function (g) {  // row v: W_x?[v] + b_?, as predict() adds them
      return w["W_x" + g].map(function (row) { return row.map(function (x, j) { return x + w["b_" + g][j]; }); });
    });
    model = { table: table, W_hz: w.W_hz, W_hr: w.W_hr, W_hh: w.W_hh, W_hq: w.W_hq, b_q: w.b_q,
              h: w.b_z.length, V: vocab.length };
  }

  function sigmoid(a) { return 0.5 * (1 + Math.tanh(0.5 * a)); }  // gru.py's form
  function times(H, W, j) { var s = 0; for (var i = 0; i < H.length; i++) s += H[i] * W[i][j]; return s; }

  function step(H, x) {  // gru_step: Z, R, the candidate, the new state
    var h = model.h, Z = [], R = [], RH = [], out = [], j;
    for (j = 0; j < h; j++) {
      Z.push(sigmoid(model.table[0][x][j] + times(H, model.W_hz, j)));
      R.push(sigmoid(model.table[1][x][j] + times(H, model.W_hr, j)));
      RH.push(R[j] * H[j]);
    }
    for (j = 0; j < h; j++) {
      var Ht = Math.tanh(model.table[2][x][j] + times(RH, model.W_hh, j));
      out.push(Z[j] * H[j] + (1 - Z[j]) * Ht);
    }
    return out;
  }

  function logits(H) {
    var out = [];
    for (var v = 0; v < model.V; v++) out.push(times(H, model.W_hq, v) + model.b_q[v]);
    return out;
  }

  function ids(text) { return text.split("").map(function (c) { var i = vocab.indexOf(c); return i < 0 ? unk : i; }); }

  // predict(params, 'gru', prefix, n, temperature, default_rng(seed)): the prefix and n
  // characters, greedy when temperature is null; and the distribution after the prefix.
  function predict(prefix, n, temperature, seed) {
    var got = ids(prefix), H = [], k, first = null;
    for (k = 0; k < model.h; k++) H.push(0);
    for (k = 0; k < got.length - 1; k++) H = step(H, got[k]);
    var random = temperature === null ? null : defaultRng(seed);
    for (k = 0; k < n; k++) {
      H = step(H, got[got.length - 1]);
      var L = logits(H), top = Math.max.apply(null, L), v;
      if (first === null) first = L;
      if (temperature === null) { got.push(L.indexOf(top)); continue; }  // argmax: the first largest
      var cumulative = [], sum = 0;
      for (v = 0; v < L.length; v++) { sum += v === unk ? 0 : Math.exp((L[v] - top) / temperature); cumulative.push(sum); }
      var u = random() * sum, at = 0;  // searchsorted(cumulative, u, side='right')
      while (at < cumulative.length && cumulative[at] <= u) at++;
      got.push(Math.min(at, L.length - 1));
    }
    return { text: got.map(function (i) { return vocab[i]; }).join(""), logits: first };
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
  var run = el("button", { type: "button", "data-action": "run",
                           text: "Run the model (loads " + Math.round(d.model.bytes / 1000) + " KB)" });

  var greedyOut = el("p", { "class": "rw-text" });
  var sampledOut = el("p", { "class": "rw-text" });
  var topList = el("ol", { "class": "rw-top" });
  var python = el("pre", { "class": "rw-python", tabindex: 0 });  // scrolls on a phone: by keys too
  var results = el("div", { "class": "rw-results", hidden: true }, [
    el("p", { "class": "rw-label", text: "Greedy (the likeliest character each time):" }), greedyOut,
    el("p", { "class": "rw-label", "data-value": "sampled-label" }), sampledOut,
    el("p", { "class": "rw-label", text: "After the prompt, the " + d.top + " likeliest next characters:" }), topList,
    el("p", { "class": "rw-label", text: "The same in Python, with the lines of the code page that load the model:" }),
    python
  ]);
  var status = el("p", { "class": "rw-status", text: "The model's weights load when you first use a control." });
  var announce;

  function shownText(node, name, full, prefix) {  // the prompt plain, what the model wrote marked
    node.textContent = "";
    node.setAttribute("data-value", name);
    node.setAttribute("data-text", full);
    node.append(el("span", { "class": "rw-typed", text: "\u201c" + prefix }),
                el("mark", { "class": "rw-written", text: full.slice(prefix.length) }),
                el("span", { "class": "rw-typed", text: "\u201d" }));
  }

  function charName(c) { return c === " " ? "space" : c === "<unk>" ? "unknown" : c; }

  function render() {
    var prefix = good.prefix, n = length.value(), t = temperature.value();
    var greedy = predict(prefix, n, null, 0);
    var sampled = predict(prefix, n, t, goodSeed);
    shownText(greedyOut, "greedy", greedy.text, prefix);
    shownText(sampledOut, "sampled", sampled.text, prefix);
    results.querySelector('[data-value="sampled-label"]').textContent =
      "Drawn at temperature " + fmt.fixed(t, 2) + ", seed " + goodSeed + ":";
    var P = distribution(greedy.logits);
    var order = P.map(function (p, i) { return i; }).sort(function (a, b) { return P[b] - P[a] || a - b; });
    topList.textContent = "";
    order.slice(0, d.top).forEach(function (i) {
      topList.appendChild(el("li", { "data-char": vocab[i], "data-p": String(P[i]) }, [
        el("span", { "class": "rw-char", text: vocab[i] === " " ? "\u2423" : vocab[i],
                     "aria-label": charName(vocab[i]) }),
        el("span", { "class": "rw-p", text: fmt.fixed(P[i], 4) }),
        el("span", { "class": "rw-bar", style: "width:" + (P[i] * 10).toFixed(2) + "em", "aria-hidden": "true" })
      ]));
    });
    var q = JSON.stringify(prefix);
    python.textContent = "print(gru.predict(params, 'gru', " + q + ", " + n + "))\n" +
      "print(gru.predict(params, 'gru', " + q + ", " + n + ", " + fmt.fixed(t, 2) +
      ", np.random.default_rng(" + goodSeed + ")))";
    python.setAttribute("data-value", "python");
    if (announce) announce("greedy: " + greedy.text.slice(prefix.length) + ". Drawn: " + sampled.text.slice(prefix.length));
  }

  function check() {  // the prompt and the seed as typed; a message, or the new good state
    var raw = prompt.value, read = preprocess(raw), errors = [];
    note.textContent = "";
    if (!read.length) errors.push("prompt: empty: type at least one letter or space");
    else if (raw.length > d.max_length) errors.push("prompt: too long: at most " + d.max_length + " characters");
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
  function load() {  // once: the weights, then the text
    if (!loading) {
      status.textContent = "Loading the model\u2026";
      figure.setAttribute("data-model", "loading");
      loading = fetch(d.model.url).then(function (r) {
        if (!r.ok) throw new Error(r.status);
        return r.json();
      }).then(function (m) {
        setModel(m);
        status.textContent = "";
        status.hidden = true;
        run.hidden = true;
        results.hidden = false;
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
    if (model) render();
    else load().then(function () { if (model) render(); });
  }

  prompt.addEventListener("input", use);
  run.addEventListener("click", use);
  again.addEventListener("click", function () {
    check();
    goodSeed = goodSeed >= 4294967295 ? 0 : goodSeed + 1;
    seed.set(String(goodSeed));
    seedMessage.textContent = "";
    use();
  });

  figure.appendChild(el("p", { "class": "rw-title", text: d.title }));
  figure.appendChild(el("div", { "class": "rw-prompt" }, [
    el("label", { "for": promptId, text: "prompt" }), prompt]));
  figure.appendChild(message);
  figure.appendChild(note);
  figure.appendChild(el("div", { "class": "rw-controls" }, [temperature.root, length.root]));
  figure.appendChild(el("div", { "class": "rw-actions" }, [seed.root, again, run]));
  figure.appendChild(seedMessage);
  figure.appendChild(status);
  figure.appendChild(results);
  figure.appendChild(el("figcaption", { html: d.caption }));
  figure.setAttribute("data-model", "waiting");
  announce = kit.live(figure);
});
