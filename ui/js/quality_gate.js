// Quality gate panel: the keys of ui/kit/keymap.py ("Quality gate" and the shared moves). Acts only
// while the panel is visible and focus is not in a text field (the steps table's cells included).
(() => {
  "use strict";
  const panel = () => document.getElementById("qg-panel");
  const { shown, inTextField, press, toggleAccordion: toggle } = window.stepgateKeys;
  const criteria = () => Array.from(document.querySelectorAll('#qg-criteria input[type="checkbox"]'));
  // s: Accept when all four criteria hold, else Reject (which asks for the reason if there is none).
  const save = () => press(criteria().length && criteria().every((box) => box.checked) ? "qg-accept" : "qg-reject");

  document.addEventListener("keydown", (event) => {
    const root = panel();
    if (!shown(root) || event.defaultPrevented || event.altKey || event.isComposing) return;
    const target = event.target;
    if (inTextField(target)) {
      if (root.contains(target) && (event.key === "Escape" || (event.key === "Enter" && target.closest("#qg-jump")))) {
        setTimeout(() => target.blur(), 0);
      }
      if ((event.ctrlKey || event.metaKey) && event.key === "Enter" && root.contains(target)) {
        event.preventDefault();
        save();
      }
      return;
    }
    if ((event.ctrlKey || event.metaKey) && event.key === "Enter") { event.preventDefault(); save(); return; }
    if (event.ctrlKey || event.metaKey) return;
    const key = event.key.length === 1 ? event.key.toLowerCase() : event.key;
    if (/^[1-4]$/.test(key)) {
      const box = criteria()[Number(key) - 1];
      if (box) { event.preventDefault(); box.click(); }
      return;
    }
    const actions = {
      a: () => press("qg-accept"),
      r: () => {
        const reason = document.querySelector("#qg-reason input, #qg-reason textarea");
        if (reason && !reason.value.trim()) { reason.focus(); return; }  // a reject needs its reason first
        press("qg-reject");
      },
      s: save, n: () => press("qg-next"), p: () => press("qg-previous"), x: () => press("qg-skip"),
      e: () => toggle("qg-text"), l: () => toggle("qg-lineage-box"),
      z: () => {
        const full = document.querySelector('#qg-image button[aria-label*="ull"], #qg-image button[title*="ull"]');
        if (full) full.click();
      },
      g: () => {
        const box = document.querySelector("#qg-jump input, #qg-jump textarea");
        if (box) { box.focus(); box.select(); }
      },
    };
    actions["/"] = actions.g;
    if (Object.hasOwn(actions, key)) { event.preventDefault(); actions[key](); }
  });
})();
