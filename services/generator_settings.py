"""The generator settings: what admins may set, their defaults, how they are checked, read and shown.

Stored as rows of generator_settings (store/jobs.py); edited by admins (the Jobs tab, `python app.py
jobs config`). The generators read them as a GeneratorConfig (services/generation.py); the job queue
and CRYSTAL's loops read their limits (LOOP_SETTINGS) here.
"""

from __future__ import annotations

from typing import Any

from qc.generators import JOB_KINDS
from services.access import OPERATOR, Action, Actor, require
from services.clock import now_utc
from services.errors import InvalidInput
from services.generation import BACKENDS, GeneratorConfig, config_from
from store import jobs as queue
from store.db import Store, Tx

__all__ = ["LOOP_SETTINGS", "SETTINGS", "configure", "generator_config", "loop_settings", "shown_settings"]

# Both loop limits are settings (issue 13); 0 means no cap. Loop 1: 2 re-entries after the first
# failure (004 l.84: "max 2 attempts"; docs/PROTOCOLS.md E1's reading). Loop 2: no cap stated, none by
# default. A job's attempts: the queue's own default (store/jobs.py).
LOOP_SETTINGS = {"loop1_max_attempts": 2, "loop2_max_restarts": 0, "job_max_attempts": queue.MAX_ATTEMPTS}

# What admins may set, and how; the command is set from the command line only (the web never
# chooses a program for the server to run).
SETTINGS = {
    "backend": "none | http | command: where text jobs go (synonym, syntactic, regenerate_steps, ...)",
    "judge_backend": "none | http | command: CRYSTAL's loop-1 judge (off while none)",
    "base_url": "the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1",
    "model": "the model name sent to the endpoint",
    "api_key": "the endpoint's key (or STEPGATE_GENERATOR_KEY / OPENAI_API_KEY in the environment)",
    "timeout_seconds": "how long one call may take",
    "temperature": "sampling temperature of generation jobs (the judge runs at 0)",
    "command": "the program of the command backend and its arguments (command line only)",
    "loop1_max_attempts": "CRYSTAL loop 1: regenerations after a failed judgement before people "
    f"(default {LOOP_SETTINGS['loop1_max_attempts']})",
    "loop2_max_restarts": "CRYSTAL loop 2: regenerations after human rejects; 0 = no cap "
    f"(default {LOOP_SETTINGS['loop2_max_restarts']})",
    "job_max_attempts": "attempts of one job (generator errors, timeouts) before it stays failed "
    f"(default {LOOP_SETTINGS['job_max_attempts']})",
}


def loop_settings(db: Store | Tx) -> dict[str, int]:
    """The loops' limits and a job's attempts, as set or by default."""
    saved = queue.generator_settings(db)
    return {key: int(saved.get(key, default)) for key, default in LOOP_SETTINGS.items()}


def generator_config(store: Store | Tx) -> GeneratorConfig:
    """Where text jobs and the judge go, as set (the environment fills in the endpoint and key)."""
    return config_from(queue.generator_settings(store))


def _clean(key: str, value: Any, user: Actor) -> Any:
    """A setting as stored, or InvalidInput; the command backend's program only from the command line."""
    if key not in SETTINGS and not key.startswith("prompt."):
        raise InvalidInput(f"unknown generator setting {key!r}: known are {', '.join(SETTINGS)}, prompt.KIND")
    if key == "command" and user is not OPERATOR:
        raise InvalidInput("the command backend's program is set from the command line only (jobs config)")
    if key in ("backend", "judge_backend") and value not in BACKENDS:
        raise InvalidInput(f"{key} must be one of {', '.join(BACKENDS)}, not {value!r}")
    if key in LOOP_SETTINGS:
        whole = int(value) if isinstance(value, int) or str(value).strip().isdigit() else -1
        if not 0 <= whole <= 1000 or (key == "job_max_attempts" and whole < 1):
            raise InvalidInput(f"{key} must be a whole number from {int(key == 'job_max_attempts')} to 1000")
        return whole
    if key in ("timeout_seconds", "temperature"):
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InvalidInput(f"{key} must be a number, not {value!r}") from None
        if not 0 <= number <= (3600 if key == "timeout_seconds" else 2):
            raise InvalidInput(f"{key}: {number:g} is out of range")
        return number
    if key == "command":
        return value.split() if isinstance(value, str) else list(value)
    if not isinstance(value, str) or len(value) > 20_000:
        raise InvalidInput(f"{key} must be text of at most 20,000 characters")
    return value


def configure(store: Store, user: Actor, changes: dict[str, Any]) -> GeneratorConfig:
    """Change generator settings (an empty value removes one); ``prompt.KIND`` edits a prompt template."""
    require(user, Action.ADMINISTER)
    saved = queue.generator_settings(store)
    prompts = dict(saved.get("prompts") or {})
    update: dict[str, Any] = {}
    for key, value in changes.items():
        if key.startswith("prompt."):
            kind = key.removeprefix("prompt.")
            if kind not in JOB_KINDS:
                raise InvalidInput(f"no job kind {kind!r}: prompts exist for {', '.join(JOB_KINDS)}")
            text = _clean(key, value, user)
            if text.strip():
                prompts[kind] = text
            else:
                prompts.pop(kind, None)
            update["prompts"] = prompts
        elif value in ("", None):
            update[key] = None
        else:
            update[key] = _clean(key, value, user)
    with store.writing() as tx:
        queue.set_generator_settings(tx, update, user.name, now_utc())
    return generator_config(store)


def shown_settings(config: GeneratorConfig) -> dict[str, Any]:
    """The settings as admins may see them: the key only as set or not."""
    return {
        "backend": config.backend,
        "judge_backend": config.judge_backend,
        "base_url": config.base_url,
        "model": config.model,
        "api_key": "set" if config.api_key else "not set",
        "timeout_seconds": config.timeout_seconds,
        "temperature": config.temperature,
        "command": " ".join(config.command),
    }
