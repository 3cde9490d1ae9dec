// memd ui: the page works without this file; it only asks before forgetting and copies the
// context block. Loaded from this origin only (the content security policy forbids inline code).
"use strict";
document.addEventListener("submit", (event) => {
  const form = event.target;
  const question = form.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const block = document.getElementById(button.getAttribute("data-copy"));
  if (block && navigator.clipboard) {
    navigator.clipboard.writeText(block.textContent).then(() => {
      button.textContent = "copied";
    });
  }
});
