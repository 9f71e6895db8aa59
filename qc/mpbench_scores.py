"""MPBench's Table 2 (and Table 3 by domain) for every model with predictions on a gated dataset.

Pure: the kept items (qc.model_scores.gold_items plus each item's paradigm, step count and
candidates) and the predictions frame in, one row per model out. The metrics are qc.mpbench's;
the averaging is MPBench's (docs/PROTOCOLS.md C3e): SC = (FEI + AEI)/2, AA = (BoN + MV)/2, RPS = (F1 + MCC)/2,
each over its paradigm's items pooled across domains, Overall their unweighted mean computed from
the six components, and Δ = Overall - 31.8 (the published random row, kept as a constant).

Data shaped like MPBench's (C2): an item's ``meta.paradigm`` says its paradigm (else: ``candidates``
in meta -> answer aggregation, ``correct_candidate`` -> process search, otherwise step correctness).
- Step correctness: the gold error steps (1-based) of the chain; a prediction's ``step_scores`` on
  MPBench's [-1, 1] scale, a step predicted correct iff its score > threshold (0 unless the file gave
  one; C3a). A missing or malformed prediction counts every step as predicted incorrect (C3a).
- Answer aggregation: ``meta.candidates`` = [{"answer", "correct"}], the gold answer in
  ``reference_answer`` (or ``meta.answer``); ``step_scores`` = one list of step scores per candidate,
  a candidate's score their min (C3c). A missing prediction is a miss.
- Process search: ``meta.correct_candidate`` (0 or 1); ``step_scores`` = two candidate scores
  (numbers or one-element lists), pairwise argmax (C3d). A missing prediction is a wrong pair.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from qc.mpbench import (
    RANDOM,
    best_of_n,
    first_error_accuracy,
    mpbench_overall,
    rmscore,
    rps_scores,
    solution_score,
    step_predictions,
    weighted_majority_vote,
)

__all__ = [
    "COLUMNS",
    "PARADIGMS",
    "RANDOM_AVGS",
    "candidate_count",
    "domain_table",
    "mpbench_items",
    "mpbench_row",
    "mpbench_table",
    "paradigm_of",
    "table2_averages",
]

NAN = float("nan")
SC, AA, RPS = "step_correctness", "answer_aggregation", "process_search"
PARADIGMS = (SC, AA, RPS)
_ALIASES = {
    "sc": SC,
    "aa": AA,
    "rps": RPS,
    "reasoning_process_search": RPS,
    "step_correctness": SC,
    "answer_aggregation": AA,
    "process_search": RPS,
}
# Table 2's random row per paradigm (003 l.94): Table 3 prints every domain's value minus these (C3e).
RANDOM_AVGS = {"sc_avg": 0.296, "aa_avg": 0.409, "rps_avg": 0.25, "overall": RANDOM["overall"] / 100}
COLUMNS = [
    "model",
    "sc_items",
    "fei",
    "aei",
    "sc_avg",
    "aa_items",
    "bon",
    "mv",
    "aa_avg",
    "rps_items",
    "f1",
    "mcc",
    "rps_avg",
    "overall",
    "delta",
    "unscored",
    "tie_rate",
]


def paradigm_of(meta: Any) -> str:
    """An item's MPBench paradigm from its meta (explicit ``paradigm``, else by its fields)."""
    meta = meta if isinstance(meta, dict) else {}
    named = str(meta.get("paradigm") or "").strip().lower().replace(" ", "_").replace("-", "_")
    if named in _ALIASES:
        return _ALIASES[named]
    if meta.get("candidates") is not None:
        return AA
    if meta.get("correct_candidate") is not None:
        return RPS
    return SC


def candidate_count(meta: Any) -> int | None:
    """How many candidates a prediction must score on the item (None: a single chain)."""
    paradigm = paradigm_of(meta)
    if paradigm == AA:
        return len(meta.get("candidates") or [])
    return 2 if paradigm == RPS else None


def _nested(scores: Any) -> bool:
    return isinstance(scores, list) and any(isinstance(s, list) for s in scores)


def _candidate_scores(scores: Any, n: int, aggregate: str) -> list[float] | None:
    """One score per candidate (a number, or a list of step scores reduced by ``aggregate``)."""
    if not isinstance(scores, list) or len(scores) != n:
        return None
    return [solution_score(s if isinstance(s, list) else [s], aggregate) for s in scores]


def _answer(value: Any) -> str:
    return str(value).strip().upper()  # C2b: the normalised option letter (or text)


def _correct(candidate: dict[str, Any]) -> bool:
    return bool(candidate.get("correct", candidate.get("is_correct", False)))


