// evledger's pages work without this file; it adds copy buttons to values marked data-copy.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("[data-copy]").forEach(function (target) {
    var text = target.textContent;
    var button = document.createElement("button");
    button.type = "button";
    button.className = "copy";
    button.textContent = "Copy";
    button.setAttribute("aria-label", "Copy " + (target.getAttribute("data-copy-name") || "value"));
    button.addEventListener("click", function () {
      if (!navigator.clipboard) return;
      navigator.clipboard.writeText(text).then(function () {
        button.textContent = "Copied";
      }, function () {
        button.textContent = "Select and copy";
      });
    });
    // Inside a list's or table's cell (the grid of a <dl> has room for nothing between), else
    // after the value.
    if (target.tagName === "DD" || target.tagName === "TD") {
      target.appendChild(button);
    } else {
      target.after(button);
    }
  });
});
