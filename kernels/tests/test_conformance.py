"""One conformance suite for every kernel executable (C++, Go, Python): the kernel CLI of DESIGN 3.1 as
kernels/contract/README.md writes it down. `--list` and `--run` output is validated against
kernels/contract/kernel-cli.schema.json; what a schema cannot say (values inside their bounds, naming
rules, exit codes, one line on stderr, the shared defaults and limits) is checked here.

What only one executable does (switch counts, op accounting, its harness) stays in test_cli_<lang>*.py.
No assertion depends on how fast the host is beyond very wide sanity bounds.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_helpers import CPP_EXE, GO_EXE, LEGACY_IDS, PY_EXE, REPO, SCHEMA, Result, run_exe, strict_json

sys.path.insert(0, str(REPO / "kernels" / "python"))
from ctxbench_kernels_py.spec import Param, UsageError

# The shared defaults and limits (kernels/contract/README.md "Defaults and limits"): the schema's `options`,
# the one place they are written (the server serves the same values in GET /limits `kernel_defaults`).
_OPTIONS = SCHEMA["$defs"]["options"]["properties"]
DEFAULT_REPETITIONS = _OPTIONS["repetitions"]["default"]
DEFAULT_MIN_TIME_S = _OPTIONS["min_time_s"]["default"]
MAX_REPETITIONS = _OPTIONS["repetitions"]["maximum"]
MAX_MIN_TIME_S = _OPTIONS["min_time_s"]["maximum"]
# Names of the parameter that sets how many workers contend (README "Names").
CONTENTION = {"threads", "processes", "goroutines", "coroutines"}
# Kernels that time ops report the context switches per op they made (getrusage); a memory figure
# (bytes/goroutine) has no time to switch in.
TIMED_UNITS = {"ns/op", "MB/s"}
# Families never name a language: the language is the executable's.
LANGUAGES = {"c", "cpp", "cxx", "go", "golang", "py", "python"}


@dataclass(frozen=True)
class Exe:
    """One kernel executable and, for the argument tests, kernels of its own to name."""

    name: str
    path: Path
    plain: str  # a fast kernel
    choice: tuple[str, str]  # a kernel and its choice parameter
    number: tuple[str, str]  # a kernel and its int parameter

    def run(self, *args: str, timeout: float = 300) -> Result:
        return run_exe(*args, exe=self.path, timeout=timeout)


EXES = [
    Exe("cpp", CPP_EXE, "call.function", ("ctxswitch.pipe", "placement"), ("sched.yield", "threads")),
    Exe("go", GO_EXE, "sched.gosched", ("channel.pingpong", "topology"), ("lock.go_mutex", "goroutines")),
    Exe("py", PY_EXE, "call.py_loop", ("call.py_loop", "form"), ("coroutine.py_yield_from", "depth")),
]


def validator(definition: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator({**SCHEMA, "$ref": f"#/$defs/{definition}"})


LIST_SCHEMA = validator("list")
RUN_SCHEMA = validator("run")


def assert_valid(v: jsonschema.Draft202012Validator, doc: Any) -> None:
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in v.iter_errors(doc)]
    assert errors == [], "\n".join(errors[:20])


def as_param(p: dict[str, Any]) -> Param:
    """A listed parameter as the Python kernels' spec.Param (tested against the golden vectors)."""
    return Param(
        p["name"], p["type"], p["default"], p["help"], p["min"], p["max"], choices=tuple(p["choices"])
    )


def fits(p: dict[str, Any], value: Any) -> bool:
    """`value` is a value of parameter `p`: its type (bool is not an int), its bounds, its choices."""
    kind = p["type"]
    typed = {
        "int": isinstance(value, int) and not isinstance(value, bool),
        "float": isinstance(value, int | float) and not isinstance(value, bool),
        "bool": isinstance(value, bool),
    }.get(kind, isinstance(value, str))
    if not typed:
        return False
    if kind in ("int", "float"):
        return p["min"] <= value <= p["max"]
    return kind != "choice" or value in p["choices"]


