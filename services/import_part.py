"""Read, check and stage the second part of a large JSONL file in another process (a second core).

Run by services.imports in a forked copy of the importing process (``run``), or, when that process
has other threads (a server), as ``python -m services.import_part ARGS_JSON``: the lines that begin at byte
``start`` are parsed as stream_file parses them, numbered as in the whole file, staged as Arrow
chunks in the importing spill's folder, and what was found (problems, warnings, ids and their
lines) is written to ``<folder>/part.result`` for the importing process to merge. Never touches
the database.
"""

from __future__ import annotations

import json
import os
import pickle
import sys
from pathlib import Path
from typing import Any

__all__ = ["RESULT", "line_number_at", "run", "stage_part"]

RESULT = "part.result"
_BLOCK = 1 << 24


def line_number_at(path: Path, offset: int) -> int:
    """The number of the line that begins at ``offset`` (a line start)."""
    newlines = 0
    with path.open("rb") as fh:
        left = offset
        while left > 0:
            block = fh.read(min(_BLOCK, left))
            if not block:
                break
            newlines += block.count(b"\n")
            left -= len(block)
    return newlines + 1


def stage_part(args: dict[str, Any]) -> dict[str, Any]:
    from importers import stream_file
    from store.bulk import no_cyclic_gc
    from store.staging import Spill, stage_records

    path, start = Path(args["path"]), int(args["start"])
    lines: list[int] = []
    first_seen: dict[str, int] = {}
    with no_cyclic_gc():
        result, chunks = stream_file(
            path,
            args["format"],
            size=args["size"],
            max_image_pixels=args["max_image_pixels"],
            max_image_bytes=args["max_image_bytes"],
            base_dir=args["base_dir"],
            part=(start, None, line_number_at(path, start)),
            lines=lines,
            first_seen=first_seen,
        )
        spill = Spill(args["folder"], prefix="b")
        good = 0
        for chunk in chunks:
            good += len(chunk)
            if result.problems and not args["skip_bad"]:
                continue  # the file will be refused: read on only to list every bad line
            spill.add(stage_records(chunk))
    return {
        "problems": result.problems,
        "warnings": result.warnings,
        "lines_read": result.lines_read,
        "first_seen": first_seen,
        "bases": spill.bases,
        "records": spill.records,
        "good": good,
    }


def run(args: dict[str, Any]) -> None:
    """stage_part, its outcome (or what went wrong) written to the folder's RESULT file."""
    try:
        outcome = stage_part(args)
    except Exception as exc:  # the importing process reads the part itself, and says what is wrong
        outcome = {"error": f"{type(exc).__name__}: {exc}"}
    target = Path(args["folder"]) / RESULT
    tmp = target.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(outcome))
    os.replace(tmp, target)


def main() -> int:
    run(json.loads(sys.argv[1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
