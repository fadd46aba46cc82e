"""Alerts: a significant step in a series opens one (History's rule and its fact changes), once per
series and step whoever checks it; people acknowledge and resolve them (docs/architecture.md "Alerts").

The step is History's (history/series_steps.py): this module decides only which steps open an
alert and keeps their state. An alert's key is (machine, kernel, params key, the step's first run
after); the insert is INSERT .. ON CONFLICT DO NOTHING, so re-checks and several servers checking the
same series open it once. A step whose boundary moved by a run as more runs came (the fit may shift it)
is the same step: no alert opens within MIN_SEGMENT runs of one already open on that series."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.ext.asyncio import AsyncSession

from ctxbench_server.alerts.schemas import AlertCounts, AlertOut, AlertPatch, AlertState
from ctxbench_server.errors import Conflict, NotFound
from ctxbench_server.history import changes
from ctxbench_server.history.series_steps import series_steps
from ctxbench_server.models import Alert, Machine
from ctxbench_server.models.base import new_id

SeriesKey = tuple[str, str, str]  # machine id, kernel id, params key
NEAR = changes.MIN_SEGMENT  # runs within which two boundaries on one series are one step


def summary(a: Alert, machine_name: str) -> str:
    point = f" [{a.params_key}]" if a.params_key else ""
    facts = ", ".join(f"{f['fact']}: {f['before']} → {f['after']}" for f in a.facts_changed[:3])
    more = f" (+{len(a.facts_changed) - 3} more)" if len(a.facts_changed) > 3 else ""
    why = f"; {facts}{more}" if facts else "; no fact changed"
    return f"{a.kernel_id}{point} {(a.ratio - 1) * 100:+.1f} % on {machine_name}{why}"


def out(a: Alert, machine_name: str) -> AlertOut:
    return AlertOut(
        id=a.id,
        state=AlertState(a.state),
        summary=summary(a, machine_name),
        machine_id=a.machine_id,
        machine_name=machine_name,
        kernel=a.kernel_id,
        params_key=a.params_key,
        params=a.params,
        unit=a.unit,
        run_id=a.run_id,
        before_run_id=a.before_run_id,
        at=a.at,
        before=a.median_before,
        after=a.median_after,
        ratio=a.ratio,
        ci_low=a.ci_low,
        ci_high=a.ci_high,
        significance=a.significance,  # type: ignore[arg-type]  # validated from the stored dict
        facts_changed=a.facts_changed,  # type: ignore[arg-type]
        opened_at=a.opened_at,
        acknowledged_at=a.acknowledged_at,
        acknowledged_by=a.acknowledged_by,
        resolved_at=a.resolved_at,
        resolved_by=a.resolved_by,
        note=a.note,
    )


def _insert(dialect: str, row: dict[str, Any]) -> Any:
    ins = (postgresql if dialect == "postgresql" else sqlite).insert(Alert).values(row)
    return ins.on_conflict_do_nothing(
        index_elements=["machine_id", "kernel_id", "params_key", "run_id"]
    ).returning(Alert.id)


async def check_series(
    session: AsyncSession, key: SeriesKey, now: datetime, max_age: timedelta | None
) -> list[Alert]:
    """Opens an alert for each significant step of the series not alerted yet (and not older than
    max_age); returns those this call opened, in the session's transaction (the caller commits)."""
    machine_id, kernel_id, params_key = key
    run_ids, steps = await series_steps(session, machine_id, kernel_id, params_key)
    steps = [s for s in steps if s["significant"] and (max_age is None or now - s["at"] <= max_age)]
    if not steps:
        return []
    index = {rid: i for i, rid in enumerate(run_ids)}
    known = [
        index[r]
        for r in await session.scalars(
            select(Alert.run_id).where(
                Alert.machine_id == machine_id, Alert.kernel_id == kernel_id, Alert.params_key == params_key
            )
        )
        if r in index
    ]
    opened: list[Alert] = []
    dialect = session.get_bind().dialect.name
    for s in steps:
        if any(abs(s["index"] - k) <= NEAR for k in known):
            continue
        row = {
            "id": new_id(),
            "machine_id": machine_id,
            "kernel_id": kernel_id,
            "params_key": params_key,
            "params": s["params"],
            "unit": s["unit"],
            "run_id": s["run_id"],
            "before_run_id": s["before_run_id"],
            "at": s["at"],
            "median_before": s["before"],
            "median_after": s["after"],
            "ratio": s["ratio"],
            "ci_low": s["ci_low"],
            "ci_high": s["ci_high"],
            "significance": s["significance"],
            "facts_changed": [{**f, "at": f["at"].isoformat()} for f in s["facts_changed"]],
            "state": AlertState.OPEN.value,
            "opened_at": now,
        }
        got = await session.scalar(_insert(dialect, row))
        known.append(s["index"])
        if got is not None:
            alert = await session.get(Alert, got)
            assert alert is not None
            opened.append(alert)
    return opened


