// Perturbation check: 1-5 tick or untick the checklist's items in order, s saves, x skips.
// Acts only while the panel is visible and focus is not in a text field.
(() => {
  "use strict";
  const shown = (el) => !!el && el.getClientRects().length > 0;
  const inTextField = (el) => !!el && (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT"
    || (el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(el.type)));
  const press = (id) => {
    const el = document.getElementById(id);
    const button = el && (el.tagName === "BUTTON" ? el : el.querySelector("button"));
    if (button && !button.disabled) button.click();
  };
  const toggle = (n) => {
    const boxes = document.querySelectorAll('#pc-checklist input[type="checkbox"]');
    if (boxes[n]) boxes[n].click();
  };
  document.addEventListener("keydown", (event) => {
    const root = document.getElementById("pc-panel");
    if (!shown(root) || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.isComposing || inTextField(event.target)) return;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    const actions = { s: () => press("pc-save"), x: () => press("pc-skip") };
    if (/^[1-5]$/.test(key)) actions[key] = () => toggle(Number(key) - 1);
    if (Object.hasOwn(actions, key)) {
      event.preventDefault();
      actions[key]();
    }
  });
})();
