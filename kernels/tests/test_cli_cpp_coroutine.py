"""coroutine.switch and coroutine.create: every impl counts the same switches (DESIGN 3.1 CLI)."""

from __future__ import annotations

import pytest
from cli_helpers import run_exe
from cli_helpers import run_ok as run

IMPLS = ["fcontext", "ucontext", "cxx20"]


def test_boost_context_kernel_is_gone(cpp_specs):
    ids = {s["id"] for s in cpp_specs}
    assert {"coroutine.switch", "coroutine.create"} <= ids
    assert "coroutine.boost_context" not in ids


def test_coroutine_specs(cpp_specs):
    specs = {s["id"]: s for s in cpp_specs}
    for kernel in ("coroutine.switch", "coroutine.create"):
        params = {p["name"]: p for p in specs[kernel]["params"]}
        assert params["impl"]["choices"] == IMPLS
        assert params["coroutines"]["min"] == 1 and params["coroutines"]["max"] == 30000
        assert params["coroutines"]["sweep"][-1] == 30000
        seed = specs[kernel]["seed_reference"]
        assert seed["seed"] == "002" and seed["params"]["coroutines"] == "30000"
    assert specs["coroutine.switch"]["seed_reference"]["value"] == pytest.approx(305.5)
    assert specs["coroutine.create"]["seed_reference"]["value"] == 1466


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("coroutines", ["1", "100"])
def test_switch_counts_one_switch_per_op(impl, coroutines):
    result = run("coroutine.switch", f"impl={impl}", f"coroutines={coroutines}")
    assert result["params"] == {"impl": impl, "coroutines": int(coroutines)}
    counters = result["counters"]
    assert counters["switches_per_op"] == 1
    assert counters["syscalls_per_op"] == (1 if impl == "ucontext" else 0)
    assert all(i % 2 == 0 for i in result["iterations"]), "a round trip is 2 ops"
    assert counters["voluntary_ctxsw_per_op"] < 0.01


@pytest.mark.parametrize("impl", IMPLS)
@pytest.mark.parametrize("coroutines", ["1", "50"])
def test_create_runs_every_coroutine_once(impl, coroutines):
    result = run("coroutine.create", f"impl={impl}", f"coroutines={coroutines}")
    counters = result["counters"]
    assert counters["switches_per_op"] == 2
    assert counters["syscalls_per_op"] == (3 if impl == "ucontext" else 0)
    assert all(i % int(coroutines) == 0 for i in result["iterations"]), "whole batches only"


@pytest.mark.parametrize("value", ["0", "30001", "x"])
def test_coroutines_out_of_range_exit_2(cpp_exe, value):
    res = run_exe("--run", "coroutine.switch", "--param", f"coroutines={value}")
    assert res.code == 2 and res.stderr.count("\n") == 1 and "coroutines" in res.stderr


def test_unknown_impl_exits_2(cpp_exe):
    res = run_exe("--run", "coroutine.create", "--param", "impl=greenlet")
    assert res.code == 2 and res.stderr.count("\n") == 1 and "impl" in res.stderr
