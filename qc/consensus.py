"""Consensus decisions: ProcessBench's escalation rule, majority vote and Dawid-Skene.

Decisions are small frozen dataclasses; writing them to the store is the caller's job.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass

import numpy as np
import pandas as pd

# The decision rules live in the task specs; they are re-exported here with the statistics.
from tasks.base import NO_ERROR, Vote, majority_vote
from tasks.earliest_error import Consensus, earliest_error_consensus

__all__ = [
    "NO_ERROR",
    "Consensus",
    "DawidSkeneResult",
    "Vote",
    "dawid_skene",
    "earliest_error_consensus",
    "majority_vote",
]


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
