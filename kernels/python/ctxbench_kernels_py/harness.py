"""Runs one kernel under pyperf and turns pyperf's benchmark into the kernel JSON of DESIGN 3.1.

This process calibrates the loops per value itself (`calibrate`: doubling until a value is long enough to
predict from, then one step to --min-time), so no calibration process is started. The timing is done by
`processes` pyperf workers that each run one warmup value (discarded) and `values` timed values. We
choose processes x values == --repetitions exactly (`plan`), so every sample is one pyperf value: seconds
per op, reported in ns/op, with `iterations` the ops it timed (loops x ops per loop). With more than one
worker, pyperf's Runner is their manager and they are this executable again, started as
`<python> <exe> --pyperf-worker ID PARAMS TALLY_DIR <pyperf worker options>`; with one, this process is
the worker (pyperf's `--worker` mode, the same code: `_time_worker`), so no second Python starts.

A launch of the agent is one `--run` of a few repetitions (the default profile: 2): its process-to-process
variance comes from the agent's launches, so `plan` gives each worker at least 2 values instead of a
process per value (a worker process costs a Python start, its imports and a warmup value), and a launch of
2 repetitions is one process in all.

pyperf prints to stdout; while it runs, file descriptor 1 points at a capture file so that the kernel JSON
is the only thing this process writes to stdout. Each value worker leaves a tally (ops it timed, events
the kernel counted, getrusage context switches around the timed calls) in TALLY_DIR; the counters are
their sums divided by the ops. A kernel whose self-check fails leaves its message there instead.

Short samples (`--sample-time T`, kernels/contract/README.md "Short samples"): `calibrate_sample` finds,
once and in this process, the loops of one short sample (timed part >= T, and >= the set-up one call of
the kernel costs outside its timed part: asyncio's event loop, the greenlet; `Sampling`). Every short
sample is then one pyperf value with those loops, and a worker takes a whole number of blocks of
`samples_per_repetition` values (plus warmup values lasting min(--min-time/2, 0.1 s), the C++ harness's
warm-up), so a block never spans two processes; `blocks` cuts each worker's values
back into blocks, in order, and a block's sample is its 5th percentile (`p5`). pyperf's cost per value
is an ExitStack, a division and an append, so short samples stay pyperf values: no timing loop of our
own. The worker notes for each call whether the host disturbed it (`ru_nivcsw` grew, or a cpu_bound
kernel's thread got < 90 % of the call's wall time as CPU time), read around `kernel.bench`, outside its
timed part; a tally is found again by the pid the worker puts into its run's metadata.
"""

from __future__ import annotations

import contextlib
import json
import os
import resource
import shutil
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ctxbench_kernels_py import tempdirs
from ctxbench_kernels_py.sampling import (
    MIN_CPU_SHARE,
    TALLY_KEY,
    Sampling,
    calibrate,
    calibrate_sample,
    sampled_result,
)
from ctxbench_kernels_py.spec import Kernel, SelfCheckError, Tally, Unsupported

WORKER_FLAG = "--pyperf-worker"
# More processes show more of the run-to-run variation (hash seeds, ASLR) but each costs a Python start
# and a warmup value; the agent's launches already give that variation, so a worker takes >= 2 values.
MAX_PROCESSES = 10
MIN_VALUES_PER_PROCESS = 2
WARMUPS = 1


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


def run(
    kernel: Kernel,
    params: dict[str, Any],
    repetitions: int,
    min_time: float,
    sample_time: float | None = None,
) -> dict[str, Any]:
    """Without `sample_time` one pyperf value per repetition; with it, a block of short samples per
    repetition (the module docstring)."""
    pyperf = _import_pyperf()
    processes, values = plan(repetitions)
    tempdirs.clean_stale()  # what SIGKILLed kernels left behind
    tally_dir = tempdirs.make()
    try:
        sampling: Sampling | None = None
        per_block = 1
        warmups = WARMUPS
        if sample_time is None:
            loops = calibrate(kernel, params, min_time)
        else:
            sampling = calibrate_sample(kernel, params, sample_time)
            loops = sampling.loops
            # A worker's values are whole blocks; its warmup values last min(--min-time/2, 0.1 s), the
            # C++ harness's warm-up (a block's 5th percentile does not see its first samples' cold caches).
            per_block = sampling.per_repetition(min_time, repetitions)
            warmups = sampling.per_repetition(min(min_time / 2, 0.1))
        # pyperf's options for its workers: each runs `warmups` warmup values, then its timed values.
        worker_options = [
            f"--loops={loops}",
            f"--warmups={warmups}",
            f"--values={values * per_block}",
            f"--min-time={min_time if sample_time is None else sample_time}",
        ]
        bench = _time(pyperf, kernel, params, tally_dir, processes, worker_options)
        result = _result(
            kernel, params, repetitions, min_time, pyperf.__version__, bench, tally_dir, per_block, warmups
        )
        if sampling is not None:
            assert sample_time is not None
            sampled_result(
                result, kernel, params, bench, tally_dir, sampling, sample_time, per_block, warmups
            )
        return result
    finally:
        shutil.rmtree(tally_dir, ignore_errors=True)


