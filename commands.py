"""The command line's data verbs (import, export, users, datasets, study, jobs), run on an open store.

They run in the command's own process when it can open the database. While the app serves that
database (one process owns a DuckDB file), the command hands the same arguments to the app over a
local, token-guarded route (ui/web/control.py) and the app runs them here, so a team adds an
annotator or imports a file without stopping annotation, and sees the same messages and reports.
Every verb acts as OPERATOR (services/access.py): whoever runs the command owns the database file.
"""

from __future__ import annotations

import argparse
import contextlib
import getpass
import io
import json
import os
import sys
import threading
from pathlib import Path
from typing import Any

from services.access import OPERATOR
from store import Store

__all__ = ["VERBS", "client_side_argv", "make_encoder", "run_captured"]


def cmd_import(args: argparse.Namespace, store: Store) -> int:
    from tqdm import tqdm

    from services import data

    mapping = None
    if args.mapping:
        try:
            mapping = json.loads(args.mapping)
        except json.JSONDecodeError as exc:
            sys.exit(f"error: --mapping is not valid JSON ({exc.msg} at character {exc.pos})")
    with tqdm(desc=f"importing {Path(args.path).name}", unit=" items", disable=None) as bar:
        outcome = data.import_file(
            store,
            OPERATOR,
            args.path,
            format=args.format,
            dataset=args.dataset,
            task=args.task,
            mapping=mapping,
            skip_bad=args.skip_bad,
            report_path=args.report,
            progress=bar.update,
        )
    print(outcome.summary())
    return 0


def cmd_export(args: argparse.Namespace, store: Store) -> int:
    from urllib.parse import parse_qsl

    from services import browse
    from services.errors import ServiceError
    from services.exports import export

    items, dataset = None, args.dataset
    if args.filter:  # a Browse link's query (or its part after '?'): that view's items only
        f, _, _ = browse.filter_from_query(dict(parse_qsl(args.filter.split("?", 1)[-1])))
        if dataset and f.dataset and dataset != f.dataset:
            raise ServiceError(f"--dataset {dataset} and the filter's dataset={f.dataset} differ")
        items, dataset = browse.select_items(store, f), dataset or f.dataset
    written = export(
        store,
        args.format,
        Path(args.out),
        dataset=dataset,
        images=args.images,
        with_log=not args.no_log,
        items=items,
    )
    matched = f" of the {len(items.item_ids)} item(s) the filter matches" if items is not None else ""
    print(f"wrote {written.rows} row(s){matched} to {written.path} (manifest: {written.manifest})")
    if written.left_out:
        print(f"left out (not datasets of {args.format}'s task): {', '.join(written.left_out)}")
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


def cmd_users(args: argparse.Namespace, store: Store) -> int:
    # The command line is run by whoever owns the database file: it acts without a session user.
    from services import users

    if args.users_verb == "add":
        password = None if args.no_password else _password(args.password, args.name)
        if password is not None and len(password) < users.MIN_PASSWORD:
            sys.exit(f"error: a password needs at least {users.MIN_PASSWORD} characters; nothing was changed")
        user = users.add(store, OPERATOR, args.name, args.role, password)
        print(f"added {user.name} ({user.role}{', no password' if password is None else ''})")
    elif args.users_verb == "list":
        for user in users.list_all(store, OPERATOR):
            print(f"{user.name}\t{user.role}\t{'password set' if user.has_password else 'no password'}")
    elif args.users_verb == "passwd":
        users.set_password(store, OPERATOR, args.name, _password(args.password, args.name))
        print(f"password of {args.name} changed; their open sessions ended")
    elif args.users_verb == "role":
        users.set_role(store, OPERATOR, args.name, args.role)
        print(f"{args.name} is now {args.role}; their open sessions ended")
    elif args.users_verb == "remove":
        users.remove(store, OPERATOR, args.name)
        print(f"removed {args.name}: they can no longer log in; their labels stay in the log")
    return 0


