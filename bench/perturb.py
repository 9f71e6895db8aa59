"""Image perturbations per second (ConfProBench's four operations, then the PNG the job stores),
beside a floor measured in the same run: Pillow copying the same figure and saving it as PNG.

    python bench/perturb.py            # every demo figure, about 10 s
    python bench/perturb.py --rounds 3

Prints a Markdown table; the ratio is operation time over floor time (1.0 = as fast as a plain save).
A noisy image compresses badly, so its PNG takes most of a noise job's time.
"""

from __future__ import annotations

import argparse
import io
import sys
import time
from pathlib import Path

from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.table import print_table
from qc.generators import IMAGE_OPERATIONS, perturb_image

FIGURES = Path(__file__).resolve().parent.parent / "demo_data" / "images"


def _png(image: Image.Image) -> int:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.tell()


def _rate(images: list[Image.Image], rounds: int, work) -> float:
    """Images per second of work(image, k), best of `rounds` passes over every figure."""
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for k, image in enumerate(images):
            work(image, k)
        best = min(best, time.perf_counter() - start)
    return len(images) / best


def rows(rounds: int = 3) -> list[tuple[str, str]]:
    images = []
    for path in sorted(FIGURES.glob("*.png")):
        with Image.open(path) as image:
            images.append(image.convert("RGB"))
    floor = _rate(images, rounds, lambda image, k: _png(image.copy()))
    out = [(f"floor: Pillow copy + PNG save ({len(images)} demo figures)", f"{floor:,.0f} images/s")]
    for op in IMAGE_OPERATIONS:
        rate = _rate(images, rounds, lambda image, k, op=op: _png(perturb_image(image, op, seed=k)))
        out.append(
            (f"image perturbation: {op} + PNG save", f"{rate:,.0f} images/s ({floor / rate:.1f}x the floor)")
        )
    return out


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=3, help="passes over the figures; the best counts")
    args = parser.parse_args()
    print_table(rows(args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