def _step_correctness(
    items: pd.DataFrame, preds: dict[int, Any], threshold: float, strict: bool
) -> dict[str, Any]:
    predicted: list[list[bool]] = []
    gold: list[list[bool]] = []
    unscored = 0
    for item in items.itertuples():
        n = int(item.n_steps)
        truth = [number not in set(item.gold_steps) for number in range(1, n + 1)]
        row = preds.get(int(item.item_id)) or {}
        scores = row.get("step_scores")
        if scores is None or _nested(scores) or len(scores) != n:
            unscored += 1
            flags = [False] * n  # C3a: an unparsable answer's steps count as incorrect
        else:
            given = row.get("threshold")
            tau = threshold if given is None or pd.isna(given) else float(given)
            flags = step_predictions(scores, tau, strict).tolist()
        predicted.append(flags)
        gold.append(truth)
    if not gold:
        return {"sc_items": 0, "fei": NAN, "aei": NAN, "unscored": 0}
    aei = rmscore([f for p in predicted for f in p], [f for g in gold for f in g])["rmscore"]
    return {
        "sc_items": len(gold),
        "fei": first_error_accuracy(predicted, gold),
        "aei": aei,
        "unscored": unscored,
    }


def _answer_aggregation(
    items: pd.DataFrame, preds: dict[int, Any], aggregate: str, seed: int
) -> dict[str, Any]:
    scores, correct, answers, gold, unscored = [], [], [], [], 0
    for item in items.itertuples():
        candidates = list(item.candidates)
        row = preds.get(int(item.item_id))
        per = _candidate_scores(None if row is None else row["step_scores"], len(candidates), aggregate)
        if per is None or not candidates:
            unscored += 1
            continue
        scores.append(per)
        correct.append([_correct(c) for c in candidates])
        answers.append([_answer(c.get("answer")) for c in candidates])
        gold.append(_answer(item.answer))
    total = len(items)
    if not total:
        return {"aa_items": 0, "bon": NAN, "mv": NAN, "unscored": 0, "ties": []}
    bon = best_of_n(scores, correct, seed) if scores else {"accuracy": 0.0, "tie_rate": NAN}
    mv = weighted_majority_vote(scores, answers, gold, seed) if scores else {"accuracy": 0.0, "tie_rate": NAN}
    scale = len(scores) / total  # a missing prediction is a miss: the hits over all items
    return {
        "aa_items": total,
        "bon": bon["accuracy"] * scale,
        "mv": mv["accuracy"] * scale,
        "unscored": unscored,
        "ties": [bon["tie_rate"], mv["tie_rate"]],
    }


def _process_search(items: pd.DataFrame, preds: dict[int, Any], aggregate: str, seed: int) -> dict[str, Any]:
    pairs, right, unscored = [], [], 0
    for item in items.itertuples():
        truth = int(item.correct_candidate)
        row = preds.get(int(item.item_id))
        per = _candidate_scores(None if row is None else row["step_scores"], 2, aggregate)
        if per is None:
            unscored += 1
            per = [0.0, 1.0] if truth == 0 else [1.0, 0.0]  # a missing answer is a wrong pair
        pairs.append(per)
        right.append(truth)
    if not pairs:
        return {"rps_items": 0, "f1": NAN, "mcc": NAN, "unscored": 0, "ties": []}
    scored = rps_scores(pairs, right, seed)
    return {
        "rps_items": len(pairs),
        "f1": scored["f1"],
        "mcc": scored["mcc"],
        "unscored": unscored,
        "ties": [scored["tie_rate"]],
    }


def table2_averages(
    fei: float, aei: float, bon: float, mv: float, f1: float, mcc: float, *, percent: bool = False
) -> dict[str, float]:
    """Table 2's averaging (C3e): each paradigm's Avg, the Overall from the six components (never from
    rounded Avgs, C4) and Δ = Overall - the random row's 31.8 (fractions, or x100 with ``percent``,
    as the paper prints them). NaN where a component is missing."""
    out = mpbench_overall(fei, aei, bon, mv, f1, mcc)
    out["delta"] = out["overall"] - RANDOM_AVGS["overall"] * (100.0 if percent else 1.0)
    return out