def _time(
    pyperf: Any,
    kernel: Kernel,
    params: dict[str, Any],
    tally_dir: Path,
    processes: int,
    worker_options: list[str],
) -> Any:
    """pyperf's benchmark of `processes` workers. One worker is this process (pyperf's `--worker` mode):
    a second Python start would cost more than the values it times, and the agent's launches are the
    process-to-process variation. More are started by pyperf's Runner as their manager."""
    capture = tally_dir / "pyperf-stdout.txt"
    try:
        with _stdout_into(capture):
            if processes == 1:
                return _time_worker(
                    pyperf, kernel, params, tally_dir, ["--worker", "--quiet", *worker_options]
                )
            program_args = [
                os.path.abspath(sys.argv[0]),
                WORKER_FLAG,
                kernel.id,
                json.dumps(params),
                str(tally_dir),
            ]
            if sys.flags.no_site:
                program_args.insert(0, "-S")
            runner = pyperf.Runner(processes=processes, program_args=tuple(program_args), show_name=False)
            options = ["--quiet", f"--processes={processes}", *worker_options]
            if "PYTHONPATH" in os.environ:
                options += ["--inherit-environ", "PYTHONPATH"]
            runner.parse_args(options)
            return runner.bench_time_func(
                kernel.id, _unused_in_manager, inner_loops=kernel.ops_per_loop(params)
            )
    except SelfCheckError:
        raise
    except (Exception, SystemExit) as exc:
        failures = sorted(tally_dir.glob("failure-*.txt"))
        if failures:
            raise SelfCheckError(failures[0].read_text().strip()) from None
        said = [line for line in capture.read_text(errors="replace").splitlines() if line.strip()]
        raise RuntimeError(f"pyperf failed: {said[-1] if said else exc!r}") from None


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
    per_block: int = 1,
    warmups: int = WARMUPS,
) -> dict[str, Any]:
    """The result without short samples (per_block 1); `_sampled` turns it into one with them."""
    runs = [r for r in bench.get_runs() if r.values]
    samples = [value * 1e9 for r in runs for value in r.values]
    iterations = [r.get_total_loops() for r in runs for _ in r.values]
    if len(samples) != repetitions * per_block:
        raise SelfCheckError(f"pyperf produced {len(samples)} values, expected {repetitions * per_block}")

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
        counters.update(_cpu_counters(tallies, warmups))

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
            "values_per_process": values * per_block,
            "warmups_per_process": warmups,
            "python": sys.version.split()[0],
            "python_implementation": sys.implementation.name,
        },
    }


def _cpu_counters(tallies: list[Path], warmups: int = WARMUPS) -> dict[str, float]:
    """cpu_ns_per_op (median over the timed values) and cpu_wall_ratio (over all of them)."""
    per_op: list[float] = []
    cpu = wall = 0.0
    for path in tallies:
        for value_cpu, value_wall, value_ops in json.loads(path.read_text()).get("cpu", [])[warmups:]:
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
    try:
        kernel, params = BY_ID[kernel_id], json.loads(params_json)
        _time_worker(_import_pyperf(), kernel, params, Path(tally_dir), pyperf_options)
    except SelfCheckError as exc:
        Path(tally_dir, f"failure-{os.getpid()}.txt").write_text(f"{exc}\n")
        return 1
    return 0


def _time_worker(
    pyperf: Any, kernel: Kernel, params: dict[str, Any], tally_dir: Path, pyperf_options: list[str]
) -> Any:
    """A pyperf worker's work, in this process: time the kernel with pyperf's worker options, leave the
    tally in `tally_dir` (not when only calibrating), and return pyperf's benchmark."""
    runner = pyperf.Runner(show_name=False)
    args = runner.parse_args(pyperf_options)
    tally = Tally()
    # cpu_bound kernels: (thread CPU s, wall s, ops) of every call, warmups first (time_func is called
    # for the worker's warmup values, then its timed values).
    cpu: list[tuple[float, float, int]] = []
    # Every call, warmups first: 1 when the host disturbed it (short samples' `disturbed`).
    disturbed: list[int] = []

    def time_func(loops: int) -> float:
        before = resource.getrusage(resource.RUSAGE_SELF)
        cpu0, wall0 = time.thread_time(), time.perf_counter()
        seconds = kernel.bench(params, loops, tally)
        call_cpu, call_wall = time.thread_time() - cpu0, time.perf_counter() - wall0
        after = resource.getrusage(resource.RUSAGE_SELF)
        if kernel.cpu_bound:
            cpu.append((call_cpu, call_wall, loops * kernel.ops_per_loop(params)))
        preempted = after.ru_nivcsw - before.ru_nivcsw
        starved = kernel.cpu_bound and call_cpu < MIN_CPU_SHARE * call_wall
        disturbed.append(1 if preempted > 0 or starved else 0)
        tally.add("voluntary_ctxsw", after.ru_nvcsw - before.ru_nvcsw)
        tally.add("involuntary_ctxsw", preempted)
        return seconds

    bench = runner.bench_time_func(
        kernel.id,
        time_func,
        inner_loops=kernel.ops_per_loop(params),
        metadata={TALLY_KEY: os.getpid()},
    )
    calibrating = (
        args.calibrate_loops or args.recalibrate_loops or args.calibrate_warmups or args.recalibrate_warmups
    )
    if not calibrating:
        Path(tally_dir, f"tally-{os.getpid()}.json").write_text(
            json.dumps({"ops": tally.ops, "events": tally.events, "cpu": cpu, "disturbed": disturbed})
        )
    return bench
