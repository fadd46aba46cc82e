"""What only the Python kernel executable (build/kernels/ctxbench-kernels-py) does: its kernels and seeds,
the pyperf mapping, exit 3 without greenlet or pyperf. The kernel CLI itself (schema, exit codes,
defaults) is test_conformance.py's.

Every test runs the built executable as the agent does (exec, no shell). No assertion depends on how fast
the host is beyond wide sanity bounds. The exit-3 tests use a real interpreter that lacks the package:
the executable's own Python started with -S (no site-packages), given only pyperf on PYTHONPATH.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
from dataclasses import dataclass

import pytest
from cli_helpers import PY_EXE

IDS = [
    "call.py_loop",
    "coroutine.py_generator",
    "coroutine.py_yield_from",
    "coroutine.py_greenlet",
    "coroutine.py_asyncio",
]
RESULT_KEYS = {"kernel", "params", "unit", "samples", "iterations", "counters", "harness"}
# The counter each kernel derives from what it counted itself; it must show one such event per op.
OWN_COUNTER = {
    "call.py_loop": "iterations_per_op",
    "coroutine.py_generator": "resumes_per_op",
    "coroutine.py_yield_from": "resumes_per_op",
    "coroutine.py_greenlet": "switches_per_op",
    "coroutine.py_asyncio": "task_switches_per_op",
}


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str


def run(*args: str, prefix: tuple[str, ...] = (), env: dict[str, str] | None = None) -> Result:
    proc = subprocess.run(
        [*prefix, str(PY_EXE), *args], capture_output=True, text=True, timeout=120, check=False, env=env
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


@pytest.fixture(scope="module")
def specs() -> dict[str, dict]:
    if not os.access(PY_EXE, os.X_OK):
        pytest.fail(f"{PY_EXE} is missing: run `make kernels-py` first")
    res = run("--list")
    assert res.code == 0 and res.stderr == "", res.stderr
    return {s["id"]: s for s in json.loads(res.stdout)}


@pytest.fixture(scope="module")
def interpreter() -> str:
    """The Python the executable runs under: its shebang, an absolute path (the agent execs it directly)."""
    first = PY_EXE.read_bytes().split(b"\n", 1)[0].decode()
    assert first.startswith("#!/"), first
    return first[2:].strip()


# ---------------------------------------------------------------- --list


def test_list_has_exactly_the_python_kernels(specs):
    assert list(specs) == IDS


def test_every_spec_says_what_one_op_is(specs):
    for kid, spec in specs.items():
        assert spec["family"] == kid.split(".")[0] != "py" and spec["unit"] == "ns/op"
        assert "op" in spec["description"], "the description says what one op is"
        seed = spec.get("seed_reference")
        if seed is not None:
            assert seed["seed"] == "000", kid
            assert "G2030" in seed["machine"], "seed 000's Python figures come from its Pentium G2030"


def test_yield_from_depth_is_a_sweepable_int(specs):
    (depth,) = specs["coroutine.py_yield_from"]["params"]
    assert depth == {
        "name": "depth",
        "type": "int",
        "default": 1,
        "min": 1,
        "max": 64,
        "sweep": [1, 2, 4, 8, 16, 32, 64],
        "choices": [],
        "help": depth["help"],
    }


def test_seed_references_are_seed_000_figures(specs):
    values = {kid: (spec.get("seed_reference") or {}).get("value") for kid, spec in specs.items()}
    # Python 3.4 figures for loop/generator/yield from; the greenlet round trip (535.3 ns, Python 2.7)
    # made two switches, so one switch is half of it.
    assert values == {
        "call.py_loop": 63.2,
        "coroutine.py_generator": 88.3,
        "coroutine.py_yield_from": 113.7,
        "coroutine.py_greenlet": 267.6,
        "coroutine.py_asyncio": None,
    }


# ---------------------------------------------------------------- --run


def check_result(spec: dict, result: dict, params: dict, repetitions: int, min_time: float) -> None:
    assert set(result) == RESULT_KEYS
    assert result["kernel"] == spec["id"] and result["unit"] == "ns/op"
    defaults = {p["name"]: p["default"] for p in spec["params"]}
    assert result["params"] == {**defaults, **params}
    samples, iterations = result["samples"], result["iterations"]
    assert len(samples) == repetitions and len(iterations) == repetitions
    for s in samples:
        assert is_number(s) and 0 < s < 1e8, s  # more than 0, less than 0.1 s per op
    for i in iterations:
        assert isinstance(i, int) and not isinstance(i, bool) and i > 0
    counters = result["counters"]
    for name in ("voluntary_ctxsw_per_op", "involuntary_ctxsw_per_op", OWN_COUNTER[spec["id"]]):
        assert is_number(counters[name]), name
    assert counters[OWN_COUNTER[spec["id"]]] == pytest.approx(1.0, rel=1e-3)
    # One thread that never blocks: far fewer than one OS switch per op (a loaded host preempts a bit).
    assert counters["voluntary_ctxsw_per_op"] + counters["involuntary_ctxsw_per_op"] < 0.05
    harness = result["harness"]
    assert harness["name"] == "pyperf" and re.match(r"^\d+\.\d+", harness["version"])
    assert harness["min_time_s"] == min_time
    assert harness["processes"] * harness["values_per_process"] == repetitions
    assert "sustained_ns_per_op" not in counters, "only with --sample-time"


@pytest.mark.parametrize(
    ("kid", "params"),
    [
        ("call.py_loop", {}),
        ("call.py_loop", {"form": "for"}),
        ("coroutine.py_generator", {}),
        ("coroutine.py_yield_from", {"depth": 8}),
        ("coroutine.py_greenlet", {}),
        ("coroutine.py_asyncio", {}),
    ],
)
def test_kernel_runs_and_prints_the_result_contract(specs, kid, params):
    argv = ["--run", kid, "--min-time", "0.01", "--repetitions", "5"]
    for name, value in params.items():
        argv += ["--param", f"{name}={value}"]
    res = run(*argv)
    assert res.code == 0, res.stderr
    assert res.stdout.count("\n") == 1, "stdout holds the JSON document only"
    check_result(specs[kid], json.loads(res.stdout), params, 5, 0.01)


def test_repetitions_map_onto_pyperf_values(specs):
    # Each worker takes at least 2 values: 6 -> 3 processes of 2; 7 is prime, so one process of 7.
    for repetitions, plan in ((6, (3, 2)), (7, (1, 7))):
        res = run("--run", "coroutine.py_generator", "--min-time", "0.005", "--repetitions", str(repetitions))
        assert res.code == 0, res.stderr
        result = json.loads(res.stdout)
        check_result(specs["coroutine.py_generator"], result, {}, repetitions, 0.005)
        assert (result["harness"]["processes"], result["harness"]["values_per_process"]) == plan
        # loops calibrated once for all workers: every value timed the same count, each ~min time or more
        assert len(set(result["iterations"])) == 1


# ---------------------------------------------------------------- short samples (--sample-time)


@pytest.mark.parametrize(
    "extra",
    [
        ("--sample-time", "0"),
        ("--sample-time", "2"),
        ("--sample-time", "-0.001"),
        ("--sample-time", "nan"),
        ("--sample-time", "x"),
        ("--sample-time=0.3",),  # longer than the default --min-time 0.2
        ("--min-time", "0.01", "--sample-time", "0.02"),
        ("--sample-time", "0.001", "--sample-time", "0.001"),
        ("--sample-time",),
    ],
)
def test_sample_time_refused_exits_2_naming_it(extra):
    res = run("--run", "call.py_loop", "--repetitions", "1", *extra)
    assert res.code == 2 and res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "--sample-time" in lines[0], res.stderr


def test_sample_time_with_list_exits_2():
    res = run("--list", "--sample-time", "0.001")
    assert res.code == 2 and res.stdout == "" and len(res.stderr.splitlines()) == 1


@pytest.mark.parametrize("kid", ["call.py_loop", "coroutine.py_asyncio"])
def test_short_samples_give_each_repetition_a_blocks_p5(specs, kid):
    res = run("--run", kid, "--repetitions", "2", "--min-time", "0.01", "--sample-time=0.001")
    assert res.code == 0, res.stderr
    assert res.stdout.count("\n") == 1, "stdout holds the JSON document only"
    result = json.loads(res.stdout)
    assert set(result) == RESULT_KEYS | {"sampling"}
    sampling = result["sampling"]
    keys = {"estimator", "sample_time_s", "sample_ops", "samples_per_repetition", "disturbed"}
    assert set(sampling) == keys
    assert sampling["estimator"] == "p5" and sampling["sample_time_s"] == 0.001
    ops, k = sampling["sample_ops"], sampling["samples_per_repetition"]
    assert isinstance(ops, int) and ops >= 1 and isinstance(k, int) and 1 <= k <= 1000
    # a short sample lasts at least --sample-time (asyncio: at least its set-up, so fewer of them)
    assert k <= 10
    assert len(sampling["disturbed"]) == 2
    assert all(isinstance(d, int) and 0 <= d <= k for d in sampling["disturbed"])
    assert result["iterations"] == [ops * k, ops * k]
    samples, counters = result["samples"], result["counters"]
    assert len(samples) == 2 and all(is_number(s) and 0 < s < 1e8 for s in samples)
    sustained = counters["sustained_ns_per_op"]
    assert is_number(sustained)
    # the 5th percentile of a block is at most its mean, and the mean of all blocks is sustained
    assert min(samples) <= sustained * (1 + 1e-9)
    assert counters[OWN_COUNTER[kid]] == pytest.approx(1.0, rel=1e-3)
    harness = result["harness"]
    # every short sample is one pyperf value; a worker takes whole blocks, plus warmups lasting
    # min(--min-time/2, 0.1 s): half a block here (floor(x/2) == floor(floor(x)/2))
    assert harness["processes"] * harness["values_per_process"] == 2 * k
    assert harness["warmups_per_process"] == max(1, k // 2)


# ---------------------------------------------------------------- cannot run here → exit 3


@pytest.fixture(scope="module")
def pyperf_only(tmp_path_factory, interpreter) -> dict[str, str]:
    """An environment for `<interpreter> -S` in which pyperf is importable and greenlet is not."""
    where = subprocess.run(
        [interpreter, "-c", "import os, pyperf; print(os.path.dirname(pyperf.__file__))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    path = tmp_path_factory.mktemp("pyperf-only")
    (path / "pyperf").symlink_to(where, target_is_directory=True)
    return {**os.environ, "PYTHONPATH": str(path)}


def test_greenlet_missing_exits_3(interpreter, pyperf_only):
    probe = subprocess.run([interpreter, "-S", "-c", "import greenlet"], env=pyperf_only, check=False)
    assert probe.returncode != 0, "precondition: greenlet must not be importable with -S"
    res = run("--run", "coroutine.py_greenlet", prefix=(interpreter, "-S"), env=pyperf_only)
    assert res.code == 3, res.stderr
    assert res.stdout == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "greenlet is not installed" in lines[0], res.stderr


def test_other_kernels_still_run_without_greenlet(specs, interpreter, pyperf_only):
    res = run(
        "--run",
        "coroutine.py_generator",
        "--min-time",
        "0.005",
        "--repetitions",
        "2",
        prefix=(interpreter, "-S"),
        env=pyperf_only,
    )
    assert res.code == 0, res.stderr
    check_result(specs["coroutine.py_generator"], json.loads(res.stdout), {}, 2, 0.005)


def test_pyperf_missing_exits_3(interpreter):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    res = run("--run", "call.py_loop", prefix=(interpreter, "-S"), env=env)
    assert res.code == 3, res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "pyperf is not installed" in lines[0], res.stderr
    # --list needs no pyperf.
    assert json.loads(run("--list", prefix=(interpreter, "-S"), env=env).stdout)[0]["id"] == "call.py_loop"
