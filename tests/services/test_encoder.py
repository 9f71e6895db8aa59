"""The real encoder (packaged all-MiniLM-L6-v2): paraphrases of math steps score above unrelated
steps, the ONNX path agrees with sentence-transformers, and embeddings are cached in the store."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from qc.matching import ALPHA, TAU, macro_scores, match_f1
from services import matching
from services.encoder import PAPER_ENCODER, Encoder, EncoderSettings
from store import Store, embeddings

PARAPHRASES = [
    ("Subtract 5 from both sides to get 3x = 12.", "Taking 5 away from each side gives 3x = 12."),
    ("Divide both sides by 3, so x = 4.", "Dividing each side by three yields x = 4."),
    (
        "The area of the rectangle is 6 times 4, which is 24.",
        "Multiplying the length 6 by the width 4 gives an area of 24.",
    ),
    (
        "The sum of the interior angles of a triangle is 180 degrees.",
        "A triangle's angles add up to 180 degrees.",
    ),
]
UNRELATED = [
    "The image shows three red apples on a wooden table.",
    "Option B names the capital of France.",
    "The bar chart's tallest bar is for the year 2010.",
    "Photosynthesis happens in the chloroplasts of plant cells.",
]


def test_nothing_is_loaded_until_the_first_encode(tmp_path: Path) -> None:
    fresh = Encoder(EncoderSettings(export_dir=tmp_path))
    assert not fresh.loaded
    assert fresh.name == "all-MiniLM-L6-v2"
    assert PAPER_ENCODER in fresh.note() and "not comparable" in fresh.note()


def test_paraphrases_score_above_unrelated_steps(encoder: Encoder, tmp_path: Path) -> None:
    with Store(tmp_path / "enc.duckdb") as store:
        predicted = [p for p, _ in PARAPHRASES]
        reference = [r for _, r in PARAPHRASES]
        sim = matching.similarity(store, encoder, predicted, reference + UNRELATED)
        paired = np.diag(sim[:, : len(reference)])
        assert paired.min() > 0.5
        assert paired.min() > sim[:, len(reference) :].max()
        for j in range(len(predicted)):  # each paraphrase beats every other reference step
            assert sim[j].argmax() == j
        assert match_f1(sim[:, : len(reference)]) == (1.0, 1.0, 1.0)
        assert embeddings.count_embeddings(store, encoder.cache_key) == 12
        again = matching.similarity(store, encoder, predicted, reference + UNRELATED)
        np.testing.assert_allclose(again, sim, atol=1e-6)
        examples = [(predicted, reference), ([], [])]
        scored = macro_scores([matching.similarity(store, encoder, p, r) for p, r in examples], TAU, ALPHA)
        assert scored.f1 == 1.0 and encoder.name == "all-MiniLM-L6-v2"


@pytest.mark.slow
def test_the_onnx_path_agrees_with_sentence_transformers(encoder: Encoder, tmp_path: Path) -> None:
    texts = [t for pair in PARAPHRASES for t in pair] + UNRELATED
    fast = encoder.encode(texts)
    assert encoder.backend == "onnx"
    torch_path = Encoder(EncoderSettings(backend="torch", export_dir=tmp_path))
    slow = torch_path.encode(texts)
    assert torch_path.backend == "torch"
    assert np.abs(fast @ fast.T - slow @ slow.T).max() <= 1e-3
