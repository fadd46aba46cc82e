"""Pure parts of compare: the facts-diff hint table, units' direction, the seeded bootstrap."""

from __future__ import annotations

import numpy as np
import pytest

from ctxbench_server.compare import facts, ratios
from ctxbench_server.stats import bootstrap


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


def pair(a: str, x: list[float], b: str, y: list[float], lx: list[int] | None = None) -> ratios.Pair:
    return ratios.Pair(a, x, lx, b, y, None, 0.05, "default")


def test_bootstrap_is_seeded_by_result_ids() -> None:
    x, y = [1.0, 1.1, 1.2, 1.05, 1.15, 0.95], [1.0, 1.02, 0.98, 1.01, 0.99, 1.03]
    [one] = ratios.compare_pairs([pair("a", x, "b", y)])
    ratios.clear_cache()
    [again] = ratios.compare_pairs([pair("a", x, "b", y)])
    assert again == one and again is not one
    [other] = ratios.compare_pairs([pair("c", x, "b", y)])
    assert other["ci_low"] != one["ci_low"] and other["ratio"] == one["ratio"]
    assert ratios.compare_pairs([pair("d", x, "e", [0.0] * 6)]) == [
        ratios.NONE
    ]  # no positive baseline median


def test_large_sample_sets_bootstrap_in_chunks() -> None:
    big = [1.0 + i % 7 for i in range(5000)]
    [r] = ratios.compare_pairs([pair("big-a", big, "big-b", [1.0 + i % 5 for i in range(5000)])])
    assert r["ci_low"] <= r["ratio"] <= r["ci_high"]


def test_hierarchical_bootstrap_resamples_launches_first() -> None:
    # two launches far apart: every resample's median is from one launch, the other, or between
    x = [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
    g = bootstrap.group(x, [0, 0, 0, 1, 1, 1])
    assert g.count == 2 and g.units == 2 and g.ci_kind == "minmax"
    m = bootstrap.medians(g, 1)
    assert set(np.unique(m)) == {1.0, 1.5, 2.0}
    assert 0.15 < float(np.mean(m == 1.0)) < 0.35  # both picks launch 0: 1/4
    # one launch of the same samples: a plain bootstrap, mostly 1.5
    assert float(np.mean(bootstrap.medians(bootstrap.group(x, None), 1) == 1.5)) > 0.3


def test_launches_of_unequal_sizes_and_unordered_indices() -> None:
    g = bootstrap.group([5.0, 1.0, 5.0, 1.0, 1.0], [3, 1, 3, 1, 1])
    assert g.sizes.tolist() == [3, 2] and np.nansum(g.values[0]) == 3.0 and np.nansum(g.values[1]) == 10.0
    m = bootstrap.medians(g, 2)
    assert m.min() == 1.0 and m.max() == 5.0 and np.isfinite(m).all()
    # a mismatched index list is ignored: one launch
    assert bootstrap.group([1.0, 2.0], [0]).count == 1
