"""stepgate's command line: parse options -> settings -> Store -> ui.build_app -> launch.

python app.py                      serve ./stepgate.duckdb on 127.0.0.1:7860 (demo data on first run)
python app.py serve --db PATH --host HOST --port PORT
python app.py import PATH [--format F] [--dataset NAME] [--skip-bad]
python app.py export --format F --out PATH [--dataset NAME] [--filter QUERY]
python app.py users add NAME --role ROLE | list | passwd NAME | role NAME ROLE | remove NAME
python app.py datasets list | set NAME KEY=VALUE ...
python app.py jobs run | list | retry [ID] | config KEY=VALUE ... | perturb SOURCE --dataset NAME --type T
python app.py tokens create NAME --user USER | list | revoke ID
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from collections.abc import Sequence
from pathlib import Path

DEFAULT_DB = "stepgate.duckdb"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--db",
        default=os.environ.get("STEPGATE_DB", DEFAULT_DB),
        help=f"a DuckDB database file, or a postgresql://USER:PASSWORD@HOST/NAME URL for several app "
        f"replicas (default: $STEPGATE_DB, else ./{DEFAULT_DB})",
    )
    parser.add_argument(
        "--data-dir",
        default=os.environ.get("STEPGATE_DATA_DIR"),
        help="the image folder (default: $STEPGATE_DATA_DIR, else beside a DuckDB file, or "
        "./stepgate.files with PostgreSQL: replicas share one)",
    )
    parser.add_argument(
        "--image-store",
        default=os.environ.get("STEPGATE_IMAGES") or None,
        metavar="s3://BUCKET/PREFIX",
        help="keep images in S3-compatible object storage instead of the image folder (default: "
        "$STEPGATE_IMAGES); endpoint and credentials from AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, "
        "AWS_SECRET_ACCESS_KEY; the image folder then holds the copies this replica has shown",
    )


def build_parser() -> argparse.ArgumentParser:
    from exports import EXPORT_FORMATS
    from importers import FORMATS
    from store.users import ROLES
    from tasks import TASKS

    parser = argparse.ArgumentParser(
        prog="app.py",
        description="stepgate: annotation, agreement and quality gating for step-level reasoning data. "
        "Without a verb, serves the app like `serve`.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verbs = parser.add_subparsers(dest="verb", metavar="VERB")

    serve = verbs.add_parser("serve", help="serve the web app (the default verb)")
    _add_serve_options(serve)

    imp = verbs.add_parser("import", help="import a dataset file (format detected when not given)")
    _add_db(imp)
    imp.add_argument("path", help="the file to import (JSONL, CSV or Parquet)")
    imp.add_argument("--format", choices=FORMATS, help="source format (detected when not given)")
    imp.add_argument("--dataset", help="dataset name (default: the file name without extension)")
    imp.add_argument("--task", choices=TASKS, help="gating task (default: by format)")
    imp.add_argument(
        "--mapping", help='column mapping for plain JSONL/CSV/Parquet, as JSON: {"question": "prompt", ...}'
    )
    imp.add_argument(
        "--skip-bad",
        action="store_true",
        help="import the good lines and write a report of the skipped ones (default: a file "
        "with bad lines imports nothing)",
    )
    imp.add_argument("--report", help="where to write the report of skipped lines (with --skip-bad)")

    exp = verbs.add_parser("export", help="write the gated data, the annotation log or the agreement report")
    _add_db(exp)
    exp.add_argument("--format", required=True, choices=EXPORT_FORMATS, help="output format")
    exp.add_argument("--out", required=True, help="output file")
    exp.add_argument("--dataset", help="only this dataset (default: all)")
    exp.add_argument(
        "--images",
        choices=("embedded", "paths"),
        default="embedded",
        help="stepgate-jsonl: images as base64 in the file, or copied beside it (default: embedded)",
    )
    exp.add_argument("--no-log", action="store_true", help="stepgate-jsonl: leave the annotation log out")
    exp.add_argument(
        "--filter",
        metavar="QUERY",
        help="only the items of a Browse view: its link's query, e.g. 'error_type=circular&status=consensus' "
        "(keys: dataset task source error_type status difficulty error_position annotator text)",
    )

    usr = verbs.add_parser("users", help="manage annotators: add, list, passwd, role, remove")
    uverbs = usr.add_subparsers(dest="users_verb", metavar="ACTION", required=True)
    add = uverbs.add_parser("add", help="add an annotator")
    _add_db(add)
    add.add_argument("name")
    add.add_argument("--role", choices=ROLES, default="annotator", help="role (default: annotator)")
    add.add_argument(
        "--password",
        help="password (prompted when omitted and a terminal is attached; or set STEPGATE_PASSWORD)",
    )
    add.add_argument("--no-password", action="store_true", help="no password: can only log in in local mode")
    _add_db(uverbs.add_parser("list", help="list annotators and their roles"))
    pw = uverbs.add_parser("passwd", help="set an annotator's password")
    _add_db(pw)
    pw.add_argument("name")
    pw.add_argument("--password", help="the new password (prompted when omitted; or STEPGATE_PASSWORD)")
    role = uverbs.add_parser("role", help="change an annotator's role")
    _add_db(role)
    role.add_argument("name")
    role.add_argument("role", choices=ROLES)
    rm = uverbs.add_parser("remove", help="remove an annotator (their labels stay in the log; sessions end)")
    _add_db(rm)
    rm.add_argument("name")

    ds = verbs.add_parser(
        "datasets", help="list datasets, change their settings, archive, restore or remove one"
    )
    dverbs = ds.add_subparsers(dest="datasets_verb", metavar="ACTION", required=True)
    _add_db(dverbs.add_parser("list", help="list datasets with their task, size and settings"))
    dset = dverbs.add_parser(
        "set", help="change settings, e.g. quorum=3 max_annotators=5 annotators_per_item=2"
    )
    _add_db(dset)
    dset.add_argument("name")
    dset.add_argument("settings", nargs="+", metavar="KEY=VALUE")
    for action, said in (
        ("archive", "hide a dataset from annotators everywhere; kept whole, exportable"),
        ("restore", "show an archived dataset to annotators again"),
    ):
        life = dverbs.add_parser(action, help=said)
        _add_db(life)
        life.add_argument("name")
    drm = dverbs.add_parser(
        "remove", help="delete a dataset and its items, versions, labels, jobs, gold and studies (said first)"
    )
    _add_db(drm)
    drm.add_argument("name")
    drm.add_argument("--export", metavar="PATH", help="write it as stepgate-jsonl to PATH first, then remove")
    drm.add_argument("--yes", action="store_true", help="remove it without an export")

    study = verbs.add_parser(
        "study",
        help="sample a step-match study (CRYSTAL S5) from examples of predicted and reference steps",
        description="EXAMPLES is JSONL, one example a line: example (id), model, predicted (list of "
        "steps), reference (list of steps), optional question. Pairs are drawn from all predicted x "
        "reference pairs, stratified by the encoder's cosine similarity into bands.",
    )
    _add_db(study)
    study.add_argument("examples", help="the examples file (JSONL)")
    study.add_argument("--dataset", required=True, help="name of the new step-match dataset")
    study.add_argument("--edges", default="0.20,0.50", help="band edges, half-open (default: %(default)s)")
    study.add_argument(
        "--counts", default="33,33,34", help="pairs per band, low to high (default: %(default)s)"
    )
    study.add_argument("--seed", type=int, default=0, help="sampling seed (default: 0)")
    study.add_argument("--threshold", type=float, default=0.35, help="the encoder's tau (default: 0.35)")
    study.add_argument(
        "--decision",
        choices=("assignment", "threshold"),
        default="assignment",
        help="the encoder's decision: in the greedy assignment (CRYSTAL's figures) or sim >= tau",
    )
    study.add_argument("--annotators", type=int, default=1, help="annotators per pair (default: 1)")
    study.add_argument("--encoder", metavar="FOLDER", help="a local sentence-transformers model folder")

    pred = verbs.add_parser("predictions", help="import a model's predictions to score it (the Scores tab)")
    pverbs = pred.add_subparsers(dest="predictions_verb", metavar="ACTION", required=True)
    pimp = pverbs.add_parser(
        "import",
        help="store a model's predictions on a dataset (replacing the model's earlier ones)",
        description="FILE is JSONL, one object per item: id, and earliest_error (0-based, -1 = no "
        "error), error_steps (1-based), step_scores (with threshold) or step_confidences.",
    )
    _add_db(pimp)
    pimp.add_argument("path", metavar="FILE", help="the predictions file (JSONL or a JSON list)")
    pimp.add_argument("--model", required=True, help="the model's name, as the score tables show it")
    pimp.add_argument("--dataset", required=True, help="the dataset whose items the ids name")
    _add_plan(verbs)
    _add_jobs_parser(verbs)
    _add_gold(verbs)
    seq = verbs.add_parser(
        "sequential",
        help="apply a stopping rule to a study: stop when its interval reaches the target width",
        description="Looks at the study's finished items batch by batch; stops at the first look whose "
        "interval half-width is at most the target, or at the cap; the interval is adjusted for the looks "
        "(Bonferroni) unless --adjust none, which the report then says.",
    )
    _add_db(seq)
    seq.add_argument("study")
    seq.add_argument("--target", type=float, required=True, help="half-width at which to stop, e.g. 0.05")
    seq.add_argument("--batch", type=int, default=20, help="items per look (default: 20)")
    seq.add_argument("--cap", type=int, help="the most items (default: the study's size)")
    seq.add_argument("--field", help="the label field judged (default: the task's first)")
    seq.add_argument("--adjust", choices=("bonferroni", "none"), default="bonferroni")
    seq.add_argument("--confidence", type=float, default=0.95)
    _add_studies(verbs)
    from commands import add_tokens_parser

    add_tokens_parser(verbs, _add_db)
    return parser


def _add_studies(verbs: argparse._SubParsersAction) -> None:
    studies = verbs.add_parser(
        "studies",
        help="agreement studies: draw (kept items, raters who have not seen them), list, status, advance, labels",
        description="A study's raters label its items in the dataset's annotation panel, where their study "
        "items come first; their labels go to the study only, never to an item's gate state.",
    )
    actions = studies.add_subparsers(dest="studies_verb", metavar="ACTION", required=True)
    draw = actions.add_parser("draw", help="draw a study and assign K raters to each item")
    draw.add_argument("dataset")
    draw.add_argument("name")
    draw.add_argument("--items", type=int, required=True, help="N (the cap, for a sequential study)")
    draw.add_argument("--raters", type=int, default=2, help="K raters per item (default: 2)")
    draw.add_argument("--rater-list", metavar="A,B,...", help="who may rate (default: every annotator)")
    draw.add_argument(
        "--stratify", choices=("error_type", "source", "final_answer_correct", "none"), default="error_type"
    )
    draw.add_argument("--seed", type=int, default=0)
    draw.add_argument(
        "--all-items",
        action="store_true",
        help="a pilot over every item (default: kept items only, as the papers)",
    )
    draw.add_argument("--target", type=float, help="sequential: stop when the interval half-width is this")
    draw.add_argument("--batch", type=int, default=20, help="sequential: items per batch (default: 20)")
    draw.add_argument("--field", help="sequential: the label field watched (default: the task's)")
    draw.add_argument("--adjust", choices=("bonferroni", "none"), default="bonferroni")
    draw.add_argument("--confidence", type=float, default=0.95)
    listed = actions.add_parser("list", help="every study with its progress, batches and stop reason")
    listed.add_argument("--dataset")
    status = actions.add_parser("status", help="a study's progress per batch, stop reason and interval")
    status.add_argument("name")
    advance = actions.add_parser("advance", help="a sequential study: draw the next batch now if it is due")
    advance.add_argument("name")
    labels = actions.add_parser("labels", help="write a study's own labels (CSV, JSONL or Parquet)")
    labels.add_argument("name")
    labels.add_argument("--out", required=True, help="the file to write")
    labels.add_argument(
        "--format", choices=("csv", "jsonl", "parquet"), help="default: from --out's extension"
    )
    reassign = actions.add_parser(
        "reassign", help="give a removed rater's pending study items to an annotator who has not seen them"
    )
    reassign.add_argument("name")
    reassign.add_argument("--from", dest="from_rater", required=True, help="the removed rater")
    reassign.add_argument("--to", dest="to_rater", required=True, help="the annotator who takes them over")
    for sub in (draw, listed, status, advance, labels, reassign):
        _add_db(sub)


def _add_gold(verbs: argparse._SubParsersAction) -> None:
    gold = verbs.add_parser("gold", help="gold items: mark, import, list, unmark; annotators' calibration")
    actions = gold.add_subparsers(dest="gold_verb", metavar="ACTION", required=True)
    mark = actions.add_parser("mark", help="mark items gold with their accepted label (or --label)")
    mark.add_argument("dataset")
    mark.add_argument("items", nargs="+", metavar="ID", help="item ids from the source file")
    mark.add_argument("--label", help='a label for all of them instead, as JSON: \'{"original": "correct"}\'')
    study = actions.add_parser(
        "study", help="mark gold every item of a study that all its raters labelled alike"
    )
    study.add_argument("study")
    imp = actions.add_parser("import", help="gold labels from a column of a JSONL or CSV file")
    imp.add_argument("path")
    imp.add_argument("--dataset", required=True)
    imp.add_argument(
        "--id-column",
        default="id",
        help='the item id column; several joined as imported: "idx:classification"',
    )
    imp.add_argument(
        "--label-column", default="label", help="the gold column; rows with it empty are not gold"
    )
    imp.add_argument("--field", help="the label field a plain value in the column stands for")
    listed = actions.add_parser("list", help="a dataset's gold items")
    listed.add_argument("dataset")
    unmark = actions.add_parser("unmark", help="items are gold no more")
    unmark.add_argument("dataset")
    unmark.add_argument("items", nargs="+", metavar="ID")
    calib = actions.add_parser("calibration", help="per annotator: gold accuracy, recent accuracy, alert")
    calib.add_argument("dataset")
    calib.add_argument("--plot", metavar="PNG", help="write the accuracy-over-time plot here")
    actions.add_parser("alerts", help="annotators whose recent gold accuracy fell below the setting")
    for sub in (mark, study, imp, listed, unmark, calib, actions.choices["alerts"]):
        _add_db(sub)


def _add_plan(verbs: argparse._SubParsersAction) -> None:
    from qc.planning import PRESETS, STATISTICS

    plan = verbs.add_parser(
        "plan",
        help="plan an agreement study: items needed for an interval half-width (reads no database)",
        description="Observed agreement by the Wilson interval (exact); Cohen's and Fleiss' kappa and "
        "Krippendorff's alpha by seeded simulation from the expected shares and agreement.",
    )
    _add_db(plan)  # accepted like every verb's; planning reads no database
    plan.add_argument("--preset", choices=sorted(PRESETS), help="a seed paper's study (its size and figures)")
    plan.add_argument("--statistic", choices=STATISTICS, default="observed_agreement")
    plan.add_argument("--expected", type=float, default=0.9, help="expected value of the statistic")
    plan.add_argument("--half-width", type=float, default=0.05, help="wanted (upper - lower) / 2")
    plan.add_argument("--shares", default="0.5,0.5", help="expected category shares, e.g. 0.9,0.1")
    plan.add_argument("--raters", type=int, default=2)
    plan.add_argument("--confidence", type=float, default=0.95)
    plan.add_argument("--level", choices=("nominal", "ordinal", "interval"), default="nominal")
    plan.add_argument("--items", type=int, help="also show the interval at this many items")
    plan.add_argument("--sims", type=int, default=400, help="simulated studies per size (default: 400)")
    plan.add_argument("--seed", type=int, default=0)
    plan.add_argument("--plot", metavar="PNG", help="write the half-width plot here")


def _add_jobs_parser(verbs: argparse._SubParsersAction) -> None:
    from tasks.perturbation_check import PERTURBATION_TYPES

    jobs = verbs.add_parser(
        "jobs", help="the regeneration job queue: run, list, retry, config, perturb, judge"
    )
    jverbs = jobs.add_subparsers(dest="jobs_verb", metavar="ACTION", required=True)
    run = jverbs.add_parser("run", help="work through the jobs that are due now, with progress")
    _add_db(run)
    run.add_argument("--limit", type=int, help="stop after this many jobs")
    lst = jverbs.add_parser("list", help="list jobs, newest first, with attempts and last error")
    _add_db(lst)
    lst.add_argument("--status", choices=("queued", "running", "done", "failed"))
    retry = jverbs.add_parser("retry", help="queue failed jobs again with fresh attempts (all, or one)")
    _add_db(retry)
    retry.add_argument("job", nargs="?", type=int, help="the job id (default: every failed job)")
    config = jverbs.add_parser(
        "config",
        help="show or set generator settings: backend=none|http|command judge_backend=... base_url=URL "
        "model=NAME api_key=KEY timeout_seconds=N temperature=T command='PROGRAM ARGS' prompt.KIND=TEXT "
        "loop1_max_attempts=N loop2_max_restarts=N",
    )
    _add_db(config)
    config.add_argument("settings", nargs="*", metavar="KEY=VALUE")
    perturb = jverbs.add_parser(
        "perturb", help="a perturbation-check dataset from a dataset's steps or images (ConfProBench)"
    )
    _add_db(perturb)
    perturb.add_argument("source", help="the dataset whose steps or images are perturbed")
    perturb.add_argument("--dataset", required=True, help="name of the new perturbation-check dataset")
    perturb.add_argument("--type", required=True, choices=PERTURBATION_TYPES)
    perturb.add_argument("--role", help="which step list (default: candidate, original or solution)")
    perturb.add_argument("--limit", type=int, help="at most this many units")
    judge = jverbs.add_parser("judge", help="queue CRYSTAL's loop-1 judge on a gate dataset's open items")
    _add_db(judge)
    judge.add_argument("dataset")


def _add_serve_options(parser: argparse.ArgumentParser) -> None:
    _add_db(parser)
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default: 127.0.0.1)")
    parser.add_argument("--port", type=int, default=7860, help="port (default: 7860)")
    parser.add_argument(
        "--team",
        action="store_true",
        help="require a password login even on 127.0.0.1 (always on for other addresses)",
    )
    parser.add_argument(
        "--no-demo", action="store_true", help="do not import the demo data into an empty database"
    )
    parser.add_argument(
        "--no-worker", action="store_true", help="do not run the job queue inside the app (use `jobs run`)"
    )
    parser.add_argument(
        "--encoder",
        metavar="FOLDER",
        help="a local sentence-transformers model folder for step matching (default: the packaged "
        "all-MiniLM-L6-v2; CRYSTAL used all-distilroberta-v1). Loaded on first use, not at start",
    )
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default="text",
        help="one log line per request, event and job step: key=value text or JSON (default: text)",
    )
    from ui.context import WebSettings

    d = WebSettings()
    sec = parser.add_argument_group("sessions and limits")
    sec.add_argument(
        "--session-idle-hours",
        type=float,
        default=d.session_idle_seconds / 3600,
        help="a session unused this long ends (default: %(default)g)",
    )
    sec.add_argument(
        "--session-max-days",
        type=float,
        default=d.session_max_seconds / 86400,
        help="every session ends this long after its login (default: %(default)g)",
    )
    sec.add_argument(
        "--login-failures-per-name",
        type=int,
        default=d.login_failures_per_name,
        help="failed logins per name in 15 minutes before it must wait (default: %(default)s)",
    )
    sec.add_argument(
        "--login-failures-per-address",
        type=int,
        default=d.login_failures_per_address,
        help="failed logins per client address in 15 minutes before it must wait (default: %(default)s)",
    )
    sec.add_argument(
        "--max-body-bytes",
        type=int,
        default=d.max_body_bytes,
        help="largest request body of an event call, in bytes (default: %(default)s)",
    )
    sec.add_argument(
        "--max-file-size-mb",
        type=float,
        default=d.max_file_size / 1024 / 1024,
        help="largest upload (admins' imports), in MB (default: %(default)g)",
    )
    sec.add_argument(
        "--download-minutes",
        type=float,
        default=d.download_seconds / 60,
        help="how long a download link works (default: %(default)g)",
    )
    sec.add_argument(
        "--secure-cookies",
        action="store_true",
        help="send the session cookie over HTTPS only (behind a reverse proxy with TLS)",
    )
    sec.add_argument(
        "--proxy-ips",
        help="addresses of a trusted reverse proxy (e.g. 127.0.0.1): its X-Forwarded-For/-Proto are "
        "believed, so throttling counts the real client address",
    )


def _open_store(args: argparse.Namespace):
    from store import Store, StoreUnavailableError

    try:
        return Store(args.db, data_dir=args.data_dir, images=args.image_store)
    except StoreUnavailableError as exc:
        sys.exit(f"error: {exc}")


def cmd_serve(args: argparse.Namespace) -> int:
    from ui.web.memory import apply_memory_settings

    apply_memory_settings()  # before Gradio and DuckDB load: what they allocate follows the settings
    from functools import partial

    from commands import make_encoder, run_captured
    from services import drafts
    from services.demo import populate_demo
    from store import users
    from ui.app import build_app, launch_kwargs
    from ui.context import LOCAL, TEAM, AppContext, WebSettings
    from ui.web.control import new_token, remove_control_file, write_control_file
    from ui.web.server import serve

    # Handlers hand the GIL to DuckDB and back several times per label; at the default 5 ms switch
    # interval a thread waiting to get it back stalls every writer queued behind the store's lock.
    sys.setswitchinterval(0.0005)
    from services import logs

    logs.configure(args.log_format)
    mode = LOCAL if args.host in LOCAL_HOSTS and not args.team else TEAM
    store = _open_store(args)
    from services.compose import compose

    compose(store)  # the follow-ups of a decision, the job runners, the leases (memory or rows)
    from store.memory import release_freed_memory_in_background

    release_freed_memory_in_background(store)  # a database in this process (DuckDB): a server's is its own
    if mode == TEAM and not any(u.has_password for u in users.list_users(store)):
        store.close()
        sys.exit(
            "error: team mode needs at least one annotator with a password. Add one first:\n"
            f"  python app.py users add NAME --role admin --db {args.db}"
        )
    if not args.no_demo:
        for outcome in populate_demo(store):
            print(f"demo: {outcome.summary()}")
    web = WebSettings(
        session_idle_seconds=int(args.session_idle_hours * 3600),
        session_max_seconds=int(args.session_max_days * 86400),
        login_failures_per_name=args.login_failures_per_name,
        login_failures_per_address=args.login_failures_per_address,
        max_body_bytes=args.max_body_bytes,
        max_file_size=int(args.max_file_size_mb * 1024 * 1024),
        download_seconds=int(args.download_minutes * 60),
        secure_cookies=args.secure_cookies,
    )
    ctx = AppContext(
        store=store, mode=mode, web=web, control_token=new_token(), encoder=make_encoder(args.encoder, store)
    )
    ctx.run_command = partial(run_captured, store, build_parser())
    ctx.logout_hooks.append(partial(drafts.clear_at_logout, store))
    app = build_app(ctx)
    from ui.web.one_app import app_made_at_mount

    with app_made_at_mount():  # the web app is made once, when ui.web.server mounts the Blocks
        app.queue(default_concurrency_limit=8)
    from services.jobs import Worker
    from ui.web.deferred import stop_deferring

    stop_deferring()  # built: from here pandas and pyarrow load when something first uses them
    worker = None if args.no_worker else Worker(store).start()
    message = (
        "Local mode: type your annotator name and a password (8 characters or more). A new name "
        "creates your annotator with that password."
        if mode == LOCAL
        else "Log in with your stepgate annotator name and password."
    )
    print(f"stepgate: serving {store.location} on http://{args.host}:{args.port} ({mode} mode)", flush=True)
    # Verbs beside a running app reach it through a file beside the database it holds alone (DuckDB);
    # where other processes may open the database (PostgreSQL), they open it themselves.
    control = store.engine.file if store.engine.exclusive else None
    if control is not None:
        write_control_file(control, args.port, ctx.control_token or "")
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again: let that end in
    # SystemExit, so the control file goes and the store closes instead of the process just dying.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    try:
        serve(
            ctx,
            app,
            args.host,
            args.port,
            message,
            proxy_ips=args.proxy_ips,
            show_error=True,
            **launch_kwargs(ctx),
        )
    finally:
        if worker is not None:
            worker.stop()
        if control is not None:
            remove_control_file(control)
        store.close()
    return 0


def _forward(args: argparse.Namespace, argv: list[str], locked: Exception) -> int:
    """The app serves this database: hand the command to it and show what it printed."""
    from commands import client_side_argv
    from ui.web.control import ControlError, send_command

    try:
        code, out, err = send_command(Path(args.db), client_side_argv(args, argv))
    except ControlError as exc:
        sys.exit(f"error: {locked}\n({exc})")
    sys.stdout.write(out)
    sys.stderr.write(err)
    return code


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("--") and argv[0] not in ("--help", "-h")):
        argv = ["serve", *argv]
    from ui.web.deferred import NOT_IN_A_SERVER, defer_imports, stop_deferring

    # Before the parser imports the export formats (and a server Gradio): pandas and pyarrow load on
    # first use, so `users add` or `jobs list` answers without them (cmd_serve ends the deferral).
    defer_imports(refused=() if argv[0] != "serve" else NOT_IN_A_SERVER)
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.verb == "serve":
        return cmd_serve(args)
    if args.verb == "plan":  # pure arithmetic: no database to open
        from commands import cmd_plan

        return cmd_plan(args)
    from commands import run_verb
    from services.compose import compose
    from store import Store, StoreLockedError, StoreUnavailableError

    try:
        store = Store(args.db, data_dir=args.data_dir, images=args.image_store)
    except StoreLockedError as exc:
        return _forward(args, argv, exc)
    except StoreUnavailableError as exc:
        sys.exit(f"error: {exc}")
    compose(store)  # what follows a decision and runs each job kind, registered per task; the leases
    stop_deferring()  # what a command uses of pandas loads when it first reads it
    try:
        return run_verb(args, store)
    except StoreUnavailableError as exc:  # e.g. the image bucket refused a write: nothing was stored
        print(f"error: {exc}; nothing was stored", file=sys.stderr)
        return 1
    finally:
        store.close()


def exit_now(code: int) -> None:
    """Leave without the interpreter's teardown: once the server has stopped and the store is closed
    nothing is left to flush, and collecting the heap of Gradio, torch and scipy takes seconds."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def run_script() -> None:
    """What `python app.py ...` runs (sys.argv): a server leaves without the interpreter's teardown."""
    serving = sys.argv[1:2] in ([], ["serve"]) or sys.argv[1].startswith("--")
    try:
        status = main()
    except SystemExit as stop:  # SIGTERM ends the server by SystemExit (cmd_serve has cleaned up)
        if not serving or not isinstance(stop.code, int | None):
            raise
        status = stop.code or 0
    if serving:
        exit_now(status)
    sys.exit(status)


if __name__ == "__main__":
    run_script()
