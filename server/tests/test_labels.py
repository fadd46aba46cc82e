"""Labels, selectors and the hardware class (machines/labels.py): pure functions, no database."""

from __future__ import annotations

import pytest

from ctxbench_server.errors import ValidationFailed
from ctxbench_server.machines import labels


def test_validate_labels_sorts_and_names_the_bad_key() -> None:
    assert labels.validate_labels({"zone": "a", "env": "prod"}, ["body", "labels"]) == {
        "env": "prod",
        "zone": "a",
    }
    assert labels.validate_labels({"team": ""}, ["labels"]) == {"team": ""}
    with pytest.raises(ValidationFailed) as bad:
        labels.validate_labels({"ok": "1", "bad key": "x", "k": "-v"}, ["body", "labels"])
    locs = [e["loc"] for e in bad.value.errors]
    assert locs == [["body", "labels", "bad key"], ["body", "labels", "k"]]
    with pytest.raises(ValidationFailed):
        labels.validate_labels({f"k{i}": "v" for i in range(labels.MAX_LABELS + 1)}, ["labels"])
    with pytest.raises(ValidationFailed):
        labels.validate_labels({"k" * 64: "v"}, ["labels"])


def test_parse_label_args() -> None:
    assert labels.parse_label_args(["rack=r1", "gpu="], ["label"]) == {"gpu": "", "rack": "r1"}
    with pytest.raises(ValidationFailed) as bad:
        labels.parse_label_args(["rack=r1", "nosign"], ["label"])
    assert bad.value.errors[0]["loc"] == ["label", 1]


def test_effective_admin_wins() -> None:
    assert labels.effective({"env": "prod"}, {"env": "dev", "rack": "r1"}) == {"env": "prod", "rack": "r1"}


@pytest.mark.parametrize(
    ("selector", "machine", "expected"),
    [
        ("", {}, True),
        ("env=prod", {"env": "prod"}, True),
        ("env==prod", {"env": "prod"}, True),
        ("env=prod", {"env": "dev"}, False),
        ("env!=prod", {}, True),
        ("env!=prod", {"env": "prod"}, False),
        ("gpu", {"gpu": ""}, True),
        ("gpu", {}, False),
        ("!gpu", {}, True),
        ("!gpu", {"gpu": "a100"}, False),
        ("env=prod, rack=r1", {"env": "prod", "rack": "r1"}, True),
        ("env=prod,rack=r1", {"env": "prod", "rack": "r2"}, False),
    ],
)
def test_selector(selector: str, machine: dict[str, str], expected: bool) -> None:
    sel = labels.parse_selector(selector, ["selector"])
    assert sel.matches(machine) is expected
    # Its text form parses back to the same selector.
    assert labels.parse_selector(str(sel), ["selector"]) == sel


@pytest.mark.parametrize("bad", ["env=pro d", "=x", "!", "a b", "x" * (labels.MAX_SELECTOR_CHARS + 1)])
def test_selector_refuses(bad: str) -> None:
    with pytest.raises(ValidationFailed) as err:
        labels.parse_selector(bad, ["query", "selector"])
    assert err.value.errors[0]["loc"] == ["query", "selector"]


def test_hardware_class() -> None:
    facts = {
        "cpu_model": "AMD  EPYC 7B13",
        "logical_cpus": 2,
        "memory_bytes": 24 * 2**30 + 5,
        "kernel_release": "6.1.0",
    }
    assert labels.hardware_class(facts) == "AMD EPYC 7B13 · 2 CPUs · 24 GiB · 6.1.0"
    assert labels.hardware_class({"logical_cpus": 1}) == "1 CPU"
    assert labels.hardware_class({}) == ""
