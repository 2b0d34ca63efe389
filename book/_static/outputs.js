// On a narrow screen an output block wider than the column scrolls in its own frame; a button
// above it wraps its lines instead, so it reads without a sideways swipe (a table's columns
// then break, so the button puts them back too).
(function () {
  "use strict";
  const narrow = window.matchMedia("(max-width: 40em)");

  function offer(pre) {
    if (pre.dataset.cbWrap || pre.scrollWidth <= pre.clientWidth + 1) return;
    pre.dataset.cbWrap = "1";
    const button = document.createElement("button");
    button.type = "button";
    button.className = "cb-wrap";
    button.setAttribute("aria-pressed", "false");
    button.textContent = "Wrap the lines";
    button.addEventListener("click", () => {
      const wrapped = pre.classList.toggle("cb-wrapped");
      button.setAttribute("aria-pressed", String(wrapped));
      button.textContent = wrapped ? "Keep the columns" : "Wrap the lines";
    });
    pre.parentNode.insertBefore(button, pre);
  }

  function offerAll() {
    if (!narrow.matches) return;
    document.querySelectorAll("article .program-output pre").forEach((pre) => {
      if (pre.getClientRects().length) offer(pre);
    });
  }

  window.cachebookOfferWrap = offerAll;

  function start() {
    offerAll();
    // A folded output is measured when it is opened.
    document.addEventListener("toggle", offerAll, true);
    narrow.addEventListener("change", offerAll);
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
