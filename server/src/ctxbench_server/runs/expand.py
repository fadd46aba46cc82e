"""A POST /runs body against the machines' catalogs: parameters checked, sweeps expanded into items,
budgets checked, all before anything is stored (runs.service stores them)."""

from __future__ import annotations

import itertools
import json
from typing import Any

from ctxbench_server.config import Settings
from ctxbench_server.contract.params import ParamError, check_value, defaults, params_by_name
from ctxbench_server.contract.schema import KERNEL_DEFAULT_MIN_TIME_S
from ctxbench_server.errors import ValidationFailed, field_error
from ctxbench_server.runs.schemas import MAX_ITEMS, PROFILES, RunItemIn, RunSpec

# Kernels' own defaults when a run leaves these unset (used only to size the item timeout).
ASSUMED_REPETITIONS = 10
ASSUMED_MIN_TIME_S = 0.5


def item_timeout_s(repetitions: int | None, min_time_s: float | None, floor_s: float) -> float:
    """Generous: a repetition may take many times min_time_s while the harness calibrates."""
    reps = repetitions or ASSUMED_REPETITIONS
    mt = min_time_s or ASSUMED_MIN_TIME_S
    return float(max(floor_s, 20 * reps * mt + 60))


def thin(points: list[Any]) -> list[Any]:
    """Every other point, the first and the last kept (the quick profile's sweeps)."""
    kept = points[::2]
    if points and kept[-1] != points[-1]:
        kept.append(points[-1])
    return kept


# A 422 lists at most this many field errors (a body can hold ~100k bad values; the user fixes the first).
MAX_ERRORS = 100