@pytest.fixture(scope="module", params=EXES, ids=lambda e: e.name)
def exe(request: pytest.FixtureRequest) -> Exe:
    return request.param


_LISTS: dict[str, list[dict[str, Any]]] = {}


def listed(e: Exe) -> list[dict[str, Any]]:
    if e.name not in _LISTS:
        if not e.path.is_file():
            pytest.fail(f"{e.path} is missing: run `make kernels` first")
        res = e.run("--list")
        assert res.code == 0, res.stderr
        assert res.stderr == ""
        assert res.stdout.endswith("\n") and res.stdout.count("\n") == 1, "stdout holds one JSON line"
        _LISTS[e.name] = strict_json(res.stdout)
    return _LISTS[e.name]


def spec_of(e: Exe, kernel: str) -> dict[str, Any]:
    return next(s for s in listed(e) if s["id"] == kernel)


# ---------------------------------------------------------------- --list


def test_list_matches_the_schema(exe: Exe) -> None:
    specs = listed(exe)
    assert_valid(LIST_SCHEMA, specs)
    ids = [s["id"] for s in specs]
    assert len(ids) == len(set(ids)), "duplicate kernel ids"
    for kernel in (exe.plain, exe.choice[0], exe.number[0]):
        assert kernel in ids


def test_ids_are_unique_across_executables() -> None:
    # The agent keeps the first executable's kernel of an id and drops the others.
    ids = [s["id"] for e in EXES for s in listed(e)]
    assert len(ids) == len(set(ids))


def test_names_follow_the_rules(exe: Exe) -> None:
    for spec in listed(exe):
        kid, family = spec["id"], spec["family"]
        assert kid.split(".")[0] == family, f"{kid}: the id starts with its family"
        assert family not in LANGUAGES, f"{kid}: family {family!r} names a language"
        contention = [p for p in spec["params"] if p["name"] in CONTENTION]
        assert len(contention) <= 1, f"{kid}: more than one contention parameter"
        for p in contention:
            assert p["type"] == "int" and p["min"] >= 1, (kid, p)


def test_renamed_ids_are_gone_and_their_new_ids_listed() -> None:
    """legacy-ids.json is the server's alias map now (README "Renaming kernels"), not an exemption: every
    new id is listed, no old one is, and no two old ids share a new one."""
    every = {s["id"] for e in EXES for s in listed(e)}
    assert not set(LEGACY_IDS) & every, "an old id is listed again: the executables report new ids"
    new_ids = set(LEGACY_IDS.values())
    assert len(new_ids) == len(LEGACY_IDS)
    assert new_ids <= every, f"renamed to ids no executable lists: {sorted(new_ids - every)}"


def test_values_fit_their_parameters(exe: Exe) -> None:
    for spec in listed(exe):
        names = [p["name"] for p in spec["params"]]
        assert len(names) == len(set(names)), spec["id"]
        for p in spec["params"]:
            where = f"{spec['id']}.{p['name']}"
            assert fits(p, p["default"]), (where, p["default"])
            assert all(fits(p, v) for v in p["sweep"]), (where, p["sweep"])
            if p["type"] in ("int", "float"):
                assert p["min"] <= p["max"], where
                assert p["sweep"] == sorted(p["sweep"]), f"{where}: sweep ascending"
        seed = spec.get("seed_reference")
        if seed is not None:
            assert seed["unit"] == spec["unit"], spec["id"]
            by_name = {p["name"]: p for p in spec["params"]}
            for name, text in seed.get("params", {}).items():
                assert name in by_name, (spec["id"], name)
                try:
                    as_param(by_name[name]).parse(text)
                except UsageError as exc:
                    pytest.fail(f"{spec['id']} seed param {name}={text!r}: {exc}")


# ---------------------------------------------------------------- --run


