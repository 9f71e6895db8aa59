"""The generators that make new variants, as pure functions: ConfProBench's perturbations (docs/PROTOCOLS.md D1-D2)
and the prompts and answers of the model-backed generators.

perturb_image is built in (Pillow, seeded). Synonym substitution, syntactic transformation, regenerated
reference steps and the judge run on a model behind one of services.generation's backends; this module
holds what is pure about them: the default prompt of each job kind, the six syntactic transformations,
the seeded draws (candidate picked, transformation per candidate) and the parsing of an answer.
"""

from __future__ import annotations

import json
import random
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
from PIL import Image

__all__ = [
    "IMAGE_OPERATIONS",
    "JOB_KINDS",
    "PROMPTS",
    "TEXT_KINDS",
    "TRANSFORMATIONS",
    "AnswerError",
    "ImageRanges",
    "Perturbed",
    "TextVariant",
    "choose_variant",
    "draw_operation",
    "draw_transformations",
    "judge_verdict",
    "parse_answer",
    "perturb",
    "perturb_image",
    "pick_candidate",
    "render_prompt",
    "steps_from_answer",
    "text_candidates",
]

IMAGE_OPERATIONS = ("scale", "rotate", "noise", "invert")  # D1.4: exactly four, one drawn at random

# D1.3: the six syntactic transformations; a variant applies exactly one, and the checker sees which (T4).
TRANSFORMATIONS: dict[str, str] = {
    "voice": "Voice change (active <-> passive)",
    "adverbial": "Adverbial position adjustment",
    "clause": "Clause order or structure change",
    "phrase": "Phrase structure simplification or expansion",
    "inversion": "Inversion or emphatic structure",
    "conditional": "Conditional / purpose / result structure transformation",
}

# Job kinds with a prompt each (issue 13): the text perturbations, the gate's regeneration and judge,
# and the two generation jobs a team may run through the same backends.
TEXT_KINDS = ("synonym", "syntactic")
JOB_KINDS = ("synonym", "syntactic", "regenerate_steps", "judge", "insert_error", "solve")

PROMPTS: dict[str, str] = {
    # After ConfProBench's Table 8 (001 l.441-471): technical terms, numbers and formatting are protected.
    "synonym": (
        "Rewrite the sentence below $candidates times, each a distinct version in which as many "
        "non-technical words as reasonably possible (at least one) are replaced by semantically equivalent "
        "synonyms, keeping grammar and meaning. Do not change mathematical symbols, scientific terminology, "
        "programming syntax, technical jargon, domain-specific abbreviations, numbers, numerical values, "
        "mathematical expressions (plain or LaTeX), list symbols, bullets, sequence markers or formatting.\n"
        'Answer JSON only: {"Original Sentence": "...", "Synonym Substitutions": ["...", ...]}\n\n'
        "Sentence: $step"
    ),
    # After Table 7 (001 l.403-437); the transformation of each rewrite is assigned so that it is known.
    "syntactic": (
        "Rewrite the sentence below $candidates times. Rewrite k must apply exactly one syntactic "
        "transformation, the one assigned to it:\n$assigned\n"
        "Keep every step of multi-step reasoning; omit no derivation, step or intermediate expression; "
        "change no numbers or mathematical/LaTeX expressions; preserve meaning, grammar and naturalness; "
        "keep the length within about 2-3 words of the original unless the transformation needs more.\n"
        'Answer JSON only: {"Original Sentence": "...", "Rewritten Sentences": ["...", ...]} in the '
        "order of the assignments.\n\nSentence: $step"
    ),
    # CRYSTAL phase 1 (004 l.233): answer-aware, atomic, minimal, logically ordered steps.
    "regenerate_steps": (
        "Question: $question\nOptions: $options\nCorrect answer: $answer\n"
        "The previous reasoning steps were rejected by a reviewer. Failed criteria: $failed. Reason: $reason\n"
        "Previous steps:\n$steps\n"
        "Write a new ordered list of atomic, minimal reasoning steps that derive the correct answer from "
        "the question and the image; every perceptual claim must be visible in the image.\n"
        'Answer JSON only: {"reasoning_steps": ["...", ...]}'
    ),
    # CRYSTAL phase 3 (004 l.243-259): pass/fail on the four criteria with step-level justifications.
    "judge": (
        "Question: $question\nOptions: $options\nCorrect answer: $answer\nReasoning steps:\n$steps\n"
        "Check the steps against four criteria: $criteria.\n"
        'Answer JSON only: {"criteria": {"c1": true, "c2": true, "c3": true, "c4": true}, '
        '"justifications": ["...", ...]}'
    ),
    "insert_error": (
        "Question: $question\nVerified reasoning steps:\n$steps\n"
        "Insert exactly one error of type '$error_type' into one step, changing nothing else.\n"
        'Answer JSON only: {"reasoning_steps": ["...", ...], "error_steps": [step numbers, 1-based], '
        '"reason": "..."}'
    ),
    "solve": (
        "Question: $question\nOptions: $options\nSolve the problem step by step.\n"
        'Answer JSON only: {"reasoning_steps": ["...", ...], "answer": "..."}'
    ),
}


