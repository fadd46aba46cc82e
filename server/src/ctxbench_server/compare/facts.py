"""Which machine facts differ between compared machines, and what each difference is known to do."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

# Facts that move between two gatherings on the same host (or always differ): never a difference.
IGNORED = {"hostname", "load_average", "extra.cpu_mhz"}

# Top-level facts in the order the diff lists them; maps (caches, vulnerabilities, extra) are listed
# per entry ("vulnerabilities.spectre_v2", "caches.L2", "extra.timer_slack_ns") after them.
ORDER = (
    "cpu_model",
    "arch",
    "logical_cpus",
    "physical_cores",
    "smt_active",
    "memory_bytes",
    "governor",
    "boost",
    "clocksource",
    "virtualization",
    "kernel_release",
    "os_release",
    "kernel_cmdline",
)
MAPS = ("caches", "vulnerabilities", "extra")

# Known causes, by exact fact name first, then by "<map>." prefix. One line each.
HINTS: dict[str, str] = {
    "cpu_model": "Different CPUs: every figure can differ; the differences below may explain part of it.",
    "arch": "Different architectures: syscall entry, atomics and timers work differently.",
    "logical_cpus": "Different CPU counts change multi-thread scaling and lock contention.",
    "physical_cores": "Different core counts change multi-thread scaling and lock contention.",
    "smt_active": (
        "SMT on or off changes what same-core and cross-core placement mean and how locks contend "
        "between sibling threads."
    ),
    "memory_bytes": "Memory size matters for fork with touched memory and for what the page cache holds.",
    "governor": "The frequency governor (powersave vs performance) changes every CPU-bound figure.",
    "boost": "Turbo/boost on or off changes every CPU-bound figure.",
    "clocksource": (
        "The clocksource sets clock_gettime's cost: tsc and kvm-clock are read in the vDSO without a "
        "syscall, hpet and acpi_pm need a syscall and a slow device read."
    ),
    "virtualization": (
        "Under a hypervisor syscalls, context switches and timer reads pay for exits and mitigations: "
        "slower than bare metal."
    ),
    "kernel_release": "Different kernel releases have different syscall, futex and scheduler paths.",
    "os_release": "Different distributions ship different kernels, libc and defaults.",
    "kernel_cmdline": (
        "Boot options (mitigations=, isolcpus, nohz_full, idle=, clocksource=) change syscall, timer and "
        "scheduler costs."
    ),
    "vulnerabilities.": (
        "CPU vulnerability mitigations add work to every kernel entry and exit: syscalls and context "
        "switches get slower."
    ),
    "caches.": "Cache sizes decide which working sets fit: memory-touching kernels change.",
    "extra.timer_slack_ns": "Timer slack sets the floor of short sleeps: usleep(0) cannot return sooner.",
    "extra.cgroup_cpu_max": "A cgroup CPU limit throttles multi-thread kernels.",
    "extra.cgroup_cpuset": "A cgroup cpuset limits the CPUs multi-thread and cross-core kernels can use.",
    "extra.thp": "Transparent huge pages change page-fault and fork costs.",
    "extra.isolated_cpus": "Isolated CPUs run without other tasks: less scheduler noise when pinned there.",
    "extra.nohz_full": "nohz_full CPUs skip the tick: less noise, costlier kernel entry and exit.",
    "extra.cpufreq_driver": "The frequency driver decides how fast clocks ramp: CPU-bound figures change.",
    "extra.energy_perf_pref": "The energy/performance preference changes clock speeds and CPU-bound figures.",
    "extra.energy_perf_bias": "The energy/performance bias changes clock speeds: CPU-bound figures change.",
    "extra.cpuidle_driver": "Deeper idle states make wake-ups (switches, sleeps) slower.",
    "extra.numa_nodes": "NUMA: memory and cross-core figures depend on which node is touched.",
    "extra.microcode": "A microcode update can change mitigations, branch prediction and every kernel entry.",
    "extra.sched_autogroup": "Scheduler autogrouping changes how CPU time is shared between sessions.",
}


def hint(fact: str) -> str | None:
    if fact in HINTS:
        return HINTS[fact]
    head, dot, _ = fact.partition(".")
    return HINTS.get(head + dot) if dot else None


def flatten(facts: Mapping[str, Any] | None) -> dict[str, Any]:
    """Top-level facts as they are, map facts one entry each ("caches.L2")."""
    out: dict[str, Any] = {}
    for k, v in (facts or {}).items():
        if k in MAPS and isinstance(v, Mapping):
            for sub, sv in v.items():
                out[f"{k}.{sub}"] = sv
        else:
            out[k] = v
    return {k: v for k, v in out.items() if k not in IGNORED}


def _order(fact: str) -> tuple[int, int, str]:
    if fact in ORDER:
        return (0, ORDER.index(fact), fact)
    head = fact.partition(".")[0]
    return (1, MAPS.index(head) if head in MAPS else len(MAPS), fact)


def diff(facts_by_machine: Mapping[str, Mapping[str, Any] | None]) -> list[dict[str, Any]]:
    """[{fact, values: {machine_id: value or None}, hint}] for facts that are not equal everywhere (a
    fact missing on one machine counts as different: it may be the very cause)."""
    flat = {m: flatten(f) for m, f in facts_by_machine.items()}
    if len(flat) < 2:
        return []
    names = sorted({k for f in flat.values() for k in f}, key=_order)
    out = []
    for name in names:
        values = {m: f.get(name) for m, f in flat.items()}
        if len({repr(v) for v in values.values()}) > 1:
            out.append({"fact": name, "values": values, "hint": hint(name)})
    return out
