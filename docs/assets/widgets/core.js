/* What the widgets and the trainer's worker share, with no page in it: loaded by
   ../widgets.js before kit.js (kit.core is this) and by gru-train.js's worker. Defines
   self.RWCore: gru.py's sigmoid, 1 / (1 + exp(-a)) as (1 + tanh(a / 2)) / 2, which never
   overflows; gru.py's preprocess (every run of non-letters one space, lower case); a
   character's spoken name ("space", "unknown"); a character between single quotes. */
(function (root) {
  "use strict";
  root.RWCore = {
    sigmoid: function (a) { return 0.5 * (1 + Math.tanh(0.5 * a)); },
    preprocess: function (text) { return text.replace(/[^A-Za-z]+/g, " ").toLowerCase(); },
    charName: function (c) { return c === " " ? "space" : c === "<unk>" ? "unknown" : c; },
    quoted: function (c) { return "\u2018" + c + "\u2019"; }
  };
})(typeof self !== "undefined" ? self : globalThis);
