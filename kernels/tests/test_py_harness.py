"""The Python harness's own arithmetic, without processes: how repetitions map onto pyperf workers, the
in-process calibration of loops per value, and short samples (--sample-time: the percentile, the blocks,
the loops of one short sample). test_cli_py.py runs the real executable."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from ctxbench_kernels_py import harness, sampling
from ctxbench_kernels_py.spec import Kernel, SelfCheckError, Tally


@pytest.mark.parametrize(
    ("repetitions", "plan"),
    [
        (1, (1, 1)),
        (2, (1, 2)),
        (3, (1, 3)),
        (4, (2, 2)),
        (5, (1, 5)),
        (6, (3, 2)),
        (20, (10, 2)),
        (30, (10, 3)),
    ],
)
def test_every_worker_takes_at_least_two_values(repetitions: int, plan: tuple[int, int]) -> None:
    assert harness.plan(repetitions) == plan
    processes, values = plan
    assert processes * values == repetitions


def fake(seconds_per_loop: float, first_call: float = 0.0) -> tuple[Kernel, list[int]]:
    """A kernel whose value takes loops x seconds_per_loop (plus `first_call` once), recording its calls."""
    calls: list[int] = []

    def bench(params: dict[str, Any], loops: int, tally: Tally) -> float:
        calls.append(loops)
        return loops * seconds_per_loop + (first_call if len(calls) == 1 else 0.0)

    return Kernel(id="fake.k", title="fake", description="", bench=bench), calls


@pytest.mark.parametrize("per_loop", [1e-9, 3.7e-7, 1e-4, 0.3])
def test_calibration_reaches_the_min_time_without_doubling_to_it(per_loop: float) -> None:
    kernel, calls = fake(per_loop)
    loops = harness.calibrate(kernel, {}, 0.1)
    assert loops * per_loop >= 0.1  # a value lasts at least --min-time
    assert loops * per_loop <= 0.1 * 1.3 or loops == 1  # and not much more (pyperf's doubling: up to 2x)
    # what calibrating cost: doubling to a tenth of it, then one predicted value (1.2 x); pyperf doubles
    # all the way (2-4 x)
    assert sum(calls) * per_loop <= 0.1 * 1.6 or calls == [1]


def test_a_slow_first_call_errs_towards_longer_values() -> None:
    kernel, _ = fake(1e-6, first_call=0.05)
    assert harness.calibrate(kernel, {}, 0.1) * 1e-6 >= 0.1


def test_a_failing_self_check_stops_calibration() -> None:
    def bench(params: dict[str, Any], loops: int, tally: Tally) -> float:
        raise SelfCheckError("fake.k: count does not add up")

    kernel = Kernel(id="fake.k", title="fake", description="", bench=bench)
    with pytest.raises(SelfCheckError, match="does not add up"):
        harness.calibrate(kernel, {}, 0.1)


# ---------------------------------------------------------------- short samples (--sample-time)


@pytest.mark.parametrize(
    ("values", "percent", "expected"),
    [
        ([7.0], 5.0, 7.0),  # K = 1: the one sample
        ([10.0, 20.0], 5.0, 10.5),  # K = 2: 5 % of the way from the lower to the higher
        ([20.0, 10.0], 5.0, 10.5),  # order does not matter
        ([1.0, 2.0, 3.0, 4.0, 5.0], 50.0, 3.0),
        ([1.0, 2.0, 3.0, 4.0], 50.0, 2.5),
        ([float(i) for i in range(1, 22)], 5.0, 2.0),  # rank (21 - 1) x 0.05 = 1: exactly the 2nd
        ([float(i) for i in range(1, 12)], 5.0, 1.5),  # rank 0.5
        ([3.0, 1.0, 2.0], 0.0, 1.0),
        ([3.0, 1.0, 2.0], 100.0, 3.0),
    ],
)
def test_percentile_known_vectors(values: list[float], percent: float, expected: float) -> None:
    assert sampling.percentile(values, percent) == pytest.approx(expected, rel=1e-15)


def test_percentile_is_numpys_default_to_the_last_bit() -> None:
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(24)
    for n in (1, 2, 3, 7, 20, 21, 160, 999, 1000):
        for _ in range(20):
            values = list(rng.lognormal(3.0, 0.5, n))
            for percent in (5.0, 50.0, 95.0):
                assert sampling.percentile(values, percent) == float(np.percentile(values, percent))


def test_percentile_of_nothing_is_an_error() -> None:
    with pytest.raises(ValueError):
        sampling.percentile([], 5.0)


def test_blocks_cut_a_workers_values_in_order() -> None:
    assert sampling.blocks([1, 2, 3, 4, 5, 6], 3) == [[1, 2, 3], [4, 5, 6]]
    assert sampling.blocks([1, 2], 1) == [[1], [2]]
    assert sampling.blocks([4, 3, 2, 1], 4) == [[4, 3, 2, 1]]
    with pytest.raises(SelfCheckError, match="whole blocks"):
        sampling.blocks([1, 2, 3], 2)


@pytest.mark.parametrize(
    ("seconds", "min_time", "k"),
    [
        (0.0006, 0.1, 166),  # floor(0.1 / 0.0006)
        (0.001, 0.01, 10),
        (0.012, 0.01, 1),  # a sample longer than --min-time: still one
        (1e-7, 0.2, 1000),  # at most 1000
    ],
)
def test_samples_per_repetition(seconds: float, min_time: float, k: int) -> None:
    assert sampling.Sampling(loops=1, seconds=seconds, setup=0.0).per_repetition(min_time) == k


def test_short_samples_in_all_are_capped() -> None:
    # 1000 repetitions of 0.5 s blocks of 0.5 ms samples would be a million: 100 000 in all.
    assert sampling.Sampling(loops=1, seconds=0.0005, setup=0.0).per_repetition(0.5, 1000) == 100


def test_short_sample_calibration_reaches_the_sample_time() -> None:
    kernel, _ = fake(3.7e-7)
    got = sampling.calibrate_sample(kernel, {}, 0.0005)
    assert got.seconds == got.loops * 3.7e-7
    assert 0.0005 <= got.seconds <= 0.0005 * 1.3


def test_short_samples_last_the_sample_time_when_calibration_ran_slower() -> None:
    """The calibrating calls run at half speed (a busy host), the probes after them at full speed: the
    samples still time at least the sample time, at the probes' speed."""
    per_loop, calls = 1e-6, []

    def bench(params: dict[str, Any], loops: int, tally: Tally) -> float:
        calls.append(loops)
        slow = 2.0 if len(calls) <= 10 else 1.0  # calibration (loops 1, 2 .. 64, then 600) and 2 probes
        return loops * per_loop * slow

    kernel = Kernel(id="fake.k", title="fake", description="", bench=bench)
    got = sampling.calibrate_sample(kernel, {}, 0.001)
    assert got.seconds == got.loops * per_loop
    assert 0.001 <= got.seconds <= 0.001 * 1.3


def test_short_samples_outlast_the_set_up_outside_their_timed_part() -> None:
    """A kernel whose every call spends 2 ms before its timed part (threads, an event loop...)."""
    per_loop, setup = 1e-6, 0.002

    def bench(params: dict[str, Any], loops: int, tally: Tally) -> float:
        until = time.perf_counter() + setup
        while time.perf_counter() < until:
            pass
        return loops * per_loop

    kernel = Kernel(id="fake.k", title="fake", description="", bench=bench)
    got = sampling.calibrate_sample(kernel, {}, 0.0001)
    assert got.loops * per_loop >= setup * 0.9  # not 0.1 ms: set-up is at most about half the wall
