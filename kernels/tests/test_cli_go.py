"""What only the Go kernel executable (build/kernels/ctxbench-kernels-go) does: its five kernels, their
bounds and seeds, op accounting. The kernel CLI itself (schema, exit codes, defaults) is
test_conformance.py's.

Every test runs the built executable as the agent does (exec, no shell). No assertion depends on how fast
the host is beyond wide sanity bounds; op accounting (iterations a multiple of the ops one benchmark
iteration makes, counters that count the op itself) is checked exactly.
"""

from __future__ import annotations

import json
import math
import re

import pytest
from cli_helpers import GO_EXE, Result, run_exe

IDS = ["goroutine.create", "goroutine.memory", "sched.gosched", "channel.pingpong", "lock.go_mutex"]
FAMILIES = {
    "goroutine.create": "goroutine",
    "goroutine.memory": "goroutine",
    "sched.gosched": "sched",
    "channel.pingpong": "channel",
    "lock.go_mutex": "lock",
}
# seed and value of each kernel's seed_reference (see the kernel's comment for how it was read).
SEEDS = {
    "goroutine.create": ("000", 568),
    "goroutine.memory": ("002", 10486),
    "sched.gosched": ("000", 250),
    "channel.pingpong": ("002", 768.5),
    "lock.go_mutex": ("000", 30),
}
# The counter each timed kernel derives from what it counted itself, and its exact per-op value.
OWN_COUNTER = {
    "goroutine.create": ("goroutines_run_per_op", 1),
    "sched.gosched": ("gosched_calls_per_op", 1),
    "channel.pingpong": ("replies_per_op", 0.5),
    "lock.go_mutex": ("increments_per_op", 1),
}
SEED_KEYS = {"seed", "value", "unit", "machine"}
RESULT_KEYS = {"kernel", "params", "unit", "samples", "iterations", "counters", "harness"}
MIN_TIME = 0.01


def run(*args: str, timeout: float = 120) -> Result:
    return run_exe(*args, exe=GO_EXE, timeout=timeout)


def is_number(v) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


@pytest.fixture(scope="session")
def specs() -> dict[str, dict]:
    if not GO_EXE.is_file():
        pytest.fail(f"{GO_EXE} is missing: run `make kernels` first")
    res = run("--list")
    assert res.code == 0, res.stderr
    assert res.stderr == ""
    listed = json.loads(res.stdout)
    assert isinstance(listed, list)
    return {s["id"]: s for s in listed}


# ---------------------------------------------------------------- --list


def test_list_names_the_five_kernels(specs):
    assert list(specs) == IDS


def test_families_and_units(specs):
    for kid, spec in specs.items():
        assert spec["family"] == FAMILIES[kid]
        assert spec["unit"] == ("bytes/goroutine" if kid == "goroutine.memory" else "ns/op")
        assert {p["type"] for p in spec["params"]} <= {"int", "choice"}, kid


def test_goroutine_bounds_and_sweeps(specs):
    def param(kid, name):
        return next(p for p in specs[kid]["params"] if p["name"] == name)

    for kid in ("sched.gosched", "lock.go_mutex"):
        assert param(kid, "goroutines")["max"] == 16384, kid
    assert 16384 in param("sched.gosched", "goroutines")["sweep"]
    assert param("channel.pingpong", "goroutines")["max"] == 30000
    assert 30000 in param("channel.pingpong", "goroutines")["sweep"]
    mem = param("goroutine.memory", "goroutines")
    assert (mem["min"], mem["max"], mem["default"]) == (1, 100000, 10000)
    assert mem["sweep"] == [1000, 10000, 30000, 100000]
    for kid in ("goroutine.create", "sched.gosched", "channel.pingpong", "lock.go_mutex"):
        procs = param(kid, "procs")
        assert (procs["min"], procs["max"], procs["default"]) == (1, 1024, 1), kid


