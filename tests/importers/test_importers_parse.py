"""The importers on the real benchmark files and on small files made to break them.

Every bad line must end as exactly one problem whose line number and field are right.
"""

from __future__ import annotations

import base64
import io
import json
import resource
import struct
import zlib
from collections import Counter
from pathlib import Path

import pytest
from PIL import Image

from importers import FORMATS, ImportFormatError, detect_format, parse_file
from importers.common import LineError, coerce_int_list, coerce_steps
from tasks import NO_ERROR
from tests.conftest import PRMBENCH_FILE, QWQ_FILE

PRMBENCH = PRMBENCH_FILE
QWQ = QWQ_FILE


def write_lines(path: Path, lines: list) -> Path:
    """Write JSONL: dicts as JSON, str as text, bytes as they are (for broken encodings)."""
    out = b""
    for line in lines:
        if isinstance(line, dict):
            line = json.dumps(line)
        out += (line if isinstance(line, bytes) else line.encode("utf-8")) + b"\n"
    path.write_bytes(out)
    return path


def problems_by_line(result) -> dict[int, str]:
    lines = [p.line for p in result.problems]
    assert len(lines) == len(set(lines)), "a line must give exactly one problem"
    return {p.line: p.reason for p in result.problems}


def pb(id_: str, label: int = -1, steps=("a", "b", "c"), **extra) -> dict:
    row = {"id": id_, "generator": "m", "problem": "p?", "steps": list(steps), "final_answer_correct": True}
    return {**row, "label": label, **extra}


def prm(idx: str = "p1", cls: str = "confidence", error_steps=(2,), n_steps: int = 6, **extra) -> dict:
    steps = [f"step {i}" for i in range(1, n_steps + 1)]
    row = {
        "idx": idx,
        "question": "q?",
        "original_question": "q?",
        "modified_question": "q?",
        "original_process": steps,
        "modified_process": steps,
        "modified_steps": list(error_steps),
        "error_steps": list(error_steps),
        "reason": "why",
        "classification": cls,
    }
    return {**row, **extra}


def png_bytes(size=(4, 3), color=(200, 10, 10)) -> bytes:
    buf = io.BytesIO()
    Image.new("RGB", size, color).save(buf, format="PNG")
    return buf.getvalue()


