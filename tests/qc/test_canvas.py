"""The canvas the figures are drawn on, against the backend switch Gradio wraps every event in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ui.web.memory import apply_memory_settings

ROOT = Path(__file__).resolve().parents[2]

# In a fresh interpreter, as a server is: the figure modules loaded (a dashboard drawn), then one thread
# imports pyplot for the first time (gr.Plot does, to close a figure) while another runs events through
# Gradio's own wrapper. Prints the events' errors and the backend switches they made.
_EVENTS_WHILE_PYPLOT_LOADS = """
import json, threading
import qc.plots, qc.planning_plot, qc.score_plots
from gradio.utils import MatplotlibBackendMananger

errors, events, loaded = [], [0], threading.Event()

def events_until_loaded():
    while not loaded.is_set():
        try:
            with MatplotlibBackendMananger():
                events[0] += 1
        except Exception as exc:
            errors.append(repr(exc))
            return

worker = threading.Thread(target=events_until_loaded)
worker.start()
import matplotlib.pyplot as plt
loaded.set()
worker.join()
switches = []
switch = plt.switch_backend
plt.switch_backend = lambda name: (switches.append(name), switch(name))
for _ in range(100):
    with MatplotlibBackendMananger():
        pass
print(json.dumps({"errors": errors, "events": events[0], "switches": switches}))
"""


def test_an_event_ending_while_pyplot_first_loads_answers_and_events_never_switch_backends() -> None:
    env = {**os.environ, "MPLBACKEND": "svg"}  # another backend in the environment the server starts in
    apply_memory_settings(env)  # as `serve` does first (MPLBACKEND=agg), a gr.Plot's import of pyplot later
    run = subprocess.run(
        [sys.executable, "-c", _EVENTS_WHILE_PYPLOT_LOADS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    seen = json.loads(run.stdout.strip().splitlines()[-1])
    assert seen["events"] > 0
    assert seen["errors"] == []
    assert seen["switches"] == []
