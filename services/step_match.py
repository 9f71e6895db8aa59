"""The step-match study (CRYSTAL S5): sample predicted x reference pairs by similarity band into a
step_match dataset, and report human vs encoder agreement like the paper's Table S1.

The encoder's score, band and decision live in each item's meta, which the annotation panel never
shows: annotators label blind. The report is for adjudicators and admins.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from exports.step_study import STUDY_REPORT_FORMATS, write_study_report
from importers.records import ItemRecord
from qc.matching import DEFAULT_EDGES, TAU, greedy_matches, macro_scores, table_s1
from qc.step_study import (
    SAMPLING_COUNTS,
    SAMPLING_EDGES,
    Calibration,
    HumanAgreement,
    all_pairs,
    calibrate_threshold,
    human_agreement,
    human_majority,
    sample_pairs,
)
from services.access import require_admin, require_reviewer
from services.encoder import Encoder
from services.errors import InvalidInput, NotFound
from services.imports import import_records
from services.matching import similarity
from store import annotations as annotation_log
from store import datasets, items
from store.datasets import Dataset
from store.db import Store
from store.users import Annotator
from tasks import STEP_MATCH

__all__ = [
    "STUDY_REPORT_FORMATS",
    "StudyCreated",
    "StudyReport",
    "create_study",
    "create_study_from_file",
    "read_examples",
    "study_report",
    "study_report_file",
]

MAX_EXAMPLES_BYTES = 50_000_000  # an examples file is steps as text: far below this


@dataclass(frozen=True)
class StudyCreated:
    dataset: str
    pairs: int
    per_band: dict[str, int]
    candidates: int  # all predicted x reference pairs the sample was drawn from
    encoder: str
    note: str


def _check_examples(examples: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    clean = []
    for n, ex in enumerate(examples, 1):
        predicted, reference = ex.get("predicted"), ex.get("reference")
        if not isinstance(predicted, list) or not isinstance(reference, list):
            raise InvalidInput(f"example {n}: 'predicted' and 'reference' must be lists of steps")
        if not all(isinstance(s, str) for s in [*predicted, *reference]):
            raise InvalidInput(f"example {n}: every step must be text")
        clean.append(
            {
                "example": str(ex.get("example", ex.get("id", n))),
                "model": str(ex.get("model", "model")),
                "question": str(ex.get("question") or ""),
                "predicted": predicted,
                "reference": reference,
            }
        )
    return clean


def create_study(
    store: Store,
    encoder: Encoder,
    examples: Sequence[dict[str, Any]],
    dataset: str,
    *,
    edges: Sequence[float] = SAMPLING_EDGES,
    counts: Sequence[int] = SAMPLING_COUNTS,
    seed: int = 0,
    threshold: float = TAU,
    decision: str = "assignment",
    annotators_per_item: int = 1,
) -> StudyCreated:
    """Sample pairs from all predicted x reference pairs of the examples (each: example, model,
    predicted, reference, optional question) and store them as a step_match dataset."""
    if datasets.get_dataset(store, dataset) is not None:
        raise InvalidInput(f"there is a dataset named {dataset!r} already: choose another name")
    clean = _check_examples(examples)
    sims = [similarity(store, encoder, ex["predicted"], ex["reference"]) for ex in clean]
    try:
        pairs = all_pairs(clean, sims, threshold, decision)
        sample = sample_pairs(pairs, edges, counts, seed)
    except ValueError as exc:
        raise InvalidInput(str(exc)) from exc
    if sample.empty:
        raise InvalidInput("the examples give no pairs to sample")
    # shown in a seeded random order, so that neither the order nor the id tells the band
    order = np.random.default_rng(seed + 1).permutation(len(sample))
    by_example = {(ex["model"], ex["example"]): ex for ex in clean}
    records = [
        _record(n, sample.iloc[int(i)], by_example, encoder, threshold, decision)
        for n, i in enumerate(order, 1)
    ]
    import_records(store, records, dataset=dataset, task=STEP_MATCH, source_format="step-match-study")
    if annotators_per_item != 1:
        datasets.update_settings(store, dataset, {"annotators_per_item": annotators_per_item})
    return StudyCreated(
        dataset=dataset,
        pairs=len(sample),
        per_band={str(k): int(v) for k, v in sample["band"].value_counts(sort=False).items()},
        candidates=len(pairs),
        encoder=encoder.name,
        note=encoder.note(),
    )


def _record(
    n: int,
    row: pd.Series,
    by_example: dict[tuple[str, str], dict[str, Any]],
    encoder: Encoder,
    threshold: float,
    decision: str,
) -> ItemRecord:
    ex = by_example[(row["model"], row["example"])]
    meta = {
        "similarity": float(row["similarity"]),
        "encoder_match": bool(row["encoder_match"]),
        "band": str(row["band"]),
        "example": row["example"],
        "model": row["model"],
        "j": int(row["j"]),
        "k": int(row["k"]),
        "encoder": encoder.name,
        "threshold": threshold,
        "decision": decision,
        "example_steps": {"predicted": ex["predicted"], "reference": ex["reference"]},
    }
    return ItemRecord(
        external_id=f"pair-{n}",
        question=ex["question"],
        steps={"predicted": [str(row["predicted"])], "reference": [str(row["reference"])]},
        meta=meta,
    )


@dataclass(frozen=True)
class StudyReport:
    dataset: str
    encoder: str
    note: str
    pairs: int
    labelled: int  # pairs with a human majority (ties and unlabelled pairs are left out)
    table: pd.DataFrame  # Table S1's bands, with the mean similarity of false and missed matches
    sampling: pd.DataFrame  # the same per sampling band
    models: pd.DataFrame  # the same per model that predicted the steps
    humans: HumanAgreement
    disagreements: pd.DataFrame  # false and missed matches, for reading
    calibration: Calibration | None
    f1_at_tau: float
    f1_calibrated: float


def _study_dataset(store: Store, name: str) -> Dataset:
    found = datasets.get_dataset(store, name) if name else None
    if found is None:
        raise NotFound(f"there is no dataset named {name!r}" if name else "choose a study first")
    if found.task != STEP_MATCH:
        raise InvalidInput(f"{found.name!r} is a {found.task} dataset, not a step-match study")
    return found


def _labels(store: Store, dataset: Dataset) -> pd.DataFrame:
    log = annotation_log.annotations_frame(store, dataset.id)
    if log.empty:
        return pd.DataFrame(columns=["pair", "annotator", "match"])
    log = log.sort_values("annotation_id").groupby(["item_id", "annotator"], as_index=False).last()
    payloads = [json.loads(p) if isinstance(p, str) else p for p in log["payload"]]
    return pd.DataFrame(
        {
            "pair": log["item_id"].to_numpy(),
            "annotator": log["annotator"].to_numpy(),
            "match": [p.get("match") == "match" for p in payloads],
        }
    )


def study_report(
    store: Store,
    user: Annotator,
    name: str,
    encoder: Encoder | None = None,
    edges: Sequence[float] = DEFAULT_EDGES,
    replicates: int = 300,
) -> StudyReport:
    """Table S1 for a step-match study; with the encoder, also the calibrated threshold and Match F1
    at it (similarities re-read from the embedding cache). Adjudicators and admins only."""
    require_reviewer(user)
    dataset = _study_dataset(store, name)
    frame = items.items_frame(store, dataset.id)
    meta = [json.loads(m) if isinstance(m, str) else dict(m) for m in frame["meta"]]
    pairs = pd.DataFrame(
        {
            "pair": frame["item_id"].to_numpy(),
            "external_id": frame["external_id"].to_numpy(),
            "similarity": [float(m.get("similarity", math.nan)) for m in meta],
            "encoder_match": [bool(m.get("encoder_match")) for m in meta],
            "sampling_band": [str(m.get("band", "")) for m in meta],
            "model": [str(m.get("model", "")) for m in meta],
            "meta": meta,
        }
    ).set_index("pair")
    human = human_majority(_labels(store, dataset))
    labelled = pairs.loc[pairs.index.intersection(human.index)].assign(human_match=human)
    table = table_s1(
        labelled["similarity"], labelled["encoder_match"], labelled["human_match"], edges, with_means=True
    )
    sampling = _overall_by(labelled, "sampling_band", "sampling band")
    models = _overall_by(labelled, "model", "model")
    disagreements = _disagreements(frame, labelled)
    stored_encoder = str(next((m.get("encoder") for m in meta if m.get("encoder")), "unknown"))
    note = _note(stored_encoder, encoder)
    calibration, f1_tau, f1_cal = None, math.nan, math.nan
    if encoder is not None and encoder.name == stored_encoder and len(labelled):
        calibration, f1_tau, f1_cal = _calibrate(store, encoder, labelled, replicates)
    return StudyReport(
        dataset=dataset.name,
        encoder=stored_encoder,
        note=note,
        pairs=len(pairs),
        labelled=len(labelled),
        table=table,
        sampling=sampling,
        models=models,
        humans=human_agreement(_labels(store, dataset)),
        disagreements=disagreements,
        calibration=calibration,
        f1_at_tau=f1_tau,
        f1_calibrated=f1_cal,
    )


def _note(stored: str, encoder: Encoder | None) -> str:
    if encoder is not None and encoder.name == stored:
        return encoder.note()
    if stored == "all-distilroberta-v1":
        return f"Similarities from {stored}, the encoder CRYSTAL used."
    return (
        f"Similarities from {stored}, not CRYSTAL's all-distilroberta-v1: thresholds, bands and scores "
        "are not comparable with the paper's figures."
    )


def _overall_by(labelled: pd.DataFrame, column: str, title: str) -> pd.DataFrame:
    """Table S1's overall row for each value of a column (sampling band, model)."""
    rows = {}
    for value, group in labelled.groupby(column, sort=True):
        overall = table_s1(
            group["similarity"], group["encoder_match"], group["human_match"], with_means=True
        ).loc["Overall"]
        rows[str(value)] = overall
    if not rows:
        return pd.DataFrame(columns=["pairs", "agreement", "kappa", "false_matches", "missed_matches"])
    out = pd.DataFrame.from_dict(rows, orient="index")
    out.index.name = title
    return out.astype({"pairs": int, "false_matches": int, "missed_matches": int})


