"""The one canvas stepgate draws on: matplotlib's Agg, named as matplotlib names it ("agg").

Figures are built with `Figure` directly (no pyplot state); the backend is named only because Gradio
wraps every event in `matplotlib.use("agg")` and a switch back to the backend it found. Named any other
way ("Agg" is valid, but a different string), every event switched pyplot's backend twice (~0.3 ms), and
an event that ended while another thread first imported pyplot (gr.Plot does, to close a figure) failed
with "partially initialized module 'matplotlib.pyplot'": its work stored, its reply an error.
"""

from __future__ import annotations

import matplotlib

BACKEND = "agg"
matplotlib.use(BACKEND)

from matplotlib.figure import Figure  # noqa: E402 - after the backend is named

__all__ = ["BACKEND", "Figure"]
