"""Re-create demo_data/images/*.png and demo_data/crystal_demo.jsonl by cropping single figures out of the MathVista
figure strips in ../shared/data/mathvista_context_images/.

The crops and the JSONL are committed, so the demo does not need ../shared; this
script only documents (and reproduces) how they were made. The questions, answers and
candidate steps (RECORDS below) were written by hand after looking at each crop. Boxes are (left, top, right, bottom)
in pixels of the 1800-px-wide strips. Each crop is downscaled to at most MAX_WIDTH
pixels wide (none of the current boxes needs it) and saved as optimised PNG.

Figures: MathVista (lupantech/MathVista, assets/contexts), CC BY-SA 4.0. The crops are
adaptations (cropped, possibly downscaled) shared under the same licence.

Usage (from the project root or anywhere):
    python demo_data/make_crystal_demo.py [--src DIR]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from PIL import Image

HERE = Path(__file__).resolve().parent
DEFAULT_SRC = HERE.parent.parent / "shared" / "data" / "mathvista_context_images"
OUT_DIR = HERE / "images"
MAX_WIDTH = 800

# output file name -> (strip file, crop box)
CROPS: dict[str, tuple[str, tuple[int, int, int, int]]] = {
    "mv-geometry-1.png": ("1_geometry_diagram.png", (0, 0, 405, 276)),  # parallelogram ABCD
    "mv-geometry-2.png": ("1_geometry_diagram.png", (412, 0, 853, 276)),  # rectangle, cut corners
    "mv-bar-1.png": ("3_bar_chart.png", (0, 0, 446, 445)),  # accuracy of algorithms
    "mv-bar-2.png": ("3_bar_chart.png", (943, 0, 1298, 445)),  # Pew U.S.-German
    "mv-bar-3.png": ("3_bar_chart.png", (1325, 0, 1800, 445)),  # AgentBench scores
    "mv-pie-1.png": ("12_pie_chart.png", (0, 0, 676, 409)),  # ages pie
    "mv-pie-2.png": ("12_pie_chart.png", (1127, 0, 1399, 409)),  # Pew seniors SNS
    "mv-table-1.png": ("6_table.png", (0, 0, 290, 304)),  # cans of food
    "mv-function-1.png": ("7_function_plot.png", (0, 0, 385, 300)),  # log curves
    "mv-graph-1.png": ("5_scientific_figure.png", (1434, 0, 1800, 319)),  # weighted graph
}

CREDIT = "Figure from MathVista (lupantech/MathVista, assets/contexts), CC BY-SA 4.0"

# Questions, answers and steps written by hand after looking at each crop. "demo_flaw"
# marks the items whose steps were made wrong on purpose (not shown to annotators).
RECORDS: list[dict] = [
    {
        "id": "mv-geometry-1",
        "question": "ABCD is a parallelogram. Find y.",
        "options": ["3", "6", "8", "10"],
        "answer": "6",
        "steps": [
            "The figure shows quadrilateral ABCD with side AB labelled 3y − 8, BC labelled 2x + 7, AD labelled 13 and DC labelled 10.",
            "In a parallelogram opposite sides are equal, so AB = DC.",
            "Therefore 3y − 8 = 10.",
            "Adding 8 to both sides gives 3y = 18, so y = 6.",
            "The answer is 6.",
        ],
        "demo_flaw": None,
    },
    {
        "id": "mv-geometry-2",
        "question": "The shaded region is the 30 cm × 20 cm rectangle with a right triangle cut off at each corner; all four corners are cut like the top-right one, whose legs are marked 6 cm and 6 cm. What is the area of the shaded region, in cm²?",
        "options": [],
        "answer": "528",
        "steps": [
            "The rectangle is 30 cm wide and 20 cm high, so its area is 30 × 20 = 600 cm².",
            "At each of the four corners a right triangle is cut off; the top-right one has both legs marked 6 cm.",
            "Each cut-off corner has area 6 × 6 = 36 cm², so the four corners remove 4 × 36 = 144 cm².",
            "The shaded area is 600 − 144 = 456 cm².",
        ],
        "demo_flaw": "step 3 uses the area of a 6×6 square (36) instead of the right triangle (½·6·6 = 18); the steps yield 456, not 528",
    },
    {
        "id": "mv-bar-1",
        "question": "What is the sum of the accuracies of the algorithms spray and cab?",
        "options": [],
        "answer": "11",
        "steps": [
            "The bar chart 'Accuracy of different algorithms' has three bars: bronze, spray and cab.",
            "The spray bar reaches 4 on the Accuracy axis.",
            "The cab bar reaches 8 on the Accuracy axis.",
            "The sum is 4 + 8 = 12.",
        ],
        "demo_flaw": "step 2 misreads the spray bar height as 4 (it is 3); the steps yield 12, not 11",
    },
    {
        "id": "mv-bar-2",
        "question": "For 'Economic and trade ties', how many percentage points more Germans than Americans chose it as the most important aspect of the U.S.-German relationship?",
        "options": [],
        "answer": "12",
        "steps": [
            "The chart compares Americans (green bars) and Germans (orange bars) for three aspects of the U.S.-German relationship.",
            "In the 'Economic and trade ties' group the green bar for Americans is labelled 33.",
            "The orange bar for Germans in the same group is labelled 45.",
            "The difference is 45 − 33 = 12 percentage points.",
        ],
        "demo_flaw": None,
    },
    {
        "id": "mv-bar-3",
        "question": "Among the open-sourced LLMs that are listed with a score, how many have an AgentBench overall score above the open-sourced average (the green dashed line)?",
        "options": [],
        "answer": "4",
        "steps": [
            "The green dashed line is labelled Avg:0.42; it is the average of the open-sourced LLMs.",
            "The open-sourced LLMs listed with scores are openchat-13b 1.15, wizardlm-30b 0.83, vicuna-13b 0.62, wizardlm-13b 0.59, wizardcoder-15b 0.21, dolly-v2-12b 0.15 and oasst-sft-4-12b 0.07; the '......' row has no score.",
            "Above 0.42 are openchat-13b, wizardlm-30b, vicuna-13b and wizardlm-13b.",
            "Below 0.42 are wizardcoder-15b, dolly-v2-12b and oasst-sft-4-12b.",
            "So 4 of the listed open-sourced LLMs score above the average.",
        ],
        "demo_flaw": None,
    },
    {
        "id": "mv-pie-1",
        "question": "What percentage of the total do the 70–79 years and 80–89 years groups make up together?",
        "options": [],
        "answer": "65.7",
        "steps": [
            "The pie chart labels each age group with its percentage.",
            "The 70–79 years slice (dark purple) is labelled 25.2%.",
            "The 80–89 years slice (light purple, the largest) is labelled 40.5%.",
            "Together they make up 25.2 + 40.5 = 65.7%.",
        ],
        "demo_flaw": None,
    },
    {
        "id": "mv-pie-2",
        "question": "According to the chart, what percentage of seniors go online?",
        "options": [],
        "answer": "59",
        "steps": [
            "The pie chart has three slices: 'Use SNS' 27%, 'Go online, no SNS' 32% and 'Do not go online' 41%.",
            "Seniors who go online are those who use SNS plus those who go online without using SNS.",
            "So 27% + 32% = 59% of seniors go online.",
            "Check: 59% + 41% = 100%.",
            "The answer is 41%.",
        ],
        "demo_flaw": "step 5 gives 41% (the share who do not go online), contradicting the 59% computed in step 3: final answer mismatch",
    },
    {
        "id": "mv-table-1",
        "question": "What is the mean of the numbers of cans of food collected?",
        "options": [],
        "answer": "8",
        "steps": [
            "The table lists Emmett 8, Luther 7, Bruce 10, Scott 9, Mabel 9, Roxanne 5 and Kevin 8 cans.",
            "The sum is 8 + 7 + 10 + 9 + 9 + 5 + 8 = 56.",
            "There are 7 people in the table.",
            "The mean is 56 ÷ 7 = 8.",
        ],
        "demo_flaw": None,
    },
    {
        "id": "mv-function-1",
        "question": "For x > 1, which of the three plotted curves lies highest?",
        "options": ["log_2 x", "log_e x", "log_10 x"],
        "answer": "log_2 x",
        "steps": [
            "The plot shows three curves labelled log_2 x (red), log_e x (purple) and log_10 x (blue).",
            "All three curves pass through the point (1, 0).",
            "The dashed line y = 1 is reached by the red curve at x = 2, by the purple curve at x = e and by the blue curve at x = 10.",
            "For every x > 1 the red curve is above the purple one, which is above the blue one; at the right edge they are at about 4, 2.8 and 1.2.",
            "So log_2 x lies highest.",
        ],
        "demo_flaw": None,
    },
    {
        "id": "mv-graph-1",
        "question": "In the weighted graph, what is the length of the shortest path from B to E?",
        "options": [],
        "answer": "5",
        "steps": [
            "The edge weights are A–B 7, A–E 1, F–E 3, B–C 1, C–E 5, B–D 5, C–D 3 and D–E 1; the edge A–F has no weight label.",
            "The path B → C → E has length 1 + 5 = 6.",
            "The path B → D → E has length 5 + 1 = 6.",
            "The path B → A → E has length 7 + 1 = 8.",
            "So the shortest path from B to E has length 6.",
        ],
        "demo_flaw": "step 5 jumps to a conclusion without checking B → C → D → E (1 + 3 + 1 = 5); the steps yield 6, not 5",
    },
]


def write_jsonl(out: Path = HERE / "crystal_demo.jsonl") -> Path:
    with out.open("w", encoding="utf-8") as f:
        for rec in RECORDS:
            strip = CROPS[rec["id"] + ".png"][0]
            row = {
                "id": rec["id"],
                "question": rec["question"],
                "image": f"images/{rec['id']}.png",
                "options": rec["options"],
                "answer": rec["answer"],
                "steps": rec["steps"],
                "source": f"MathVista context figure, {strip}",
                "credit": CREDIT,
                "demo_flaw": rec["demo_flaw"],
            }
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return out


def make(src: Path, out_dir: Path = OUT_DIR) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, (strip, box) in CROPS.items():
        with Image.open(src / strip) as im:
            crop = im.convert("RGB").crop(box)
        if crop.width > MAX_WIDTH:
            h = round(crop.height * MAX_WIDTH / crop.width)
            crop = crop.resize((MAX_WIDTH, h), Image.LANCZOS)
        path = out_dir / name
        crop.save(path, optimize=True)
        written.append(path)
    return written


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", type=Path, default=DEFAULT_SRC, help="folder with the MathVista strips")
    args = ap.parse_args()
    for p in make(args.src):
        with Image.open(p) as im:
            print(f"{p.relative_to(HERE)}  {im.width}x{im.height}  {p.stat().st_size // 1024} KB")
    print(f"{write_jsonl().relative_to(HERE)}  {len(RECORDS)} records")


if __name__ == "__main__":
    main()
