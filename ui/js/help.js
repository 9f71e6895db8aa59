// The help overlay (#stepgate-help): ? opens and closes it, Esc closes it; not while typing.
(() => {
  if (window.stepgateHelp) return;
  window.stepgateHelp = true;
  const { inTextField: typing } = window.stepgateKeys;
  const box = () => document.getElementById("stepgate-help");
  document.addEventListener("keydown", (event) => {
    const help = box();
    if (!help) return;
    const open = help.classList.contains("stepgate-help-open");
    if (event.key === "Escape" && open) {
      event.preventDefault(); event.stopImmediatePropagation(); help.classList.remove("stepgate-help-open");
      return;
    }
    if (open && event.key !== "?") {  // while the help is open, no key acts on the panel behind it
      event.preventDefault(); event.stopImmediatePropagation();
      return;
    }
    if (event.key !== "?" || typing(event.target) || event.ctrlKey || event.metaKey || event.altKey) return;
    event.preventDefault(); event.stopImmediatePropagation();
    help.classList.toggle("stepgate-help-open", !open);
  }, true);
  document.addEventListener("click", (event) => {
    const help = box();
    if (help && help.classList.contains("stepgate-help-open") && !event.target.closest(".stepgate-help-box")) {
      help.classList.remove("stepgate-help-open");
    }
  });
})();
