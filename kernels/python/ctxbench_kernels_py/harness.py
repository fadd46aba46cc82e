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

Short samples (`--sample-time T`, kernels/contract/README.md "Short samples"): `calibrate_sample` finds,
once and in this process, the loops of one short sample (timed part >= T, and >= the set-up one call of
the kernel costs outside its timed part: asyncio's event loop, the greenlet; `Sampling`). Every short
sample is then one pyperf value with those loops, and a worker takes a whole number of blocks of
`samples_per_repetition` values (plus one block's worth of warmup values, as long as the single warmup
value without short samples), so a block never spans two processes; `blocks` cuts each worker's values
back into blocks, in order, and a block's sample is its 5th percentile (`p5`). pyperf's cost per value
is an ExitStack, a division and an append, so short samples stay pyperf values: no timing loop of our
own. The worker notes for each call whether the host disturbed it (`ru_nivcsw` grew, or a cpu_bound
kernel's thread got < 90 % of the call's wall time as CPU time), read around `kernel.bench`, outside its
timed part; a tally is found again by the pid the worker puts into its run's metadata.
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
from dataclasses import dataclass
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
# Short samples: a block holds at most this many; the estimator of a block; a call is disturbed when its
# thread got less than this share of its wall time as CPU time (cpu_bound kernels).
MAX_SAMPLES_PER_REPETITION = 1000
MAX_SHORT_SAMPLES = 100_000  # in all, over a process's blocks (kernels/contract/README.md)
ESTIMATOR = "p5"
ESTIMATOR_PERCENT = 5.0
MIN_CPU_SHARE = 0.9
# Calls at the calibrated loops whose median gives one short sample's timed length and set-up time.
SAMPLE_PROBES = 5
# The run metadata key by which the manager finds a worker's tally.
TALLY_KEY = "ctxbench_tally_pid"


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
    return _calibrate(kernel, params, min_time, 1)


def _calibrate(kernel: Kernel, params: dict[str, Any], min_time: float, loops: int) -> int:
    tally = Tally()
    while True:
        seconds = kernel.bench(params, loops, tally)
        if seconds >= min_time:
            return loops
        if seconds >= PREDICT_FROM * min_time:
            loops = max(loops + 1, math.ceil(loops * min_time / seconds * PREDICT_MARGIN))
        else:
            loops *= 2


@dataclass(frozen=True)
class Sampling:
    """One short sample as calibrated: `loops` per call, `seconds` its timed length (median of probes),
    `setup` what a call costs outside its timed part (median of the same probes)."""

    loops: int
    seconds: float
    setup: float

    def per_repetition(self, min_time: float, repetitions: int = 1) -> int:
        """Short samples in one repetition's block: max(1, floor(min_time / timed length)), <= 1000 and
        <= MAX_SHORT_SAMPLES in all over `repetitions` blocks."""
        cap = min(MAX_SAMPLES_PER_REPETITION, max(1, MAX_SHORT_SAMPLES // repetitions))
        return max(1, min(cap, math.floor(min_time / self.seconds)))


def calibrate_sample(kernel: Kernel, params: dict[str, Any], sample_time: float) -> Sampling:
    """The loops of one short sample: `calibrate` with `sample_time` as the target, then, when a call's
    set-up outside its timed part (the wall time around `kernel.bench` less what it timed) is longer than
    that, calibrated again to the set-up time, so set-up is at most half of a sample's wall time."""
    loops = _calibrate(kernel, params, sample_time, 1)
    probe = _probe(kernel, params, loops)
    if probe.setup > probe.seconds:
        loops = _calibrate(kernel, params, probe.setup, loops)
        probe = _probe(kernel, params, loops)
    return probe


def _probe(kernel: Kernel, params: dict[str, Any], loops: int) -> Sampling:
    tally = Tally()
    timed: list[float] = []
    setup: list[float] = []
    for _ in range(SAMPLE_PROBES):
        wall0 = time.perf_counter()
        seconds = kernel.bench(params, loops, tally)
        wall = time.perf_counter() - wall0
        timed.append(seconds)
        setup.append(max(0.0, wall - seconds))
    return Sampling(loops, percentile(timed, 50.0), percentile(setup, 50.0))


def percentile(values: list[float], percent: float) -> float:
    """numpy.percentile's default ("linear": between the order statistics around (n-1) * percent/100),
    in plain Python: the executable must not need numpy. numpy's own lerp, to the last bit."""
    if not values:
        raise ValueError("percentile of no values")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * (percent / 100.0)
    lo = math.floor(rank)
    hi = min(lo + 1, len(ordered) - 1)
    a, b, t = ordered[lo], ordered[hi], rank - lo
    return b - (b - a) * (1.0 - t) if t >= 0.5 else a + (b - a) * t


def blocks(values: list[Any], per_block: int) -> list[list[Any]]:
    """One worker's values, in order, cut into its blocks of `per_block` (a whole number of them)."""
    if per_block < 1 or len(values) % per_block:
        raise SelfCheckError(f"{len(values)} values do not make whole blocks of {per_block}")
    return [values[i : i + per_block] for i in range(0, len(values), per_block)]


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
        program_args = [
            os.path.abspath(sys.argv[0]),
            WORKER_FLAG,
            kernel.id,
            json.dumps(params),
            str(tally_dir),
        ]
        if sys.flags.no_site:
            program_args.insert(0, "-S")
        sampling: Sampling | None = None
        per_block = 1
        warmups = WARMUPS
        if sample_time is None:
            loops = calibrate(kernel, params, min_time)
        else:
            sampling = calibrate_sample(kernel, params, sample_time)
            loops = sampling.loops
            # A worker's values are whole blocks; its warmup is a block's worth (about --min-time, as the
            # single warmup value is without short samples).
            per_block = warmups = sampling.per_repetition(min_time, repetitions)
        runner = pyperf.Runner(
            values=values * per_block,
            processes=processes,
            loops=loops,
            warmups=warmups,
            min_time=min_time if sample_time is None else sample_time,
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
        result = _result(
            kernel, params, repetitions, min_time, pyperf.__version__, bench, tally_dir, per_block, warmups
        )
        if sampling is not None:
            assert sample_time is not None
            _sampled(result, kernel, params, bench, tally_dir, sampling, sample_time, per_block, warmups)
        return result
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


def _sampled(
    result: dict[str, Any],
    kernel: Kernel,
    params: dict[str, Any],
    bench: Any,
    tally_dir: Path,
    sampling: Sampling,
    sample_time: float,
    per_block: int,
    warmups: int,
) -> None:
    """Short samples: each worker's values cut into blocks in order; a block's p5 is a repetition's
    sample, its disturbed count read from the same worker's tally (found by the pid in its metadata)."""
    sample_ops = sampling.loops * kernel.ops_per_loop(params)
    samples: list[float] = []
    disturbed: list[int] = []
    total_ns = 0.0
    total_values = 0
    for r in (r for r in bench.get_runs() if r.values):
        pid = r.get_metadata().get(TALLY_KEY)
        path = tally_dir / f"tally-{pid}.json"
        if pid is None or not path.is_file():
            raise SelfCheckError(f"no worker tally for pyperf run of worker {pid}")
        flags = json.loads(path.read_text())["disturbed"][warmups:]
        if len(flags) != len(r.values):
            raise SelfCheckError(f"worker {pid}: {len(flags)} calls noted for {len(r.values)} values")
        flag_blocks = blocks(flags, per_block)  # as long as the value blocks (checked above)
        for i, block in enumerate(blocks(list(r.values), per_block)):
            per_op_ns = [value * 1e9 for value in block]
            samples.append(percentile(per_op_ns, ESTIMATOR_PERCENT))
            disturbed.append(sum(flag_blocks[i]))
            total_ns += sum(per_op_ns)
            total_values += len(per_op_ns)
    result["samples"] = samples
    result["iterations"] = [sample_ops * per_block] * len(samples)
    # Every short sample timed sample_ops ops: all timed ns over all ops is the mean per-op time.
    result["counters"]["sustained_ns_per_op"] = total_ns / total_values
    result["sampling"] = {
        "estimator": ESTIMATOR,
        "sample_time_s": sample_time,
        "sample_ops": sample_ops,
        "samples_per_repetition": per_block,
        "disturbed": disturbed,
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
    kernel = BY_ID[kernel_id]
    params = json.loads(params_json)
    pyperf = _import_pyperf()
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

    try:
        runner.bench_time_func(
            kernel_id,
            time_func,
            inner_loops=kernel.ops_per_loop(params),
            metadata={TALLY_KEY: os.getpid()},
        )
    except SelfCheckError as exc:
        Path(tally_dir, f"failure-{os.getpid()}.txt").write_text(f"{exc}\n")
        return 1
    calibrating = (
        args.calibrate_loops or args.recalibrate_loops or args.calibrate_warmups or args.recalibrate_warmups
    )
    if not calibrating:
        Path(tally_dir, f"tally-{os.getpid()}.json").write_text(
            json.dumps({"ops": tally.ops, "events": tally.events, "cpu": cpu, "disturbed": disturbed})
        )
    return 0