def cmd_datasets(args: argparse.Namespace, store: Store) -> int:
    from services import data

    if args.datasets_verb == "list":
        for row in data.dataset_rows(store, OPERATOR):
            d, p = row.dataset, row.counts
            settings = d.all_settings()
            kept = "\tarchived" if d.archived else ""
            print(
                f"{d.name}\t{d.task}\t{p['total']} items, {p['settled']} settled{kept}\t{json.dumps(settings)}"
            )
    elif args.datasets_verb in ("archive", "restore", "remove"):
        return _dataset_life(args, store)
    else:
        changes = {}
        for pair in args.settings:
            key, equals, value = pair.partition("=")
            if not equals or not key.strip():
                print(f"error: {pair!r}: write KEY=VALUE, e.g. quorum=3 or features=a,b", file=sys.stderr)
                return 1
            # Numbers for the numeric settings; text for a choice; a comma list for a list setting.
            value = value.strip()
            changes[key.strip()] = int(value) if value.lstrip("-").isdigit() else value
        d = data.update_settings(store, OPERATOR, args.name, changes)
        print(f"{d.name}: {json.dumps(d.settings)}")
    return 0


def _dataset_life(args: argparse.Namespace, store: Store) -> int:
    from services import datasets

    if args.datasets_verb == "archive":
        datasets.archive(store, OPERATOR, args.name)
        print(f"archived {args.name}: hidden from annotators, kept whole (datasets restore {args.name})")
    elif args.datasets_verb == "restore":
        datasets.restore(store, OPERATOR, args.name)
        print(f"restored {args.name}: annotators see it again")
    else:
        print(datasets.removal_summary(store, OPERATOR, args.name))
        if not (args.yes or args.export):
            print("nothing removed: give --export PATH to write it first, or --yes to remove it without one")
            return 1
        export_to = Path(args.export) if args.export else None
        gone = datasets.remove(store, OPERATOR, args.name, confirmed=args.yes, export_to=export_to)
        kept = f" (exported to {gone.exported_to} first)" if gone.exported_to else ""
        print(f"removed {gone.dataset}{kept}")
    return 0


def make_encoder(folder: str | None, store: Store) -> Any:
    """The step-matching encoder: a cheap object here; the model loads on its first use."""
    from services.encoder import Encoder, EncoderSettings

    if folder is not None and not (Path(folder) / "modules.json").is_file():
        store.close()
        sys.exit(f"error: --encoder {folder}: not a sentence-transformers model folder (no modules.json)")
    path = Path(folder).resolve() if folder else None
    return Encoder(EncoderSettings(folder=path, export_dir=store.data_dir / "encoders"))


