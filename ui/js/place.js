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
  // Reload keeps the place: the tab and its dataset live in the URL (?tab=ID&dataset=NAME). At load the
  // server stores the dataset as the panel's choice (ui/app.py); once the header is in, the tab opens.
  const pickers = {
    step_review: "#step-review-dataset input", earliest_error: "#ee-dataset input",
    quality_gate: "#qg-dataset input", perturbation_check: "#pc-dataset input", step_match: "#sm-dataset input",
  };
  window.addEventListener("popstate", () => {  // back and forward: the tab the URL names
    const id = new URLSearchParams(window.location.search).get("tab");
    const button = id && tabButton(id, "");
    if (button && button.getAttribute("aria-selected") !== "true") button.click();
  });
  const wanted = new URLSearchParams(window.location.search).get("tab");
  const waitForHeader = setInterval(() => {
    if (!document.querySelector("#logout-link")) return;
    clearInterval(waitForHeader);
    if (wanted) {
      const button = tabButton(wanted, "");
      if (button && button.getAttribute("aria-selected") !== "true") button.click();
    }
    setInterval(() => {
      const tab = document.querySelector("#panels button[role=tab][aria-selected=true]");
      if (!tab) return;
      const id = tab.dataset.tabId || "";
      const picker = pickers[id] && document.querySelector(pickers[id]);
      const url = new URL(window.location.href);
      const before = url.search;
      url.searchParams.set("tab", id);
      if (picker && picker.value) url.searchParams.set("dataset", picker.value);
      else url.searchParams.delete("dataset");
      if (url.search === before) return;
      const tabChanged = new URLSearchParams(before).get("tab") !== id;
      history[tabChanged ? "pushState" : "replaceState"](null, "", url);
    }, 700);
  }, 200);
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
