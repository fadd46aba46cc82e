"""Runs one kernel under pyperf and turns pyperf's benchmark into the kernel JSON of DESIGN 3.1.

This process calibrates the loops per value itself (`calibrate`: doubling until a value is long enough to
predict from, then one step to --min-time), so no calibration process is started; pyperf's Runner is then
the manager of `processes` worker processes that each run one warmup value (discarded) and `values` timed
values. We choose processes x values == --repetitions exactly (`plan`), so every sample is one pyperf
value: seconds per op, reported in ns/op, with `iterations` the ops it timed (loops x ops per loop).
Workers are this executable again, started as
`<python> <exe> --pyperf-worker ID PARAMS TALLY_DIR <pyperf worker options>`.

A launch of the agent is one `--run` of a few repetitions (the default profile: 2): its process-to-process
variance comes from the agent's launches, so `plan` gives each worker at least 2 values instead of a
process per value (a worker costs a Python start and a warmup value, ~0.3 s here).

pyperf prints to stdout; while it runs, file descriptor 1 points at a capture file so that the kernel JSON
is the only thing this process writes to stdout. Each value worker leaves a tally (ops it timed, events
the kernel counted, getrusage context switches around the timed calls) in TALLY_DIR; the counters are
their sums divided by the ops. A kernel whose self-check fails leaves its message there instead.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import resource
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxbench_kernels_py import tempdirs
from ctxbench_kernels_py.spec import Kernel, SelfCheckError, Tally, Unsupported

WORKER_FLAG = "--pyperf-worker"
# More processes show more of the run-to-run variation (hash seeds, ASLR) but each costs a Python start
# and a warmup value; the agent's launches already give that variation, so a worker takes >= 2 values.
MAX_PROCESSES = 10
MIN_VALUES_PER_PROCESS = 2
WARMUPS = 1
# calibrate(): a value this share of --min-time or longer predicts the loops for the rest.
PREDICT_FROM = 0.1
# The predicted count aims this far over --min-time: a value is a minimum, and the worker may run faster
# than this (cold) process did.
PREDICT_MARGIN = 1.2


def plan(repetitions: int) -> tuple[int, int]:
    """(processes, values per process): the most processes, up to MAX_PROCESSES, that divide repetitions
    into at least MIN_VALUES_PER_PROCESS values each; one process when none does (1, 2, 3, 5, 7...)."""
    fits = [
        p
        for p in range(1, min(repetitions, MAX_PROCESSES) + 1)
        if repetitions % p == 0 and repetitions // p >= MIN_VALUES_PER_PROCESS
    ]
    processes = max(fits, default=1)
    return processes, repetitions // processes


def calibrate(kernel: Kernel, params: dict[str, Any], min_time: float) -> int:
    """Loops per value such that one value takes at least `min_time`: doubling from 1 as pyperf's
    calibration does, until a value is long enough to predict from, then the predicted count (20 % over)
    checked once more. The kernel's self-check runs here too (SelfCheckError)."""
    tally = Tally()
    loops = 1
    while True:
        seconds = kernel.bench(params, loops, tally)
        if seconds >= min_time:
            return loops
        if seconds >= PREDICT_FROM * min_time:
            loops = max(loops + 1, math.ceil(loops * min_time / seconds * PREDICT_MARGIN))
        else:
            loops *= 2


def _import_pyperf() -> Any:
    try:
        import pyperf
    except ImportError:
        raise Unsupported(
            f"pyperf is not installed for {sys.executable}; the Python kernels need it"
        ) from None
    return pyperf


@contextlib.contextmanager
def _stdout_into(path: Path) -> Iterator[None]:
    """Point fd 1 (ours and the workers' we spawn) at `path` for the duration."""
    sys.stdout.flush()
    saved = os.dup(1)
    with open(path, "wb") as capture:
        os.dup2(capture.fileno(), 1)
    try:
        yield
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)
        os.close(saved)


def run(kernel: Kernel, params: dict[str, Any], repetitions: int, min_time: float) -> dict[str, Any]:
    pyperf = _import_pyperf()
    processes, values = plan(repetitions)
    tempdirs.clean_stale()  # what SIGKILLed kernels left behind
    tally_dir = tempdirs.make()
    try:
        program_args = [
            os.path.abspath(sys.argv[0]),
            WORKER_FLAG,
            kernel.id,
            json.dumps(params),
            str(tally_dir),
        ]
        if sys.flags.no_site:
            program_args.insert(0, "-S")
        loops = calibrate(kernel, params, min_time)
        runner = pyperf.Runner(
            values=values,
            processes=processes,
            loops=loops,
            warmups=WARMUPS,
            min_time=min_time,
            program_args=tuple(program_args),
            show_name=False,
        )
        options = ["--quiet"]
        if "PYTHONPATH" in os.environ:
            options += ["--inherit-environ", "PYTHONPATH"]
        capture = tally_dir / "pyperf-stdout.txt"
        try:
            with _stdout_into(capture):
                runner.parse_args(options)
                bench = runner.bench_time_func(
                    kernel.id, _unused_in_manager, inner_loops=kernel.ops_per_loop(params)
                )
        except (Exception, SystemExit) as exc:
            failures = sorted(tally_dir.glob("failure-*.txt"))
            if failures:
                raise SelfCheckError(failures[0].read_text().strip()) from None
            said = [line for line in capture.read_text(errors="replace").splitlines() if line.strip()]
            raise RuntimeError(f"pyperf failed: {said[-1] if said else exc!r}") from None
        return _result(kernel, params, repetitions, min_time, pyperf.__version__, bench, tally_dir)
    finally:
        shutil.rmtree(tally_dir, ignore_errors=True)