def cmd_study(args: argparse.Namespace, store: Store) -> int:
    from services import step_match
    from services.errors import ServiceError

    try:
        edges = [float(x) for x in args.edges.split(",")]
        counts = [int(x) for x in args.counts.split(",")]
        examples = step_match.read_examples(Path(args.examples))
    except (ServiceError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    created = step_match.create_study(
        store,
        make_encoder(args.encoder, store),
        examples,
        args.dataset,
        edges=edges,
        counts=counts,
        seed=args.seed,
        threshold=args.threshold,
        decision=args.decision,
        annotators_per_item=args.annotators,
    )
    bands = ", ".join(f"{k}: {v}" for k, v in created.per_band.items())
    print(f"{created.dataset}: {created.pairs} pairs from {created.candidates} ({bands}). {created.note}")
    return 0


def cmd_predictions(args: argparse.Namespace, store: Store) -> int:
    from services import scores

    done = scores.import_predictions(store, OPERATOR, args.path, model=args.model, dataset=args.dataset)
    print(done.summary())
    return 0


def cmd_plan(args: argparse.Namespace) -> int:
    """Print a study plan (services.planning) and, if asked, write its plot."""
    from services import planning
    from services.errors import ServiceError

    try:
        if args.preset:
            result = planning.preset(args.preset, n_sims=args.sims, seed=args.seed)
        else:
            result = planning.plan(
                statistic=args.statistic,
                expected=args.expected,
                half_width=args.half_width,
                shares=args.shares,
                raters=args.raters,
                confidence=args.confidence,
                level=args.level,
                items=args.items,
                n_sims=args.sims,
                seed=args.seed,
            )
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.preset:
        print(f"preset: {planning.PRESETS[args.preset].name} ({planning.PRESETS[args.preset].source})")
    print(result.summary())
    print("\nhalf-width by items:")
    print(result.by_items.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    print(f"\nhalf-width by raters at {result.items} items (simulation):")
    print(result.by_raters.to_string(index=False, float_format=lambda v: f"{v:.4f}"))
    if args.plot:
        planning.figure(result).savefig(args.plot)
        print(f"\nwrote the plot to {args.plot}")
    return 0


def cmd_jobs(args: argparse.Namespace, store: Store) -> int:
    """The job queue: run what is due (with progress), list, retry failed jobs, configure generators,
    start a perturbation check, queue loop-1 judging."""
    from tqdm import tqdm

    from services import generator_settings, jobs
    from services.errors import ServiceError
    from services.generation import GenerationError

    try:
        if args.jobs_verb == "run":
            due = len(jobs.list_jobs(store, OPERATOR, "queued"))
            with tqdm(total=due or None, desc="jobs", unit=" jobs", disable=None) as bar:
                summary = jobs.run_pending(
                    store, "command", progress=lambda job: bar.update(1), limit=args.limit
                )
            print(f"jobs: {summary.line()}")
            return 1 if summary.failed else 0
        if args.jobs_verb == "list":
            for job in jobs.list_jobs(store, OPERATOR, args.status):
                error = f"\t{job.error}" if job.error else ""
                print(
                    f"{job.id}\t{job.kind}\titem {job.item_id}\t{job.status}\t"
                    f"attempt {job.attempts}/{job.max_attempts}\t{job.loop or ''}{error}"
                )
            return 0
        if args.jobs_verb == "retry":
            count = jobs.retry(store, OPERATOR, args.job)
            print(f"queued again: {count} job(s)")
            return 0
        if args.jobs_verb == "config":
            changes = {}
            for pair in args.settings:
                key, equals, value = pair.partition("=")
                if not equals:
                    print(f"error: {pair!r}: write KEY=VALUE, e.g. backend=http", file=sys.stderr)
                    return 1
                changes[key.strip()] = value
            shown = generator_settings.shown_settings(
                generator_settings.configure(store, OPERATOR, changes)
                if changes
                else generator_settings.generator_config(store)
            )
            print(json.dumps(shown, indent=1))
            return 0
        if args.jobs_verb == "perturb":
            from services import perturbation

            made = perturbation.create_check_dataset(
                store, OPERATOR, args.source, args.dataset, args.type, role=args.role, limit=args.limit
            )
            print(f"{made.dataset}: {made.units} unit(s), {made.jobs} job(s) queued (python app.py jobs run)")
            return 0
        if args.jobs_verb == "judge":
            from services import regeneration
            from services.annotate import dataset_for

            count = regeneration.judge_pending(store, dataset_for(store, args.dataset), OPERATOR)
            print(f"{count} item(s) queued for the judge")
            return 0
    except (ServiceError, GenerationError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 2


def cmd_gold(args: argparse.Namespace, store: Store) -> int:
    """Gold items and calibration (services.gold), as the operator of the database."""
    from services import gold

    verb = args.gold_verb
    if verb == "mark":
        print(gold.mark_items(store, OPERATOR, args.dataset, args.items, label=args.label).summary())
    elif verb == "study":
        print(gold.mark_study(store, OPERATOR, args.study).summary())
    elif verb == "import":
        outcome = gold.import_gold(
            store,
            OPERATOR,
            args.dataset,
            Path(args.path),
            id_column=args.id_column,
            label_column=args.label_column,
            field=args.field,
        )
        print(outcome.summary())
    elif verb == "list":
        print(gold.gold_frame(store, OPERATOR, args.dataset).to_string(index=False))
    elif verb == "unmark":
        print(f"{gold.unmark_items(store, OPERATOR, args.dataset, args.items)} item(s) are gold no more")
    elif verb == "calibration":
        result = gold.calibration(store, OPERATOR, args.dataset)
        print(f"{result.gold_items} gold item(s) in {result.dataset}; {result.rule.describe()}")
        print(result.table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
        if args.plot:
            result.figure().savefig(args.plot)
            print(f"wrote the plot to {args.plot}")
    else:
        alerts = gold.admin_alerts(store, OPERATOR)
        print("\n".join(alerts) if alerts else "no alerts")
    return 0


def cmd_sequential(args: argparse.Namespace, store: Store) -> int:
    """A study under a stopping rule: stopped by the target, by the cap, or the next batch due."""
    from services import planning

    field, result = planning.sequential_study(
        store,
        OPERATOR,
        args.study,
        target=args.target,
        batch=args.batch,
        cap=args.cap,
        field=args.field,
        adjust=args.adjust,
        confidence=args.confidence,
    )
    print(f"study {args.study}, field {field}: {result.note()}")
    return 0


def cmd_studies(args: argparse.Namespace, store: Store) -> int:
    """Agreement studies (services.studies), as the operator of the database: draw, list, status,
    advance, labels, reassign."""
    from services import studies

    if args.studies_verb == "draw":
        sequential = None
        if args.target is not None:
            sequential = studies.Sequential(
                target=args.target,
                batch=args.batch,
                field=args.field,
                confidence=args.confidence,
                adjust=args.adjust,
            )
        study = studies.draw_study(
            store,
            OPERATOR,
            dataset=args.dataset,
            name=args.name,
            n_items=args.items,
            raters=args.raters,
            stratify_by=None if args.stratify == "none" else args.stratify,
            seed=args.seed,
            kept_only=not args.all_items,
            rater_names=[n for n in (args.rater_list or "").split(",") if n.strip()] or None,
            sequential=sequential,
        )
        print(f"drew {study.name}: {studies.describe(study)}")
        for item_id, names in sorted(studies.assignments(store, OPERATOR, study.name).items()):
            print(f"  item {item_id}\t{', '.join(names)}")
    elif args.studies_verb == "list":
        frame = studies.list_studies(store, OPERATOR, args.dataset)
        columns = ["study", "dataset", "n_items", "raters", "items_done", "labels", "batches", "per_batch"]
        shown = frame[[*columns, "stopped_by", "kept_only"]]
        print(shown.to_string(index=False) if len(frame) else "no studies")
    elif args.studies_verb == "labels":
        rows = studies.export_labels(store, OPERATOR, args.name, Path(args.out), args.format)
        print(f"wrote {rows} study label(s) of {args.name} to {args.out}")
    elif args.studies_verb == "status":
        print(f"{args.name}: {studies.study_status(store, OPERATOR, args.name).note}")
    elif args.studies_verb == "reassign":
        print(studies.reassign(store, OPERATOR, args.name, args.from_rater, args.to_rater).summary())
    else:
        done = studies.advance_study(store, OPERATOR, args.name)
        print(
            f"{args.name}: {done or 'nothing due (a batch still waits for labels, or the study has stopped)'}"
        )
        print(f"{args.name}: {studies.study_status(store, OPERATOR, args.name).note}")
    return 0


def add_tokens_parser(verbs: argparse._SubParsersAction, add_db: Any) -> None:
    tok = verbs.add_parser(
        "tokens", help="API tokens for scripts (predictions upload, /metrics): create, list, revoke"
    )
    actions = tok.add_subparsers(dest="tokens_verb", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create", help="a new token acting as an annotator, with their role; shown once"
    )
    create.add_argument("name", help="what the token is for, e.g. prometheus or nightly-predictions")
    create.add_argument(
        "--user", required=True, help="the annotator the token acts as (an admin for /metrics)"
    )
    revoke = actions.add_parser("revoke", help="a token stops working at once")
    revoke.add_argument("id", type=int, help="the token's id, from `tokens list`")
    for sub in (
        create,
        actions.add_parser("list", help="every token: id, name, owner, created, revoked"),
        revoke,
    ):
        add_db(sub)


def cmd_tokens(args: argparse.Namespace, store: Store) -> int:
    # The command line is run by whoever owns the database file: it acts as an admin.
    from services import tokens

    if args.tokens_verb == "create":
        record, token = tokens.create(store, OPERATOR, args.user, args.name)
        print(
            f"token {record.id} ({record.name}) acts as {record.owner} ({record.role}). It is shown only now:"
        )
        print(token)
    elif args.tokens_verb == "list":
        for t in tokens.list_all(store, OPERATOR):
            state = f"revoked {t.revoked_at:%Y-%m-%d %H:%M}" if t.revoked_at else "active"
            print(
                f"{t.id}\t{t.name}\t{t.owner} ({t.role})\t{t.prefix}...\tcreated {t.created_at:%Y-%m-%d %H:%M}\t{state}"
            )
    else:
        t = tokens.revoke(store, OPERATOR, args.id)
        print(f"token {t.id} ({t.name}, acting as {t.owner}) is revoked")
    return 0


VERBS = {
    "import": cmd_import,
    "export": cmd_export,
    "users": cmd_users,
    "datasets": cmd_datasets,
    "study": cmd_study,
    "predictions": cmd_predictions,
    "jobs": cmd_jobs,
    "gold": cmd_gold,
    "sequential": cmd_sequential,
    "studies": cmd_studies,
    "tokens": cmd_tokens,
}
_CAPTURE = threading.Lock()  # stdout and stderr are the process's: one forwarded command at a time


def run_verb(args: argparse.Namespace, store: Store) -> int:
    """A command-line verb on the store: a refusal from the services is printed as one error line."""
    from services.errors import ServiceError

    try:
        return VERBS[args.verb](args, store)
    except ServiceError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1


def run_captured(store: Store, parser: argparse.ArgumentParser, argv: list[str]) -> tuple[int, str, str]:
    """Run a forwarded command in the app's process: (exit code, what it printed, what it warned)."""
    out, err = io.StringIO(), io.StringIO()
    with _CAPTURE, contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            args = parser.parse_args(argv)
            if args.verb not in VERBS:
                print(f"error: {args.verb!r} cannot run while the app serves", file=sys.stderr)
                code = 2
            else:
                code = run_verb(args, store)
        except SystemExit as exc:
            if isinstance(exc.code, str):
                print(exc.code, file=sys.stderr)
                code = 1
            else:
                code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def client_side_argv(args: argparse.Namespace, argv: list[str]) -> list[str]:
    """The arguments as the app must see them: files as absolute paths (the app's working folder is
    not this one) and a password asked for here, at this terminal, not by the app."""
    fixed: list[str] = []
    positional_path = {
        "import": getattr(args, "path", None),
        "study": getattr(args, "examples", None),
        "predictions": getattr(args, "path", None),
        "gold": getattr(args, "path", None),
    }.get(args.verb)
    for k, token in enumerate(argv):
        previous = argv[k - 1] if k else ""
        if previous in ("--out", "--report", "--plot", "--export") or (
            positional_path is not None and token == positional_path
        ):
            fixed.append(str(Path(token).resolve()))
        else:
            fixed.append(token)
    needs_password = args.verb == "users" and args.users_verb in ("add", "passwd")
    if needs_password and not getattr(args, "no_password", False) and not args.password:
        fixed += ["--password", _password(None, args.name)]
    return fixed