def check_result(spec: dict[str, Any], res: Result, repetitions: int, min_time: float) -> dict[str, Any]:
    assert res.code == 0, (spec["id"], res.stderr)
    assert res.stdout.endswith("\n") and res.stdout.count("\n") == 1, "stdout holds the JSON document only"
    result = strict_json(res.stdout)
    assert_valid(RUN_SCHEMA, result)
    assert result["kernel"] == spec["id"] and result["unit"] == spec["unit"]
    assert set(result["params"]) == {p["name"] for p in spec["params"]}, "every parameter, defaults filled in"
    for p in spec["params"]:
        assert fits(p, result["params"][p["name"]]), (spec["id"], p["name"], result["params"][p["name"]])
    assert len(result["samples"]) == len(result["iterations"]) == repetitions
    # Wide sanity bound only: less than 10 s per op (or 10^10 MB/s, bytes per goroutine).
    assert all(s < 1e10 for s in result["samples"]), result["samples"]
    assert result["harness"]["min_time_s"] == min_time
    if spec["unit"] in TIMED_UNITS:
        assert {"voluntary_ctxsw_per_op", "involuntary_ctxsw_per_op"} <= set(result["counters"]), spec["id"]
    return result


def test_every_kernel_runs_at_its_defaults(exe: Exe) -> None:
    for spec in listed(exe):
        res = exe.run("--run", spec["id"], "--min-time", "0.01", "--repetitions", "3")
        result = check_result(spec, res, 3, 0.01)
        assert result["params"] == {p["name"]: p["default"] for p in spec["params"]}


def test_every_kernel_takes_short_samples_with_sample_time(exe: Exe) -> None:
    """--sample-time (README "Short samples"): blocks of short samples, their p5 per repetition, the
    sustained figure beside it, and per repetition how many samples the host disturbed."""
    for spec in listed(exe):
        res = exe.run(
            "--run", spec["id"], "--min-time", "0.01", "--repetitions", "2", "--sample-time", "0.001"
        )
        result = check_result(spec, res, 2, 0.01)
        if spec["unit"] not in TIMED_UNITS:
            assert "sampling" not in result, (spec["id"], "only time measurements take short samples")
            continue
        sampling = result["sampling"]
        assert sampling["estimator"] == "p5" and sampling["sample_time_s"] == 0.001, spec["id"]
        per_block = sampling["samples_per_repetition"]
        assert len(sampling["disturbed"]) == 2 and all(0 <= d <= per_block for d in sampling["disturbed"])
        for ops in result["iterations"]:
            # ops per block = ops per sample x samples per block (rounded once where an iteration is 2 ops)
            assert abs(ops - sampling["sample_ops"] * per_block) <= per_block, (spec["id"], ops, sampling)
        sustained = result["counters"]["sustained_ns_per_op"]
        assert sustained > 0, spec["id"]
        if spec["unit"] == "ns/op":
            # a block's 5th percentile is at most its mean, so the fastest block is at most the overall mean
            assert min(result["samples"]) <= sustained * 1.000001, (spec["id"], result["samples"], sustained)


def test_without_sample_time_a_repetition_is_one_long_sample(exe: Exe) -> None:
    result = check_result(
        spec_of(exe, exe.plain),
        exe.run("--run", exe.plain, "--min-time", "0.01", "--repetitions", "2"),
        2,
        0.01,
    )
    assert "sampling" not in result and "sustained_ns_per_op" not in result["counters"]


def test_defaults_are_the_contracts_options(exe: Exe) -> None:
    res = exe.run("--run", exe.plain)
    check_result(spec_of(exe, exe.plain), res, DEFAULT_REPETITIONS, DEFAULT_MIN_TIME_S)


def test_the_repetition_cap_is_accepted(exe: Exe) -> None:
    res = exe.run("--run", exe.plain, "--repetitions", str(MAX_REPETITIONS), "--min-time", "0.0001")
    check_result(spec_of(exe, exe.plain), res, MAX_REPETITIONS, 0.0001)


def test_equals_forms_and_given_params_echo(exe: Exe) -> None:
    kernel, name = exe.choice
    spec = spec_of(exe, kernel)
    param = next(p for p in spec["params"] if p["name"] == name)
    other = next(c for c in param["choices"] if c != param["default"])
    res = exe.run(f"--run={kernel}", f"--param={name}={other}", "--repetitions=2", "--min-time=0.01")
    result = check_result(spec, res, 2, 0.01)
    defaults = {p["name"]: p["default"] for p in spec["params"]}
    assert result["params"] == {**defaults, name: other}


