/* numpy's random numbers, for the pages that draw what a script draws: chapter 14's text
   generator (textgen.js; widgets.js loads this file with it) and the trainer's worker
   (gru-train.js, importScripts). A plain script: it defines self.RWRandom.

   numpy.random.default_rng(seed) is PCG64 (pcg64.h, XSL-RR output) seeded by
   SeedSequence (bit_generator.pyx), which hashes the seed's 32-bit words into the
   128-bit state and increment. From a generator:
     random()          the top 53 bits of the next 64-bit output over 2**53 (next_double)
     permutation(n)    np.arange(n) shuffled as Generator.shuffle does: for i = n-1 .. 1,
                       swap i with random_interval(i) (distributions.c), which masks 32-bit
                       outputs (next_uint32: the two halves of a 64-bit one, low first)
                       and rejects values above i
   fromState(s) continues a generator from numpy's bit_generator.state (a script can
   export it); seeded([w0, w1, ...]) is default_rng of those words ([seed] or [seed, k]:
   each below 2**32). */
(function (root) {
  "use strict";
  function mul32(a, b) { return Math.imul(a, b) >>> 0; }

  function seedWords(entropy, n) {  // SeedSequence(entropy).generate_state(n), entropy of at most 4 words
    var h = 0x43b0d7e5, pool = [], i, j, out = [], g = 0x8b51f9dd, v;
    function hashmix(x) {
      x = (x ^ h) >>> 0; h = mul32(h, 0x931e8875); x = mul32(x, h); return (x ^ (x >>> 16)) >>> 0;
    }
    function mix(x, y) {
      var r = (mul32(0xca01f9dd, x) - mul32(0x4973f715, y)) >>> 0; return (r ^ (r >>> 16)) >>> 0;
    }
    for (i = 0; i < 4; i++) pool.push(hashmix(i < entropy.length ? entropy[i] >>> 0 : 0));
    for (i = 0; i < 4; i++) for (j = 0; j < 4; j++) if (i !== j) pool[j] = mix(pool[j], hashmix(pool[i]));
    for (i = 0; i < n; i++) {
      v = (pool[i % 4] ^ g) >>> 0; g = mul32(g, 0x58f38ded); v = mul32(v, g); out.push((v ^ (v >>> 16)) >>> 0);
    }
    return out;
  }

  var B = function (n) { return BigInt(n); };
  var M128 = (B(1) << B(128)) - B(1), M64 = (B(1) << B(64)) - B(1), M32 = B(0xffffffff);
  var MULT = B("0x2360ED051FC65DA44385DF649FCCF645");

  function Generator(state, inc, hasUint32, uinteger) {
    var buffered = hasUint32 ? uinteger >>> 0 : null;
    function next64() {  // pcg_setseq_128_xsl_rr_64_random_r: advance, then output
      state = (state * MULT + inc) & M128;
      var x = ((state >> B(64)) ^ state) & M64, r = state >> B(122);
      return ((x >> r) | (x << ((B(64) - r) & B(63)))) & M64;
    }
    function next32() {
      if (buffered !== null) { var u = buffered; buffered = null; return u; }
      var x = next64();
      buffered = Number(x >> B(32));
      return Number(x & M32);
    }
    function interval(max) {  // random_interval(max) for max < 2**32: uniform on 0 .. max
      if (max === 0) return 0;
      var mask = max, v;
      mask |= mask >>> 1; mask |= mask >>> 2; mask |= mask >>> 4; mask |= mask >>> 8; mask |= mask >>> 16;
      mask >>>= 0;
      while ((v = (next32() & mask) >>> 0) > max) { /* rejected */ }
      return v;
    }
    return {
      random: function () { return Number(next64() >> B(11)) / 9007199254740992; },
      permutation: function (n) {
        var a = new Int32Array(n), i, j, t;
        for (i = 0; i < n; i++) a[i] = i;
        for (i = n - 1; i >= 1; i--) { j = interval(i); t = a[i]; a[i] = a[j]; a[j] = t; }
        return a;
      }
    };
  }

  function seeded(entropy) {  // default_rng(entropy): PCG64's seeding from 8 words
    var w = seedWords(entropy, 8).map(B);
    var v = [0, 1, 2, 3].map(function (k) { return w[2 * k] | (w[2 * k + 1] << B(32)); });
    var inc = ((((v[2] << B(64)) | v[3]) << B(1)) | B(1)) & M128;
    var state = (inc + ((v[0] << B(64)) | v[1])) & M128;  // state 0 advanced once, plus the seed
    state = (state * MULT + inc) & M128;                 // and advanced again
    return Generator(state, inc, false, 0);
  }

  function fromState(s) {  // numpy's bit_generator.state: {state, inc} as decimal text
    return Generator(B(s.state), B(s.inc), s.has_uint32, s.uinteger);
  }

  root.RWRandom = { seeded: seeded, fromState: fromState };
})(typeof self !== "undefined" ? self : globalThis);
