/* gru.py's training of its GRU, in float64, for chapter 14's trainer (trainer.js runs it
   in a Web Worker, so that the page never waits for it; Node can require it for tests).
   Step for step the script's train_updates(): the windows of make_dataset, the batches of
   batches() (numpy's permutation, numpy-random.js, continuing the generator that drew the
   initial weights), gru_step and loss_and_grads forward and backward, clip_gradients,
   SGD; every `every` updates, update_row: training and validation perplexity and the
   samples of predict(). Parameters are flat Float64Arrays in gru.py's stacked layout
   (C order): W_x (3, V, h) = [W_xz, W_xr, W_xh], W_h (3, h, h), b (3, h), W_hq (h, V),
   b_q (V). The arithmetic is the script's in the same order of operations; only the
   order of some sums differs (numpy's BLAS and pairwise sums), which is what the browser
   test measures. */
(function (root) {
  "use strict";
  var NAMES = ["W_x", "W_h", "b", "W_hq", "b_q"];
  var MAX_LOSS = 700;

  var sigmoid = function (a) { return root.RWCore.sigmoid(a); };

  function shapes(V, h) {
    return { W_x: [3, V, h], W_h: [3, h, h], b: [3, h], W_hq: [h, V], b_q: [V] };
  }

  function decodeParams(base64, V, h) {  // InitRecord.float64: the parameters, little-endian
    var bin = typeof atob === "function" ? atob(base64) : Buffer.from(base64, "base64").toString("binary");
    var bytes = new Uint8Array(bin.length), i;
    for (i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    var all = new Float64Array(bytes.buffer), params = {}, at = 0, s = shapes(V, h);
    NAMES.forEach(function (name) {
      var size = s[name].reduce(function (a, b) { return a * b; }, 1);
      params[name] = all.slice(at, at + size);
      at += size;
    });
    return params;
  }

  // One GRU: the arrays of a forward and backward pass over B windows of T characters,
  // made once for the largest batch and reused (nothing is allocated per update).
  function Model(params, V, h) {
    this.p = params; this.V = V; this.h = h;
    this.g = {};
    for (var name in params) this.g[name] = new Float64Array(params[name].length);
    this.table = new Float64Array(3 * V * h);
    this.cap = 0;
  }

  Model.prototype.reserve = function (T, B) {
    var n = T * B, h = this.h;
    if (n <= this.cap) return;
    this.cap = n;
    this.Hs = new Float64Array(n * h); this.Z = new Float64Array(n * h); this.R = new Float64Array(n * h);
    this.Ht = new Float64Array(n * h); this.S = new Float64Array(n * this.V); this.sums = new Float64Array(n);
    this.dH = new Float64Array(n * h); this.zeros = new Float64Array(B * h);
    this.dstate = new Float64Array(B * h); this.dA = new Float64Array(3 * B * h); this.dRH = new Float64Array(B * h);
    this.acc = new Float64Array(3 * h * h);
  };

  Model.prototype.makeTable = function () {  // row v of gate g: W_x[g][v] + b[g], as forward() adds them
    var V = this.V, h = this.h, W_x = this.p.W_x, b = this.p.b, T_ = this.table;
    for (var g = 0; g < 3; g++) for (var v = 0; v < V; v++) for (var j = 0; j < h; j++) {
      T_[(g * V + v) * h + j] = W_x[(g * V + v) * h + j] + b[g * h + j];
    }
  };

  // gru_step for one example: H_prev (at hp in Hprev) and input x; writes Z, R, H~ and H at o.
  Model.prototype.step = function (Hprev, hp, x, Hout, Z, R, Ht, o, RH) {
    var h = this.h, V = this.V, W_h = this.p.W_h, tab = this.table, i, j, a, hi;
    var az = (0 * V + x) * h, ar = (1 * V + x) * h, ah = (2 * V + x) * h, hh = h * h;
    for (j = 0; j < h; j++) { Z[o + j] = 0; R[o + j] = 0; Ht[o + j] = 0; }
    for (i = 0; i < h; i++) {  // H_prev [W_hz, W_hr], summed over i in order
      hi = Hprev[hp + i];
      var rz = i * h, rr = hh + i * h;
      for (j = 0; j < h; j++) { Z[o + j] += hi * W_h[rz + j]; R[o + j] += hi * W_h[rr + j]; }
    }
    for (j = 0; j < h; j++) {
      Z[o + j] = sigmoid(tab[az + j] + Z[o + j]);
      R[o + j] = sigmoid(tab[ar + j] + R[o + j]);
      RH[j] = R[o + j] * Hprev[hp + j];
    }
    for (i = 0; i < h; i++) {  // (R * H_prev) W_hh
      a = RH[i];
      var rh = 2 * hh + i * h;
      for (j = 0; j < h; j++) Ht[o + j] += a * W_h[rh + j];
    }
    for (j = 0; j < h; j++) {
      Ht[o + j] = Math.tanh(tab[ah + j] + Ht[o + j]);
      Hout[o + j] = Z[o + j] * Hprev[hp + j] + (1 - Z[o + j]) * Ht[o + j];
    }
  };

  // loss_and_grads: X, Y (Int32Array, window b at b*T), B windows from start at rows[k].
  // Returns the mean cross-entropy; with grads, fills this.g with its gradient.
  Model.prototype.loss = function (X, Y, rows, B, T, grads) {
    this.reserve(T, B);
    this.makeTable();
    var h = this.h, V = this.V, p = this.p, n = T * B, t, b, i, j, v, r;
    var Hs = this.Hs, Z = this.Z, R = this.R, Ht = this.Ht, S = this.S, RH = this.dRH;
    for (t = 0; t < T; t++) for (b = 0; b < B; b++) {  // rows time-major: r = t B + b
      r = t * B + b;
      this.step(t ? Hs : this.zeros, t ? ((t - 1) * B + b) * h : b * h, X[rows[b] * T + t], Hs, Z, R, Ht, r * h, RH);
    }
    var W_hq = p.W_hq, b_q = p.b_q, top = -Infinity, low = Infinity;
    for (r = 0; r < n; r++) {  // the output layer, every step: H W_hq, then + b_q
      var o = r * V;
      for (v = 0; v < V; v++) S[o + v] = 0;
      for (i = 0; i < h; i++) { var hv = Hs[r * h + i], w = i * V; for (v = 0; v < V; v++) S[o + v] += hv * W_hq[w + v]; }
      for (v = 0; v < V; v++) { S[o + v] += b_q[v]; if (S[o + v] > top) top = S[o + v]; if (S[o + v] < low) low = S[o + v]; }
    }
    var sums = this.sums, logSum = 0, picked = 0;
    for (r = 0; r < n; r++) {  // shifted(): by the largest logit of all, or each row's own
      var shift = top;
      if (!(top - low < 80)) { shift = -Infinity; for (v = 0; v < V; v++) shift = Math.max(shift, S[r * V + v]); }
      var sum = 0;
      for (v = 0; v < V; v++) { S[r * V + v] -= shift; sum += Math.exp(S[r * V + v]); }
      sums[r] = sum;
      logSum += Math.log(sum);
      t = (r / B) | 0; b = r - t * B;
      picked += S[r * V + Y[rows[b] * T + t]];
    }
    var loss = (logSum - picked) / n;
    if (grads) this.backward(X, Y, rows, B, T);
    return loss;
  };

  Model.prototype.backward = function (X, Y, rows, B, T) {
    var h = this.h, V = this.V, p = this.p, g = this.g, n = T * B, t, b, i, j, v, r, k;
    var Hs = this.Hs, Z = this.Z, R = this.R, Ht = this.Ht, S = this.S, sums = this.sums, dH = this.dH;
    for (var name in g) g[name].fill(0);
    var W_hq = p.W_hq, gW_hq = g.W_hq, gb_q = g.b_q;
    for (r = 0; r < n; r++) {  // dlogits = (softmax - one_hot(y)) / n, in place of S
      var o = r * V, scale = n * sums[r];
      for (v = 0; v < V; v++) S[o + v] = Math.exp(S[o + v]) / scale;
      t = (r / B) | 0; b = r - t * B;
      S[o + Y[rows[b] * T + t]] -= 1 / n;
    }
    for (r = 0; r < n; r++) {  // W_hq: H^T dlogits; b_q: its column sums (each over r in order)
      var o2 = r * V, s;
      for (i = 0; i < h; i++) {
        var hr = Hs[r * h + i], w2 = i * V;
        for (v = 0; v < V; v++) gW_hq[w2 + v] += hr * S[o2 + v];
      }
      for (v = 0; v < V; v++) gb_q[v] += S[o2 + v];
    }
    for (r = 0; r < n; r++) for (i = 0; i < h; i++) {  // dH = dlogits W_hq^T
      s = 0;
      for (v = 0; v < V; v++) s += S[r * V + v] * W_hq[i * V + v];
      dH[r * h + i] = s;
    }
    var W_h = p.W_h, gW_h = g.W_h, gW_x = g.W_x, hh = h * h;
    var dstate = this.dstate, dA = this.dA, dRH = this.dRH, acc = this.acc, zeros = this.zeros;
    dstate.fill(0);
    for (t = T - 1; t >= 0; t--) {  // backpropagation through time
      var Hp = t ? Hs : zeros;
      for (b = 0; b < B; b++) {
        var at = (t * B + b) * h, hp = t ? ((t - 1) * B + b) * h : b * h, d = b * h;
        for (j = 0; j < h; j++) dstate[d + j] += dH[at + j];  // H_t feeds the output and step t + 1
        var dz = d, dr = B * h + d, dh = 2 * B * h + d;
        for (j = 0; j < h; j++) {
          var dHj = dstate[d + j], zj = Z[at + j], htj = Ht[at + j];
          dA[dh + j] = dHj * (1 - zj) * (1 - htj * htj);
          dA[dz + j] = dHj * (Hp[hp + j] - htj) * zj * (1 - zj);
        }
        for (i = 0; i < h; i++) {  // dL/d(R * H_prev) = dA_h W_hh^T
          s = 0;
          for (j = 0; j < h; j++) s += dA[dh + j] * W_h[2 * hh + i * h + j];
          dRH[d + i] = s;
        }
        for (j = 0; j < h; j++) dA[dr + j] = dRH[d + j] * Hp[hp + j] * R[at + j] * (1 - R[at + j]);
      }
      acc.fill(0);  // this step's dW_hz, dW_hr, dW_hh, summed over the batch, then added
      for (b = 0; b < B; b++) {
        at = (t * B + b) * h; hp = t ? ((t - 1) * B + b) * h : b * h; d = b * h;
        for (i = 0; i < h; i++) {
          var x0 = Hp[hp + i], x2 = R[at + i] * Hp[hp + i];
          for (j = 0; j < h; j++) {
            acc[i * h + j] += x0 * dA[d + j];
            acc[hh + i * h + j] += x0 * dA[B * h + d + j];
            acc[2 * hh + i * h + j] += x2 * dA[2 * B * h + d + j];
          }
        }
      }
      for (k = 0; k < 3 * hh; k++) gW_h[k] += acc[k];
      for (b = 0; b < B; b++) {
        at = (t * B + b) * h; hp = t ? ((t - 1) * B + b) * h : b * h; d = b * h;
        var x = X[rows[b] * T + t];
        for (var gate = 0; gate < 3; gate++) {  // each example's row of dA, added to its character's row
          var row = (gate * V + x) * h, src = gate * B * h + d;
          for (j = 0; j < h; j++) gW_x[row + j] += dA[src + j];
        }
        for (i = 0; i < h; i++) {  // dH_prev: directly, through R H_prev, through the two gates
          var s1 = 0, s2 = 0;
          for (j = 0; j < h; j++) { s1 += dA[d + j] * W_h[i * h + j]; s2 += dA[B * h + d + j] * W_h[hh + i * h + j]; }
          dRH[d + i] = dstate[d + i] * Z[at + i] + dRH[d + i] * R[at + i] + s1 + s2;
        }
      }
      for (k = 0; k < B * h; k++) dstate[k] = dRH[k];
    }
    var gb = g.b;  // b: the sum of W_x's gradient over the characters
    for (var gg = 0; gg < 3; gg++) for (j = 0; j < h; j++) {
      s = 0;
      for (v = 0; v < V; v++) s += gW_x[(gg * V + v) * h + j];
      gb[gg * h + j] = s;
    }
  };

  // clip_gradients, then SGD; the norm before clipping.
  Model.prototype.update = function (lr, clip) {
    var g = this.g, p = this.p, total = 0, name, a, k;
    NAMES.forEach(function (name) { var s = 0, a = g[name]; for (var k = 0; k < a.length; k++) s += a[k] * a[k]; total += s; });
    var norm = Math.sqrt(total);
    for (name in g) {
      a = g[name];
      if (norm > clip) { var f = clip / norm; for (k = 0; k < a.length; k++) a[k] *= f; }
      var q = p[name];
      for (k = 0; k < a.length; k++) q[k] -= lr * a[k];
    }
    return norm;
  };

  // predict(): warm up on the prefix, then n characters, greedy (temperature null) or drawn.
  Model.prototype.predict = function (prefixIds, n, temperature, rng, unk) {
    var h = this.h, V = this.V, p = this.p, ids = prefixIds.slice(), k, v, i;
    this.makeTable();
    var H = new Float64Array(h), next = new Float64Array(h), Z = new Float64Array(h), R = new Float64Array(h),
        Ht = new Float64Array(h), RH = new Float64Array(h), logits = new Float64Array(V);
    function advance(self, x) { self.step(H, 0, x, next, Z, R, Ht, 0, RH); H.set(next); }
    for (k = 0; k < ids.length - 1; k++) advance(this, ids[k]);
    for (k = 0; k < n; k++) {
      advance(this, ids[ids.length - 1]);
      for (v = 0; v < V; v++) logits[v] = 0;
      for (i = 0; i < h; i++) for (v = 0; v < V; v++) logits[v] += H[i] * p.W_hq[i * V + v];
      var top = -Infinity, best = 0;
      for (v = 0; v < V; v++) { logits[v] += p.b_q[v]; if (logits[v] > top) { top = logits[v]; best = v; } }
      if (temperature === null) { ids.push(best); continue; }
      var cum = [], sum = 0;
      for (v = 0; v < V; v++) { sum += v === unk ? 0 : Math.exp((logits[v] - top) / temperature); cum.push(sum); }
      var u = rng.random() * sum, at = 0;
      while (at < V && cum[at] <= u) at++;  // searchsorted(cumulative, u, side='right')
      ids.push(Math.min(at, V - 1));
    }
    return ids;
  };

  // evaluate(): the mean loss over windows from..from+count of X, Y, in batches of B.
  // compute_reach of gru.py for this GRU: for each character t of ids but the last, read
  // from a zero state, the norm of the gradient of log P(ids[t + 1]) with respect to the
  // one-hot input k characters back, k = 0 .. back - 1 (fewer at the start). The script
  // carries every prediction back at once, a row each; here one prediction at a time.
  Model.prototype.reach = function (ids, back) {
    this.makeTable();
    var h = this.h, V = this.V, p = this.p, n = ids.length - 1, hh = h * h, t, k, i, j, v, g;
    var Hs = new Float64Array(n * h), Z = new Float64Array(n * h), R = new Float64Array(n * h);
    var Ht = new Float64Array(n * h), RH = new Float64Array(h), zeros = new Float64Array(h);
    for (t = 0; t < n; t++) this.step(t ? Hs : zeros, t ? (t - 1) * h : 0, ids[t], Hs, Z, R, Ht, t * h, RH);
    var W_h = p.W_h, W_x = p.W_x, W_hq = p.W_hq, P = new Float64Array(V);
    var dH = new Float64Array(h), dH_prev = new Float64Array(h), dA = new Float64Array(3 * h);
    var dRH = new Float64Array(h), out = [];
    for (t = 0; t < n; t++) {
      var top = -Infinity, sum = 0, s, o;
      for (v = 0; v < V; v++) {  // the logits of prediction t, then its softmax P
        for (s = p.b_q[v], i = 0; i < h; i++) s += Hs[t * h + i] * W_hq[i * V + v];
        P[v] = s;
        if (s > top) top = s;
      }
      for (v = 0; v < V; v++) { P[v] = Math.exp(P[v] - top); sum += P[v]; }
      for (i = 0; i < h; i++) {  // d log P(y) / d H_t = (onehot(y) - P) W_hq^T
        for (s = 0, v = 0; v < V; v++) s += ((v === ids[t + 1] ? 1 : 0) - P[v] / sum) * W_hq[i * V + v];
        dH[i] = s;
      }
      var row = [];
      for (k = 0; k < Math.min(t + 1, back); k++) {  // gru_step_backward at step t - k
        var at = t - k, H_prev = at ? Hs : zeros, hp = at ? (at - 1) * h : 0;
        o = at * h;
        for (j = 0; j < h; j++) {
          dA[2 * h + j] = dH[j] * (1 - Z[o + j]) * (1 - Ht[o + j] * Ht[o + j]);           // dA_h
          dA[j] = dH[j] * (H_prev[hp + j] - Ht[o + j]) * Z[o + j] * (1 - Z[o + j]);       // dA_z
        }
        for (i = 0; i < h; i++) {  // dRH = dA_h W_hh^T, then dA_r
          for (s = 0, j = 0; j < h; j++) s += dA[2 * h + j] * W_h[2 * hh + i * h + j];
          dRH[i] = s;
          dA[h + i] = s * H_prev[hp + i] * R[o + i] * (1 - R[o + i]);
        }
        var norm = 0;  // d/dX_(t-k) = sum over the gates of dA_g W_xg^T
        for (v = 0; v < V; v++) {
          for (s = 0, g = 0; g < 3; g++) for (j = 0; j < h; j++) s += dA[g * h + j] * W_x[(g * V + v) * h + j];
          norm += s * s;
        }
        row.push(Math.sqrt(norm));
        for (i = 0; i < h; i++) {  // dH_prev: directly, through R H_prev, and through both gates
          for (s = dH[i] * Z[o + i] + dRH[i] * R[o + i], j = 0; j < h; j++) {
            s += dA[j] * W_h[i * h + j] + dA[h + j] * W_h[hh + i * h + j];
          }
          dH_prev[i] = s;
        }
        dH.set(dH_prev);
      }
      out.push(row);
    }
    return out;
  };

  Model.prototype.evaluate = function (X, Y, from, count, B, T) {
    var total = 0;
    for (var i = 0; i < count; i += B) {
      var m = Math.min(B, count - i), rows = new Int32Array(m);
      for (var k = 0; k < m; k++) rows[k] = from + i + k;
      total += this.loss(X, Y, rows, m, T, false) * m;
    }
    return total / count;
  };

  function perplexity(loss) { return Math.exp(Math.min(loss, MAX_LOSS)); }

  // A run of train_updates(): c = {hidden, lr, clip, batch, updates, numTrain, numVal,
  // T, seed, every, prefix (ids), numPreds, temperatures, unk, V}; ids: the token ids of
  // the text (make_dataset's windows start at every position); init: an InitRecord.
  function Run(c, ids, init) {
    var T = c.T, n = c.numTrain + c.numVal, k, t;
    this.c = c;
    this.X = new Int32Array(n * T); this.Y = new Int32Array(n * T);
    for (k = 0; k < n; k++) for (t = 0; t < T; t++) { this.X[k * T + t] = ids[k + t]; this.Y[k * T + t] = ids[k + t + 1]; }
    this.model = new Model(decodeParams(init.float64, c.V, c.hidden), c.V, c.hidden);
    this.rng = root.RWRandom.fromState(init);
    this.u = 0; this.epoch = 0; this.order = null; this.at = c.numTrain;
    this.losses = []; this.norms = [];
  }

  Run.prototype.nextBatch = function () {  // batches(): a new permutation each epoch
    var c = this.c;
    if (this.at >= c.numTrain) { this.order = this.rng.permutation(c.numTrain); this.at = 0; this.epoch += 1; }
    var rows = this.order.subarray(this.at, Math.min(this.at + c.batch, c.numTrain));
    this.at += c.batch;
    return rows;
  };

  Run.prototype.step = function () {  // one update: sgd_update; the loss and the norm
    var c = this.c, rows = this.nextBatch(), m = this.model;
    var loss = m.loss(this.X, this.Y, rows, rows.length, c.T, true), norm = m.update(c.lr, c.clip);
    this.u += 1;
    if (!(loss <= MAX_LOSS && isFinite(norm))) {
      throw new Error("training diverged at update " + this.u + ": " +
                      (loss <= MAX_LOSS ? "the gradient is not finite" : "the loss is " + loss.toPrecision(3)) +
                      " (learning rate " + c.lr + "): try a smaller learning rate");
    }
    this.losses.push(loss); this.norms.push(norm);
    return loss;
  };

  Run.prototype.row = function (extraTemperature) {  // update_row(), and a sample at the reader's temperature
    var c = this.c, u = this.u, k = (u - 1) % c.every + 1, m = this.model, i, sum = 0, top = 0;
    for (i = this.losses.length - k; i < this.losses.length; i++) { sum += this.losses[i]; top = Math.max(top, this.norms[i]); }
    var rng = root.RWRandom.seeded([c.seed, u]), texts = [m.predict(c.prefix, c.numPreds, null, null, c.unk)];
    c.temperatures.forEach(function (temp) { texts.push(m.predict(c.prefix, c.numPreds, temp, rng, c.unk)); });
    var row = { update: u, epoch: this.epoch, train_ppl: perplexity(sum / k),
                val_ppl: perplexity(m.evaluate(this.X, this.Y, c.numTrain, c.numVal, c.batch, c.T)),
                max_grad_norm: top, ids: texts };
    if (extraTemperature !== null) {
      row.yours = m.predict(c.prefix, c.numPreds, extraTemperature, root.RWRandom.seeded([c.seed, u]), c.unk);
    }
    return row;
  };

  var api = { Model: Model, Run: Run, decodeParams: decodeParams, perplexity: perplexity, NAMES: NAMES };
  root.GruTrain = api;

  // As a worker: messages from trainer.js. "start" {config, ids, init, temperature};
  // "pause"; "resume"; "temperature" {value}. Posts "losses" {from, losses, norms}
  // about every 100 ms of work, "row" {row, params} every config.every updates, "done",
  // "failed" {message}. And from reach.js: "reach" {id, params, V, h, ids, back}, which
  // it answers with "reach" {id, reach} (Model.reach).
  if (typeof WorkerGlobalScope !== "undefined" && root instanceof WorkerGlobalScope) {
    root.importScripts("core.js", "numpy-random.js");
    var run = null, running = false, temperature = null, sent = 0, timer = null;
    var snapshot = function () {
      var out = {};
      NAMES.forEach(function (name) { out[name] = run.model.p[name].slice(); });
      return out;
    };
    var work = function () {
      timer = null;
      if (!running) return;
      var c = run.c, start = Date.now();
      try {
        while (running && run.u < c.updates && Date.now() - start < 100) {
          run.step();
          if (run.u % c.every === 0 || run.u === c.updates) {
            root.postMessage({ type: "losses", from: sent, losses: run.losses.slice(sent), norms: run.norms.slice(sent) });
            sent = run.u;
            root.postMessage({ type: "row", row: run.row(temperature), params: snapshot() });
          }
        }
      } catch (e) {
        running = false;
        root.postMessage({ type: "failed", message: e.message });
        return;
      }
      if (sent < run.u) {
        root.postMessage({ type: "losses", from: sent, losses: run.losses.slice(sent), norms: run.norms.slice(sent) });
        sent = run.u;
      }
      if (run.u >= c.updates) { running = false; root.postMessage({ type: "done", update: run.u }); return; }
      timer = setTimeout(work, 0);
    };
    root.onmessage = function (e) {
      var m = e.data;
      if (m.type === "start") {
        run = new Run(m.config, m.ids, m.init); temperature = m.temperature; sent = 0; running = true;
        if (!timer) timer = setTimeout(work, 0);
      } else if (m.type === "pause") {
        running = false;
      } else if (m.type === "resume" && run) {
        running = true;
        if (!timer) timer = setTimeout(work, 0);
      } else if (m.type === "temperature") {
        temperature = m.value;
      } else if (m.type === "reach") {  // from reach.js: the reader's GRU, how far back
        var model = new Model(m.params, m.V, m.h);
        root.postMessage({ type: "reach", id: m.id, reach: model.reach(m.ids, m.back) });
      }
    };
  }
  if (typeof module !== "undefined" && module.exports) module.exports = api;
})(typeof self !== "undefined" ? self : globalThis);
