// Step review keyboard shortcuts: act only while the Step review tab is shown and no text box has focus.
(() => {
  if (window.stepReviewKeys) return;
  window.stepReviewKeys = true;
  const CHOICES = {
    c: ["step-review-original", "correct"], i: ["step-review-original", "incorrect"],
    r: ["step-review-modification", "reasonable"], u: ["step-review-modification", "unreasonable"],
    e: ["step-review-difficulty", "easy"], m: ["step-review-difficulty", "medium"], h: ["step-review-difficulty", "hard"],
  };
  const BUTTONS = { s: "step-review-save", n: "step-review-next", p: "step-review-previous", x: "step-review-skip" };
  const visible = (el) => !!el && el.getClientRects().length > 0;
  const typing = (el) => !!el && (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT" ||
    (el.tagName === "INPUT" && !["radio", "checkbox", "button", "submit"].includes(el.type)));
  const click = (id) => { const b = document.getElementById(id); if (visible(b) && !b.disabled) b.click(); };
  const FIGURE = "#step-review-image img[data-testid='detailed-image']";  // the gallery's large image
  // Click to enlarge: the problem image over the whole window; a click or Esc closes it.
  const enlarge = (img) => {
    let box = document.getElementById("step-review-lightbox");
    if (!box) {
      box = document.createElement("div");
      box.id = "step-review-lightbox";
      box.setAttribute("role", "dialog");
      box.title = "Click or press Esc to close";
      box.appendChild(document.createElement("img"));
      box.addEventListener("click", () => { box.hidden = true; });
      document.body.appendChild(box);
    }
    box.querySelector("img").src = img.currentSrc || img.src;  // a file URL Gradio made, never dataset text
    box.hidden = false;
  };
  const enlarged = () => { const box = document.getElementById("step-review-lightbox"); return !!box && !box.hidden; };
  document.addEventListener("click", (event) => {
    const img = event.target.closest && event.target.closest(FIGURE);
    if (img) { event.preventDefault(); event.stopPropagation(); enlarge(img); }
  }, true);
  // Esc closes the enlarged image first, before the gallery under it reads the key and leaves its preview.
  window.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && enlarged()) {
      event.preventDefault();
      event.stopImmediatePropagation();
      document.getElementById("step-review-lightbox").hidden = true;
    }
  }, true);
  document.addEventListener("keydown", (event) => {
    if (!visible(document.getElementById("tab-step_review"))) return;
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      // Save from anywhere in the panel, the note box included.
      if (!typing(event.target) || event.target.closest("#tab-step_review")) {
        event.preventDefault();
        click("step-review-save");
      }
      return;
    }
    if (event.key === "Escape" && typing(event.target) && event.target.closest("#tab-step_review")) {
      event.target.blur();  // back to the shortcut keys without reaching for the mouse
      return;
    }
    if (event.ctrlKey || event.metaKey || event.altKey || event.repeat || typing(event.target)) return;
    const key = event.key.toLowerCase();
    if (key === "/" || key === "g") {
      const box = document.querySelector("#step-review-jump input, #step-review-jump textarea");
      if (box) { event.preventDefault(); box.focus(); box.select(); }
      return;
    }
    if (CHOICES[key]) {
      const [id, value] = CHOICES[key];
      const input = document.querySelector(`#${id} input[type="radio"][value="${value}"]`);
      if (input && visible(input.closest("label") || input)) { event.preventDefault(); input.click(); }
      return;
    }
    if (key === "z") {
      const img = document.querySelector(FIGURE) || document.querySelector("#step-review-image img");
      if (visible(img)) { event.preventDefault(); enlarge(img); }
      return;
    }
    if (BUTTONS[key]) { event.preventDefault(); click(BUTTONS[key]); }
  });
  // A new sample starts at its top: when the sample shown changes, scroll back up to the panel.
  let shown = null;
  const watch = () => {
    const info = document.getElementById("step-review-info");
    if (!info) { setTimeout(watch, 500); return; }
    new MutationObserver(() => {
      const now = info.innerText.split("\n")[0];
      const panel = document.getElementById("tab-step_review");
      if (shown !== null && now !== shown && panel && panel.getBoundingClientRect().top < 0) {
        panel.scrollIntoView({ block: "start" });
      }
      shown = now;
    }).observe(info, { childList: true, subtree: true, characterData: true });
  };
  watch();
})();