def _disagreements(frame: pd.DataFrame, labelled: pd.DataFrame) -> pd.DataFrame:
    wrong = labelled[labelled["encoder_match"] != labelled["human_match"]]
    steps = frame.set_index("item_id")["steps"]
    rows = []
    for pair, row in wrong.sort_values("similarity", ascending=False).iterrows():
        texts = dict(steps.loc[pair]) if steps.loc[pair] is not None else {}
        rows.append(
            {
                "pair": row["external_id"],
                "kind": "false match" if row["encoder_match"] else "missed match",
                "similarity": round(float(row["similarity"]), 3),
                "predicted": (texts.get("predicted") or [""])[0],
                "reference": (texts.get("reference") or [""])[0],
            }
        )
    return pd.DataFrame(rows, columns=["pair", "kind", "similarity", "predicted", "reference"])


def _calibrate(
    store: Store, encoder: Encoder, labelled: pd.DataFrame, replicates: int
) -> tuple[Calibration, float, float]:
    """Re-run the greedy assignment of each pair's example at every threshold."""
    sims: dict[tuple[str, str], np.ndarray] = {}
    where = []
    for m in labelled["meta"]:
        key = (str(m.get("model")), str(m.get("example")))
        if key not in sims:
            steps = m.get("example_steps") or {}
            sims[key] = similarity(store, encoder, steps.get("predicted", []), steps.get("reference", []))
        where.append((key, int(m.get("j", 0)), int(m.get("k", 0))))

    def decide(t: float) -> np.ndarray:
        matched = {key: set(greedy_matches(sim, t)) for key, sim in sims.items()}
        return np.array([(j, k) in matched[key] for key, j, k in where], dtype=bool)

    calibration = calibrate_threshold(
        decide, labelled["human_match"].to_numpy(dtype=bool), replicates=replicates
    )
    examples = list(sims.values())
    f1_tau = macro_scores(examples, TAU).f1
    f1_cal = (
        macro_scores(examples, calibration.threshold).f1
        if not math.isnan(calibration.threshold)
        else math.nan
    )
    return calibration, f1_tau, f1_cal


