"""One generator interface, three backends: built-in image perturbation, an OpenAI-compatible
chat-completions endpoint, and a team's own command (job JSON on standard input, JSON on standard out).

A job asks ``generate(request)``; the backend for the request's kind comes from the generator
settings (store/jobs.generator_settings, edited by admins) with the environment as fallback for the
endpoint and its key. Every failure is a GenerationError whose message says what failed and where;
the job queue retries it with backoff and shows it to admins.
"""

from __future__ import annotations

import base64
import io
import json
import os
import subprocess
import urllib.error
import urllib.request
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from PIL import Image, UnidentifiedImageError

from qc.generators import PROMPTS, AnswerError, ImageRanges, parse_answer, perturb, render_prompt

__all__ = [
    "BACKENDS",
    "ChatBackend",
    "CommandBackend",
    "GenerationError",
    "GeneratorConfig",
    "ImageBackend",
    "Request",
    "backend_for",
    "config_from",
]

BACKENDS = ("none", "http", "command")
ENV_URL, ENV_MODEL, ENV_KEY = "STEPGATE_GENERATOR_URL", "STEPGATE_GENERATOR_MODEL", "STEPGATE_GENERATOR_KEY"


class GenerationError(Exception):
    """A generator that could not give a usable answer; the message is for admins."""


@dataclass(frozen=True)
class Request:
    """What a job asks of a generator: its kind, the fields its prompt names, a seed, image files."""

    kind: str
    fields: Mapping[str, Any]
    seed: int = 0
    images: tuple[str, ...] = ()
    parameters: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "fields": dict(self.fields),
            "seed": self.seed,
            "images": list(self.images),
            "parameters": dict(self.parameters),
        }


@dataclass(frozen=True)
class GeneratorConfig:
    """Where text jobs and the judge go. ``api_key`` is never shown back to anyone."""

    backend: str = "none"  # for synonym, syntactic, regenerate_steps, insert_error, solve
    judge_backend: str = "none"  # CRYSTAL's loop 1: off while none
    base_url: str = ""
    model: str = ""
    api_key: str = ""
    timeout_seconds: float = 60.0
    temperature: float = 1.0  # CRYSTAL phase 1 sampled at T = 1.0 (004 l.233)
    command: tuple[str, ...] = ()
    prompts: Mapping[str, str] = field(default_factory=dict)

    def prompt(self, kind: str) -> str:
        return self.prompts.get(kind) or PROMPTS[kind]


def config_from(saved: Mapping[str, Any], env: Mapping[str, str] | None = None) -> GeneratorConfig:
    """The settings admins saved, with the endpoint, model and key from the environment where unset."""
    env = os.environ if env is None else env
    command = saved.get("command") or ()
    return GeneratorConfig(
        backend=str(saved.get("backend") or "none"),
        judge_backend=str(saved.get("judge_backend") or "none"),
        base_url=str(saved.get("base_url") or env.get(ENV_URL, "")),
        model=str(saved.get("model") or env.get(ENV_MODEL, "")),
        api_key=str(saved.get("api_key") or env.get(ENV_KEY, "") or env.get("OPENAI_API_KEY", "")),
        timeout_seconds=float(saved.get("timeout_seconds") or 60.0),
        temperature=float(saved.get("temperature", 1.0)),
        command=tuple(command) if isinstance(command, list | tuple) else (str(command),),
        prompts=dict(saved.get("prompts") or {}),
    )


class Backend(Protocol):
    name: str

    def generate(self, request: Request) -> Any:
        """The answer: parsed JSON for text jobs, a list of qc.generators.Perturbed for images."""


