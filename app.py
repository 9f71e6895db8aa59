"""stepgate's command line: parse options -> settings -> Store -> ui.build_app -> launch.

python app.py                      serve ./stepgate.duckdb on 127.0.0.1:7860 (demo data on first run)
python app.py serve --db PATH --host HOST --port PORT
python app.py import PATH [--format F] [--dataset NAME] [--skip-bad]
python app.py export --format F --out PATH [--dataset NAME]
python app.py users add NAME --role ROLE | list | passwd NAME | role NAME ROLE | remove NAME
python app.py datasets list | set NAME KEY=VALUE ...
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path

DEFAULT_DB = "stepgate.duckdb"
LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}


def _add_db(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--db", default=DEFAULT_DB, help=f"DuckDB database file (default: ./{DEFAULT_DB})")


def build_parser() -> argparse.ArgumentParser:
    from exports import EXPORT_FORMATS
    from store.importers import FORMATS
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

    ds = verbs.add_parser("datasets", help="list datasets or change their quorum and assignment settings")
    dverbs = ds.add_subparsers(dest="datasets_verb", metavar="ACTION", required=True)
    _add_db(dverbs.add_parser("list", help="list datasets with their task, size and settings"))
    dset = dverbs.add_parser(
        "set", help="change settings, e.g. quorum=3 max_annotators=5 annotators_per_item=2"
    )
    _add_db(dset)
    dset.add_argument("name")
    dset.add_argument("settings", nargs="+", metavar="KEY=VALUE")

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
    return parser


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
        "--encoder",
        metavar="FOLDER",
        help="a local sentence-transformers model folder for step matching (default: the packaged "
        "all-MiniLM-L6-v2; CRYSTAL used all-distilroberta-v1). Loaded on first use, not at start",
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


def _open_store(db: str):
    from store import Store, StoreUnavailableError

    try:
        return Store(db)
    except StoreUnavailableError as exc:
        sys.exit(f"error: {exc}")


def _encoder(folder: str | None, store):
    """The step-matching encoder: a cheap object here; the model loads on its first use."""
    from pathlib import Path

    from services.encoder import Encoder, EncoderSettings

    if folder is not None and not (Path(folder) / "modules.json").is_file():
        store.close()
        sys.exit(f"error: --encoder {folder}: not a sentence-transformers model folder (no modules.json)")
    path = Path(folder).resolve() if folder else None
    return Encoder(EncoderSettings(folder=path, export_dir=store.data_dir / "encoders"))


def cmd_serve(args: argparse.Namespace) -> int:
    from functools import partial

    from services import drafts
    from store import users
    from store.demo import populate_demo
    from ui.app import build_app, launch_kwargs
    from ui.context import LOCAL, TEAM, AppContext, WebSettings
    from ui.web.server import serve

    # Handlers hand the GIL to DuckDB and back several times per label; at the default 5 ms switch
    # interval a thread waiting to get it back stalls every writer queued behind the store's lock.
    sys.setswitchinterval(0.0005)
    mode = LOCAL if args.host in LOCAL_HOSTS and not args.team else TEAM
    store = _open_store(args.db)
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
    ctx = AppContext(store=store, mode=mode, web=web, encoder=_encoder(args.encoder, store))
    ctx.logout_hooks.append(partial(drafts.clear_at_logout, store))
    app = build_app(ctx)
    app.queue(default_concurrency_limit=8)
    message = (
        "Local mode: type your annotator name and a password (8 characters or more). A new name "
        "creates your annotator with that password."
        if mode == LOCAL
        else "Log in with your stepgate annotator name and password."
    )
    print(f"stepgate: serving {args.db} on http://{args.host}:{args.port} ({mode} mode)", flush=True)
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
        store.close()
    return 0


def cmd_import(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from services import data
    from services.errors import ServiceError

    mapping = None
    if args.mapping:
        try:
            mapping = json.loads(args.mapping)
        except json.JSONDecodeError as exc:
            sys.exit(f"error: --mapping is not valid JSON ({exc.msg} at character {exc.pos})")
    store = _open_store(args.db)
    try:
        with tqdm(desc=f"importing {Path(args.path).name}", unit=" items", disable=None) as bar:
            outcome = data.import_file(
                store,
                None,
                args.path,
                format=args.format,
                dataset=args.dataset,
                task=args.task,
                mapping=mapping,
                skip_bad=args.skip_bad,
                report_path=args.report,
                progress=bar.update,
            )
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    print(outcome.summary())
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from services.errors import ServiceError
    from services.exports import export

    store = _open_store(args.db)
    try:
        written = export(store, args.format, Path(args.out), dataset=args.dataset)
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    print(f"wrote {written.rows} row(s) to {written.path}")
    return 0


def _password(given: str | None, name: str) -> str:
    if given:
        return given
    if os.environ.get("STEPGATE_PASSWORD"):
        return os.environ["STEPGATE_PASSWORD"]
    if not sys.stdin.isatty():
        sys.exit("error: give --password, set STEPGATE_PASSWORD, or run in a terminal to be asked")
    first = getpass.getpass(f"password for {name}: ")
    if first != getpass.getpass("again: "):
        sys.exit("error: the two passwords differ; nothing was changed")
    return first


def cmd_users(args: argparse.Namespace) -> int:
    # The command line is run by whoever owns the database file: it acts without a session user.
    from services import users
    from services.errors import ServiceError

    store = _open_store(args.db)
    try:
        if args.users_verb == "add":
            password = None if args.no_password else _password(args.password, args.name)
            if password is not None and len(password) < users.MIN_PASSWORD:
                sys.exit("error: a password needs at least 8 characters; nothing was changed")
            user = users.add(store, None, args.name, args.role, password)
            print(f"added {user.name} ({user.role}{', no password' if password is None else ''})")
        elif args.users_verb == "list":
            for user in users.list_all(store, None):
                print(f"{user.name}\t{user.role}\t{'password set' if user.has_password else 'no password'}")
        elif args.users_verb == "passwd":
            users.set_password(store, None, args.name, _password(args.password, args.name))
            print(f"password of {args.name} changed; their open sessions ended")
        elif args.users_verb == "role":
            users.set_role(store, None, args.name, args.role)
            print(f"{args.name} is now {args.role}; their open sessions ended")
        elif args.users_verb == "remove":
            users.remove(store, None, args.name)
            print(f"removed {args.name}: they can no longer log in; their labels stay in the log")
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


def cmd_datasets(args: argparse.Namespace) -> int:
    from services import data
    from services.errors import ServiceError
    from store.datasets import DEFAULT_SETTINGS

    store = _open_store(args.db)
    try:
        if args.datasets_verb == "list":
            for row in data.dataset_rows(store, None):
                d, p = row.dataset, row.counts
                settings = {k: d.setting(k) for k in DEFAULT_SETTINGS}
                print(
                    f"{d.name}\t{d.task}\t{p['total']} items, {p['settled']} settled\t{json.dumps(settings)}"
                )
        else:
            changes = {}
            for pair in args.settings:
                key, _, value = pair.partition("=")
                if not value.strip().lstrip("-").isdigit():
                    print(f"error: {pair!r}: write KEY=NUMBER, e.g. quorum=3", file=sys.stderr)
                    return 1
                changes[key.strip()] = int(value)
            d = data.update_settings(store, None, args.name, changes)
            print(f"{d.name}: {json.dumps(d.settings)}")
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    return 0


def cmd_study(args: argparse.Namespace) -> int:
    from services import step_match
    from services.errors import ServiceError

    try:
        edges = [float(x) for x in args.edges.split(",")]
        counts = [int(x) for x in args.counts.split(",")]
        examples = [
            json.loads(line)
            for line in Path(args.examples).read_text(encoding="utf-8").splitlines()
            if line.strip()
        ]
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    store = _open_store(args.db)
    try:
        created = step_match.create_study(
            store,
            _encoder(args.encoder, store),
            examples,
            args.dataset,
            edges=edges,
            counts=counts,
            seed=args.seed,
            threshold=args.threshold,
            decision=args.decision,
            annotators_per_item=args.annotators,
        )
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    finally:
        store.close()
    bands = ", ".join(f"{k}: {v}" for k, v in created.per_band.items())
    print(f"{created.dataset}: {created.pairs} pairs from {created.candidates} ({bands}). {created.note}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0].startswith("--") and argv[0] not in ("--help", "-h")):
        argv = ["serve", *argv]
    args = parser.parse_args(argv)
    handlers = {
        "serve": cmd_serve,
        "import": cmd_import,
        "export": cmd_export,
        "users": cmd_users,
        "datasets": cmd_datasets,
        "study": cmd_study,
    }
    return handlers[args.verb](args)


if __name__ == "__main__":
    sys.exit(main())
