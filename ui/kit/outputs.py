"""Named outputs: a handler returns {name: value} for what it changes, and nothing for the rest.

Gradio matches a handler's result to its outputs by position; a tuple of ten values is easy to get
wrong and hard to read in a test. A panel names its components once (Outputs), wires handlers with
Outputs.bind, and handlers and tests speak in names. A name left out stays as it is on the page,
and a handler that changes nothing returns {} (Gradio itself would take an empty dict for one value
and answer HTTP 500, "didn't return enough output values": issue 28).
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import gradio as gr
from gradio.components import Component

from ui.binding import bind
from ui.context import AppContext

__all__ = ["Outputs"]


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

        @functools.wraps(bound)
        def named(*args: Any, **kwargs: Any) -> Any:
            result = bound(*args, **kwargs)
            if not result and components:
                return gr.skip()  # nothing changes: every output wired to this event stays as it is
            unknown = set(result) - set(components)
            if unknown:
                raise KeyError(f"{handler.__name__} returned outputs it is not wired to: {sorted(unknown)}")
            return {components[name]: value for name, value in result.items()}

        del named.__wrapped__  # type: ignore[attr-defined]
        named.__signature__ = inspect.signature(bound)  # type: ignore[attr-defined]
        return named
