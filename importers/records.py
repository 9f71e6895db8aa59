"""Plain records that cross the store's boundary: what importers produce and what the store returns.

Step positions are 0-based everywhere inside stepgate. PRMBench files are 1-based and ProcessBench
labels are 0-based with -1 meaning "no error": importers and exporters convert at the edge, the
UI shows "Step 1" for position 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "GOLD_SOURCES",
    "VERSION_LISTS",
    "VERSION_VALUES",
    "ImageData",
    "ImportProblem",
    "ItemRecord",
    "ParseResult",
]

# What an item version holds beside its steps, images and meta, in the order the store's columns and the
# exports list it: the plain values, then the lists (stored as JSON). ItemRecord holds each of them.
VERSION_VALUES = (
    "question",
    "reference_answer",
    "reference_solution",
    "error_type",
    "rationale",
    "source",
    "final_answer_correct",
    "earliest_error",
)
VERSION_LISTS = ("error_steps", "modified_steps", "options")

# How an item became gold: what the gold table records and a stepgate bundle may carry.
GOLD_SOURCES = ("adjudicated", "consensus", "study", "import", "manual")


@dataclass(frozen=True)
class ImageData:
    """An image already read and verified by an importer: the bytes and where they came from."""

    data: bytes
    origin: str  # the path as written in the file, or "base64"
    mime: str = "image/png"
    width: int = 0
    height: int = 0


@dataclass
class ItemRecord:
    """One item as parsed from a source file, before it is stored.

    `steps` maps a step list's role to its texts: "original" and "modified" (PRMBench),
    "solution" (ProcessBench, QwQ), "candidate" (CRYSTAL), "predicted"/"reference" (step pairs).
    """

    external_id: str
    question: str
    steps: dict[str, list[str]] = field(default_factory=dict)
    reference_answer: str | None = None
    reference_solution: str | None = None
    error_steps: list[int] = field(default_factory=list)  # 0-based, in the modified/solution steps
    modified_steps: list[int] = field(default_factory=list)  # 0-based
    earliest_error: int | None = None  # 0-based, NO_ERROR, or None when unknown
    error_type: str | None = None
    rationale: str | None = None
    source: str | None = None
    final_answer_correct: bool | None = None
    options: list[str] = field(default_factory=list)
    images: list[ImageData] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    line: int = 0  # line (or row) number in the source file, 1-based, for messages


@dataclass(frozen=True)
class ImportProblem:
    """A line that could not be imported, said so the user can find and fix it."""

    file: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.reason}"


@dataclass
class ParseResult:
    """What an importer read from one file."""

    format: str
    records: list[ItemRecord]
    problems: list[ImportProblem]  # lines skipped: exactly one per line that was not imported
    lines_read: int = 0  # non-blank lines (data rows) examined: len(records) + len(problems)
    # Lines imported with something dropped or doubtful (e.g. a PRMBench error step past the last
    # step, which PRMBench's own evaluation ignores too); the user must see these as well.
    warnings: list[ImportProblem] = field(default_factory=list)
