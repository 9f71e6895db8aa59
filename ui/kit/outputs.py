"""Named outputs: a handler returns {name: value} for what it changes, and nothing for the rest.

Gradio matches a handler's result to its outputs by position; a tuple of ten values is easy to get
wrong and hard to read in a test. A panel names its components once (Outputs), wires handlers with
Outputs.bind, and handlers and tests speak in names. A name left out stays as it is on the page,
and a handler that changes nothing returns {} (Gradio itself would take an empty dict for one value
and answer HTTP 500, "didn't return enough output values": issue 28).

A page is sent only the props it does not show already (`Sent`): Gradio's page applies each prop of
an update as a search of its whole component tree, and a `visible` prop on a hidden component as two
more (bench/browser.py: most of a save's time in the browser). Values are always sent, so an item's
text is never left from the one before. A value whose other props the page has is sent as a plain
value: for any update, even an empty one, Gradio's server builds the component anew (a Gallery: 6 ms
of CPU), where a plain value is only postprocessed. Only in one process (DuckDB): replicas over
PostgreSQL may each answer events of one page, so there every reply is sent whole (Outputs.bind).
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr
from gradio.blocks import Block
from gradio.components import Component

from ui.binding import bind
from ui.context import AppContext

__all__ = ["Outputs", "Sent"]

# Props the page changes by itself (an accordion opened, an image or a tab picked, a value typed or
# clicked): always sent as the handler gives them.
_PAGE_OWNED = frozenset({"value", "open", "selected_index", "selected"})


class Sent:
    """The props each page was last sent, per component, so a reply leaves out those it shows already.

    Keyed by Gradio's session hash (a reload is a new session); the oldest pages are forgotten first,
    and a page forgotten is simply sent everything again."""

    def __init__(self, pages: int = 4096) -> None:
        self.pages = pages
        self._props: OrderedDict[str, dict[int, dict[str, str]]] = OrderedDict()
        self._lock = threading.Lock()

    def trim(self, page: str | None, component: Block, value: Any) -> Any:
        """`value` without the props this page's `component` already has (gr.skip() if none is left)."""
        if page is None:
            return value
        if isinstance(value, Block):  # a component or a layout block (an accordion)
            props = dict(value.constructor_args)
        elif isinstance(value, dict) and value.get("__type__") == "update":
            props = {k: v for k, v in value.items() if k != "__type__"}
        else:
            return value  # a plain value
        fixed = {k: repr(v) for k, v in props.items() if k not in _PAGE_OWNED}
        if not fixed:
            return value
        with self._lock:
            shown = self._props.setdefault(page, {})
            self._props.move_to_end(page)
            while len(self._props) > self.pages:
                self._props.popitem(last=False)
            before = shown.setdefault(component._id, {})
            same = {k for k, text in fixed.items() if before.get(k) == text}
            before.update(fixed)
        if not same:
            return value
        kept = {k: v for k, v in props.items() if k not in same}
        if kept.keys() == {"value"}:
            return kept["value"]  # a plain value: Gradio builds no new component for it (see below)
        if isinstance(value, Block) and any(v is None for k, v in kept.items() if k != "value"):
            return value  # as a dict Gradio would drop those None props: keep the component as given
        return {"__type__": "update", **kept}


def _page(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """The session hash of the page that sent this event (None without a request: a test's call)."""
    for arg in (*args, *kwargs.values()):
        if isinstance(arg, gr.Request):
            return getattr(arg, "session_hash", None)
    return None


SENT = Sent()


class Outputs:
    def __init__(self, **components: Component) -> None:
        self.components = components

    def __iter__(self) -> Iterator[Component]:
        return iter(self.components.values())

    def __getitem__(self, name: str) -> Component:
        return self.components[name]

    def only(self, *names: str) -> Outputs:
        return Outputs(**{n: self.components[n] for n in names})

    def bind(self, handler: Callable[..., dict[str, Any]], ctx: AppContext) -> Callable[..., Any]:
        """The handler bound to the app context, its {name: value} turned into Gradio's {component: value}."""
        bound = bind(handler, ctx)
        components = self.components
        # Only a process that answers all of a page's events knows what the page shows: replicas over
        # PostgreSQL sit behind any balancing, so there each reply is sent whole.
        trims = ctx.store.engine.exclusive

        @functools.wraps(bound)
        def named(*args: Any, **kwargs: Any) -> Any:
            result = bound(*args, **kwargs)
            if not result and components:
                return gr.skip()  # nothing changes: every output wired to this event stays as it is
            unknown = set(result) - set(components)
            if unknown:
                raise KeyError(f"{handler.__name__} returned outputs it is not wired to: {sorted(unknown)}")
            page = _page(args, kwargs) if trims else None
            return {
                components[name]: SENT.trim(page, components[name], value) for name, value in result.items()
            }

        del named.__wrapped__  # type: ignore[attr-defined]
        named.__signature__ = inspect.signature(bound)  # type: ignore[attr-defined]
        return named