def test_seed_references(specs):
    for kid, (seed, value) in SEEDS.items():
        ref = specs[kid]["seed_reference"]
        assert SEED_KEYS <= set(ref), kid
        assert (ref["seed"], ref["value"]) == (seed, value), kid
        assert ref["unit"] == specs[kid]["unit"]
        assert isinstance(ref["machine"], str) and ref["machine"]
        names = {p["name"] for p in specs[kid]["params"]}
        assert set(ref.get("params", {})) <= names, kid
        assert all(isinstance(v, str) for v in ref.get("params", {}).values()), kid


# ---------------------------------------------------------------- --run

# Tiny runs: (params, ops one benchmark iteration makes, which iterations must be multiples of).
TINY = [
    ("goroutine.create", {"batch": "3"}, 3),
    ("goroutine.memory", {"goroutines": "2000"}, 2000),
    ("sched.gosched", {"goroutines": "3"}, 3),
    ("channel.pingpong", {"goroutines": "3"}, 6),
    ("channel.pingpong", {"goroutines": "3", "topology": "pairs"}, 6),
    ("lock.go_mutex", {"goroutines": "3", "procs": "2"}, 3),
]


def check_result(spec: dict, result: dict, repetitions: int) -> None:
    assert set(result) == RESULT_KEYS
    assert result["kernel"] == spec["id"]
    assert len(result["samples"]) == len(result["iterations"]) == repetitions
    for s in result["samples"]:
        assert is_number(s) and 0 < s < 1e10, s
    harness = result["harness"]
    assert set(harness) == {"name", "version", "min_time_s"}
    assert harness["name"] == "go-testing" and re.match(r"^go\d+\.\d+", harness["version"])
    assert harness["min_time_s"] == MIN_TIME


@pytest.mark.parametrize(("kid", "params", "per_iter"), TINY)
def test_kernel_runs_and_prints_the_result_contract(specs, kid, params, per_iter):
    argv = ["--run", kid, "--min-time", str(MIN_TIME), "--repetitions", "3"]
    for name, value in params.items():
        argv += ["--param", f"{name}={value}"]
    res = run(*argv)
    assert res.code == 0, res.stderr
    assert res.stderr == ""
    assert res.stdout.count("\n") == 1, "stdout must hold the JSON document only"
    result = res.json()
    check_result(specs[kid], result, 3)
    for name, value in params.items():
        assert str(result["params"][name]) == value
    for i in result["iterations"]:
        assert i % per_iter == 0, (kid, i, per_iter)
    if kid in OWN_COUNTER:
        name, value = OWN_COUNTER[kid]
        assert result["counters"][name] == value, result["counters"]


def test_counters_count_the_op(specs):
    res = run("--run", "goroutine.create", "--param", "batch=10", "--min-time", str(MIN_TIME))
    assert res.code == 0, res.stderr
    counters = res.json()["counters"]
    # One goroutine created per op (a GC starting its workers mid-run may add a handful in total).
    assert abs(counters["goroutines_created_per_op"] - 1) < 0.01, counters
    assert counters["gomaxprocs"] == 1
    assert {"voluntary_ctxsw_per_op", "involuntary_ctxsw_per_op"} <= set(counters)

    res = run(
        "--run", "lock.go_mutex", "--param", "procs=2", "--min-time", str(MIN_TIME), "--repetitions", "1"
    )
    assert res.code == 0, res.stderr
    assert res.json()["counters"]["gomaxprocs"] == 2


def test_goroutine_memory_reports_per_goroutine_parts(specs):
    res = run("--run", "goroutine.memory", "--param", "goroutines=3000", "--repetitions", "2")
    assert res.code == 0, res.stderr
    result = res.json()
    assert result["iterations"] == [3000, 3000]
    counters = result["counters"]
    assert counters["stack_bytes_per_goroutine"] > 0
    assert {"heap_bytes_per_goroutine", "stack_starting_size_bytes"} <= set(counters)
