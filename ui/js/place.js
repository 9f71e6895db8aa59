// Home's "Open in ..." buttons (ui/panels/home.py): the server keeps the dataset as the panel's choice,
// then this selects the panel's tab with a real click, so the panel opens as if picked by hand.
(() => {
  if (window.stepgatePlace) return;
  const tabButton = (id, title) =>
    document.querySelector(`#panels button[role=tab][data-tab-id="${CSS.escape(id)}"]`) ||
    [...document.querySelectorAll("#panels button[role=tab]")].find((b) => b.textContent.trim() === title);
  const openTab = (target) => {
    let wanted;
    try { wanted = JSON.parse(target || "{}"); } catch (error) { return; }
    const button = tabButton(String(wanted.tab || ""), wanted.title || "");
    if (button) button.click();
  };
  window.stepgatePlace = { openTab };
  document.addEventListener("click", (event) => {
    const open = event.target.closest && event.target.closest(".home-open");
    if (!open) return;
    const box = document.querySelector("#home-open-target textarea, #home-open-target input");
    const go = document.querySelector("#home-open-go");
    if (!box || !go) return;
    box.value = open.dataset.target || "";
    box.dispatchEvent(new Event("input", { bubbles: true }));
    setTimeout(() => go.click(), 0);
  });
})();
