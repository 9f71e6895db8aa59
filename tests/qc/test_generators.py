"""qc.generators: ConfProBench's image perturbations (seeded, readable) and the text generators' pure parts."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from qc.generators import (
    IMAGE_OPERATIONS,
    PROMPTS,
    TRANSFORMATIONS,
    AnswerError,
    ImageRanges,
    choose_variant,
    draw_operation,
    draw_transformations,
    judge_verdict,
    parse_answer,
    perturb,
    perturb_image,
    render_prompt,
    steps_from_answer,
)
from tests.conftest import MATHVISTA_DIR


@pytest.fixture(scope="module")
def figure() -> Image.Image:
    path = sorted(MATHVISTA_DIR.glob("*.png"))[0]
    with Image.open(path) as image:
        return image.copy()


def _same(a: Image.Image, b: Image.Image) -> bool:
    return a.size == b.size and a.mode == b.mode and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("op", IMAGE_OPERATIONS)
def test_each_operation_changes_the_pixels_of_a_real_figure(figure: Image.Image, op: str) -> None:
    out = perturb_image(figure, op, seed=3)
    assert not _same(out, figure.convert(out.mode))


@pytest.mark.parametrize("op", IMAGE_OPERATIONS)
def test_the_same_seed_gives_the_same_image_and_another_seed_another(figure: Image.Image, op: str) -> None:
    first, again = perturb(figure, op, seed=11), perturb(figure, op, seed=11)
    assert _same(first.image, again.image) and first.parameters == again.parameters
    if op != "invert":  # inversion has no parameter to draw
        assert not _same(first.image, perturb_image(figure, op, seed=12))


@pytest.mark.parametrize("op", IMAGE_OPERATIONS)
@pytest.mark.parametrize("seed", range(6))
def test_the_size_stays_within_the_limits(figure: Image.Image, op: str, seed: int) -> None:
    ranges = ImageRanges()
    out = perturb_image(figure, op, seed=seed, ranges=ranges)
    w, h = figure.size
    assert ranges.min_side <= min(out.size) and max(out.size) <= ranges.max_side
    if op == "scale":
        assert ranges.scale_low * w - 1 <= out.size[0] <= ranges.scale_high * w + 1
    elif op == "rotate":  # the canvas grows to hold the turned figure: never beyond its diagonal
        assert max(out.size) <= int((w * w + h * h) ** 0.5) + 2
    else:
        assert out.size == (w, h)


def test_a_large_figure_scaled_up_is_capped() -> None:
    big = Image.new("RGB", (3000, 1000), "white")
    out = perturb(big, "scale", seed=0, ranges=ImageRanges(scale_low=1.4, scale_high=1.5, max_side=3200))
    assert max(out.image.size) <= 3200 and out.image.size != big.size


def test_parameters_drawn_lie_in_the_ranges_and_are_recorded(figure: Image.Image) -> None:
    ranges = ImageRanges()
    for seed in range(20):
        assert (
            ranges.scale_low - 0.01
            <= perturb(figure, "scale", seed).parameters["factor"]
            <= ranges.scale_high
        )
        angle = perturb(figure, "rotate", seed).parameters["angle"]
        assert ranges.rotate_min <= abs(angle) <= ranges.rotate_max
        sigma = perturb(figure, "noise", seed).parameters["sigma"]
        assert ranges.noise_low <= sigma <= ranges.noise_high
    record = perturb(figure, "noise", 5).record()
    assert record["operation"] == "noise" and record["seed"] == 5 and "sigma" in record["parameters"]


def test_inversion_keeps_alpha_and_inverts_colour() -> None:
    image = Image.new("RGBA", (4, 4), (10, 20, 30, 77))
    out = np.asarray(perturb_image(image, "invert"))
    assert out[0, 0].tolist() == [245, 235, 225, 77]


def test_noise_leaves_alpha_alone_and_works_on_grey_and_palette_images() -> None:
    rgba = Image.new("RGBA", (16, 16), (100, 100, 100, 50))
    assert (np.asarray(perturb_image(rgba, "noise", 1))[..., 3] == 50).all()
    for mode in ("L", "P", "1"):
        image = Image.new(mode, (16, 16))
        assert perturb_image(image, "noise", 1).size == (16, 16)


def test_bad_operation_and_ranges_say_what_is_accepted(figure: Image.Image) -> None:
    with pytest.raises(ValueError, match="scale, rotate, noise, invert"):
        perturb_image(figure, "blur")
    with pytest.raises(ValueError, match="rotation range"):
        perturb_image(figure, "rotate", ranges=ImageRanges(rotate_max=400))


def test_the_operation_is_drawn_uniformly_and_reproducibly() -> None:
    drawn = [draw_operation(seed) for seed in range(400)]
    assert drawn == [draw_operation(seed) for seed in range(400)]
    assert all(60 < drawn.count(op) < 140 for op in IMAGE_OPERATIONS)


def test_a_syntactic_variant_records_the_one_transformation_of_the_candidate_drawn() -> None:
    assigned = draw_transformations(5, seed=4)
    assert len(assigned) == 5 and set(assigned) <= set(TRANSFORMATIONS)
    answer = {"Original Sentence": "x", "Rewritten Sentences": [f"rewrite {k}" for k in range(5)]}
    variant = choose_variant("syntactic", answer, "x", seed=4, assigned=assigned)
    assert variant.text == f"rewrite {variant.candidate_index}"
    assert variant.transformation == assigned[variant.candidate_index]
    assert choose_variant("syntactic", answer, "x", seed=4, assigned=assigned) == variant


def test_unchanged_or_empty_candidates_are_never_drawn() -> None:
    answer = {"Synonym Substitutions": ["Same step.", "", "A step altered."]}
    for seed in range(10):
        variant = choose_variant("synonym", answer, "Same step.", seed)
        assert variant.candidate_index == 2 and variant.transformation is None
    with pytest.raises(AnswerError, match="no usable candidate"):
        choose_variant("synonym", {"Synonym Substitutions": ["Same step."]}, "Same step.", 0)


def test_answers_are_read_from_fenced_json_and_bad_ones_say_why() -> None:
    assert parse_answer('```json\n{"a": 1}\n```') == {"a": 1}
    assert parse_answer('Here it is: {"a": [1]} done') == {"a": [1]}
    with pytest.raises(AnswerError, match="not JSON"):
        parse_answer("no json here")
    assert steps_from_answer({"reasoning_steps": ["a", "b"]}) == ["a", "b"]
    assert steps_from_answer(["a"]) == ["a"]
    with pytest.raises(AnswerError):
        steps_from_answer({"reasoning_steps": ["a", ""]})


def test_a_judge_that_leaves_a_criterion_out_fails_it() -> None:
    verdict = judge_verdict({"criteria": {"c1": True, "c2": True, "c3": True}}, ["c1", "c2", "c3", "c4"])
    assert verdict["passed"] is False and verdict["failed"] == ["c4"]
    ok = judge_verdict({"criteria": dict.fromkeys(["c1", "c2", "c3", "c4"], True)}, ["c1", "c2", "c3", "c4"])
    assert ok["passed"] is True


def test_every_job_kind_has_a_prompt_and_placeholders_fill() -> None:
    text = render_prompt(PROMPTS["synonym"], {"step": "The sum is 5.", "candidates": 5})
    assert "The sum is 5." in text and "$step" not in text
    assert render_prompt("$unknown and $step", {"step": "s"}) == "$unknown and s"