class Errors(list[dict[str, Any]]):
    """Field errors, at most MAX_ERRORS, duplicates dropped in O(1)."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: set[str] = set()
        self.dropped = 0

    def append(self, err: dict[str, Any]) -> None:
        key = repr((err["loc"], err["msg"]))
        if key in self.seen:
            return
        if len(self) >= MAX_ERRORS:
            self.dropped += 1
            return
        self.seen.add(key)
        super().append(err)

    def raise_if_any(self) -> None:
        if not self:
            return
        errors = list(self)
        if self.dropped:
            errors.append(field_error(["body"], f"{self.dropped} more errors not listed", "too_many_errors"))
        raise ValidationFailed(errors)


def _axes(
    item: RunItemIn,
    base: list[str | int],
    by_name: dict[str, Any],
    machine_id: str,
    thin_sweeps: bool,
    errors: Errors,
) -> list[tuple[str, list[Any]]]:
    """The item's sweep axes, each with its values checked ("default": the kernel's own sweep)."""
    axes: list[tuple[str, list[Any]]] = []
    for name, values in (item.sweep or {}).items():
        loc: list[str | int] = [*base, "sweep", name]
        if name not in by_name:
            errors.append(_unknown_param(loc, item.kernel, by_name))
            continue
        if values == "default":
            values = list(by_name[name].get("sweep") or [])
            if not values:
                errors.append(
                    field_error(
                        loc,
                        f"parameter {name!r} of kernel {item.kernel!r} has no default sweep "
                        f"on machine {machine_id!r}",
                        "no_default_sweep",
                    )
                )
                continue
            if thin_sweeps:
                values = thin(values)
        if not values:
            errors.append(field_error(loc, "a sweep needs at least one value", "too_short"))
            continue
        checked = []
        for j, v in enumerate(values):
            try:
                checked.append(check_value(v, by_name[name]))
            except ParamError as e:
                errors.append(field_error([*loc, j], e.msg, e.type))
        axes.append((name, checked))
    return axes


def expand(
    body: RunSpec,
    machine_id: str,
    machine_catalog: dict[str, dict[str, Any]],
    errors: Errors | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    """(kernel id, typed params with defaults) per item, sweeps expanded. Raises ValidationFailed, or
    adds to `errors` when given (the caller raises)."""
    own = errors is None
    errors = Errors() if errors is None else errors
    thin_sweeps = PROFILES[body.profile].thin_sweeps
    out: list[tuple[str, dict[str, Any]]] = []
    for i, item in enumerate(body.items):
        base: list[str | int] = ["body", "items", i]
        spec = machine_catalog.get(item.kernel)
        if spec is None:
            errors.append(
                field_error(
                    [*base, "kernel"],
                    f"unknown kernel {item.kernel!r}: not in the catalog of machine {machine_id!r}",
                    "unknown_kernel",
                )
            )
            continue
        by_name = params_by_name(spec)
        fixed = defaults(spec)
        for name, value in item.params.items():
            if name not in by_name:
                errors.append(_unknown_param([*base, "params", name], item.kernel, by_name))
                continue
            try:
                fixed[name] = check_value(value, by_name[name])
            except ParamError as e:
                errors.append(field_error([*base, "params", name], e.msg, e.type))
        axes = _axes(item, base, by_name, machine_id, thin_sweeps, errors)
        if errors:
            if len(errors) >= MAX_ERRORS:
                break
            continue
        points = 1
        for _, vs in axes:
            points *= len(vs)
        if len(out) + points > MAX_ITEMS:
            raise ValidationFailed(
                [
                    field_error(
                        ["body", "items"],
                        f"the sweeps expand to more than {MAX_ITEMS} items (item {i} alone adds {points})",
                        "too_many_items",
                    )
                ]
            )
        for combo in itertools.product(*(vs for _, vs in axes)):
            params = dict(fixed)
            params.update({name: v for (name, _), v in zip(axes, combo, strict=True)})
            out.append((item.kernel, params))
    if own:
        errors.raise_if_any()
    return out


def check_sample_time(sample_time_s: float, min_time_s: float | None) -> None:
    """A short sample is a part of a repetition: it cannot be longer than one (the kernel would refuse)."""
    repetition_s = min_time_s or KERNEL_DEFAULT_MIN_TIME_S
    if sample_time_s > repetition_s:
        raise ValidationFailed(
            [
                field_error(
                    ["body", "sample_time_s"],
                    f"sample_time_s {sample_time_s:g} s is longer than a repetition "
                    f"(min_time_s {repetition_s:g} s): a short sample is a part of one",
                    "sample_longer_than_repetition",
                )
            ]
        )


def check_budgets(
    expanded: dict[str, list[tuple[str, dict[str, Any]]]],
    repetitions: int,
    min_time_s: float | None,
    settings: Settings,
) -> None:
    """Items per batch and estimated kernel time per run, before anything is stored."""
    total = sum(len(items) for items in expanded.values())
    if total > settings.max_batch_items:
        raise ValidationFailed(
            [
                field_error(
                    ["body", "items"],
                    f"{total} items over all machines, more than CTXBENCH_MAX_BATCH_ITEMS "
                    f"({settings.max_batch_items})",
                    "too_many_items",
                )
            ]
        )
    per_item = repetitions * (min_time_s or KERNEL_DEFAULT_MIN_TIME_S)
    longest = max((len(items) for items in expanded.values()), default=0) * per_item
    if longest > settings.max_run_kernel_s:
        raise ValidationFailed(
            [
                field_error(
                    ["body"],
                    f"a run would measure for about {longest:.0f} s (items x repetitions x min time), "
                    f"more than CTXBENCH_MAX_RUN_KERNEL_S ({settings.max_run_kernel_s:.0f} s)",
                    "run_too_long",
                )
            ]
        )


def _unknown_param(loc: list[str | int], kernel: str, by_name: dict[str, Any]) -> dict[str, Any]:
    known = ", ".join(sorted(by_name)) or "none"
    return field_error(loc, f"unknown parameter for kernel {kernel!r} (known: {known})", "unknown_param")


def expand_all(
    body: RunSpec, machine_ids: list[str], catalogs: dict[str, dict[str, dict[str, Any]]], errors: Errors
) -> dict[str, list[tuple[str, dict[str, Any]]]]:
    """expand() per machine; machines whose catalogs hold the same specs of the body's kernels share one
    expansion (a batch to 100 like machines expands once). Stops at MAX_ERRORS errors."""
    out: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    done: dict[str, list[tuple[str, dict[str, Any]]]] = {}
    kernels = sorted({item.kernel for item in body.items})
    for mid in machine_ids:
        key = json.dumps([catalogs[mid].get(k) for k in kernels], sort_keys=True, default=str)
        if key in done:
            out[mid] = done[key]
            continue
        before = len(errors)
        out[mid] = expand(body, mid, catalogs[mid], errors)
        if len(errors) == before:
            done[key] = out[mid]
        elif len(errors) >= MAX_ERRORS:
            break
    return out
