// Step-match study: m / n choose match / no match (by clicking the radio, so Gradio sends it as a
// click), s saves, x skips. Acts only while the panel is visible and focus is not in a text field.
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
  const choose = (value) => {
    const radio = document.querySelector(`#sm-choice input[type="radio"][value="${value}"]`);
    if (radio) radio.click();
  };
  document.addEventListener("keydown", (event) => {
    const root = document.getElementById("sm-panel");
    if (!shown(root) || event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
    if (event.isComposing || inTextField(event.target)) return;
    const actions = {
      m: () => choose("match"), n: () => choose("no_match"), s: () => press("sm-save"), x: () => press("sm-skip"),
    };
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (Object.hasOwn(actions, key)) {
      event.preventDefault();
      actions[key]();
    }
  });
})();