def _unused_in_manager(loops: int) -> float:
    raise AssertionError("the pyperf manager process never times anything")


def _result(
    kernel: Kernel,
    params: dict[str, Any],
    repetitions: int,
    min_time: float,
    version: str,
    bench: Any,
    tally_dir: Path,
) -> dict[str, Any]:
    runs = [r for r in bench.get_runs() if r.values]
    samples = [value * 1e9 for r in runs for value in r.values]
    iterations = [r.get_total_loops() for r in runs for _ in r.values]
    if len(samples) != repetitions:
        raise SelfCheckError(f"pyperf produced {len(samples)} values, expected {repetitions}")

    ops = 0
    events: dict[str, int] = {}
    tallies = sorted(tally_dir.glob("tally-*.json"))
    for path in tallies:
        tally = json.loads(path.read_text())
        ops += tally["ops"]
        for name, n in tally["events"].items():
            events[name] = events.get(name, 0) + n
    if len(tallies) != len(runs) or ops <= 0:
        raise SelfCheckError(f"{len(tallies)} worker tallies for {len(runs)} pyperf runs")
    counters = {f"{name}_per_op": n / ops for name, n in sorted(events.items())}
    if kernel.cpu_bound:
        counters.update(_cpu_counters(tallies))

    processes, values = plan(repetitions)
    return {
        "kernel": kernel.id,
        "params": params,
        "unit": kernel.unit,
        "samples": samples,
        "iterations": iterations,
        "counters": counters,
        "harness": {
            "name": "pyperf",
            "version": version,
            "min_time_s": min_time,
            "processes": processes,
            "values_per_process": values,
            "warmups_per_process": WARMUPS,
            "python": sys.version.split()[0],
            "python_implementation": sys.implementation.name,
        },
    }


def _cpu_counters(tallies: list[Path]) -> dict[str, float]:
    """cpu_ns_per_op (median over the timed values) and cpu_wall_ratio (over all of them)."""
    per_op: list[float] = []
    cpu = wall = 0.0
    for path in tallies:
        for value_cpu, value_wall, value_ops in json.loads(path.read_text()).get("cpu", [])[WARMUPS:]:
            per_op.append(value_cpu * 1e9 / value_ops)
            cpu += value_cpu
            wall += value_wall
    if not per_op or wall <= 0:
        return {}
    per_op.sort()
    n = len(per_op)
    median = per_op[n // 2] if n % 2 else (per_op[n // 2 - 1] + per_op[n // 2]) / 2
    return {"cpu_ns_per_op": median, "cpu_wall_ratio": cpu / wall}


def worker_main(argv: list[str]) -> int:
    """A pyperf worker (or calibration) process: time the kernel, leave its tally in TALLY_DIR."""
    from ctxbench_kernels_py.kernels import BY_ID

    kernel_id, params_json, tally_dir, *pyperf_options = argv
    kernel = BY_ID[kernel_id]
    params = json.loads(params_json)
    pyperf = _import_pyperf()
    runner = pyperf.Runner(show_name=False)
    args = runner.parse_args(pyperf_options)
    tally = Tally()
    # cpu_bound kernels: (thread CPU s, wall s, ops) of every call, warmups first (time_func is called
    # for the worker's warmup values, then its timed values).
    cpu: list[tuple[float, float, int]] = []

    def time_func(loops: int) -> float:
        before = resource.getrusage(resource.RUSAGE_SELF)
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        seconds = kernel.bench(params, loops, tally)
        if kernel.cpu_bound:
            cpu.append(
                (time.thread_time() - cpu0, time.perf_counter() - wall0, loops * kernel.ops_per_loop(params))
            )
        after = resource.getrusage(resource.RUSAGE_SELF)
        tally.add("voluntary_ctxsw", after.ru_nvcsw - before.ru_nvcsw)
        tally.add("involuntary_ctxsw", after.ru_nivcsw - before.ru_nivcsw)
        return seconds

    try:
        runner.bench_time_func(kernel_id, time_func, inner_loops=kernel.ops_per_loop(params))
    except SelfCheckError as exc:
        Path(tally_dir, f"failure-{os.getpid()}.txt").write_text(f"{exc}\n")
        return 1
    calibrating = (
        args.calibrate_loops or args.recalibrate_loops or args.calibrate_warmups or args.recalibrate_warmups
    )
    if not calibrating:
        Path(tally_dir, f"tally-{os.getpid()}.json").write_text(
            json.dumps({"ops": tally.ops, "events": tally.events, "cpu": cpu})
        )
    return 0
