// What the book's widgets share (stepper.js, stepper_live.js, playground.js, questions.js), loaded
// before them.
(function () {
  "use strict";

  // A new element: attrs is its class name, or an object of its attributes; text, when given, its text.
  window.cachebookEl = function (tag, attrs, text) {
    const e = document.createElement(tag);
    if (typeof attrs === "string") {
      if (attrs) e.className = attrs;
    } else {
      for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    }
    if (text !== undefined) e.textContent = text;
    return e;
  };
})();
