"""Stored results as compare reads them: one statement for the uncached ones, each with its cell (the
dict and its JSON) built once and cached by result id, since a stored result never changes.
"""

from __future__ import annotations

import json
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Row, select
from sqlalchemy.ext.asyncio import AsyncConnection

from ctxbench_server.compare import ratios
from ctxbench_server.models import Result
from ctxbench_server.stats import figure
from ctxbench_server.stats.interference import summarise_interference

NOISY_CV = 0.03

COLUMNS = (
    Result.id,
    Result.run_id,
    Result.machine_id,
    Result.kernel_id,
    Result.params,
    Result.params_key,
    Result.unit,
    Result.samples,
    Result.sample_launches,
    Result.n,
    Result.median,
    Result.figure,
    Result.estimator,
    Result.ci_low,
    Result.ci_high,
    Result.cv,
    Result.noisy,
    Result.launches,
    Result.created_at,
)


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat().replace("+00:00", "Z")


def cell(r: Record, fragments: dict[str, str] | None) -> Any:
    if fragments is None:
        return r.cell
    fragments[r.id] = r.cell_json
    return _MARK + r.id


@dataclass(frozen=True)
class Record:
    """A stored result as compare uses it, with its cell ready (as a dict and as JSON)."""

    id: str
    run_id: str
    machine_id: str
    kernel_id: str
    params: dict[str, Any]
    params_key: str
    unit: str
    samples: list[float]
    sample_launches: list[int] | None
    q: float  # its figure's quantile (stats/figure.py)
    created_at: datetime
    cell: dict[str, Any]
    cell_json: str


# 20 000 results of up to 1 000 samples: well under 200 MB even then, ~40 MB with typical sample counts.
CACHE_MAX_SAMPLES = 1000
_records_cache: ratios.LRU[str, Record] = ratios.LRU(20_000)
# Placeholders for cells in the answer before rendering: unguessable, so no stored string can fake one.
_MARK = f"@@cell-{secrets.token_hex(8)}:"
_MARK_RE = re.compile(f'"{re.escape(_MARK)}([^"]+)"')


def _record(r: Row[Any]) -> Record:
    # The CI of the figure from the hierarchical bootstrap (or min-max, labelled so), recomputed for
    # results stored before it with another method, so every cell's interval means the same thing.
    q = figure.quantile_for(r.estimator)
    ci = ratios.cell_ci(r.id, r.samples, r.sample_launches, q)
    cell = {
        "result_id": r.id,
        "run_id": r.run_id,
        "median": r.median,
        "figure": r.figure if r.figure is not None else r.median,
        "figure_stat": figure.stat_name(q),
        "ci_low": ci["ci_low"],
        "ci_high": ci["ci_high"],
        "ci_kind": ci["ci_kind"],
        "n_launches": ci["n_launches"],
        "n": r.n,
        "cv": r.cv,
        "noisy": bool(r.noisy) or (r.cv is not None and r.cv > NOISY_CV),
        "interference": summarise_interference(r.launches),
        "samples": r.samples,
        "created_at": _iso(r.created_at),
    }
    return Record(
        id=r.id,
        run_id=r.run_id,
        machine_id=r.machine_id,
        kernel_id=r.kernel_id,
        params=r.params,
        params_key=r.params_key,
        unit=r.unit,
        samples=r.samples,
        sample_launches=r.sample_launches,
        q=q,
        created_at=r.created_at,
        cell=cell,
        cell_json=json.dumps(cell, ensure_ascii=False, allow_nan=False, separators=(",", ":")),
    )


async def load(conn: AsyncConnection, ids: list[str]) -> list[Record]:
    """The results by id: cached ones from memory, the others in one statement."""
    got = {i: rec for i in ids if (rec := _records_cache.get(i)) is not None}
    missing = [i for i in ids if i not in got]
    if missing:
        for row in await conn.execute(select(*COLUMNS).where(Result.id.in_(missing))):
            rec = _record(row)
            if len(rec.samples) <= CACHE_MAX_SAMPLES:
                _records_cache.put(rec.id, rec)
            got[rec.id] = rec
    return [got[i] for i in ids if i in got]


def clear_cache() -> None:
    _records_cache.clear()


def render(answer: dict[str, Any], fragments: dict[str, str]) -> bytes:
    """The answer as JSON with each cell placeholder replaced by the cell's own JSON."""
    text = json.dumps(answer, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _MARK_RE.sub(lambda m: fragments[m.group(1)], text).encode()
