"""Dataset text to safe Markdown: pure functions, tested without a browser.

Text from a dataset never reaches the browser as markup: every `<`, `>` and `&` is escaped, and
Markdown link syntax is broken up so a `javascript:` link cannot be clicked. Math survives because
KaTeX's auto-render reads the page's text, where the escaped characters are plain `<` again.
"""

from __future__ import annotations

import html
import re

__all__ = ["LATEX_DELIMITERS", "escape_text", "safe_markdown"]

LATEX_DELIMITERS = [
    {"left": "$$", "right": "$$", "display": True},
    {"left": "$", "right": "$", "display": False},
    {"left": "\\(", "right": "\\)", "display": False},
    {"left": "\\[", "right": "\\]", "display": True},
]

# Markdown constructs that could smuggle a link or raw HTML past the escaping.
_LINK = re.compile(r"\]\s*\(")
_AUTOLINK_SCHEME = re.compile(r"(?i)\b(javascript|vbscript|data)\s*:")


def escape_text(text: str | None) -> str:
    """Plain text for inline use (names, ids): HTML-escaped, no Markdown emphasis or links."""
    if text is None:
        return ""
    escaped = html.escape(str(text), quote=False)
    return re.sub(r"([\\`*_\[\]()#|])", r"\\\1", escaped)


def safe_markdown(text: str | None) -> str:
    """Dataset Markdown with math kept and every HTML tag, handler and script link made inert text."""
    if not text:
        return ""
    out = html.escape(str(text), quote=False)
    out = _LINK.sub("]&#40;", out)
    return _AUTOLINK_SCHEME.sub(lambda m: m.group(1) + "&#58;", out)
