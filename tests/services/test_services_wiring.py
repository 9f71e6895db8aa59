"""How the services are composed: the extension points and their defaults, the leases chosen per
store, the explicit actor, and the store's refusals turned into the services' errors by their type."""

from __future__ import annotations

import pytest

from services import jobs
from services.access import OPERATOR, Action, require
from services.clock import now_utc
from services.defaults import register_defaults
from services.errors import InvalidInput, NotAllowed, NotFound
from services.hooks import HOOKS, Hooks
from services.leasing import leases_of
from store import Store, items, users
from store import jobs as queue
from store.assignments import Scheduler
from tasks import PERTURBATION_CHECK, QUALITY_GATE


def test_the_defaults_register_per_task_once_and_the_app_registry_holds_them() -> None:
    hooks = register_defaults(register_defaults(Hooks()))  # twice: nothing registered twice
    assert hooks.job_kinds() == ("regenerate", "judge", "perturb", "perturb_text")
    assert len(hooks._after[QUALITY_GATE]) == len(hooks._after[PERTURBATION_CHECK]) == 1
    assert len(hooks._revise[QUALITY_GATE]) == 1 and "earliest_error" not in hooks._after
    assert HOOKS.job_kinds() == hooks.job_kinds()  # tests/conftest.py composes as app.py does


def test_the_command_line_is_the_operator_who_may_do_everything(store: Store) -> None:
    for action in Action:
        require(OPERATOR, action)
    annotator = users.add_user(store, "ann", "annotator")
    adjudicator = users.add_user(store, "adj", "adjudicator")
    require(adjudicator, Action.SEE_LABELS)
    with pytest.raises(NotAllowed, match="ann is an annotator: only an admin"):
        require(annotator, Action.ADMINISTER)
    with pytest.raises(NotAllowed, match="Only adjudicators and admins"):
        require(annotator, Action.SEE_LABELS)
    with pytest.raises(NotAllowed):
        jobs.list_jobs(store, adjudicator)
    assert jobs.list_jobs(store, OPERATOR) == []


def test_a_refused_retry_says_which_refusal_by_its_type(demo_store: Store) -> None:
    with pytest.raises(NotFound, match="there is no job 999"):
        jobs.retry(demo_store, OPERATOR, 999)
    item_id = items.item_ids(demo_store, 1)[0]
    with demo_store.writing() as tx:
        job = queue.enqueue(
            tx,
            kind="regenerate",
            item_id=item_id,
            version_id=items.current_version_id(tx, item_id) or 0,
            reason="test",
            payload={},
            now=now_utc(),
        )
    with pytest.raises(InvalidInput, match="only a failed job can be retried"):
        jobs.retry(demo_store, OPERATOR, job.id)


def test_a_duckdb_store_gets_its_leases_in_memory_once_and_they_hear_of_its_changes(store: Store) -> None:
    if not store.engine.exclusive:
        pytest.skip("over PostgreSQL the leases are rows (tests/store/test_replicas.py)")
    leases = leases_of(store)
    assert isinstance(leases, Scheduler) and leases_of(store) is leases
    assert not hasattr(store, "scheduler")
    leases._pools[7] = leases.new_pool()
    with store.writing() as tx:
        tx.changed(7)
        assert 7 in leases._pools  # not before the commit
    assert 7 not in leases._pools and 7 in leases._stale  # reloaded on next use, live leases carried over
