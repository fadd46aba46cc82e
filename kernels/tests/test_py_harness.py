"""The Python harness's own arithmetic, without processes: how repetitions map onto pyperf workers, and
the in-process calibration of loops per value (test_cli_py.py runs the real executable)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))

from ctxbench_kernels_py import harness
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
