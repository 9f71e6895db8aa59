"""Importer messages read as sentences, not typos (issue 29): an empty file says so plainly."""

from __future__ import annotations

from pathlib import Path

import pytest

from importers import ImportFormatError, parse_file


def test_an_empty_file_is_refused_in_a_plain_sentence(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("", encoding="utf-8")
    with pytest.raises(ImportFormatError) as refused:
        parse_file(empty)
    assert str(refused.value) == "empty.jsonl: the file is empty, so there is nothing to import"