class ChatBackend:
    """Any OpenAI-compatible POST {base_url}/chat/completions; the answer's content is read as JSON."""

    name = "http"

    def __init__(self, config: GeneratorConfig) -> None:
        if not config.base_url:
            raise GenerationError(f"the HTTP generator has no base URL: set base_url or {ENV_URL}")
        if not config.model:
            raise GenerationError(f"the HTTP generator has no model: set model or {ENV_MODEL}")
        self.config = config

    def generate(self, request: Request) -> Any:
        url = self.config.base_url.rstrip("/") + "/chat/completions"
        content: list[dict[str, Any]] | str = render_prompt(self.config.prompt(request.kind), request.fields)
        if request.images:  # multimodal: the question's figure travels with the prompt
            content = [{"type": "text", "text": content}, *map(_image_part, request.images)]
        body = {
            "model": self.config.model,
            "messages": [{"role": "user", "content": content}],
            "temperature": 0.0 if request.kind == "judge" else self.config.temperature,
            "seed": request.seed,
        }
        headers = {"Content-Type": "application/json"}
        if self.config.api_key:
            headers["Authorization"] = f"Bearer {self.config.api_key}"
        call = urllib.request.Request(url, json.dumps(body).encode(), headers, method="POST")
        try:
            with urllib.request.urlopen(call, timeout=self.config.timeout_seconds) as response:
                reply = json.loads(response.read(5_000_000))
        except urllib.error.HTTPError as exc:
            detail = exc.read(300).decode("utf-8", "replace")
            raise GenerationError(f"{url} answered HTTP {exc.code}: {detail}") from exc
        except TimeoutError as exc:
            raise GenerationError(f"{url} did not answer within {self.config.timeout_seconds:g} s") from exc
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            if isinstance(reason, TimeoutError):
                raise GenerationError(
                    f"{url} did not answer within {self.config.timeout_seconds:g} s"
                ) from exc
            raise GenerationError(f"cannot reach {url}: {reason}") from exc
        except json.JSONDecodeError as exc:
            raise GenerationError(f"{url} answered something that is not JSON") from exc
        try:
            text = reply["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            raise GenerationError(f"{url} answered without choices[0].message.content") from exc
        try:
            return parse_answer(str(text))
        except AnswerError as exc:
            raise GenerationError(f"the model's answer: {exc}") from exc


def _image_part(path: str) -> dict[str, Any]:
    data = Path(path).read_bytes()
    mime = "image/png" if data[:4] == b"\x89PNG" else "image/jpeg"
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{mime};base64,{base64.b64encode(data).decode()}"},
    }


class CommandBackend:
    """The team's own program: the job as JSON on standard input, its answer as JSON on standard output."""

    name = "command"

    def __init__(self, config: GeneratorConfig) -> None:
        if not config.command:
            raise GenerationError(
                "the command generator has no command: set it with `python app.py jobs config`"
            )
        self.config = config

    def generate(self, request: Request) -> Any:
        job = {**request.as_json(), "prompt": render_prompt(self.config.prompt(request.kind), request.fields)}
        program = " ".join(self.config.command)
        try:
            done = subprocess.run(
                list(self.config.command),
                input=json.dumps(job),
                capture_output=True,
                text=True,
                timeout=self.config.timeout_seconds,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            raise GenerationError(
                f"{program} did not answer within {self.config.timeout_seconds:g} s"
            ) from exc
        except OSError as exc:
            raise GenerationError(f"cannot run {program}: {exc.strerror or exc}") from exc
        if done.returncode != 0:
            raise GenerationError(f"{program} exited with {done.returncode}: {done.stderr.strip()[-300:]}")
        try:
            return json.loads(done.stdout)
        except json.JSONDecodeError as exc:
            raise GenerationError(
                f"{program} wrote something that is not JSON: {done.stdout[:200]!r}"
            ) from exc


class ImageBackend:
    """Built in: every image of the request perturbed by its operation ("operations", one per image, or
    one "operation" for all: docs/PROTOCOLS.md D1.4's default), seeded, with the ranges in the parameters."""

    name = "image"

    def generate(self, request: Request) -> Any:
        ops = list(
            request.parameters.get("operations")
            or [request.parameters.get("operation")] * len(request.images)
        )
        ranges = request.parameters.get("ranges") or {}
        try:
            bounds = replace(ImageRanges(), **ranges)
        except TypeError as exc:
            raise GenerationError(f"unknown image range setting: {exc}") from exc
        out = []
        for k, path in enumerate(request.images):
            try:
                with Image.open(path) as image:
                    out.append(perturb(image, str(ops[k]), request.seed + k, bounds))
            except (OSError, UnidentifiedImageError) as exc:
                raise GenerationError(f"cannot read the image {Path(path).name}: {exc}") from exc
            except ValueError as exc:
                raise GenerationError(str(exc)) from exc
        if not out:
            raise GenerationError("the item has no image to perturb")
        return out


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def backend_for(kind: str, config: GeneratorConfig) -> Backend:
    """The backend that runs this kind of job, or GenerationError saying how to configure one."""
    if kind == "image":
        return ImageBackend()
    chosen = config.judge_backend if kind == "judge" else config.backend
    if chosen == "http":
        return ChatBackend(config)
    if chosen == "command":
        return CommandBackend(config)
    setting = "judge_backend" if kind == "judge" else "backend"
    raise GenerationError(
        f"no generator is configured for {kind} jobs: an admin sets {setting}=http (with base_url and model) "
        f"or {setting}=command (python app.py jobs config {setting}=...)"
    )
