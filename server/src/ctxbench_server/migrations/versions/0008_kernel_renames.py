"""kernel renames: stored kernel ids rewritten to the new ids of kernels/contract/legacy-ids.json

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-23 17:00:00

The server reads an old id as an alias of its new one at every door (ctxbench_server/contract/aliases.py)
and stores only new ids, so compare and history select one id through their indexes. This migration
brings what older servers stored to that: results, run items, the latest-results read model, each run's
posted spec, shares (their view's `kernels` and frozen answer), the kernel catalog (a machine's spec of a
renamed kernel keeps the id its agent lists in `listed_as`, which dispatch sends back to that agent).
The map is written here, not read from the package: a migration must do the same thing forever.
"""

from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa
from alembic import op

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

RENAMES = {
    "go.goroutine_create": "goroutine.create",
    "go.goroutine_memory": "goroutine.memory",
    "go.gosched": "sched.gosched",
    "go.chan_pingpong": "channel.pingpong",
    "go.mutex": "lock.go_mutex",
    "py.loop": "call.py_loop",
    "py.generator": "coroutine.py_generator",
    "py.yield_from": "coroutine.py_yield_from",
    "py.greenlet": "coroutine.py_greenlet",
    "py.asyncio": "coroutine.py_asyncio",
}
LISTED_AS = "listed_as"

results = sa.table("results", sa.column("kernel_id", sa.String))
run_items = sa.table("run_items", sa.column("run_id", sa.String), sa.column("kernel_id", sa.String))
latest = sa.table(
    "latest_results",
    sa.column("machine_id", sa.String),
    sa.column("kernel_id", sa.String),
    sa.column("params_key", sa.String),
    sa.column("created_at", sa.DateTime(timezone=True)),
)
runs = sa.table("runs", sa.column("id", sa.String), sa.column("spec", sa.JSON))
shares = sa.table(
    "shares", sa.column("slug", sa.String), sa.column("view", sa.JSON), sa.column("compare", sa.JSON)
)
kernels = sa.table(
    "kernels",
    sa.column("id", sa.String),
    sa.column("spec", sa.JSON),
    sa.column("updated_at", sa.DateTime(timezone=True)),
)
machine_kernels = sa.table(
    "machine_kernels",
    sa.column("machine_id", sa.String),
    sa.column("kernel_id", sa.String),
    sa.column("spec", sa.JSON),
)


def _renamed(value: Any, names: dict[str, str]) -> Any:
    """The JSON value with every string (and key) that is exactly an old id replaced by its new id."""
    if isinstance(value, str):
        return names.get(value, value)
    if isinstance(value, list):
        return [_renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {names.get(k, k): _renamed(v, names) for k, v in value.items()}
    return value


def _spec(spec: dict[str, Any], new: str, listed: str | None) -> dict[str, Any]:
    """A spec under its new id; upgrading, its family is the new id's (the old `py` was a language)."""
    out = {k: v for k, v in spec.items() if k != LISTED_AS}
    out["id"] = new
    if listed is not None:
        out["family"] = new.partition(".")[0]
    if listed is not None and listed != new:
        out[LISTED_AS] = listed
    return out


def _twin(kernel_id: str, ties: bool) -> Any:
    """The latest_results row of the outer row's machine and point under `kernel_id`, newer than the
    outer row (or as new, with `ties`)."""
    other = latest.alias("other")
    newer = other.c.created_at >= latest.c.created_at if ties else other.c.created_at > latest.c.created_at
    return (
        sa.select(sa.literal(1))
        .select_from(other)
        .where(
            other.c.machine_id == latest.c.machine_id,
            other.c.params_key == latest.c.params_key,
            other.c.kernel_id == kernel_id,
            newer,
        )
    )


def _rename(names: dict[str, str], keep_listed: bool) -> None:
    conn = op.get_bind()
    olds = sorted(names)
    # Runs naming an old id, before their items change.
    run_ids = sorted(set(conn.scalars(sa.select(run_items.c.run_id).where(run_items.c.kernel_id.in_(olds)))))
    for old, new in names.items():
        conn.execute(results.update().where(results.c.kernel_id == old).values(kernel_id=new))
        conn.execute(run_items.update().where(run_items.c.kernel_id == old).values(kernel_id=new))
        # latest_results is keyed by (machine, kernel, params): where both ids have a row, the newer wins
        # (the new id's on a tie).
        conn.execute(latest.delete().where(latest.c.kernel_id == old, _twin(new, ties=True).exists()))
        conn.execute(latest.delete().where(latest.c.kernel_id == new, _twin(old, ties=False).exists()))
        conn.execute(latest.update().where(latest.c.kernel_id == old).values(kernel_id=new))
    for i in range(0, len(run_ids), 500):
        for rid, spec in conn.execute(
            sa.select(runs.c.id, runs.c.spec).where(runs.c.id.in_(run_ids[i : i + 500]))
        ):
            conn.execute(runs.update().where(runs.c.id == rid).values(spec=_renamed(spec, names)))
    for slug, view, answer in conn.execute(
        sa.select(shares.c.slug, shares.c.view, shares.c["compare"])
    ).all():
        view2 = _renamed(view, names)
        if isinstance(view2, dict) and isinstance(view2.get("kernels"), str):  # a comma list
            view2["kernels"] = ",".join(names.get(k.strip(), k.strip()) for k in view2["kernels"].split(","))
        answer2 = _renamed(answer, names)
        if view2 != view or answer2 != answer:
            conn.execute(shares.update().where(shares.c.slug == slug).values(view=view2, compare=answer2))
    # The catalog: each machine's spec moves to the new id (remembering the agent's id); the shared one too.
    have = set(conn.scalars(sa.select(kernels.c.id).where(kernels.c.id.in_(list(names.values())))))
    for kid, spec, at in conn.execute(
        sa.select(kernels.c.id, kernels.c.spec, kernels.c.updated_at).where(kernels.c.id.in_(olds))
    ).all():
        new = names[kid]
        if new not in have:
            conn.execute(
                kernels.insert().values(
                    id=new, spec=_spec(spec, new, new if keep_listed else None), updated_at=at
                )
            )
            have.add(new)
    mks = conn.execute(
        sa.select(machine_kernels.c.machine_id, machine_kernels.c.kernel_id, machine_kernels.c.spec).where(
            machine_kernels.c.kernel_id.in_(olds)
        )
    ).all()
    for mid, kid, spec in mks:
        new = names[kid]
        conn.execute(
            machine_kernels.delete().where(
                machine_kernels.c.machine_id == mid, machine_kernels.c.kernel_id == kid
            )
        )
        taken = conn.scalar(
            sa.select(sa.func.count())
            .select_from(machine_kernels)
            .where(machine_kernels.c.machine_id == mid, machine_kernels.c.kernel_id == new)
        )
        if not taken:
            listed = (spec or {}).get(LISTED_AS) or kid
            conn.execute(
                machine_kernels.insert().values(
                    machine_id=mid, kernel_id=new, spec=_spec(spec, new, listed if keep_listed else None)
                )
            )
    conn.execute(kernels.delete().where(kernels.c.id.in_(olds)))


def upgrade() -> None:
    _rename(RENAMES, keep_listed=True)


def downgrade() -> None:
    _rename({new: old for old, new in RENAMES.items()}, keep_listed=False)
