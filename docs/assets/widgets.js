/* Interactive figures (docs/building.md): each <div class="rw-widget" data-widget="KIND"
   data-src="DATA.json"> gets widgets/core.js, kit.js, widgets.css, KIND.js and its data when it
   nears the screen (watched from the page's load on), then RW.mount builds it there.
   Without JavaScript: the page as built. */
(function () {
  "use strict";
  var hosts = document.querySelectorAll(".rw-widget[data-widget][data-src]");
  if (!hosts.length || !window.fetch) return;
  var base = new URL("widgets/", document.currentScript.src), loading = {};
  var NEEDS = { textgen: ["numpy-random.js"] };  // what a kind needs besides the kit

  function load(file) {  // a script or style sheet of widgets/, once per page
    return loading[file] || (loading[file] = new Promise(function (done, fail) {
      var css = /\.css$/.test(file), el = document.createElement(css ? "link" : "script");
      el.onload = done;
      el.onerror = fail;
      if (css) { el.rel = "stylesheet"; el.href = new URL(file, base); } else el.src = new URL(file, base);
      document.head.appendChild(el);
    }));
  }

  function start(host) {
    var kind = host.getAttribute("data-widget");
    host.setAttribute("data-state", "loading");  // then "ready", or "failed"
    var data = fetch(host.getAttribute("data-src")).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.json();
    });
    Promise.all([load("core.js").then(function () { return load("kit.js"); }), load("widgets.css")])
      .then(function () { return Promise.all((NEEDS[kind] || []).map(load)); })
      .then(function () { return Promise.all([load(kind + ".js"), data]); })
      .then(function (got) { window.RW.mount(kind, host, got[1]); })
      .catch(function () { host.setAttribute("data-state", "failed"); });  // the page stays as built
  }

  function watch() {  // after the page's own load: its layout has settled, its files came first
    if (!window.IntersectionObserver) return hosts.forEach(start);
    var near = new IntersectionObserver(function (entries) {
      entries.forEach(function (e) {
        if (e.isIntersecting) { near.unobserve(e.target); start(e.target); }
      });
    }, { rootMargin: "600px 0px" });
    hosts.forEach(function (host) { near.observe(host); });
  }
  if (document.readyState === "complete") watch(); else window.addEventListener("load", watch);
})();
