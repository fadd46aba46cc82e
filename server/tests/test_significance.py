"""The significance rule on seeded synthetic data: A/A false positives and power at the default sampling.

Each comparison is one run per machine at the default profile's sampling (3 launches x 2 samples), with
launch-level variance 9 times the within-launch variance (sigma 3 % and 1 %) and a run-level offset the
launches cannot see (1 %), through the server's own ratios.compare_pairs with 2000 resamples a side
(compare/simulate.py). 1000 comparisons take ~2.5 s: no need to lower the resamples. The figures for
other variances: server/benchmarks/significance.py (docs/architecture.md "Statistics").
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ctxbench_server.compare import ratios, simulate
from ctxbench_server.compare import significance as sig

DEFAULT = simulate.Model(sigma_run=0.01, sigma_launch=0.03, sigma_sample=0.01)


def test_aa_false_positive_rate_at_most_5_percent() -> None:
    out = simulate.run(DEFAULT, 1.0, comparisons=1000, seed=11)
    assert out.significant <= 0.05, out
    # the noise floor is what holds it: "CI excludes 1" alone fires more often than 5 % with 3 launches
    assert out.rules.get(sig.RULE_WITHIN_NOISE, 0) > 0


def test_a_p5_figure_keeps_both_error_rates() -> None:
    """Short samples' figure (p5 of the default profile's 7 launches x 2): at most 5 % A/A flagged, with
    the default floor and with noise learned from 2 earlier runs; a true 20 % difference flagged 90 %."""
    for model in (
        simulate.Model(sigma_run=0.0, sigma_launch=0.03, sigma_sample=0.01, launches=7, q=0.05),
        simulate.Model(sigma_run=0.02, sigma_launch=0.03, sigma_sample=0.01, launches=7, history=2, q=0.05),
    ):
        assert simulate.run(model, 1.0, comparisons=1000, seed=21).significant <= 0.05, model
        assert simulate.run(model, 1.2, comparisons=1000, seed=22).significant >= 0.90, model


def test_aa_with_noise_learned_from_runs() -> None:
    # run-level noise twice the launch's share, learned from each machine's 2 earlier runs
    model = simulate.Model(sigma_run=0.02, sigma_launch=0.03, sigma_sample=0.01, history=2)
    out = simulate.run(model, 1.0, comparisons=1000, seed=12)
    assert out.significant <= 0.05, out


def test_power_for_a_true_20_percent_difference() -> None:
    out = simulate.run(DEFAULT, 1.2, comparisons=1000, seed=13)
    assert out.significant >= 0.90, out


def test_aa_one_launch_results_from_before_launches() -> None:
    # the whole run is one launch: its CI cannot see the launch-level 3 %, the doubled floor holds it
    model = simulate.Model(sigma_run=0.0, sigma_launch=0.03, sigma_sample=0.01, launches=1, per_launch=6)
    assert simulate.run(model, 1.0, comparisons=1000, seed=14).significant <= 0.05


def test_one_launch_results_still_compare() -> None:
    old = [100.0, 101.0, 99.0, 100.5, 99.5]  # stored before launches: no sample_launches
    [r] = ratios.compare_pairs(
        [ratios.Pair("old-a", [2 * v for v in old], None, "old-b", old, None, 0.05, "default")]
    )
    assert r["ratio"] == 2.0 and r["significant"] is True
    assert r["significance"]["rule"] == sig.RULE_SIGNIFICANT and r["significance"]["n_launches"] == [1, 1]
    assert r["significance"]["noise"] == 2 * 0.05  # one launch: the default floor counts twice
    [r] = ratios.compare_pairs([ratios.Pair("old-c", old[:4], None, "old-b", old, None, 0.05, "default")])
    assert r["significance"]["rule"] == sig.RULE_TOO_FEW and r["significant"] is False


def test_rule_order_and_noise_sources(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sig, "FLOORS", sig.Floors({}, {}, sig.FALLBACK_NOISE))  # not the measured ones
    assert sig.rule(0.9, 1.1, 0.05, True) == sig.RULE_CI_INCLUDES_1
    assert sig.rule(1.01, 1.1, 0.05, True) == sig.RULE_WITHIN_NOISE
    assert sig.rule(1.06, 1.1, 0.05, True) == sig.RULE_SIGNIFICANT
    assert sig.rule(0.5, 1 / 1.06, 0.05, True) == sig.RULE_SIGNIFICANT
    assert sig.rule(1.5, 2.0, 0.05, False) == sig.RULE_TOO_FEW
    assert sig.spread([100.0]) is None and sig.spread([100.0, 110.0, 105.0]) == 10.0 / 105.0
    assert sig.noise_for("k.x", "k", [None, None]) == (sig.FALLBACK_NOISE, "default")
    assert sig.noise_for("k.x", "k", [0.2, None]) == (0.2, "runs")  # a learned spread over the default
    assert sig.noise_for("k.x", "k", [0.001, 0.02]) == (0.02, "runs")
    assert sig.noise_for("k.x", "k", [0.001, 0.002]) == (sig.MIN_NOISE, "runs")
    # History's short sides (history/changes.py): the default counts twice, a learned spread does not
    assert sig.noise_for("k.x", "k", [0.03, None], default_factor=2.0) == (2 * sig.FALLBACK_NOISE, "default")
    assert sig.noise_for("k.x", "k", [0.2, None], default_factor=2.0) == (0.2, "runs")


def test_measured_floors_ship_with_the_server_and_are_used() -> None:
    """noise_floors.json (written by `make bench` section noise) loads, names real kernel ids and
    families, keeps every floor at MIN_DEFAULT_NOISE or more, and decides default_noise."""
    data = json.loads(sig.FLOORS_FILE.read_text())
    assert {"measured", "host", "load_before", "command", "runs", "floors", "families"} <= set(data)
    floors = sig.load_floors(sig.FLOORS_FILE)
    assert floors == sig.FLOORS and floors.kernels and floors.families
    assert all(v >= sig.MIN_DEFAULT_NOISE for v in [*floors.kernels.values(), *floors.families.values()])
    assert all("." in k for k in floors.kernels) and all("." not in f for f in floors.families)
    kernel, floor = next(iter(floors.kernels.items()))
    assert sig.default_noise(kernel, "whatever") == floor


def test_floor_lookup_kernel_then_family_then_median(tmp_path: Path) -> None:
    absent = sig.load_floors(tmp_path / "absent.json")
    assert absent == sig.Floors({}, {}, sig.FALLBACK_NOISE)
    good = tmp_path / "floors.json"
    good.write_text(json.dumps({"floors": {"a.x": 0.001, "a.y": 0.3, "b.z": 0.1}, "families": {"a": 0.3}}))
    floors = sig.load_floors(good)
    assert floors.kernels == {"a.x": sig.MIN_DEFAULT_NOISE, "a.y": 0.3, "b.z": 0.1}
    assert floors.fallback == 0.1  # the median of the kernels' floors
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sig, "FLOORS", floors)
        assert (
            sig.default_noise("a.x", "a") == sig.MIN_DEFAULT_NOISE
        )  # its own, though its family's is higher
        assert sig.default_noise("a.new", "a") == 0.3  # its family's
        assert sig.default_noise("c.new", "c") == 0.1  # neither: the median
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    with pytest.raises(ValueError):
        sig.load_floors(bad)


def test_floors_are_the_median_of_the_newest_measurements() -> None:
    """One measurement taken while the VM's host slowed whole runs moves no floor once three agree, a
    kernel measured once keeps that floor, and only the newest FLOOR_MEASUREMENTS count."""
    quiet = {"floors": {"syscall.getppid": 0.002, "process.fork_wait": 0.026}, "families": {"syscall": 0.003}}
    slowed = {"floors": {"syscall.getppid": 0.277, "process.fork_wait": 9.0}, "families": {"syscall": 0.277}}
    calm = {"floors": {"syscall.getppid": 0.004, "lock.go_mutex": 0.02}, "families": {"syscall": 0.004}}
    floors, families = sig.combine_measurements([quiet, slowed, calm])
    assert floors == {"lock.go_mutex": 0.02, "process.fork_wait": 4.513, "syscall.getppid": 0.004}
    assert families == {"syscall": 0.004}
    older = [slowed] * 3
    floors, _ = sig.combine_measurements([*older, quiet, calm, quiet, calm, quiet])
    assert floors["syscall.getppid"] == 0.002  # the three slowed ones fell out of the newest five
    assert sig.combine_measurements([]) == ({}, {})
