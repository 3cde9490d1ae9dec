// memd ui: the page works without this file; it asks before forgetting, copies the context
// block, closes a message, and keeps what a link or a change scrolls to clear of the sticky bar.
// Loaded from this origin only (the content security policy forbids inline code).
"use strict";
function measureSticky() {
  const bar = document.getElementById("sticky");
  if (bar) {
    document.documentElement.style.setProperty("--sticky-h", `${bar.offsetHeight}px`);
  }
}
function showTarget() {
  const id = decodeURIComponent(window.location.hash.slice(1));
  const target = id && document.getElementById(id);
  if (!target) return;
  for (let d = target.closest("details"); d; d = d.parentElement.closest("details")) {
    d.open = true;
  }
  target.scrollIntoView({ block: "start" });
}
measureSticky();
showTarget();
window.addEventListener("resize", measureSticky);
window.addEventListener("hashchange", showTarget);
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-dismiss]");
  if (!button) return;
  const box = document.getElementById(button.getAttribute("data-dismiss"));
  if (box) box.remove();
  measureSticky();
});
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
