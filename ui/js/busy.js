// The page's own busy mark for quick events (ui/kit/annotation.py, quick_events). Gradio's status tracker
// costs every later click of the day (ui/kit/progress.py), so a quick event shows none; instead, while
// one of the page's unqueued requests (/gradio_api/run/) is still unanswered after a glance, the page
// shows "Working..." at the top. A save that answers at once shows nothing; one held up (a slow disk, a
// busy server) is seen to be under way, so nobody clicks Save twice wondering.
// window.stepgateBusy.settled counts the replies applied: a test waits on it instead of on a tracker.
(() => {
  if (window.stepgateBusy) return;
  const SHOW_AFTER_MS = 250;
  const state = { running: 0, settled: 0 };
  let timer = null;
  const mark = () => {
    let badge = document.getElementById("stepgate-busy");
    if (!badge) {
      badge = document.createElement("div");
      badge.id = "stepgate-busy";
      badge.setAttribute("role", "status");
      badge.textContent = "Working...";
      document.body.appendChild(badge);
    }
    return badge;
  };
  const show = (on) => {
    if (!document.body) return;
    if (on) mark().classList.add("stepgate-busy-on");
    else document.getElementById("stepgate-busy")?.classList.remove("stepgate-busy-on");
  };
  const started = () => {
    state.running += 1;
    if (timer === null) timer = setTimeout(() => { timer = null; if (state.running > 0) show(true); }, SHOW_AFTER_MS);
  };
  // After the reply's handlers: Gradio reads the JSON, then applies it in promise callbacks, which all
  // run before a timer does.
  const finished = () => setTimeout(() => {
    state.running -= 1;
    state.settled += 1;
    if (state.running === 0) {
      if (timer !== null) { clearTimeout(timer); timer = null; }
      show(false);
    }
  }, 0);
  const isQuickEvent = (input) => {
    const url = typeof input === "string" ? input : input instanceof URL ? input.href : input?.url;
    return typeof url === "string" && url.includes("/gradio_api/run/");
  };
  const original = window.fetch.bind(window);
  window.fetch = (input, init) => {
    if (!isQuickEvent(input)) return original(input, init);
    started();
    return original(input, init).then(
      (response) => {
        let done = false;
        const once = () => { if (!done) { done = true; finished(); } };
        const read = response.json.bind(response);
        response.json = () => read().finally(once);
        setTimeout(once, 10000);  // a reply nobody reads still ends the mark
        return response;
      },
      (error) => { finished(); throw error; },
    );
  };
  window.stepgateBusy = { get running() { return state.running; }, get settled() { return state.settled; } };
})();
