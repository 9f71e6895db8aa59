"""Re-create demo_data/step_match_examples_demo.jsonl: examples for the step-match study (CRYSTAL S5),
each a predicted and a reference step list, from demo_data/prmbench_demo.jsonl (Apache-2.0).

"predicted" is an item's modified (error-inserted) chain, "reference" its original chain; "model"
names where the prediction came from (PRMBench's modification, not a model CRYSTAL evaluated). The
study samples pairs from all predicted x reference pairs of these examples by similarity band.

Usage: python demo_data/make_step_match_examples.py
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "prmbench_demo.jsonl"
OUT = HERE / "step_match_examples_demo.jsonl"
N_EXAMPLES = 24
MIN_STEPS, MAX_STEPS = 4, 10


def _steps(v: object) -> list[str]:
    return json.loads(v) if isinstance(v, str) else list(v)  # type: ignore[arg-type]


def build() -> list[dict]:
    out = []
    for line in SRC.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        original, modified = _steps(row["original_process"]), _steps(row["modified_process"])
        if not (MIN_STEPS <= len(original) <= MAX_STEPS and MIN_STEPS <= len(modified) <= MAX_STEPS):
            continue
        out.append(
            {
                "example": row["idx"],
                "model": "prmbench-modified",
                "question": row["original_question"],
                "predicted": modified,
                "reference": original,
            }
        )
        if len(out) == N_EXAMPLES:
            break
    return out


if __name__ == "__main__":
    examples = build()
    OUT.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in examples), encoding="utf-8")
    print(f"wrote {len(examples)} examples to {OUT.name}")
