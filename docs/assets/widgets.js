/* Interactive figures, loaded on demand (docs/building.md, "Interactive figures").
   A chapter module writes an empty <div class="rw-widget" data-widget="KIND"
   data-src="DATA.json"> into its page; when one first comes near the screen, this loads
   widgets/kit.js and widgets/widgets.css (once), widgets/KIND.js and the data, and mounts
   the widget there. Without JavaScript the page is as built: the figure and the table. */
(function () {
  "use strict";
  var hosts = document.querySelectorAll(".rw-widget[data-widget][data-src]");
  if (!hosts.length || !window.fetch || !window.Promise) return;
  var base = new URL("widgets/", document.currentScript.src);
  var loading = {};

  function load(file) {  // a script or a style sheet of widgets/, once per page
    if (!loading[file]) {
      loading[file] = new Promise(function (done, fail) {
        var css = /\.css$/.test(file);
        var el = document.createElement(css ? "link" : "script");
        el.onload = done;
        el.onerror = fail;
        if (css) { el.rel = "stylesheet"; el.href = new URL(file, base); }
        else { el.src = new URL(file, base); }
        document.head.appendChild(el);
      });
    }
    return loading[file];
  }

  function start(host) {
    var kind = host.getAttribute("data-widget");
    var data = fetch(host.getAttribute("data-src")).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.json();
    });
    Promise.all([load("kit.js"), load("widgets.css")])
      .then(function () { return Promise.all([load(kind + ".js"), data]); })
      .then(function (got) { window.RW.mount(kind, host, got[1]); })
      .catch(function () { host.setAttribute("data-state", "failed"); });  // the page stays as built
  }

  if (!("IntersectionObserver" in window)) { hosts.forEach(start); return; }
  var seen = new IntersectionObserver(function (entries) {
    entries.forEach(function (entry) {
      if (!entry.isIntersecting) return;
      seen.unobserve(entry.target);
      start(entry.target);
    });
  }, { rootMargin: "600px 0px" });  // ready by the time the reader gets there
  hosts.forEach(function (host) { seen.observe(host); });
})();
