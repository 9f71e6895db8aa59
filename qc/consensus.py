"""Consensus decisions: ProcessBench's escalation rule, majority vote and Dawid-Skene.

Decisions are small frozen dataclasses; writing them to the store is the caller's job.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd

__all__ = [
    "NO_ERROR",
    "Consensus",
    "DawidSkeneResult",
    "Vote",
    "dawid_skene",
    "earliest_error_consensus",
    "majority_vote",
]

NO_ERROR = -1  # ProcessBench's label for "all steps are correct"


@dataclass(frozen=True)
class Consensus:
    """Where an item stands under the escalation rule after the labels received so far."""

    status: Literal["pending", "consensus", "discarded"]
    label: Any  # the agreed label, None unless status == "consensus"
    needed: int  # annotators to assign now
    settled_at: int | None  # number of labels when the item settled (3 -> "3/3", 4 -> "3/4", ...)
    n_labels: int  # labels received


def earliest_error_consensus(labels: Sequence[Any], quorum: int = 3, max_annotators: int = 5) -> Consensus:
    """ProcessBench's rule (Zheng et al. 2024, sec. 3.2): ``quorum`` agreeing labels within ``max_annotators``.

    Labels are read in arrival order; the item settles on the first prefix that decides it, and
    labels after that do not change the decision. It is discarded as soon as no label can still
    reach the quorum with the annotators left, e.g. four different labels out of five.
    """
    if not 1 <= quorum <= max_annotators:
        raise ValueError(f"need 1 <= quorum <= max_annotators, got quorum={quorum}, max={max_annotators}")
    counts: Counter[Any] = Counter()
    for n, label in enumerate(labels, start=1):
        counts[label] += 1
        if counts[label] >= quorum:
            return Consensus("consensus", label, 0, n, len(labels))
        if counts.most_common(1)[0][1] + (max_annotators - n) < quorum:
            return Consensus("discarded", None, 0, n, len(labels))
    n = len(labels)
    needed = quorum - n if n < quorum else 1
    return Consensus("pending", None, needed, None, n)


@dataclass(frozen=True)
class Vote:
    """Majority vote outcome; "tie" goes to adjudication."""

    label: Any
    status: Literal["majority", "tie", "empty"]
    counts: dict[Any, int]  # label -> votes, most votes first, then first arrival


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA


def majority_vote(labels: Iterable[Any], min_votes: int = 1) -> Vote:
    """Plurality label when it is unique and has at least ``min_votes`` votes.

    Missing labels (None, NaN) are ignored. No labels -> "empty"; a shared top count, or a top
    label with fewer than ``min_votes`` votes -> "tie" (not decidable without adjudication).
    """
    counts = Counter(label for label in labels if not _missing(label))
    ordered = dict(counts.most_common())
    if not ordered:
        return Vote(None, "empty", {})
    top = list(ordered.values())
    if (len(top) > 1 and top[0] == top[1]) or top[0] < min_votes:
        return Vote(None, "tie", ordered)
    return Vote(next(iter(ordered)), "majority", ordered)


@dataclass(frozen=True)
class DawidSkeneResult:
    """Fitted Dawid-Skene model; ``confusion[j, k, l]`` = P(annotator j says l | true class k)."""

    posterior: pd.DataFrame  # items x classes
    labels: pd.Series  # MAP class per item
    accuracy: pd.Series  # per annotator: sum_k prior_k * confusion[j, k, k]
    confusion: np.ndarray  # annotators x true classes x given classes
    priors: pd.Series  # class -> prior
    annotators: list[Hashable]
    classes: list[Hashable]
    iterations: int
    converged: bool
    log_likelihood: float

    def confusion_matrix(self, annotator: Hashable) -> pd.DataFrame:
        """One annotator's confusion matrix, rows true class, columns given label."""
        j = self.annotators.index(annotator)
        return pd.DataFrame(self.confusion[j], index=self.classes, columns=self.classes)


def _class_sums(item: np.ndarray, weights: np.ndarray, n_items: int) -> np.ndarray:
    """Sum rows of ``weights`` (observations x classes) per item, vectorised with bincount."""
    return np.stack(
        [np.bincount(item, weights=weights[:, k], minlength=n_items) for k in range(weights.shape[1])], axis=1
    )


def dawid_skene(
    df: pd.DataFrame,
    item_col: str = "item",
    annotator_col: str = "annotator",
    label_col: str = "label",
    max_iter: int = 100,
    tol: float = 1e-6,
    smoothing: float = 0.01,
) -> DawidSkeneResult:
    """EM estimate of true labels and annotator confusion matrices: Dawid & Skene 1979, Appl. Stat. 28:20-28.

    Long format, one row per rating; missing labels are dropped and an annotator need not rate
    every item. Starts from the soft majority vote (the paper's initialisation); ``smoothing``
    pseudo-counts keep confusion cells off zero. Converged when the mean log-likelihood per
    rating improves by less than ``tol``.
    """
    data = df[[item_col, annotator_col, label_col]].dropna()
    if data.empty:
        raise ValueError("dawid_skene needs at least one rating")
    item, items = pd.factorize(data[item_col], sort=True)
    ann, annotators = pd.factorize(data[annotator_col], sort=True)
    lab, classes = pd.factorize(data[label_col], sort=True)
    n_items, n_ann, k = len(items), len(annotators), len(classes)
    onehot = np.eye(k)[lab]

    post = _class_sums(item, onehot, n_items)
    post /= post.sum(axis=1, keepdims=True)
    previous = -np.inf
    converged = False
    iterations = 0
    for step in range(1, max_iter + 1):
        iterations = step
        # M-step: priors and confusion counts from the current posteriors.
        priors = post.mean(axis=0)
        cells = np.stack(
            [np.bincount(ann * k + lab, weights=post[item, c], minlength=n_ann * k) for c in range(k)], axis=1
        )
        conf = cells.reshape(n_ann, k, k).transpose(0, 2, 1) + smoothing
        conf /= conf.sum(axis=2, keepdims=True)
        # E-step: log P(class) + sum over an item's ratings of log P(label | class).
        log_joint = np.log(np.maximum(priors, 1e-300))[None, :] + _class_sums(
            item, np.log(conf[ann, :, lab]), n_items
        )
        top = log_joint.max(axis=1, keepdims=True)
        norm = top[:, 0] + np.log(np.exp(log_joint - top).sum(axis=1))
        post = np.exp(log_joint - norm[:, None])
        ll = float(norm.sum() / len(item))
        if ll - previous < tol:
            converged = True
            break
        previous = ll
    priors = post.mean(axis=0)
    class_list = list(classes)
    ann_list = list(annotators)
    accuracy = (conf[:, np.arange(k), np.arange(k)] * priors[None, :]).sum(axis=1)
    posterior = pd.DataFrame(post, index=pd.Index(items, name=item_col), columns=class_list)
    return DawidSkeneResult(
        posterior=posterior,
        labels=pd.Series(np.asarray(classes)[post.argmax(axis=1)], index=posterior.index, name=label_col),
        accuracy=pd.Series(accuracy, index=pd.Index(ann_list, name=annotator_col), name="accuracy"),
        confusion=conf,
        priors=pd.Series(priors, index=class_list, name="prior"),
        annotators=ann_list,
        classes=class_list,
        iterations=iterations,
        converged=converged,
        log_likelihood=ll * len(item),
    )
