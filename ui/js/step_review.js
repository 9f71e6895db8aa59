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
  const { shown: visible, inTextField: typing } = window.stepgateKeys;
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
  // One screen: the two panes take what the window leaves above the assessment bar, so Save and the
  // choices never need page scrolling; the chains and the sample scroll inside their own panes.
  const fit = () => {
    const row = document.getElementById("step-review-sample");
    const bar = document.getElementById("step-review-assess");
    // The page's footer would make it scroll: it steps aside while step review is shown (one screen).
    document.body.classList.toggle("sr-shown", visible(row));
    if (!visible(row) || !bar) return;
    const top = row.getBoundingClientRect().top + window.scrollY;
    const room = window.innerHeight - top - bar.getBoundingClientRect().height - 10;
    const size = Math.max(200, Math.floor(room));
    row.style.setProperty("--sr-pane", `${size}px`);
    // What the page keeps below the bar (its padding) would still scroll it a little: take that off too.
    const over = Math.min(40, document.scrollingElement.scrollHeight - window.innerHeight);
    if (over > 0) row.style.setProperty("--sr-pane", `${Math.max(200, size - over)}px`);
  };
  window.addEventListener("resize", fit);
  // A new sample opens on its first modified step: the steps pane scrolls to it, the sample pane to its top.
  const FIRST_CHANGE = ".sr-inserted, .sr-changed, .sr-moved, .sr-removed, .sr-error, .sr-cell:has(.sr-badge-listed)";
  // A new sample stays "pending" until the annotator scrolls or clicks in its pane: the first sample
  // renders while the tab may still be hidden (no layout), and math and images move the change later.
  let pending = false;
  const openOnChange = () => {
    const pane = document.getElementById("step-review-right");
    const left = document.getElementById("step-review-left");
    if (!pane || !visible(pane) || pane.clientHeight === 0) return;
    if (left) left.scrollTop = 0;
    const first = pane.querySelector(`#step-review-steps ${FIRST_CHANGE}`);
    const head = pane.querySelector(".sr-head");
    if (!first) { pane.scrollTop = 0; return; }
    const offset = first.getBoundingClientRect().top - pane.getBoundingClientRect().top + pane.scrollTop;
    pane.scrollTop = Math.max(0, offset - (head ? head.getBoundingClientRect().height : 0) - 48);
  };
  let shown = null;
  const watch = () => {
    const info = document.getElementById("step-review-info");
    const steps = document.getElementById("step-review-steps");
    if (!info || !steps) { setTimeout(watch, 500); return; }
    // Once per frame however many mutations a render makes: layout is read only then.
    let queued = false;
    const settle = () => {
      queued = false;
      const now = info.textContent.slice(0, 200);
      const panel = document.getElementById("tab-step_review");
      if (panel && panel.getBoundingClientRect().top < 0) panel.scrollIntoView({ block: "start" });
      fit();
      // Again once math and images have laid out: the first change's place moves as they render.
      if (now !== shown) {
        shown = now; pending = true;
        [0, 150, 600, 1500].forEach((t) => setTimeout(() => { if (pending) openOnChange(); }, t));
      }
    };
    new MutationObserver(() => {
      if (!queued) { queued = true; requestAnimationFrame(settle); }
    }).observe(steps, { childList: true, subtree: true, characterData: true });
    // Gradio mounts a tab's components only when it is shown, and this looks for them every 500 ms: a
    // sample rendered in between made no mutation this observer saw. Settle what is there now.
    queued = true;
    requestAnimationFrame(settle);
    const bar = document.getElementById("step-review-assess");
    if (bar && window.ResizeObserver) new ResizeObserver(fit).observe(bar);
    // The tab shown (the pane gets a size) while a sample is pending: scroll it now.
    const pane = document.getElementById("step-review-right");
    if (pane && window.ResizeObserver) {
      new ResizeObserver(() => { fit(); if (pending) openOnChange(); }).observe(pane);
      // And whenever the steps change size while it is pending (math and images laid out late, as on a
      // busy machine, after the timed tries above): the change stays in view, however late they come.
      new ResizeObserver(() => { if (pending) openOnChange(); }).observe(steps);
    }
    // The annotator's own scrolling wins over a late re-scroll.
    for (const el of [pane, document.getElementById("step-review-left")]) {
      if (el) ["wheel", "touchmove", "mousedown"].forEach((e) => el.addEventListener(e, () => { pending = false; }, { passive: true }));
    }
    fit();
  };
  watch();
})();