def read_examples(path: Path, shown_as: str | None = None) -> list[dict[str, Any]]:
    """The examples of a JSONL file (one object a line: example, model, predicted, reference, optional
    question). A bad line refuses the whole file, named as `file:line: what is wrong`."""
    name = shown_as or Path(path).name
    try:
        if Path(path).stat().st_size > MAX_EXAMPLES_BYTES:
            raise InvalidInput(f"{name}: larger than {MAX_EXAMPLES_BYTES // 1_000_000} MB")
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except UnicodeDecodeError:
        raise InvalidInput(f"{name}: not UTF-8 text (a JSONL file of examples is expected)") from None
    except OSError as exc:
        raise InvalidInput(f"{name}: cannot read it ({exc.strerror or exc})") from None
    examples = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            example = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InvalidInput(f"{name}:{number}: not JSON ({exc.msg}, column {exc.colno})") from None
        if not isinstance(example, dict):
            raise InvalidInput(f"{name}:{number}: an object with 'predicted' and 'reference' is expected")
        try:
            _check_examples([example])
        except InvalidInput as exc:
            raise InvalidInput(f"{name}:{number}: {str(exc).removeprefix('example 1: ')}") from None
        examples.append(example)
    if not examples:
        raise InvalidInput(f"{name}: no examples in the file")
    return examples


def create_study_from_file(
    store: Store,
    user: Annotator,
    encoder: Encoder,
    path: Path,
    dataset: str,
    *,
    shown_as: str | None = None,
    **options: Any,
) -> StudyCreated:
    """An admin's upload of predicted and reference example sets, sampled into a new study (the Data
    panel's twin of `app.py study`). Nothing is stored when the file or the options are refused."""
    require_admin(user)
    dataset = (dataset or "").strip()
    if not dataset or len(dataset) > 100:
        raise InvalidInput("name the study's dataset (1-100 characters)")
    return create_study(store, encoder, read_examples(path, shown_as), dataset, **options)


def study_report_file(
    store: Store, user: Annotator, name: str, fmt: str, out: Path, encoder: Encoder | None = None
) -> Path:
    """The study's report (Table S1 and the rest) as a Markdown or CSV file naming its encoder."""
    if fmt not in STUDY_REPORT_FORMATS:
        raise InvalidInput(f"report format: one of {', '.join(STUDY_REPORT_FORMATS)}, not {fmt!r}")
    return write_study_report(study_report(store, user, name, encoder), fmt, out)
