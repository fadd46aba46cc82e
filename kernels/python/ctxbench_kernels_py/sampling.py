"""Calibration and short samples for the pyperf harness (harness.py): how many loops a value times
(`calibrate`), and with `--sample-time` (kernels/contract/README.md "Short samples") the loops of one short
sample (`calibrate_sample`), the blocks a worker's values make, and a block's 5th percentile."""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxbench_kernels_py.spec import Kernel, SelfCheckError, Tally

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
# How often calibrate_sample predicts a short sample's loops again from its probes.
SAMPLE_RECALIBRATIONS = 3
# The pyperf metadata key under which a worker names its tally file (its pid).
TALLY_KEY = "ctxbench_tally_pid"


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
    """The loops of one short sample: `calibrate` with `sample_time` as the target, then probed; while the
    probes' median is shorter than the target, predicted again from them (20 % over), up to
    SAMPLE_RECALIBRATIONS times. The target is `sample_time`, or a call's set-up outside its timed part
    (the wall time around `kernel.bench` less what it timed) when longer, so set-up is at most half of a
    sample's wall time. (The calibrating call can run slower than the probes after it on a busy host: its
    loops alone would give samples shorter than `sample_time`.)"""
    loops = _calibrate(kernel, params, sample_time, 1)
    probe = _probe(kernel, params, loops)
    for _ in range(SAMPLE_RECALIBRATIONS):
        target = max(sample_time, probe.setup)
        if probe.seconds >= target:
            break
        loops = max(loops + 1, math.ceil(loops * target / max(probe.seconds, 1e-12) * PREDICT_MARGIN))
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


def sampled_result(
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
