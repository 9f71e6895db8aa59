"""The schema as ordered migrations recorded in `schema_migrations`; an old file upgrades in place.

A migration is never edited once it has shipped: add a new one. The SQL sticks to what DuckDB and
PostgreSQL both run (sequences, plain types, JSON kept as text), so that the store can move to
PostgreSQL for teams that outgrow one machine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from store.db import Tx

__all__ = ["MIGRATIONS", "migrate", "schema_version"]

_V1_BASE = """
CREATE SEQUENCE dataset_ids START 1;
CREATE TABLE datasets (
    id INTEGER PRIMARY KEY DEFAULT nextval('dataset_ids'),
    name VARCHAR NOT NULL UNIQUE,
    task VARCHAR NOT NULL,
    source_format VARCHAR,
    settings VARCHAR NOT NULL DEFAULT '{}',
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE SEQUENCE item_ids START 1;
CREATE TABLE items (
    id BIGINT PRIMARY KEY DEFAULT nextval('item_ids'),
    dataset_id INTEGER NOT NULL,
    external_id VARCHAR NOT NULL,
    current_version_id BIGINT,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    UNIQUE (dataset_id, external_id)
);
CREATE SEQUENCE version_ids START 1;
CREATE TABLE item_versions (
    id BIGINT PRIMARY KEY DEFAULT nextval('version_ids'),
    item_id BIGINT NOT NULL,
    version INTEGER NOT NULL,
    parent_id BIGINT,
    reason VARCHAR NOT NULL,
    content_hash VARCHAR NOT NULL,
    question VARCHAR NOT NULL,
    reference_answer VARCHAR,
    reference_solution VARCHAR,
    error_type VARCHAR,
    rationale VARCHAR,
    source VARCHAR,
    final_answer_correct BOOLEAN,
    earliest_error INTEGER,
    error_steps VARCHAR NOT NULL DEFAULT '[]',
    modified_steps VARCHAR NOT NULL DEFAULT '[]',
    options VARCHAR NOT NULL DEFAULT '[]',
    meta VARCHAR NOT NULL DEFAULT '{}',
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE TABLE steps (
    version_id BIGINT NOT NULL,
    role VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    text VARCHAR NOT NULL,
    PRIMARY KEY (version_id, role, position)
);
CREATE TABLE images (
    hash VARCHAR PRIMARY KEY,
    mime VARCHAR NOT NULL,
    width INTEGER NOT NULL,
    height INTEGER NOT NULL,
    size_bytes BIGINT NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE TABLE version_images (
    version_id BIGINT NOT NULL,
    position INTEGER NOT NULL,
    image_hash VARCHAR NOT NULL,
    PRIMARY KEY (version_id, position)
);
CREATE SEQUENCE annotator_ids START 1;
CREATE TABLE annotators (
    id INTEGER PRIMARY KEY DEFAULT nextval('annotator_ids'),
    name VARCHAR NOT NULL UNIQUE,
    role VARCHAR NOT NULL,
    password_hash VARCHAR,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE TABLE item_state (
    item_id BIGINT PRIMARY KEY,
    dataset_id INTEGER NOT NULL,
    target INTEGER NOT NULL,
    status VARCHAR NOT NULL DEFAULT 'open',
    decision VARCHAR,
    settled_at INTEGER,
    updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE TABLE assignments (
    item_id BIGINT NOT NULL,
    annotator_id INTEGER NOT NULL,
    dataset_id INTEGER NOT NULL,
    status VARCHAR NOT NULL,
    leased_at TIMESTAMP NOT NULL,
    expires_at TIMESTAMP NOT NULL,
    updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (item_id, annotator_id)
);
CREATE SEQUENCE annotation_ids START 1;
CREATE TABLE annotations (
    id BIGINT PRIMARY KEY DEFAULT nextval('annotation_ids'),
    request_id VARCHAR NOT NULL UNIQUE,
    annotator_id INTEGER NOT NULL,
    item_id BIGINT NOT NULL,
    version_id BIGINT NOT NULL,
    dataset_id INTEGER NOT NULL,
    task VARCHAR NOT NULL,
    payload VARCHAR NOT NULL,
    seconds_spent DOUBLE,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE SEQUENCE job_ids START 1;
CREATE TABLE jobs (
    id BIGINT PRIMARY KEY DEFAULT nextval('job_ids'),
    kind VARCHAR NOT NULL,
    item_id BIGINT NOT NULL,
    version_id BIGINT NOT NULL,
    status VARCHAR NOT NULL DEFAULT 'queued',
    reason VARCHAR,
    payload VARCHAR NOT NULL DEFAULT '{}',
    result_version_id BIGINT,
    error VARCHAR,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
"""

# Agreement studies (issue 4): a drawn sample of items given to K blind raters.
_V2_STUDIES = """
CREATE SEQUENCE study_ids START 1;
CREATE TABLE studies (
    id INTEGER PRIMARY KEY DEFAULT nextval('study_ids'),
    dataset_id INTEGER NOT NULL,
    name VARCHAR NOT NULL UNIQUE,
    raters INTEGER NOT NULL,
    stratify_by VARCHAR,
    seed INTEGER NOT NULL DEFAULT 0,
    created_by INTEGER,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp
);
CREATE TABLE study_items (
    study_id INTEGER NOT NULL,
    item_id BIGINT NOT NULL,
    stratum VARCHAR,
    PRIMARY KEY (study_id, item_id)
);
CREATE INDEX annotations_item ON annotations (item_id);
CREATE INDEX annotations_annotator ON annotations (annotator_id);
"""

# Unsaved choices, kept per annotator on the server (never in the browser, where the next person
# on a shared machine could read them), so they survive a reload and a restart.
_V3_DRAFTS = """
CREATE TABLE drafts (
    annotator_id INTEGER NOT NULL,
    panel VARCHAR NOT NULL,
    key VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (annotator_id, panel, key)
);
"""

# Sessions end when a password or role changes or the annotator is removed: the web layer compares
# a session's start with sessions_valid_after on every request. A removed annotator keeps their row
# (the annotation log names them) but can no longer log in.
_V4_SESSIONS = """
ALTER TABLE annotators ADD COLUMN sessions_valid_after DOUBLE;
ALTER TABLE annotators ADD COLUMN removed_at TIMESTAMP
"""

# Sentence embeddings cached by (text hash, encoder name): a study or a Match F1 run re-encodes only
# steps it has not seen. The vector is float32 bytes (BYTEA on PostgreSQL).
_V5_EMBEDDINGS = """
CREATE TABLE embeddings (
    text_hash VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    dim INTEGER NOT NULL,
    vector BLOB NOT NULL,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    PRIMARY KEY (text_hash, model)
)
"""

# Who made a version in a panel (an edit saved at the quality gate); NULL for imports and generators.
_V6_VERSION_AUTHOR = """
ALTER TABLE item_versions ADD COLUMN created_by INTEGER
"""

# The durable job queue (issue 13, regeneration): attempts and backoff, who holds a running job since
# when (a restart finds it and runs it again), the loop a job belongs to, and the generator settings
# (backends, prompt templates) an admin edits.
_V7_JOB_QUEUE = """
ALTER TABLE jobs ADD COLUMN attempts INTEGER DEFAULT 0;
ALTER TABLE jobs ADD COLUMN max_attempts INTEGER DEFAULT 3;
ALTER TABLE jobs ADD COLUMN run_after TIMESTAMP;
ALTER TABLE jobs ADD COLUMN claimed_by VARCHAR;
ALTER TABLE jobs ADD COLUMN claimed_at TIMESTAMP;
ALTER TABLE jobs ADD COLUMN loop VARCHAR;
ALTER TABLE jobs ADD COLUMN errors VARCHAR DEFAULT '[]';
CREATE TABLE generator_settings (
    name VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL,
    updated_by VARCHAR,
    updated_at TIMESTAMP NOT NULL DEFAULT current_timestamp
)
"""

# Model predictions to score against the gated labels (services.scores): one row per model and
# item version, replaced whole when the model's file is imported again. Lists are JSON text.
_V8_PREDICTIONS = """
CREATE SEQUENCE prediction_ids START 1;
CREATE TABLE predictions (
    id BIGINT PRIMARY KEY DEFAULT nextval('prediction_ids'),
    model VARCHAR NOT NULL,
    dataset_id INTEGER NOT NULL,
    item_id BIGINT NOT NULL,
    version_id BIGINT NOT NULL,
    earliest_error INTEGER,
    error_steps VARCHAR,
    step_scores VARCHAR,
    step_confidences VARCHAR,
    threshold DOUBLE,
    imported_by INTEGER,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    UNIQUE (model, version_id)
);
CREATE INDEX predictions_dataset ON predictions (dataset_id, model)
"""

# Gold items (migration 9): an item's accepted label, who marked it, when and from what. Labels on it
# with an annotation id above after_annotation are answers to check against it, not votes.
_V9_GOLD = """
CREATE TABLE gold (
    item_id BIGINT PRIMARY KEY,
    dataset_id INTEGER NOT NULL,
    version_id BIGINT NOT NULL,
    label VARCHAR NOT NULL,
    source VARCHAR NOT NULL,
    marked_by INTEGER,
    marked_at TIMESTAMP NOT NULL,
    after_annotation BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX gold_dataset ON gold (dataset_id)
"""

# Agreement studies with labels of their own (issues 16 and 20): a study never reopens an item or
# writes its gate decision. Its raters (study_raters) are assigned per item at draw time
# (study_assignments, K raters who had not seen the item), and what they answer goes to study_labels,
# an append-only log of its own (a correction is a new row; ids from the annotation log's sequence so
# that an id names one label). Sequential studies draw batches (study_items.batch) under a stopping
# rule (study_rules) until the interval is narrow enough or the cap. Studies drawn before this
# migration keep reading the annotation log (studies.own_labels false).
_V10_STUDY_LABELS = """
ALTER TABLE studies ADD COLUMN kept_only BOOLEAN DEFAULT FALSE;
ALTER TABLE studies ADD COLUMN own_labels BOOLEAN DEFAULT FALSE;
ALTER TABLE study_items ADD COLUMN batch INTEGER DEFAULT 1;
CREATE TABLE study_raters (
    study_id INTEGER NOT NULL,
    annotator_id INTEGER NOT NULL,
    PRIMARY KEY (study_id, annotator_id)
);
CREATE TABLE study_assignments (
    study_id INTEGER NOT NULL,
    item_id BIGINT NOT NULL,
    annotator_id INTEGER NOT NULL,
    batch INTEGER NOT NULL,
    assigned_at TIMESTAMP NOT NULL,
    PRIMARY KEY (study_id, item_id, annotator_id)
);
CREATE INDEX study_assignments_annotator ON study_assignments (annotator_id);
CREATE TABLE study_labels (
    id BIGINT PRIMARY KEY DEFAULT nextval('annotation_ids'),
    request_id VARCHAR NOT NULL UNIQUE,
    study_id INTEGER NOT NULL,
    item_id BIGINT NOT NULL,
    version_id BIGINT NOT NULL,
    annotator_id INTEGER NOT NULL,
    payload VARCHAR NOT NULL,
    seconds_spent DOUBLE PRECISION,
    created_at TIMESTAMP NOT NULL
);
CREATE INDEX study_labels_study ON study_labels (study_id);
CREATE TABLE study_rules (
    study_id INTEGER PRIMARY KEY,
    field VARCHAR NOT NULL,
    target DOUBLE PRECISION NOT NULL,
    batch INTEGER NOT NULL,
    cap INTEGER NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    adjust VARCHAR NOT NULL,
    stopped_by VARCHAR,
    stopped_at TIMESTAMP
)
"""

# API tokens for scripts (migration 11, issue 17): only a SHA-256 of the token is kept (the token is
# 32 random bytes, so a fast hash is enough); a token acts with its owner's current role until revoked.
_V11_API_TOKENS = """
CREATE SEQUENCE api_token_ids START 1;
CREATE TABLE api_tokens (
    id INTEGER PRIMARY KEY DEFAULT nextval('api_token_ids'),
    annotator_id INTEGER NOT NULL,
    name VARCHAR NOT NULL,
    token_hash VARCHAR NOT NULL UNIQUE,
    prefix VARCHAR NOT NULL,
    created_by VARCHAR,
    created_at TIMESTAMP NOT NULL DEFAULT current_timestamp,
    revoked_at TIMESTAMP
)
"""

# Shared by replicas (migration 12, issue 17): login sessions (a SHA-256 of the token, never the
# token), which login owns each Gradio session_hash, failed logins counted for every replica, and a
# running job's heartbeat so that only a stopped worker's jobs are queued again.
_V12_REPLICAS = """
CREATE TABLE login_sessions (
    token_hash VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    issued_at DOUBLE PRECISION NOT NULL,
    last_seen DOUBLE PRECISION NOT NULL
);
CREATE TABLE gradio_sessions (
    session_hash VARCHAR PRIMARY KEY,
    name VARCHAR NOT NULL,
    claimed_at DOUBLE PRECISION NOT NULL
);
CREATE SEQUENCE login_attempt_ids START 1;
CREATE TABLE login_failures (
    attempt_id BIGINT NOT NULL,
    kind VARCHAR NOT NULL,
    value VARCHAR NOT NULL,
    failed_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX login_failures_key ON login_failures (kind, value);
ALTER TABLE jobs ADD COLUMN heartbeat_at TIMESTAMP
"""

# Steps are found by their version, never by (version, role, position): DuckDB never reads its
# primary-key index of that key (an item's steps are a scan its zone maps narrow), while keeping it
# cost a fifth to a quarter of a large import's writing, and it was two fifths of the file at 1M
# items. Uniqueness holds by construction: steps are written only with their version, numbered
# 0..n-1 (store.versions.insert_versions). An index on version_id serves PostgreSQL's reads, as its
# primary key did, and DuckDB's lookups of one version, for about a tenth of the cost.
_V13_STEPS_BY_VERSION = """
CREATE TABLE steps_by_version (
    version_id BIGINT NOT NULL,
    role VARCHAR NOT NULL,
    position INTEGER NOT NULL,
    text VARCHAR NOT NULL
);
INSERT INTO steps_by_version (version_id, role, position, text)
SELECT version_id, role, position, text FROM steps;
DROP TABLE steps;
ALTER TABLE steps_by_version RENAME TO steps;
CREATE INDEX steps_version ON steps (version_id)
"""

# Archived datasets (issue 29): hidden from annotators everywhere, kept whole, exportable, restorable.
# A time, not a flag, so the Data panel can say since when; NULL = in use.
_V14_ARCHIVED_DATASETS = """
ALTER TABLE datasets ADD COLUMN IF NOT EXISTS archived_at TIMESTAMP
"""

MIGRATIONS: list[tuple[int, str, str]] = [
    (
        1,
        "base schema: datasets, versioned items, steps, images, annotators, log, assignments, jobs",
        _V1_BASE,
    ),
    (2, "agreement studies and lookup indexes", _V2_STUDIES),
    (3, "drafts kept per annotator on the server", _V3_DRAFTS),
    (4, "session epochs and removed annotators", _V4_SESSIONS),
    (5, "sentence embeddings cached by text hash and encoder", _V5_EMBEDDINGS),
    (6, "who made an item version (quality gate edits)", _V6_VERSION_AUTHOR),
    (7, "job queue: attempts, backoff, claims, loops; generator settings", _V7_JOB_QUEUE),
    (8, "model predictions per model and item version", _V8_PREDICTIONS),
    (9, "gold items: accepted labels that calibrate annotators", _V9_GOLD),
    (10, "agreement studies with their own raters, labels and stopping rules", _V10_STUDY_LABELS),
    (11, "API tokens for scripts, stored hashed", _V11_API_TOKENS),
    (12, "sessions, login failures and job heartbeats shared by replicas", _V12_REPLICAS),
    (13, "steps indexed by version, without a primary key", _V13_STEPS_BY_VERSION),
    (14, "archived datasets", _V14_ARCHIVED_DATASETS),
]


def schema_version(tx: Tx) -> int:
    exists = tx.scalar(
        "SELECT count(*) FROM information_schema.tables WHERE table_name = 'schema_migrations' "
        "AND table_schema = current_schema()"
    )
    if not exists:
        return 0
    return tx.scalar("SELECT coalesce(max(version), 0) FROM schema_migrations") or 0


def migrate(tx: Tx, upto: int | None = None) -> list[int]:
    """Apply the migrations this file has not seen yet, in order; returns the versions applied."""
    tx.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY, name VARCHAR NOT NULL,"
        " applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    current = schema_version(tx)
    applied = []
    for version, name, sql in MIGRATIONS:
        if version <= current or (upto is not None and version > upto):
            continue
        for statement in (s.strip() for s in sql.split(";")):
            if statement:
                tx.execute(statement)
        tx.execute("INSERT INTO schema_migrations (version, name) VALUES (?, ?)", [version, name])
        applied.append(version)
    return applied