def bomb_png(width: int, height: int) -> bytes:
    """A valid 1-bit PNG of huge dimensions, built row by row so that making it costs kilobytes."""
    row = b"\x00" * (1 + (width + 7) // 8)
    comp = zlib.compressobj(9)
    idat = b"".join(comp.compress(row) for _ in range(height)) + comp.flush()

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", idat) + chunk(b"IEND", b"")


# --- the real PRMBench subset ---------------------------------------------------------------------


def test_real_prmbench_file_imports_all_394_items_with_unique_ids():
    result = parse_file(PRMBENCH)
    assert result.format == "prmbench"
    assert len(result.records) == 394
    assert result.problems == []
    assert result.lines_read == 394
    ids = [r.external_id for r in result.records]
    assert len(set(ids)) == 394
    # idx alone repeats: every error type reuses the idx of the question it modified.
    idx_counts = Counter(r.meta["idx"] for r in result.records)
    assert idx_counts["prm_test_p1_0"] > 1
    assert sum(1 for c in idx_counts.values() if c > 1) == 140


def test_first_prmbench_item_has_its_1_based_steps_converted_to_0_based():
    first = parse_file(PRMBENCH).records[0]
    assert first.external_id == "prm_test_p1_0:confidence"
    assert first.line == 1
    assert first.error_type == "confidence"
    assert first.error_steps == [4, 5]  # [5, 6] in the file
    assert first.modified_steps == [4, 5]
    assert first.earliest_error == 4
    assert len(first.steps["original"]) == len(first.steps["modified"]) == 6
    assert first.steps["modified"][4].startswith("This simplifies to $2p=0.58$")
    assert first.rationale.startswith("Steps 5 and 6 contain confident hallucinations")
    assert first.question.startswith("Three pencils and a jumbo eraser cost $\\$1.24$")


def test_modified_question_is_shown_when_the_question_itself_was_modified():
    records = {r.external_id: r for r in parse_file(PRMBENCH).records}
    changed = [
        r
        for r in records.values()
        if r.meta["questions"]["modified_question"] != r.meta["questions"]["original_question"]
    ]
    assert len(changed) == 29
    assert all(r.question == r.meta["questions"]["modified_question"] for r in changed)


def test_real_multi_solutions_item_keeps_its_steps_and_answer():
    result = parse_file(PRMBENCH)
    multi = [r for r in result.records if r.error_type == "multi_solutions"]
    assert len(multi) == 10
    item = next(r for r in multi if r.external_id == "prm_test_p1_0:multi_solutions")
    assert item.line == 97
    assert len(item.steps["modified"]) == 11 and len(item.steps["original"]) == 6
    assert item.steps["modified"][0].startswith("Step 1. I need to solve this problem")
    assert item.error_steps == [] and item.earliest_error == NO_ERROR
    assert item.reference_answer == "29"
    assert item.meta["original_response"].lstrip().startswith("Step 1.")


def test_multi_solutions_steps_given_as_python_repr_strings_are_parsed(tmp_path):
    raw = json.loads(PRMBENCH.read_text(encoding="utf-8").splitlines()[96])
    assert raw["classification"] == "multi_solutions"
    as_repr = {
        **raw,
        "original_process": repr(raw["original_process"]),
        "modified_process": repr(raw["modified_process"]),
        "error_steps": "[]",
        "modified_steps": "[]",
    }
    mixed_quotes = prm(
        "p9", "multi_solutions", error_steps=(), modified_process="[\"first\", 'it\\'s second']"
    )
    as_json_string = prm("p8", error_steps=(), modified_process=json.dumps(["x", "y"]))
    result = parse_file(write_lines(tmp_path / "multi.jsonl", [as_repr, mixed_quotes, as_json_string]))
    assert result.problems == []
    first, second, third = result.records
    assert first.steps["modified"] == raw["modified_process"]
    assert first.steps["original"] == raw["original_process"]
    assert first.error_steps == [] and first.earliest_error == NO_ERROR
    assert second.steps["modified"] == ["first", "it's second"]
    assert third.steps["modified"] == ["x", "y"]


def test_real_step_numbers_past_the_last_step_are_dropped_with_a_warning():
    result = parse_file(PRMBENCH)
    assert len({w.line for w in result.warnings}) == 27
    item = next(r for r in result.records if r.external_id == "prm_test_p1_29:confidence")
    assert item.line == 28
    assert item.error_steps == [51]  # [52, 54] in the file, which has 53 modified steps
    assert item.meta["dropped_step_numbers"] == {"error_steps": [54], "modified_steps": [54]}
    reasons = [w.reason for w in result.warnings if w.line == 28]
    assert reasons[0] == (
        "error_steps: step 54 is outside 1..53 (1-based, modified_process has 53 steps); dropped, the item was kept"
    )


# --- the real QwQ annotation export ---------------------------------------------------------------


def test_real_qwq_export_imports_all_174_items():
    result = parse_file(QWQ)
    assert result.format == "qwq"
    assert len(result.records) == 174 and result.problems == [] and result.warnings == []
    assert len({r.external_id for r in result.records}) == 174
    assert Counter(r.final_answer_correct for r in result.records) == {True: 165, False: 9}


def test_first_qwq_item_carries_question_steps_and_the_human_verdict():
    first = parse_file(QWQ).records[0]
    assert first.external_id == "7044525c-7eed-4e4e-bfce-d86e6651f5ae"
    assert first.question.startswith("Three pencils and a jumbo eraser cost $\\$1.24$")
    assert first.final_answer_correct is True
    assert first.meta["verdicts"] == {"correct": "true", "same": "false"}
    assert first.meta["solution_same_as_reference"] is False
    assert first.reference_answer == "29"
    assert len(first.steps["solution"]) == 11 and len(first.steps["reference"]) == 6
    assert first.steps["reference"][0].startswith("Let's call the price of a pencil p")
    assert first.error_type == "one_question_multi_answers"
    assert first.earliest_error is None  # a verdict on the whole solution, not on a step


def test_qwq_bad_verdict_and_missing_custom_are_problems(tmp_path):
    base = json.loads(QWQ.read_text(encoding="utf-8").splitlines()[0])
    bad_verdict = json.loads(json.dumps(base))
    bad_verdict["data_id"] = "x2"
    bad_verdict["evaluation"]["conversation_evaluation"]["correct"] = "maybe"
    no_custom = {k: v for k, v in base.items() if k != "custom"} | {"data_id": "x3"}
    result = parse_file(write_lines(tmp_path / "q.jsonl", [base, bad_verdict, no_custom]), "qwq")
    assert len(result.records) == 1
    assert problems_by_line(result) == {
        2: "evaluation.conversation_evaluation.correct: expected true or false, got 'maybe'",
        3: "custom: missing",
    }


def test_detect_format_on_the_real_files():
    assert detect_format(PRMBENCH) == "prmbench"
    assert detect_format(QWQ) == "qwq"


# --- ProcessBench -----------------------------------------------------------------------------------


def test_processbench_labels_minus_one_and_zero_import_and_out_of_range_labels_are_problems(tmp_path):
    path = write_lines(
        tmp_path / "pb.jsonl",
        [
            pb("gsm8k-0", -1),
            pb("gsm8k-1", 0),
            pb("gsm8k-2", 2),
            pb("gsm8k-3", 3),
            pb("gsm8k-4", -2),
            pb("x", True),
        ],
    )
    result = parse_file(path)
    assert result.format == "processbench"
    assert [(r.external_id, r.earliest_error, r.line) for r in result.records] == [
        ("gsm8k-0", NO_ERROR, 1),
        ("gsm8k-1", 0, 2),
        ("gsm8k-2", 2, 3),
    ]
    assert result.records[0].source == "gsm8k"
    assert result.records[0].steps == {"solution": ["a", "b", "c"]}
    assert problems_by_line(result) == {
        4: "label: 3 is outside -1..2 (0-based, -1 = no error; steps has 3 steps)",
        5: "label: -2 is outside -1..2 (0-based, -1 = no error; steps has 3 steps)",
        6: "label: expected an integer, got a boolean",
    }
    assert result.lines_read == len(result.records) + len(result.problems)


def test_malformed_lines_each_give_one_problem_naming_the_field(tmp_path):
    path = write_lines(
        tmp_path / "pb.jsonl",
        [
            pb("ok-1"),
            '{"id": "broken", "steps": [',
            "[1, 2, 3]",
            pb("t-1") | {"steps": 7},
            {k: v for k, v in pb("m-1").items() if k != "problem"},
            {k: v for k, v in pb("m-2").items() if k != "label"},
            pb("t-2", steps=["a", 5]),
            pb("t-3", steps=[]),
            b'{"id": "enc", "problem": "caf\xe9"}',
            pb("ok-1", 0),
            pb("ok-2", 1),
        ],
    )
    result = parse_file(path, "processbench")
    assert [r.external_id for r in result.records] == ["ok-1", "ok-2"]
    problems = problems_by_line(result)
    assert problems == {
        2: problems[2],
        3: "json: expected a JSON object {...}, got a list",
        4: "steps: expected a list of step texts, got a number",
        5: "problem: missing",
        6: "label: missing",
        7: "steps: step 2 is a number, expected text",
        8: "steps: has no steps",
        9: "encoding: not valid UTF-8 (byte 0xe9 at column 30)",
        10: "id: duplicate id 'ok-1', first seen on line 1",
    }
    assert problems[2].startswith("json: not valid JSON (")
    assert result.lines_read == 11


def test_an_unpaired_surrogate_escape_is_refused_but_an_escaped_emoji_is_kept(tmp_path):
    emoji = json.dumps(pb("a") | {"problem": "smile \U0001f600"})  # written as \\ud83d\\ude00
    lone = json.dumps(pb("b")).replace('"p?"', '"p\\ud800?"')
    result = parse_file(write_lines(tmp_path / "pb.jsonl", [emoji, lone]))
    assert result.records[0].question == "smile \U0001f600"
    assert problems_by_line(result) == {
        2: "problem: holds an unpaired surrogate escape (\\ud800-\\udfff), not a character"
    }


def test_blank_lines_are_ignored_but_still_counted_for_line_numbers(tmp_path):
    path = write_lines(tmp_path / "pb.jsonl", ["", pb("a"), "   ", "", "{bad", "\t", pb("b")])
    result = parse_file(path)
    assert [r.line for r in result.records] == [2, 7]
    assert list(problems_by_line(result)) == [5]
    assert result.lines_read == 3


def test_label_minus_one_with_a_wrong_final_answer_is_flagged(tmp_path):
    result = parse_file(write_lines(tmp_path / "pb.jsonl", [pb("a", -1, final_answer_correct=False)]))
    assert len(result.records) == 1
    assert [(w.line, w.reason) for w in result.warnings] == [
        (1, "label: -1 (all steps correct) but final_answer_correct is false")
    ]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n"])
def test_an_empty_file_is_a_whole_file_error_naming_it(tmp_path, content):
    path = tmp_path / "empty.jsonl"
    path.write_bytes(content)
    with pytest.raises(ImportFormatError, match=r"empty\.jsonl: the file is empty"):
        parse_file(path)
    with pytest.raises(ImportFormatError, match=r"empty\.jsonl: the file is empty"):
        parse_file(path, "processbench")


def test_whole_file_errors_name_the_file(tmp_path):
    with pytest.raises(ImportFormatError, match=r"nowhere\.jsonl: file not found"):
        parse_file(tmp_path / "nowhere.jsonl")
    with pytest.raises(ImportFormatError, match="is not a regular file"):
        parse_file(tmp_path)
    path = write_lines(tmp_path / "pb.jsonl", [pb("a")])
    with pytest.raises(ImportFormatError, match=r"pb\.jsonl: unknown format 'xml'"):
        parse_file(path, "xml")
    array = tmp_path / "array.json"
    array.write_text('[{"id": 1},\n {"id": 2}]\n')
    with pytest.raises(ImportFormatError, match=r"array\.json: holds a JSON array"):
        parse_file(array)
    assert set(FORMATS) == {
        "stepgate",
        "prmbench",
        "processbench",
        "crystal",
        "qwq",
        "steppairs",
        "jsonl",
        "csv",
        "parquet",
    }


# --- PRMBench, synthetic ----------------------------------------------------------------------------


def test_prmbench_step_numbers_are_validated_against_modified_process(tmp_path):
    path = write_lines(
        tmp_path / "prm.jsonl",
        [
            prm("p1", error_steps=(1, 6)),
            prm("p2", error_steps=(0, 2)),
            prm("p3", error_steps=(2, 9)),
            prm("p4", error_steps=(9,)),
            prm("p5", error_steps=("two",)),
            {k: v for k, v in prm("p6").items() if k != "error_steps"},
            prm("p1", error_steps=(3,)),
            prm("p7") | {"error_steps": "[2, 3]", "modified_steps": "[2, 3]"},
        ],
    )
    result = parse_file(path)
    records = {r.external_id: r for r in result.records}
    assert records["p1:confidence"].error_steps == [0, 5]
    assert records["p3:confidence"].error_steps == [1]
    assert records["p7:confidence"].error_steps == [1, 2]  # a JSON-encoded string, as CSV exports carry
    assert problems_by_line(result) == {
        2: "error_steps: step 0 is outside 1..6 (1-based, modified_process has 6 steps)",
        4: "error_steps: no step of [9] lies within 1..6 (1-based, modified_process has 6 steps)",
        5: "error_steps: 'two' is not a step number",
        6: "error_steps: missing",
        7: "idx: duplicate id 'p1:confidence', first seen on line 1",
    }
    assert [(w.line, w.reason) for w in result.warnings] == [
        (
            3,
            "error_steps: step 9 is outside 1..6 (1-based, modified_process has 6 steps); dropped, the item was kept",
        ),
        (
            3,
            "modified_steps: step 9 is outside 1..6 (1-based, modified_process has 6 steps); dropped, the item was kept",
        ),
    ]


def test_prmbench_same_idx_with_another_error_type_is_another_item(tmp_path):
    result = parse_file(write_lines(tmp_path / "prm.jsonl", [prm("p1", "confidence"), prm("p1", "circular")]))
    assert [r.external_id for r in result.records] == ["p1:confidence", "p1:circular"]


def test_prmbench_image_is_loaded_relative_to_the_file(tmp_path):
    (tmp_path / "figs").mkdir()
    (tmp_path / "figs" / "a.png").write_bytes(png_bytes((5, 7)))
    path = write_lines(
        tmp_path / "prm.jsonl", [prm("p1", image="figs/a.png"), prm("p2", images=["figs/b.png"])]
    )
    result = parse_file(path)
    [image] = result.records[0].images
    assert (image.origin, image.mime, image.width, image.height) == ("figs/a.png", "image/png", 5, 7)
    assert problems_by_line(result)[2].startswith("images: 'figs/b.png' not found")


# --- CRYSTAL and images -----------------------------------------------------------------------------


def crystal(id_: str, image=None, **extra) -> dict:
    row = {"id": id_, "question": "What is shown?", "answer": 3, "candidate_steps": ["look", "count"]}
    if image is not None:
        row["image"] = image
    return {**row, **extra}


def test_crystal_images_from_a_path_base64_a_data_url_and_a_file_url(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "fig 1.png").write_bytes(png_bytes((6, 4)))
    jpeg = io.BytesIO()
    Image.new("RGB", (3, 2)).save(jpeg, format="JPEG")
    b64 = base64.b64encode(png_bytes((2, 9))).decode()
    file_url = (tmp_path / "img" / "fig 1.png").as_uri()
    path = write_lines(
        tmp_path / "c.jsonl",
        [
            crystal("c1", "img/fig 1.png", options={"A": "2", "B": "3"}, source="MathVista"),
            crystal("c2", b64),
            crystal("c3", "data:image/jpeg;base64," + base64.b64encode(jpeg.getvalue()).decode()),
            crystal("c4", file_url),
            {"id": "c5", "question": "q", "steps": ["s"], "answer": "x"},
            {"id": "c6", "question": "q", "reference_steps": "['r1', 'r2']", "image": None},
        ],
    )
    result = parse_file(path)
    assert result.format == "crystal" and result.problems == []
    c1, c2, c3, c4, c5, c6 = result.records
    assert (c1.images[0].width, c1.images[0].height) == (6, 4)
    assert c1.options == ["A. 2", "B. 3"] and c1.source == "MathVista" and c1.reference_answer == "3"
    assert c1.steps == {"candidate": ["look", "count"]}
    assert (c2.images[0].origin, c2.images[0].width, c2.images[0].height) == ("base64", 2, 9)
    assert c3.images[0].mime == "image/jpeg"
    assert c4.images[0].origin == file_url
    assert c5.images == [] and c5.steps == {"candidate": ["s"]}
    assert c6.steps == {"candidate": ["r1", "r2"]} and c6.meta["steps_field"] == "reference_steps"


def test_unsafe_or_broken_images_are_refused_with_a_reason(tmp_path):
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes())
    (data_dir / "escape.png").symlink_to(outside)
    good = png_bytes((40, 40))
    (data_dir / "truncated.png").write_bytes(good[: len(good) // 2])
    (data_dir / "text.png").write_text("not an image at all")
    (data_dir / "ok.png").write_bytes(good)
    path = write_lines(
        data_dir / "c.jsonl",
        [
            crystal("c1", "../../etc/passwd"),
            crystal("c2", "/etc/passwd"),
            crystal("c3", "escape.png"),
            crystal("c4", str(outside)),
            crystal("c5", "missing.png"),
            crystal("c6", "truncated.png"),
            crystal("c7", "text.png"),
            crystal("c8", "https://example.com/a.png"),
            crystal("c9", outside.as_uri()),
            crystal("c10", "ok.png"),
            crystal("c11", "data:image/png;base64,@@@"),
        ],
    )
    result = parse_file(path)
    assert [r.external_id for r in result.records] == ["c10"]
    problems = problems_by_line(result)
    assert problems[1] == "image: '../../etc/passwd' points outside the data file's folder; refused"
    assert problems[2] == "image: '/etc/passwd' points outside the data file's folder; refused"
    assert problems[3] == "image: 'escape.png' points outside the data file's folder; refused"
    assert problems[4].endswith("points outside the data file's folder; refused")
    assert problems[5].startswith("image: 'missing.png' not found")
    assert problems[6].startswith("image: 'truncated.png' is a corrupt or truncated image")
    assert problems[7].startswith("image: 'text.png' is not an image of a supported format")
    assert problems[8] == "image: https:// URLs are not fetched; give a file path or base64 instead"
    assert problems[9].endswith("points outside the data file's folder; refused")
    assert problems[11].startswith("image: base64 image data is not valid base64")


@pytest.mark.parametrize(("width", "height"), [(20_000, 20_000), (8_000, 8_000)])
def test_decompression_bombs_are_refused_without_decoding_them(tmp_path, width, height):
    # 20000x20000 trips Pillow's own DecompressionBombError; 8000x8000 (64 MP) only our 50 MP limit.
    bomb = bomb_png(width, height)
    assert len(bomb) < 1_000_000
    (tmp_path / "bomb.png").write_bytes(bomb)
    path = write_lines(
        tmp_path / "c.jsonl", [crystal("c1", "bomb.png"), crystal("c2", base64.b64encode(bomb).decode())]
    )
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    result = parse_file(path)
    grown_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert result.records == []
    problems = problems_by_line(result)
    assert "decompression bomb" in problems[1] and problems[1].startswith("image: 'bomb.png'")
    assert "decompression bomb" in problems[2]
    assert grown_mb < 100


def test_an_image_over_the_size_limit_is_refused(tmp_path):
    (tmp_path / "big.png").write_bytes(png_bytes() + b"\0" * 2_000_000)
    path = write_lines(tmp_path / "c.jsonl", [crystal("c1", "big.png")])
    result = parse_file(path, max_image_bytes=1_000_000)
    assert problems_by_line(result) == {1: "image: 'big.png' is 1.9 MB, over the 1 MB limit"}


# --- step pairs ---------------------------------------------------------------------------------------


def test_step_pairs_from_jsonl_and_csv(tmp_path):
    rows = [
        {"id": "s1", "predicted": "x = 2", "reference": "x equals 2", "similarity": 0.8, "item": "gsm8k-1"},
        {"id": "s2", "predicted": "y", "reference": "z", "similarity": 1.7},
        {"id": "s3", "reference": "z"},
    ]
    result = parse_file(write_lines(tmp_path / "pairs.jsonl", rows))
    assert result.format == "steppairs"
    [s1] = result.records
    assert s1.steps == {"predicted": ["x = 2"], "reference": ["x equals 2"]}
    assert s1.meta["similarity"] == 0.8 and s1.question == "gsm8k-1"
    assert problems_by_line(result) == {
        2: "similarity: 1.7 is outside -1..1 (a cosine similarity)",
        3: "predicted: missing",
    }
    csv_path = tmp_path / "pairs.csv"
    csv_path.write_text("id,predicted,reference,similarity\np1,a,b,0.1\np2,c,d,high\n")
    result = parse_file(csv_path)
    assert result.format == "steppairs"
    assert [r.meta["similarity"] for r in result.records] == [0.1]
    assert problems_by_line(result) == {3: "similarity: expected a finite number, got 'high'"}


# --- plain tables with a column mapping ---------------------------------------------------------------

MAPPING = {"external_id": "id", "question": "prompt", "steps": "solution_steps", "earliest_error": "label"}


def test_csv_with_a_mapping_reports_row_numbers_with_the_header_as_line_1(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(
        b"id,prompt,solution_steps,label\n"
        b'r1,Q1,"[""s1"", ""s2""]",1\n'
        b'r2,Q2,"first\nsecond\nthird",-1\n'
        b"r3,Q3,\"['a', 'b']\",\n"
        b'r4,Q4,"[""s1""]",5\n'
        b'r5,Q\xff5,"[]",0\n'
        b"\n"
        b'r6,,"[""s""]",0\n'
        b"r7,Q7,x,0,extra\n"
    )
    assert detect_format(path) == "csv"
    result = parse_file(path, mapping=MAPPING)
    assert result.format == "csv"
    assert [(r.external_id, r.line, r.steps["solution"], r.earliest_error) for r in result.records] == [
        ("r1", 2, ["s1", "s2"], 1),
        ("r2", 3, ["first", "second", "third"], NO_ERROR),
        ("r3", 4, ["a", "b"], None),
    ]
    assert problems_by_line(result) == {
        5: "label (earliest_error): 5 is outside -1..0 (0-based, -1 = no error; solution has 1 steps)",
        6: "prompt: not valid UTF-8 (byte 0xff)",
        8: "prompt (question): is empty",
        9: "csv: row has 5 cells but the header has 4 columns",
    }


def test_parquet_with_a_mapping(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table(
        {
            "id": ["a", "b", "c"],
            "prompt": ["Q1", "Q2", None],
            "solution_steps": [["s1", "s2"], ["t1"], ["u"]],
            "label": [0, 3, -1],
        }
    )
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    assert detect_format(path) == "parquet"
    result = parse_file(path, mapping=MAPPING)
    assert [(r.external_id, r.line, r.earliest_error) for r in result.records] == [("a", 1, 0)]
    assert problems_by_line(result) == {
        2: "label (earliest_error): 3 is outside -1..0 (0-based, -1 = no error; solution has 1 steps)",
        3: "prompt (question): missing",
    }


def test_jsonl_with_a_mapping_reads_nested_columns(tmp_path):
    rows = [
        {"uid": 1, "meta": {"q": "Q1"}, "chain": "a\n\nb\nstill b", "errs": [1]},
        {"uid": 2, "meta": {"q": "Q2"}, "chain": ["x"], "errs": [4]},
    ]
    mapping = {"external_id": "uid", "question": "meta.q", "steps": "chain", "error_steps": "errs"}
    result = parse_file(write_lines(tmp_path / "t.jsonl", rows), mapping=mapping)
    assert result.format == "jsonl"
    [r1] = result.records
    assert (r1.external_id, r1.question, r1.steps["solution"], r1.error_steps) == (
        "1",
        "Q1",
        ["a", "b\nstill b"],
        [1],
    )
    assert problems_by_line(result) == {
        2: "errs (error_steps): step 4 is outside 0..0 (0-based, solution has 1 steps)"
    }


def test_a_missing_mapped_column_fails_the_file_listing_the_columns_present(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("id,question,steps\n1,q,a\n")
    with pytest.raises(ImportFormatError) as caught:
        parse_file(path, mapping=MAPPING)
    message = str(caught.value)
    assert message.startswith("t.csv: mapped column 'prompt' (for question)")
    assert "column 'solution_steps' (for steps)" in message
    assert message.endswith("columns present: id, question, steps")
    with pytest.raises(
        ImportFormatError, match=r"need a column mapping.*columns present: id, question, steps"
    ):
        parse_file(path)
    with pytest.raises(
        ImportFormatError, match="a column mapping applies to jsonl, csv, parquet, not to prmbench"
    ):
        parse_file(path, "prmbench", mapping=MAPPING)


def test_a_prmbench_csv_export_is_detected_and_parsed(tmp_path):
    path = tmp_path / "prm.csv"
    row = prm("p1", error_steps=(2,))
    header = list(row)
    cells = [json.dumps(v) if isinstance(v, list) else v for v in row.values()]
    import csv

    with path.open("w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(header)
        writer.writerow(cells)
    assert detect_format(path) == "prmbench"
    result = parse_file(path)
    assert result.problems == [] and result.records[0].error_steps == [1]


# --- coercion ---------------------------------------------------------------------------------------


def test_python_repr_lists_are_read_without_running_code():
    assert coerce_steps("['a', \"b\"]", "steps") == ["a", "b"]
    with pytest.raises(LineError, match="neither a JSON list nor a Python list"):
        coerce_steps("[__import__('os').system('echo hi')]", "steps")
    with pytest.raises(LineError, match="steps: step 1 is a number"):
        coerce_steps("[1, 'a']", "steps")
    assert coerce_int_list("5, 6", "error_steps") == [5, 6]
    assert coerce_int_list([5.0, "6"], "error_steps") == [5, 6]


def test_ten_thousand_items_parse_in_well_under_a_second(tmp_path):
    path = tmp_path / "big.jsonl"
    steps = [f"Step {i}: some reasoning text that is about this long, with $x^2$." for i in range(10)]
    with path.open("w") as fh:
        for i in range(10_000):
            fh.write(json.dumps(pb(f"gsm8k-{i}", i % 11 - 1, steps=steps)) + "\n")
    # Speed is measured by bench/run.py; here only that a large file parses whole.
    result = parse_file(path)
    assert len(result.records) == 10_000 and result.problems == []


def test_a_folder_given_as_the_file_is_a_whole_file_error(tmp_path):
    folder = tmp_path / "not-a-file.jsonl"
    folder.mkdir()
    with pytest.raises(ImportFormatError, match=r"not-a-file\.jsonl"):
        parse_file(folder)


def test_every_field_of_a_record_is_stored_and_exported_or_named_as_kept_apart() -> None:
    """A field added to ItemRecord is in the version's columns and the exports' (VERSION_VALUES,
    VERSION_LISTS), or one of the parts stored apart; never silently left out of both."""
    from dataclasses import fields

    from importers.records import VERSION_LISTS, VERSION_VALUES, ItemRecord

    apart = {"external_id", "steps", "images", "meta", "line"}
    assert {f.name for f in fields(ItemRecord)} == {*VERSION_VALUES, *VERSION_LISTS, *apart}
