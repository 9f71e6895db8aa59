"""JSON at import speed, with the standard library's exact bytes and errors.

orjson reads and writes several times faster than ``json``, but not always the same text: it
writes non-ASCII characters as UTF-8 where ``json`` escapes them, writes NaN as null, dates in
ISO form, enums by value, and reads neither NaN nor big integers. Item versions are identified by
a hash of ``json.dumps`` text (store.items.content_hash), so a different byte would make every
re-import of an existing dataset a new version. Here orjson is used only where its result is
provably the standard library's: values of exact plain types (str, int, bool, None, list, tuple,
dict with str keys, floats whose repr orjson writes the same), non-ASCII escaped afterwards as
``json`` does; everything else, and every error, goes through ``json`` itself.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = ["canonical_bytes"]

_ESCAPED = re.compile(r"[^\x00-\x7e]")  # what json.dumps(ensure_ascii=True) writes as \uXXXX


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    if code < 0x10000:
        return f"\\u{code:04x}"
    code -= 0x10000
    return f"\\u{0xD800 | (code >> 10):04x}\\u{0xDC00 | (code & 0x3FF):04x}"


def _plain(value: Any) -> bool:
    """True when orjson writes ``value`` exactly as json.dumps does (after escaping non-ASCII)."""
    kind = type(value)
    if kind is str or value is None or kind is bool or kind is int:
        return True
    if kind is list or kind is tuple:
        try:
            "".join(value)  # a list of texts (steps), checked in C; orjson writes a str subclass as json does
        except TypeError:
            pass
        else:
            return True
        for item in value:
            kind = type(item)
            if not (kind is str or item is None or kind is bool or kind is int or _plain(item)):
                return False
        return True
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str:
                return False
            kind = type(item)
            if not (kind is str or item is None or kind is bool or kind is int or _plain(item)):
                return False
        return True
    if kind is float:  # NaN, infinities and exponents (1e+16 against 1e16) are written differently
        return orjson.dumps(value) == repr(value).encode()
    return False


def canonical_bytes(value: Any) -> bytes:
    """``json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode()``, faster."""
    if _plain(value):
        try:
            out = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except orjson.JSONEncodeError:
            pass  # a lone surrogate, an integer past 64 bits: json writes those
        else:
            if out.isascii() and b"\x7f" not in out:
                return out
            return _ESCAPED.sub(_escape, out.decode("utf-8")).encode()
    return json.dumps(value, sort_keys=True, default=str, separators=(",", ":")).encode()
