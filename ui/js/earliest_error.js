// Earliest error panel: click a step to mark it, keyboard shortcuts, and the selected step's highlight.
// The chosen label lives in the panel's radio (#ee-choice): a click or key clicks the radio input for
// that step, so Gradio sends the choice exactly as if the radio had been clicked. Acts only while the
// panel is visible and focus is not in a text field.
(() => {
  "use strict";
  const DIGIT_PAUSE_MS = 800; // "1" then "2" within this pause means step 12
  let cursor = -1;
  let keyboard = false; // the step cursor is drawn only while the keyboard is in use
  let firstStep = null;
  let digits = "";
  let lastDigitAt = 0;

  const panel = () => document.getElementById("ee-panel");
  const { shown, inTextField, press, toggleAccordion } = window.stepgateKeys;
  const steps = () => Array.from(document.querySelectorAll("#ee-steps .ee-step"));
  const positionOf = (el) => {
    const match = /\bee-pos-(\d+)\b/.exec(el.className);
    return match ? Number(match[1]) : null;
  };
  const radioFor = (label) => document.querySelector(`#ee-choice input[type="radio"][value="${label}"]`);
  // The radio holds "All steps are correct" and one choice per step; it is there before the steps render.
  const stepCount = () => Math.max(0, document.querySelectorAll('#ee-choice input[type="radio"]').length - 1);
  const chosen = () => {
    const radio = document.querySelector('#ee-choice input[type="radio"]:checked')
      || document.querySelector('#ee-choice input[type="radio"][aria-checked="true"]');
    return radio ? Number(radio.value) : null;
  };
  const setClass = (el, name, on) => {
    if (el && el.classList.contains(name) !== on) el.classList.toggle(name, on);
  };

  function noticeNewItem(list) {
    if ((list[0] || null) === firstStep) return;
    // A new item (or the first render): start again at the top of its steps.
    firstStep = list[0] || null;
    cursor = -1;
    digits = "";
    const root = panel();
    if (firstStep && root && root.getBoundingClientRect().top < 0) root.scrollIntoView({ block: "start" });
  }

  function sync() {
    const list = steps();
    noticeNewItem(list);
    const label = chosen();
    for (const el of list) {
      const position = positionOf(el);
      setClass(el, "ee-selected", position === label);
      setClass(el, "ee-before", label !== null && (label === -1 || position < label));
      setClass(el, "ee-after", label !== null && label >= 0 && position > label);
      setClass(el, "ee-cursor", keyboard && position === cursor);
      el.setAttribute("aria-pressed", String(position === label));
    }
    setClass(document.getElementById("ee-all-correct"), "ee-on", label === -1);
  }

  function mark(label) {
    noticeNewItem(steps());
    const radio = radioFor(label);
    if (!radio) return;
    if (label >= 0) cursor = label;
    if (!radio.checked) radio.click();
    sync();
    const step = steps().find((el) => positionOf(el) === label);
    if (step) step.scrollIntoView({ block: "nearest" });
  }

  function move(delta) {
    const list = steps();
    noticeNewItem(list);
    if (!list.length) return;
    if (cursor < 0) cursor = delta > 0 ? 0 : list.length - 1;
    else cursor = Math.min(list.length - 1, Math.max(0, cursor + delta));
    sync();
    list[cursor].scrollIntoView({ block: "nearest" });
  }

  function typeDigit(key) {
    noticeNewItem(steps());
    const now = Date.now();
    if (now - lastDigitAt > DIGIT_PAUSE_MS) digits = "";
    lastDigitAt = now;
    if (digits === "" && key === "0") return; // no step 0: "all steps are correct" is a, never a digit
    let number = digits + key;
    if (Number(number) > stepCount()) number = key === "0" ? "" : key;
    digits = number;
    if (digits && Number(digits) <= stepCount()) mark(Number(digits) - 1);
  }

  document.addEventListener("click", (event) => {
    const step = event.target.closest ? event.target.closest("#ee-steps .ee-step") : null;
    if (!step) return;
    if (String(window.getSelection() || "").trim()) return; // selecting text to copy, not marking
    const position = positionOf(step);
    keyboard = false;
    if (position !== null) mark(position);
  });

  document.addEventListener("keydown", (event) => {
    const root = panel();
    if (!shown(root) || event.defaultPrevented || event.altKey || event.isComposing) return;
    const target = event.target;
    if (inTextField(target)) {
      // Leave the jump box and the dataset picker with Enter or Escape, so the keys work again at once.
      if (root.contains(target) && (event.key === "Escape" || (event.key === "Enter" && target.closest("#ee-jump")))) {
        setTimeout(() => target.blur(), 0);
      }
      return;
    }
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") {
      event.preventDefault();
      press("ee-save");
      return;
    }
    if (event.ctrlKey || event.metaKey) return;
    const onControl = target && (target.tagName === "BUTTON" || target.tagName === "INPUT");
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    const actions = {
      j: () => move(1), ArrowDown: () => move(1), k: () => move(-1), ArrowUp: () => move(-1),
      a: () => mark(-1), s: () => press("ee-save"), n: () => press("ee-next"), p: () => press("ee-previous"),
      x: () => press("ee-skip"), r: () => toggleAccordion("ee-reference"), v: () => toggleAccordion("ee-stats"),
      "/": () => actions.g(),
      g: () => {
        const box = document.querySelector("#ee-jump textarea, #ee-jump input");
        if (box) { box.focus(); box.select(); }
      },
    };
    if (/^[0-9jk]$/.test(key) || (["ArrowDown", "ArrowUp"].includes(key) && !onControl)) keyboard = true;
    if (/^[0-9]$/.test(key)) {
      event.preventDefault();
      typeDigit(key);
    } else if (key === "Enter" && keyboard && cursor >= 0) {
      event.preventDefault(); // marks the step under the cursor even when a button still has the focus
      mark(cursor);
    } else if (Object.hasOwn(actions, key) && !(onControl && (key === "Enter" || key.startsWith("Arrow")))) {
      event.preventDefault();
      actions[key]();
    }
  });

  // Gradio re-renders the steps and the radio on every item and choice: re-apply the highlight then.
  let queued = false;
  const observer = new MutationObserver((mutations) => {
    if (queued || mutations.every((m) => m.target.classList && m.target.classList.contains("ee-step"))) return;
    queued = true;
    requestAnimationFrame(() => { queued = false; sync(); });
  });
  const start = () => observer.observe(document.body, {
    subtree: true, childList: true, attributes: true, attributeFilter: ["class", "aria-checked"],
  });
  if (document.body) start();
  else document.addEventListener("DOMContentLoaded", start);
})();
