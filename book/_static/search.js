// The book's search page (Sphinx's searchtools.js reads the Scorer below).
// - API entries rank below the pages' own hits, and a function's parameters are not hits;
// - a page found by a heading is not listed a second time for its text, nor as
//   "page > heading" when the heading is the page's title;
// - opened from disk (file://) a page cannot be fetched for an excerpt: results show titles,
//   and one note says how to get excerpts (`make serve`).

// Sphinx's default scores; an API entry (a result with a description) ranks below a page.
var Scorer = {
  objNameMatch: 11,
  objPartialMatch: 6,
  objPrio: { 0: 15, 1: 5, 2: -5 },
  objPrioDefault: 0,
  title: 15,
  partialTitle: 7,
  term: 5,
  partialTerm: 2,
  score: (result) => {
    asPage(result);
    return result[3] ? result[4] - 30 : result[4];
  },
};

// A page found by its own first heading ("6. False sharing > False sharing") is listed as the
// page itself, so it is one hit with the page's text search (Sphinx drops equal results).
// Scorer.score is the only hook Sphinx calls on each result, so the change is made there.
function asPage(result) {
  const parts = result[1].split(" > ");
  if (parts.length !== 2) return;
  const page = parts[0].replace(/<[^>]*>/g, "").replace(/^[\d.]+\s+/, "").trim();
  if (page === parts[1].trim()) {
    result[1] = parts[0];
    result[2] = "";
  }
}

(function () {
  "use strict";
  const fromDisk = location.protocol === "file:";
  if (fromDisk && typeof DOCUMENTATION_OPTIONS !== "undefined") DOCUMENTATION_OPTIONS.SHOW_SEARCH_SUMMARY = false;

  function init() {
    const results = document.getElementById("search-results");
    if (!results || typeof Search === "undefined") return;
    if (fromDisk && !document.querySelector(".cb-search-note")) {
      const note = document.createElement("p");
      note.className = "cb-search-note";
      note.innerHTML = "This book is open from disk, so results show page titles without excerpts. " +
        "For excerpts, run <code>make serve</code> in the repository and search at the address it prints.";
      results.parentNode.insertBefore(note, results);
    }
    let query = "";
    const query0 = Search.query;
    Search.query = (q) => { query = q.toLowerCase().trim(); return query0(q); };
    const objects0 = Search.performObjectSearch;
    Search.performObjectSearch = (...args) =>
      objects0(...args).filter((r) => !/parameter/.test(r[3] || ""));
    const terms0 = Search.performTermsSearch;
    Search.performTermsSearch = (...args) => {
      // Pages that a heading or a glossary entry already found (Sphinx lists those, with
      // their anchor, by the same rule).
      const index = Search._index, titled = new Set();
      for (const entries of [index.alltitles || {}, index.indexentries || {}]) {
        for (const [title, found] of Object.entries(entries)) {
          if (title.toLowerCase().includes(query) && query.length >= title.length / 2) {
            found.forEach(([file]) => titled.add(index.docnames[file]));
          }
        }
      }
      return terms0(...args).filter((r) => !titled.has(r[0]));
    };
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
