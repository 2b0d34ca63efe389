// Loads the book's cache model (book/model: common/src compiled to WebAssembly) for the
// page's live widgets, once, from _static/model/ beside this file. A plain script tag,
// not fetch(): it works from file:// as well as from a server.
(function () {
  "use strict";
  const here = document.currentScript ? document.currentScript.src : "";
  let loading = null;

  window.cachebookModel = function () {
    if (loading) return loading;
    loading = new Promise((resolve, reject) => {
      if (window.CachebookModel) {
        window.CachebookModel.loadModel().then(resolve, reject);
        return;
      }
      const s = document.createElement("script");
      s.src = here.replace(/live\.js(\?.*)?$/, "model/cachebook_model.js");
      s.onload = () => window.CachebookModel.loadModel().then(resolve, reject);
      s.onerror = () => reject(new Error("the model (" + s.src + ") did not load"));
      document.head.appendChild(s);
    });
    return loading;
  };

  // Caches a reader can pick by name: the machines of tests/fixtures/machine and the
  // course notes' small caches. Capacity = sets x ways x lineBytes.
  window.cachebookNamedCaches = [
    { name: "course notes: 4 KiB, 8 sets x 8 ways, 64 B lines", sets: 8, ways: 8, lineBytes: 64 },
    { name: "course notes: fully associative, 4 lines of 64 B", sets: 1, ways: 4, lineBytes: 64 },
    { name: "course notes: fully associative, 32 lines of 64 B", sets: 1, ways: 32, lineBytes: 64 },
    { name: "L1d 32 KiB 8-way, 64 B lines", sets: 64, ways: 8, lineBytes: 64 },
    { name: "L2 512 KiB 8-way, 64 B lines", sets: 1024, ways: 8, lineBytes: 64 },
    { name: "L1d 48 KiB 12-way, 64 B lines", sets: 64, ways: 12, lineBytes: 64 },
    { name: "L2 1 MiB 8-way, 64 B lines", sets: 2048, ways: 8, lineBytes: 64 },
    { name: "L1d 128 KiB 8-way, 128 B lines, as on Apple's M-series", sets: 128, ways: 8, lineBytes: 128 },
    { name: "L2 12 MiB 12-way, 128 B lines, as on Apple's M-series", sets: 8192, ways: 12, lineBytes: 128 },
  ];
})();
