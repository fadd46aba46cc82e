package facts

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// stealWindow is how long Gather watches steal time for the preflight.
const stealWindow = 500 * time.Millisecond

// preflight lists what makes this host noisy, like pyperf's `system tune`: each check ok or warn, with
// the fix. f holds the facts already gathered from the same root; steal is the share of CPU time
// stolen by the hypervisor over the last stealWindow (negative when unknown).
func preflight(r reader, f *agentv1.MachineFacts, steal float64) []*agentv1.PreflightCheck {
	var out []*agentv1.PreflightCheck
	add := func(check string, warn bool, detail, fix string) {
		c := &agentv1.PreflightCheck{Check: check, Status: "ok", Detail: detail}
		if warn {
			c.Status, c.Fix = "warn", fix
		}
		out = append(out, c)
	}
	switch g := f.GetGovernor(); g {
	case "":
		add("governor", false, "no cpufreq governor exposed (a VM or a fixed clock)", "")
	default:
		add("governor", g != "performance", "scaling governor "+g,
			"cpupower frequency-set -g performance (or write performance to /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor)")
	}
	switch b := f.GetBoost(); b {
	case "on":
		add("boost", true, "turbo/boost on: the clock follows temperature and load",
			"echo 1 > /sys/devices/system/cpu/intel_pstate/no_turbo, or echo 0 > /sys/devices/system/cpu/cpufreq/boost")
	case "off":
		add("boost", false, "turbo/boost off", "")
	default:
		add("boost", false, "turbo/boost state not exposed", "")
	}
	add("smt", f.GetSmtActive(), map[bool]string{true: "SMT on: a sibling thread shares the core's caches and ports",
		false: "SMT off or absent"}[f.GetSmtActive()], "echo off > /sys/devices/system/cpu/smt/control (or nosmt on the kernel command line)")
	irq := processRunning(r, "irqbalance")
	add("irqbalance", irq, map[bool]string{true: "irqbalance is running: interrupts move between CPUs",
		false: "irqbalance not running"}[irq], "systemctl stop irqbalance, and pin interrupts away from the benchmark CPUs")
	iso := r.line("sys/devices/system/cpu/isolated")
	add("isolated_cpus", iso == "", map[bool]string{true: "no isolated CPUs: the benchmark shares its CPUs with everything",
		false: "isolated CPUs " + iso}[iso == ""], "boot with isolcpus=<cpus> nohz_full=<cpus> rcu_nocbs=<cpus> and pin the agent to them (taskset)")
	v := f.GetVirtualization()
	add("virtualization", v != "" && v != "none", "virtualization: "+map[bool]string{true: "none", false: v}[v == "" || v == "none"],
		"compare machines of the same kind, or measure on bare metal; steal time and vCPU placement move figures")
	if steal >= 0 {
		add("steal", steal > 0.01, fmt.Sprintf("steal %.1f %% over the last %s", 100*steal, stealWindow),
			"a quieter host or dedicated vCPUs; launches with steal over the threshold are re-measured")
	}
	if q := cpuQuota(r); q != "" {
		add("cpu_quota", true, "CPU quota "+q+": measured figures include its throttling (recorded per launch)",
			"none needed to compare this machine as it is; remove the quota (cpu.max / cpu.cfs_quota_us) to measure the host")
	} else {
		add("cpu_quota", false, "no CPU quota", "")
	}
	return out
}

// processRunning says a process whose comm is name runs (scans root/proc).
func processRunning(r reader, name string) bool {
	comms, _ := filepath.Glob(filepath.Join(string(r), "proc/[0-9]*/comm"))
	for _, p := range comms {
		if b, err := os.ReadFile(p); err == nil && strings.TrimSpace(string(b)) == name {
			return true
		}
	}
	return false
}

// cpuQuota is the CPU quota of this process's cgroup ("50000/100000 µs = 0.50 CPUs"), "" when none.
// v2 cpu.max, or v1 cpu.cfs_quota_us / cpu.cfs_period_us, at the cgroup root the agent sees (inside a
// container that is its own cgroup) or at its /proc/self/cgroup path.
func cpuQuota(r reader) string {
	var dirs []string
	for _, line := range strings.Split(r.line("proc/self/cgroup"), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			dirs = append(dirs, filepath.Join("sys/fs/cgroup", parts[2]))
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				dirs = append(dirs, filepath.Join("sys/fs/cgroup/cpu", parts[2]), filepath.Join("sys/fs/cgroup/cpu,cpuacct", parts[2]))
			}
		}
	}
	dirs = append(dirs, "sys/fs/cgroup", "sys/fs/cgroup/cpu")
	for _, d := range dirs {
		if max := strings.Fields(r.line(filepath.Join(d, "cpu.max"))); len(max) == 2 && max[0] != "max" {
			return describeQuota(max[0], max[1])
		}
		q, p := r.line(filepath.Join(d, "cpu.cfs_quota_us")), r.line(filepath.Join(d, "cpu.cfs_period_us"))
		if q != "" && q != "-1" && p != "" {
			return describeQuota(q, p)
		}
	}
	return ""
}

func describeQuota(quota, period string) string {
	q, err1 := strconv.ParseFloat(quota, 64)
	p, err2 := strconv.ParseFloat(period, 64)
	if err1 != nil || err2 != nil || p <= 0 {
		return quota + "/" + period + " µs"
	}
	return fmt.Sprintf("%s/%s µs = %.2f CPUs", quota, period, q/p)
}

// stealFrac watches /proc/stat's steal column for d: stolen share of all CPUs' time, -1 when unknown.
func stealFrac(root string, d time.Duration) float64 {
	read := func() (steal, total uint64, ok bool) {
		b, err := os.ReadFile(filepath.Join(root, "proc/stat"))
		if err != nil {
			return 0, 0, false
		}
		line, _, _ := strings.Cut(string(b), "\n")
		f := strings.Fields(line)
		if len(f) < 9 || f[0] != "cpu" {
			return 0, 0, false
		}
		for i, s := range f[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			if i < 8 {
				total += v
			}
			if i == 7 {
				steal = v
			}
		}
		return steal, total, true
	}
	s0, t0, ok0 := read()
	time.Sleep(d)
	s1, t1, ok1 := read()
	if !ok0 || !ok1 || t1 <= t0 {
		return -1
	}
	return float64(s1-s0) / float64(t1-t0)
}