def mpbench_row(
    items: pd.DataFrame,
    predictions: pd.DataFrame,
    *,
    threshold: float = 0.0,
    strict: bool = True,
    aggregate: str = "min",
    seed: int = 0,
) -> dict[str, Any]:
    """One model's row on ``items`` (columns item_id, paradigm, n_steps, gold_steps, candidates, answer,
    correct_candidate): fractions (MCC in [-1, 1]). A paradigm the model predicted nothing on is NaN,
    and so are Overall and Δ unless all three paradigms are there."""
    preds = {int(r["item_id"]): r for r in predictions.to_dict("records")}
    parts: dict[str, Any] = {"unscored": 0}
    ties: list[float] = []
    for paradigm in PARADIGMS:
        part = items[items["paradigm"] == paradigm]
        if not part["item_id"].isin(list(preds)).any():
            continue  # the model was not run on this paradigm
        if paradigm == SC:
            got = _step_correctness(part, preds, threshold, strict)
        elif paradigm == AA:
            got = _answer_aggregation(part, preds, aggregate, seed)
        else:
            got = _process_search(part, preds, aggregate, seed)
        parts["unscored"] += got.pop("unscored")
        ties += [t for t in got.pop("ties", []) if not np.isnan(t)]
        parts.update(got)
    row = {c: parts.get(c, NAN) for c in COLUMNS if c != "model"}
    for count in ("sc_items", "aa_items", "rps_items"):
        row[count] = int(parts.get(count, 0))
    row.update(table2_averages(row["fei"], row["aei"], row["bon"], row["mv"], row["f1"], row["mcc"]))
    row["tie_rate"] = float(np.mean(ties)) if ties else NAN
    return row


def mpbench_table(items: pd.DataFrame, predictions: pd.DataFrame, **settings: Any) -> pd.DataFrame:
    """MPBench's Table 2 for every model with predictions on the items (one row per model)."""
    rows = []
    if len(predictions) and len(items):
        for model, mine in predictions.groupby("model", sort=True):
            mine = mine[mine["item_id"].isin(items["item_id"])]
            if len(mine):
                rows.append({"model": model, **mpbench_row(items, mine, **settings)})
    return pd.DataFrame(rows, columns=COLUMNS)


def domain_table(items: pd.DataFrame, predictions: pd.DataFrame, **settings: Any) -> pd.DataFrame:
    """MPBench's Table 3: per model and domain (the item's subset), each paradigm's Avg and its value
    minus the all-data random value of that paradigm (C3e: 29.6 / 40.9 / 25.0)."""
    columns = [
        "model",
        "domain",
        "sc_avg",
        "sc_vs_random",
        "aa_avg",
        "aa_vs_random",
        "rps_avg",
        "rps_vs_random",
    ]
    rows = []
    for domain, part in items.groupby("subset", sort=True):
        table = mpbench_table(part, predictions, **settings)
        for row in table.to_dict("records"):
            out: dict[str, Any] = {"model": row["model"], "domain": domain}
            for avg in ("sc_avg", "aa_avg", "rps_avg"):
                out[avg] = row[avg]
                out[avg.replace("_avg", "_vs_random")] = row[avg] - RANDOM_AVGS[avg]
            rows.append(out)
    frame = pd.DataFrame(rows, columns=columns)
    return frame.sort_values(["model", "domain"]).reset_index(drop=True) if len(frame) else frame


def mpbench_items(gold: pd.DataFrame, task: str) -> pd.DataFrame:
    """The kept items MPBench's metrics can score, from the store's scoring gold (with ``meta``,
    ``reference_answer`` and ``n_steps``): paradigm, domain (subset), and each paradigm's gold. A
    step-correctness item whose gold is only an earliest error (no step list, or an earliest-error
    dataset, whose labels stop at the first error) is left out: AEI needs every step's gold."""
    from qc.model_scores import KEPT, gold_items

    columns = [
        "item_id",
        "subset",
        "paradigm",
        "n_steps",
        "gold_steps",
        "candidates",
        "answer",
        "correct_candidate",
    ]
    kept = gold[gold["status"].isin(KEPT)]
    chains = gold_items(kept[kept["meta"].map(paradigm_of) == SC], task).set_index("item_id")
    rows = []
    for row in kept.itertuples():
        meta = row.meta if isinstance(row.meta, dict) else {}
        paradigm = paradigm_of(meta)
        out = {
            "item_id": int(row.item_id),
            "subset": row.source if isinstance(row.source, str) and row.source else "all",
            "paradigm": paradigm,
            "n_steps": int(row.n_steps or 0),
            "gold_steps": [],
            "candidates": [],
            "answer": None,
            "correct_candidate": None,
        }
        if paradigm == SC:
            # ProcessBench's labels name only the first error: the steps after it have no gold
            if task == "earliest_error" or int(row.item_id) not in chains.index:
                continue
            g = chains.loc[int(row.item_id)]
            if not len(g["gold_steps"]) and g["gold_earliest"] != -1:
                continue
            out["gold_steps"] = [int(s) for s in g["gold_steps"]]
        elif paradigm == AA:
            candidates = [c for c in meta.get("candidates") or [] if isinstance(c, dict)]
            answer = meta.get("answer", row.reference_answer)
            if not candidates or answer is None:
                continue
            out.update(candidates=candidates, answer=answer)
        else:
            if meta.get("correct_candidate") not in (0, 1):
                continue
            out["correct_candidate"] = int(meta["correct_candidate"])
        rows.append(out)
    return pd.DataFrame(rows, columns=columns)