class AnswerError(ValueError):
    """A generator's answer that cannot be used, said so that an admin can see why."""


@dataclass(frozen=True)
class ImageRanges:
    """The ranges perturbation parameters are drawn from (not published: D1.4's suggestions).

    They keep a figure readable: at most half size, rotation with the canvas enlarged (nothing cut off),
    mild noise. ``max_side`` caps the result so that a scale-up never makes a huge file.
    """

    scale_low: float = 0.5
    scale_high: float = 1.5
    rotate_max: float = 180.0
    rotate_min: float = 5.0  # a turn of less is hardly a perturbation
    noise_low: float = 5.0  # sigma on the 0-255 scale
    noise_high: float = 25.0
    max_side: int = 4096
    min_side: int = 8

    def check(self) -> None:
        if not 0 < self.scale_low <= self.scale_high:
            raise ValueError(f"scale range {self.scale_low}-{self.scale_high} must be positive and ordered")
        if not 0 <= self.rotate_min <= self.rotate_max <= 180:
            raise ValueError(
                f"rotation range {self.rotate_min}-{self.rotate_max} must lie within 0-180 degrees"
            )
        if not 0 < self.noise_low <= self.noise_high <= 128:
            raise ValueError(f"noise sigma {self.noise_low}-{self.noise_high} must lie within 0-128")


@dataclass(frozen=True)
class Perturbed:
    """A perturbed image and what made it: the operation, the values drawn, the seed."""

    image: Image.Image
    operation: str
    parameters: dict[str, Any]
    seed: int

    def record(self) -> dict[str, Any]:
        return {"operation": self.operation, "parameters": dict(self.parameters), "seed": self.seed}


def draw_operation(seed: int) -> str:
    """One of the four operations, uniformly (D1.4: "randomly selected")."""
    return random.Random(f"operation:{seed}").choice(IMAGE_OPERATIONS)


def _working_copy(image: Image.Image) -> Image.Image:
    """RGB, or RGBA where the image has transparency: the operations work on colour channels."""
    has_alpha = image.mode in ("RGBA", "LA", "PA") or (image.mode == "P" and "transparency" in image.info)
    return image.convert("RGBA" if has_alpha else "RGB")


def _scale(image: Image.Image, rng: random.Random, ranges: ImageRanges) -> tuple[Image.Image, dict[str, Any]]:
    w, h = image.size
    factor = rng.uniform(ranges.scale_low, ranges.scale_high)
    factor = min(factor, ranges.max_side / max(w, h))  # within the size limit
    factor = max(factor, ranges.min_side / min(w, h))
    size = (max(1, round(w * factor)), max(1, round(h * factor)))
    if size == (w, h):  # a factor this close to 1 changes nothing: go one pixel further
        size = (w + 1, round((w + 1) * h / w)) if factor >= 1 else (w - 1, max(1, round((w - 1) * h / w)))
        factor = size[0] / w
    return image.resize(size, Image.Resampling.BICUBIC), {"factor": round(factor, 4), "size": list(size)}


