"""Dawid-Skene: each annotator's accuracy estimated without a gold standard (Dawid & Skene 1979,
J. R. Stat. Soc. C 28:20-28), by EM over a class-conditional confusion matrix per annotator.

It applies where items carry categorical labels from several annotators; with one annotator per
item there is nothing to learn from and the result is empty.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from qc.agreement import encode_labels

__all__ = ["dawid_skene_accuracy"]


def dawid_skene_accuracy(wide: pd.DataFrame, max_iter: int = 100, tol: float = 1e-6) -> pd.Series:
    """Per annotator (the columns of an items x annotators label table, NaN = not labelled): the
    estimated probability of giving the true label, sum_k prior_k * confusion[k, k]. Empty where
    no item has two labels."""
    codes, categories = encode_labels(wide)
    k = len(categories)
    present = ~np.isnan(codes)
    keep = present.sum(axis=1) >= 2
    if k < 2 or keep.sum() < 2:
        return pd.Series(dtype=float, name="dawid_skene_accuracy")
    codes, present = codes[keep], present[keep]
    n_items, n_annotators = codes.shape
    onehot = np.zeros((n_items, n_annotators, k))
    rows, cols = np.nonzero(present)
    onehot[rows, cols, codes[rows, cols].astype(np.int64)] = 1.0
    # start from the majority vote (soft)
    truth: np.ndarray[Any, np.dtype[np.float64]] = onehot.sum(axis=1) + 1e-9
    truth /= truth.sum(axis=1, keepdims=True)
    previous = -np.inf
    for _ in range(max_iter):
        prior = truth.mean(axis=0)
        # confusion[j, true, given], smoothed so that an unseen cell is not a certain zero
        confusion = np.einsum("it,ijg->jtg", truth, onehot) + 0.01
        confusion /= confusion.sum(axis=2, keepdims=True)
        log_like = np.log(prior)[None, :] + np.einsum("ijg,jtg->it", onehot, np.log(confusion))
        top = log_like.max(axis=1, keepdims=True)
        truth = np.exp(log_like - top)
        total = truth.sum(axis=1, keepdims=True)
        truth /= total
        likelihood = float((np.log(total) + top).sum())
        if likelihood - previous < tol:
            break
        previous = likelihood
    accuracy = np.einsum("t,jtt->j", prior, confusion)
    return pd.Series(accuracy, index=list(wide.columns), name="dawid_skene_accuracy")
