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
    [one] = ratios.compare_pairs([("a", x, "b", y)])
    ratios.clear_cache()
    [again] = ratios.compare_pairs([("a", x, "b", y)])
    assert again == one and again is not one
    [other] = ratios.compare_pairs([("c", x, "b", y)])
    assert other["ci_low"] != one["ci_low"] and other["ratio"] == one["ratio"]
    assert ratios.compare_pairs([("d", x, "e", [0.0] * 6)]) == [ratios.NONE]  # no positive baseline median


def test_grouped_mann_whitney_matches_one_call_per_pair() -> None:
    from scipy.stats import mannwhitneyu

    sets = [[float(i + j * 0.37) for i in range(10)] for j in range(6)]
    sets.append([1.0, 1.0, 2.0, 2.0, 3.0, 3.0, 4.0, 4.0, 5.0, 5.0])  # ties
    pairs = [(f"x{j}", s, "base", sets[0]) for j, s in enumerate(sets[1:])]
    got = ratios.compare_pairs(pairs)
    for (_, s, _, b), r in zip(pairs, got, strict=True):
        assert r["p_value"] == pytest.approx(mannwhitneyu(s, b, alternative="two-sided").pvalue)


def test_large_sample_sets_bootstrap_in_chunks() -> None:
    big = [1.0 + i % 7 for i in range(5000)]
    [r] = ratios.compare_pairs([("big-a", big, "big-b", [1.0 + i % 5 for i in range(5000)])])
    assert r["ci_low"] <= r["ratio"] <= r["ci_high"]
