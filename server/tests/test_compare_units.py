"""Pure parts of compare: the facts-diff hint table, units' direction, the seeded bootstrap."""

from __future__ import annotations

import pytest

from ctxbench_server.compare import facts, ratios


@pytest.mark.parametrize(
    ("fact", "words"),
    [
        ("vulnerabilities.spectre_v2", "mitigations"),
        ("virtualization", "hypervisor"),
        ("clocksource", "vDSO"),
        ("smt_active", "same-core"),
        ("governor", "powersave"),
        ("boost", "CPU-bound"),
        ("kernel_release", "scheduler"),
        ("extra.timer_slack_ns", "usleep"),
        ("memory_bytes", "fork"),
        ("extra.cgroup_cpu_max", "throttles"),
        ("caches.L2", "working sets"),
    ],
)
def test_hints(fact: str, words: str) -> None:
    hint = facts.hint(fact)
    assert hint is not None and words in hint and "\n" not in hint


def test_no_hint_for_unknown_facts() -> None:
    assert facts.hint("extra.something_new") is None and facts.hint("nothing") is None


def test_diff_lists_only_differences_in_order() -> None:
    a = {"cpu_model": "X", "hostname": "a", "caches": {"L2": "1M"}, "extra": {"cpu_mhz": "1"}, "boost": "on"}
    b = {"cpu_model": "X", "hostname": "b", "caches": {"L2": "2M"}, "extra": {"cpu_mhz": "2"}, "boost": "off"}
    d = facts.diff({"a": a, "b": b})
    assert [x["fact"] for x in d] == ["boost", "caches.L2"]
    assert d[1]["values"] == {"a": "1M", "b": "2M"}
    assert facts.diff({"a": a}) == []


@pytest.mark.parametrize(
    ("unit", "higher"),
    [
        ("ns/op", False),
        ("ns/goroutine", False),
        ("us/op", False),
        ("MB/s", True),
        ("ops/s", True),
        ("", False),
    ],
)
def test_unit_direction(unit: str, higher: bool) -> None:
    assert ratios.higher_is_better(unit) is higher


def test_bootstrap_is_seeded_by_result_ids() -> None:
    x, y = [1.0, 1.1, 1.2, 1.05, 1.15, 0.95], [1.0, 1.02, 0.98, 1.01, 0.99, 1.03]
    one = ratios.compute(x, y, ratios.seed_for("a", "b"))
    assert ratios.compute(x, y, ratios.seed_for("a", "b")) == one
    assert ratios.compute(x, y, ratios.seed_for("a", "c")) != one
    assert ratios.compute(x, [0.0] * 6, 1) == ratios.NONE  # no positive baseline median: no ratio
    big = ratios.compute([1.0 + i % 7 for i in range(5000)], [1.0 + i % 5 for i in range(5000)], 1)
    assert big.ci_low is not None and big.ci_high is not None and big.ci_low <= big.ratio <= big.ci_high