def _rotate(
    image: Image.Image, rng: random.Random, ranges: ImageRanges
) -> tuple[Image.Image, dict[str, Any]]:
    angle = rng.uniform(ranges.rotate_min, ranges.rotate_max) * rng.choice((-1, 1))
    fill = (255, 255, 255, 0) if image.mode == "RGBA" else (255, 255, 255)
    out = image.rotate(angle, resample=Image.Resampling.BICUBIC, expand=True, fillcolor=fill)
    if max(out.size) > ranges.max_side:  # a rotated large image: shrink to the limit, aspect kept
        out.thumbnail((ranges.max_side, ranges.max_side), Image.Resampling.BICUBIC)
    return out, {"angle": round(angle, 3), "expand": True, "fill": "white"}


def _noise(
    image: Image.Image, seed: int, rng: random.Random, ranges: ImageRanges
) -> tuple[Image.Image, dict[str, Any]]:
    sigma = rng.uniform(ranges.noise_low, ranges.noise_high)
    pixels = np.asarray(image, dtype=np.float32).copy()
    colour = pixels[..., :3]
    colour += np.random.default_rng(seed).standard_normal(colour.shape, dtype=np.float32) * np.float32(sigma)
    pixels[..., :3] = colour
    out = Image.fromarray(np.clip(np.rint(pixels), 0, 255).astype(np.uint8), image.mode)
    if out.tobytes() == image.tobytes():  # only possible for a tiny image with a tiny sigma
        arr = np.asarray(out).copy()
        arr[0, 0, 0] = 255 - arr[0, 0, 0]
        out = Image.fromarray(arr, image.mode)
    return out, {"mean": 0.0, "sigma": round(sigma, 3), "clipped": True}


def _invert(image: Image.Image) -> tuple[Image.Image, dict[str, Any]]:
    pixels = np.asarray(image).copy()
    pixels[..., :3] = 255 - pixels[..., :3]  # D1.4: 255 - v per RGB channel, alpha untouched
    return Image.fromarray(pixels, image.mode), {"formula": "255 - v", "alpha": "untouched"}


def perturb(image: Image.Image, op: str, seed: int = 0, ranges: ImageRanges | None = None) -> Perturbed:
    """The image perturbed by one operation with parameters drawn from ``ranges`` by ``seed``, and the
    values drawn; the same image, operation, seed and ranges always give the same pixels."""
    if op not in IMAGE_OPERATIONS:
        raise ValueError(f"unknown image operation {op!r}: choose one of {', '.join(IMAGE_OPERATIONS)}")
    ranges = ranges or ImageRanges()
    ranges.check()
    if min(image.size) < 1:
        raise ValueError("the image is empty")
    work = _working_copy(image)
    rng = random.Random(f"{op}:{seed}")
    if op == "scale":
        out, params = _scale(work, rng, ranges)
    elif op == "rotate":
        out, params = _rotate(work, rng, ranges)
    elif op == "noise":
        out, params = _noise(work, seed, rng, ranges)
    else:
        out, params = _invert(work)
    return Perturbed(out, op, params, seed)


def perturb_image(
    image: Image.Image, op: str, seed: int = 0, ranges: ImageRanges | None = None
) -> Image.Image:
    """op is "scale" | "rotate" | "noise" | "invert" (docs/PROTOCOLS.md D1.4); same seed, same result."""
    return perturb(image, op, seed, ranges).image


# ---- text generators: prompts, seeded draws, answers -------------------------------------------------


@dataclass(frozen=True)
class TextVariant:
    """One perturbed step: the candidates the generator gave, the one drawn, and how it was made."""

    text: str
    candidates: list[str]
    candidate_index: int
    transformation: str | None = None  # syntactic only: the key in TRANSFORMATIONS
    transformations: list[str] = field(default_factory=list)  # syntactic: assigned per candidate

    def record(self) -> dict[str, Any]:
        return asdict(self)


def render_prompt(template: str, fields: Mapping[str, Any]) -> str:
    """A template with $name placeholders filled; unknown placeholders stay as they are (an admin's
    template may name a field a job does not have)."""
    return string.Template(template).safe_substitute({k: _as_text(v) for k, v in fields.items()})


def _as_text(value: Any) -> str:
    if isinstance(value, list | tuple):
        return "\n".join(f"{k}. {v}" for k, v in enumerate(value, 1))
    return "" if value is None else str(value)


