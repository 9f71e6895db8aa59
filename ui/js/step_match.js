// Step-match study: the keys of ui/kit/keymap.py ("Step-match study"): m / n choose match / no match (by
// clicking the radio, so Gradio sends it as a click), s or Ctrl+Enter saves, x skips. Acts only while the
// panel is visible and focus is not in a text field.
(() => {
  "use strict";
  const { shown, inTextField, press } = window.stepgateKeys;
  const choose = (value) => {
    const radio = document.querySelector(`#sm-choice input[type="radio"][value="${value}"]`);
    if (radio) radio.click();
  };
  document.addEventListener("keydown", (event) => {
    const root = document.getElementById("sm-panel");
    if (!shown(root) || event.defaultPrevented || event.altKey || event.metaKey) return;
    if (event.isComposing || inTextField(event.target)) return;
    if (event.ctrlKey) {  // Ctrl+Enter saves, as in every annotation panel
      if (event.key === "Enter") { event.preventDefault(); press("sm-save"); }
      return;
    }
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
