// What every panel's keys share, in one place: whether an element is on screen, whether focus is in a
// text field (where a letter is typed, not a command), pressing one of the panel's buttons as a click
// would, and opening or closing an accordion. Loaded before the panels' scripts (ui/app.py).
(() => {
  "use strict";
  if (window.stepgateKeys) return;
  const shown = (el) => !!el && el.getClientRects().length > 0;
  const inTextField = (el) => !!el && (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT"
    || (el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(el.type)));
  const press = (id) => {
    const el = document.getElementById(id);
    const button = el && (el.tagName === "BUTTON" ? el : el.querySelector("button"));
    if (button && !button.disabled) button.click();
  };
  const toggleAccordion = (id) => {
    const label = document.querySelector(`#${id} > button, #${id} .label-wrap`);
    if (label) label.click();
  };
  window.stepgateKeys = Object.freeze({ shown, inTextField, press, toggleAccordion });
})();