def test_int_params_come_back_typed(exe: Exe) -> None:
    kernel, name = exe.number
    spec = spec_of(exe, kernel)
    param = next(p for p in spec["params"] if p["name"] == name)
    value = param["min"] + 1 if param["min"] + 1 <= param["max"] else param["min"]
    res = exe.run("--run", kernel, "--param", f"{name}=0{value}", "--repetitions", "2", "--min-time", "0.01")
    assert check_result(spec, res, 2, 0.01)["params"][name] == value


# ---------------------------------------------------------------- bad arguments: exit 2, one line


BAD_OPTION_VALUES = {
    "--repetitions": ("0", "-3", "many", "2.5"),
    "--min-time": ("0", "-1", "nan", "inf", "soon"),
    "--sample-time": ("0", "-1", "nan", "soon", "2"),
}


def bad_argument_cases(e: Exe) -> list[tuple[list[str], str | None]]:
    """(argv, a text the one stderr line must contain); None: no particular text."""
    ck, cname = e.choice
    nk, nname = e.number
    run = ["--run", e.plain]
    return [
        ([], "--list"),
        (["--run", "no.such_kernel"], "no.such_kernel"),
        (["--run"], "--run"),
        (["--run", e.plain, "--run", e.plain], "--run"),
        ([*run, "--param", "nosuch=4"], "nosuch"),
        (["--run", ck, "--param", f"{cname}=sideways"], cname),
        (["--run", ck, "--param", cname], cname),
        (["--run", ck, "--param", f"{cname}=x", "--param", f"{cname}=y"], cname),
        (["--run", nk, "--param", f"{nname}=0x10"], nname),
        (["--run", nk, "--param", f"{nname}=+2"], nname),
        (["--run", nk, "--param", f"{nname}=1.5"], nname),
        (["--run", nk, "--param", f"{nname}=-1"], nname),
        (["--run", nk, "--param", f"{nname}=99999999999999999999"], nname),
        ([*run, "--param", "bad\nname=1"], None),
        # An option without its value, then each bad value of the numeric options.
        *(([*run, option], option) for option in ("--param", "--repetitions", "--min-time", "--sample-time")),
        *(([*run, option, bad], option) for option, values in BAD_OPTION_VALUES.items() for bad in values),
        # Cheap to run if wrongly accepted, so a regression fails fast instead of measuring for minutes.
        ([*run, "--repetitions", str(MAX_REPETITIONS + 1), "--min-time", "0.0001"], "--repetitions"),
        ([*run, "--min-time", str(MAX_MIN_TIME_S + 0.5), "--repetitions", "1"], "--min-time"),
        ([*run, "--min-time", "0.01", "--sample-time", "0.02"], "--sample-time"),
        ([*run, "--sample-time", "0.001", "--sample-time", "0.001"], "--sample-time"),
        (["--list", "--sample-time", "0.001"], "--list"),
        ([*run, "--frobnicate"], "--frobnicate"),
        (["--list", "--run", e.plain], "--list"),
        (["--list", "--repetitions", "3"], "--list"),
        (["--list=yes"], "--list"),
    ]


CASES = [(e, argv, named) for e in EXES for argv, named in bad_argument_cases(e)]


@pytest.mark.parametrize(
    ("e", "argv", "named"), CASES, ids=[f"{e.name}:{' '.join(a)!r}" for e, a, _ in CASES]
)
def test_bad_arguments_exit_2_with_one_line(e: Exe, argv: list[str], named: str | None) -> None:
    listed(e)  # the executable is there and lists
    res = e.run(*argv)
    assert res.code == 2, (argv, res.code, res.stderr)
    assert res.stdout == ""
    assert res.stderr.endswith("\n") and res.stderr.count("\n") == 1, repr(res.stderr)
    if named is not None:
        assert named in res.stderr, res.stderr


def test_help_is_usage_on_stdout(exe: Exe) -> None:
    res = exe.run("--help")
    assert res.code == 0 and res.stderr == ""
    assert "--list" in res.stdout and "--run" in res.stdout