async def names(session: AsyncSession, machine_ids: Iterable[str]) -> dict[str, str]:
    ids = set(machine_ids)
    if not ids:
        return {}
    rows = await session.execute(select(Machine.id, Machine.name).where(Machine.id.in_(ids)))
    return {mid: name for mid, name in rows}


async def list_alerts(
    session: AsyncSession,
    states: Sequence[AlertState],
    machine_ids: Sequence[str],
    kernels: Sequence[str],
    limit: int,
) -> list[AlertOut]:
    q = select(Alert).order_by(Alert.opened_at.desc(), Alert.id.desc()).limit(limit)
    if states:
        q = q.where(Alert.state.in_([s.value for s in states]))
    if machine_ids:
        q = q.where(Alert.machine_id.in_(machine_ids))
    if kernels:
        q = q.where(Alert.kernel_id.in_(kernels))
    rows = list(await session.scalars(q))
    got = await names(session, (a.machine_id for a in rows))
    return [out(a, got.get(a.machine_id, a.machine_id)) for a in rows]


async def counts(session: AsyncSession) -> AlertCounts:
    by = {st: n for st, n in await session.execute(select(Alert.state, func.count()).group_by(Alert.state))}
    return AlertCounts(**{s.value: int(by.get(s.value, 0)) for s in AlertState})


async def get(session: AsyncSession, alert_id: str) -> Alert:
    alert = await session.get(Alert, alert_id)
    if alert is None:
        raise NotFound(f"unknown alert {alert_id!r}")
    return alert


async def one(session: AsyncSession, alert_id: str) -> AlertOut:
    alert = await get(session, alert_id)
    got = await names(session, [alert.machine_id])
    return out(alert, got.get(alert.machine_id, alert.machine_id))


def _move(alert: Alert, to: AlertState, who: str, now: datetime) -> None:
    """open → acknowledged → resolved, or open → resolved. Asking for the state it is in changes
    nothing (the first who and when stay); going back is a conflict."""
    order = [AlertState.OPEN, AlertState.ACKNOWLEDGED, AlertState.RESOLVED]
    cur = AlertState(alert.state)
    if to == cur:
        return
    if order.index(to) < order.index(cur):
        raise Conflict(f"alert is {cur.value}: it cannot go back to {to.value}")
    if to == AlertState.ACKNOWLEDGED:
        alert.acknowledged_at, alert.acknowledged_by = now, who
    if to == AlertState.RESOLVED:
        alert.resolved_at, alert.resolved_by = now, who
    alert.state = to.value


async def patch(session: AsyncSession, alert_id: str, body: AlertPatch, who: str, now: datetime) -> None:
    alert = await get(session, alert_id)
    if body.state is not None:
        _move(alert, body.state, who, now)
    if "note" in body.model_fields_set:
        alert.note = body.note or None
    await session.commit()