def draw_transformations(n: int, seed: int) -> list[str]:
    """The transformation assigned to each of n candidates, uniformly and independently (types may repeat,
    as in the paper's prompt)."""
    rng = random.Random(f"transformations:{seed}")
    return [rng.choice(list(TRANSFORMATIONS)) for _ in range(n)]


def pick_candidate(n: int, seed: int) -> int:
    """The candidate drawn, uniformly (D2: one "randomly selected")."""
    if n < 1:
        raise AnswerError("the generator gave no usable candidate")
    return random.Random(f"pick:{seed}").randrange(n)


_FENCE = re.compile(r"^```[a-zA-Z]*\s*|\s*```$")


def parse_answer(text: str) -> Any:
    """The JSON a model answered, allowing a fenced block or text around one object."""
    body = _FENCE.sub("", text.strip())
    try:
        return json.loads(body)
    except json.JSONDecodeError:
        start, end = body.find("{"), body.rfind("}")
        if 0 <= start < end:
            try:
                return json.loads(body[start : end + 1])
            except json.JSONDecodeError:
                pass
    raise AnswerError(f"the answer is not JSON: {text[:200]!r}")


_LIST_KEYS = {
    "synonym": ("Synonym Substitutions", "candidates", "variants"),
    "syntactic": ("Rewritten Sentences", "candidates", "variants"),
}


def text_candidates(kind: str, answer: Any, original: str, assigned: Sequence[str] = ()) -> list[str]:
    """The candidate rewrites of a synonym or syntactic answer; empty, non-text or unchanged ones dropped
    (an unchanged step is no perturbation). Syntactic candidates keep their place: their
    transformations were assigned by position."""
    if not isinstance(answer, dict):
        raise AnswerError("the answer must be a JSON object")
    found = next((answer[k] for k in _LIST_KEYS[kind] if k in answer), None)
    if not isinstance(found, list):
        raise AnswerError(f"the answer has no list under {_LIST_KEYS[kind][0]!r}")
    if assigned and len(found) < len(assigned):
        raise AnswerError(f"the answer has {len(found)} rewrites; {len(assigned)} were asked for")
    return [
        c.strip() if isinstance(c, str) and c.strip() and c.strip() != original.strip() else "" for c in found
    ]


def choose_variant(
    kind: str, answer: Any, original: str, seed: int, assigned: Sequence[str] = ()
) -> TextVariant:
    """The variant drawn among the usable candidates, with its index and (syntactic) transformation."""
    candidates = text_candidates(kind, answer, original, assigned)
    usable = [k for k, c in enumerate(candidates) if c]
    index = usable[pick_candidate(len(usable), seed)]
    transformation = assigned[index] if kind == "syntactic" and assigned else None
    return TextVariant(candidates[index], candidates, index, transformation, list(assigned))


def steps_from_answer(answer: Any) -> list[str]:
    """Regenerated steps: {"reasoning_steps": [...]} (CRYSTAL's JSON), a bare list (its Python-list
    variant, 004 l.272) or {"steps": [...]}."""
    if isinstance(answer, dict):
        answer = answer.get("reasoning_steps", answer.get("steps", answer.get("reference_steps")))
    if not isinstance(answer, list) or not answer:
        raise AnswerError("the answer has no list of reasoning steps")
    steps = [s.strip() for s in answer if isinstance(s, str) and s.strip()]
    if len(steps) != len(answer):
        raise AnswerError("every reasoning step must be non-empty text")
    return steps


def judge_verdict(answer: Any, criteria: Sequence[str]) -> dict[str, Any]:
    """A judge's answer as {"passed", "criteria": {key: bool}, "failed": [...], "justifications"}; a
    criterion the judge left out counts as failed (no pass without all four)."""
    if not isinstance(answer, dict) or not isinstance(answer.get("criteria"), dict):
        raise AnswerError('the judge answer needs "criteria": {"c1": true, ...}')
    given = answer["criteria"]
    held = {key: given.get(key) is True for key in criteria}
    failed = [key for key, ok in held.items() if not ok]
    notes = answer.get("justifications") or []
    return {
        "passed": not failed,
        "criteria": held,
        "failed": failed,
        "justifications": [str(n) for n in notes] if isinstance(notes, list) else [str(notes)],
    }
