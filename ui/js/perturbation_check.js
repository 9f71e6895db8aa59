// Perturbation check: 1-5 tick or untick the checklist's items in order, s saves, x skips, n / p next /
// previous, g or / jump (Enter opens, Escape leaves the box).
// Acts only while the panel is visible and focus is not in a text field.
(() => {
  "use strict";
  const { shown, inTextField, press } = window.stepgateKeys;
  const toggle = (n) => {
    const boxes = document.querySelectorAll('#pc-checklist input[type="checkbox"]');
    if (boxes[n]) boxes[n].click();
  };
  document.addEventListener("keydown", (event) => {
    const root = document.getElementById("pc-panel");
    if (!shown(root) || event.defaultPrevented || event.altKey || event.metaKey) return;
    if (event.ctrlKey && event.key === "Enter" && !inTextField(event.target)) {
      event.preventDefault();
      press("pc-save");
      return;
    }
    if (event.ctrlKey || event.isComposing) return;
    if (inTextField(event.target)) {
      if (event.key === "Escape" && event.target.closest("#pc-jump")) event.target.blur();
      return;
    }
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    const jump = () => {
      const box = document.querySelector("#pc-jump textarea, #pc-jump input");
      if (box) box.focus();
    };
    const actions = {
      s: () => press("pc-save"), x: () => press("pc-skip"), n: () => press("pc-next"), p: () => press("pc-previous"),
      g: jump, "/": jump,
    };
    if (/^[1-5]$/.test(key)) actions[key] = () => toggle(Number(key) - 1);
    if (Object.hasOwn(actions, key)) {
      event.preventDefault();
      actions[key]();
    }
  });
})();
