/* Search on demand: the search index and its worker load when a reader first reaches
   for search, not with every page.

   Material for MkDocs starts its search worker and fetches search/search_index.json as
   soon as a page opens, which on this site is a fifth of a chapter's first load. This
   script, loaded just before Material's bundle (overrides/main.html), holds both back: the
   worker is created, and the index fetched, at the first sign of search (focus on the
   search box, a click on the search button, or one of Material's search keys: /, s, f).
   Until then Material talks to a stand-in that queues its messages. Nothing is fetched
   from another host; if this script is absent, search works as Material ships it. */
(function () {
  "use strict";
  var released = false;
  var waiting = [];

  function release() {
    if (released) return;
    released = true;
    waiting.splice(0).forEach(function (start) { start(); });
  }

  var RealWorker = window.Worker;
  window.Worker = function (url, options) {
    if (String(url).indexOf("/workers/search") === -1) return new RealWorker(url, options);
    var stand = new EventTarget();
    var real = null;
    var queue = [];
    function start() {
      real = new RealWorker(url, options);
      real.addEventListener("message", function (event) {
        stand.dispatchEvent(new MessageEvent("message", { data: event.data }));
      });
      queue.splice(0).forEach(function (message) { real.postMessage(message); });
    }
    stand.postMessage = function (message) { real ? real.postMessage(message) : queue.push(message); };
    stand.terminate = function () { if (real) real.terminate(); };
    if (released) start(); else waiting.push(start);
    return stand;
  };

  // Material fetches the index with XMLHttpRequest: its send() waits for the release.
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    this.searchIndex = String(url).indexOf("search/search_index.json") !== -1;
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    var request = this, args = arguments;
    if (request.searchIndex && !released) {
      waiting.push(function () { send.apply(request, args); });
      return undefined;
    }
    return send.apply(this, args);
  };

  document.addEventListener("focusin", function (event) {
    if (event.target.closest && event.target.closest(".md-search")) release();
  }, true);
  document.addEventListener("click", function (event) {
    if (event.target.closest && event.target.closest('label[for="__search"], .md-search')) release();
  }, true);
  document.addEventListener("keydown", function (event) {
    var editing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement && document.activeElement.tagName);
    if (!editing && ["/", "s", "f"].indexOf(event.key) !== -1) release();
  }, true);
  document.addEventListener("change", function (event) {
    if (event.target.id === "__search") release();
  }, true);
  if (/[?&]q=/.test(location.search)) release();  // a search link: the results at once
})();
