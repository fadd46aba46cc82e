// Package facts gathers the Linux host facts that move benchmark numbers, from /proc and /sys.
// A missing or unreadable file leaves its fact empty; gathering never fails.
package facts

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// Gather reads the facts of the host the agent runs on.
func Gather() *agentv1.MachineFacts {
	f := gatherFrom("/")
	if h, err := os.Hostname(); err == nil && h != "" {
		f.Hostname = h
	}
	var u unix.Utsname
	if err := unix.Uname(&u); err == nil {
		f.KernelRelease = unix.ByteSliceToString(u.Release[:])
	}
	if slack, err := unix.PrctlRetInt(unix.PR_GET_TIMERSLACK, 0, 0, 0, 0); err == nil {
		f.Extra["timer_slack_ns"] = strconv.Itoa(slack)
	}
	if f.LogicalCpus == 0 {
		f.LogicalCpus = int32(runtime.NumCPU())
	}
	f.Preflight = preflight(reader("/"), f, stealFrac("/", stealWindow))
	if q := cpuQuota(reader("/")); q != "" {
		f.Extra["cpu_quota"] = q
	}
	return f
}

// gatherFrom reads the facts under root ("/" on a live host; a fake tree in tests).
func gatherFrom(root string) *agentv1.MachineFacts {
	r := reader(root)
	f := &agentv1.MachineFacts{
		Hostname:      r.line("proc/sys/kernel/hostname"),
		OsRelease:     osRelease(r.read("etc/os-release")),
		KernelRelease: r.line("proc/sys/kernel/osrelease"),
		KernelCmdline: r.line("proc/cmdline"),
		Extra:         map[string]string{},
		Arch:          runtime.GOARCH,
		Governor:      r.line("sys/devices/system/cpu/cpu0/cpufreq/scaling_governor"),
		Clocksource:   r.line("sys/devices/system/clocksource/clocksource0/current_clocksource"),
	}
	cpu := parseCPUInfo(r.read("proc/cpuinfo"))
	f.CpuModel = cpu.model
	f.LogicalCpus = int32(cpu.logical)
	f.PhysicalCores = int32(cpu.cores)
	if f.PhysicalCores == 0 { // no "core id" in cpuinfo (arm64, some VMs): ask sysfs topology
		f.PhysicalCores = int32(topologyCores(root))
	}
	if n := countCPUList(r.line("sys/devices/system/cpu/online")); n > 0 {
		f.LogicalCpus = int32(n)
	}
	switch r.line("sys/devices/system/cpu/smt/active") {
	case "1":
		f.SmtActive = true
	case "0":
		f.SmtActive = false
	default:
		f.SmtActive = f.PhysicalCores > 0 && f.LogicalCpus > f.PhysicalCores
	}
	if cpu.mhz != "" {
		f.Extra["cpu_mhz"] = cpu.mhz
	}
	f.MemoryBytes = memTotal(r.read("proc/meminfo"))
	f.Boost = boost(r)
	f.LoadAverage = loadAverage(r.line("proc/loadavg"))
	f.Virtualization = virtualization(r, cpu.hypervisor)

	f.Caches = caches(root)
	f.Vulnerabilities = vulnerabilities(root)

	extra := map[string]string{
		"thp":                   bracketed(r.line("sys/kernel/mm/transparent_hugepage/enabled")),
		"isolated_cpus":         r.line("sys/devices/system/cpu/isolated"),
		"nohz_full":             r.line("sys/devices/system/cpu/nohz_full"),
		"cpufreq_driver":        r.line("sys/devices/system/cpu/cpu0/cpufreq/scaling_driver"),
		"cpuidle_driver":        r.line("sys/devices/system/cpu/cpuidle/current_driver"),
		"energy_perf_bias":      r.line("sys/devices/system/cpu/cpu0/power/energy_perf_bias"),
		"energy_perf_pref":      r.line("sys/devices/system/cpu/cpu0/cpufreq/energy_performance_preference"),
		"numa_nodes":            strconv.Itoa(countCPUList(r.line("sys/devices/system/node/online"))),
		"available_clocksource": r.line("sys/devices/system/clocksource/clocksource0/available_clocksource"),
		"sched_autogroup":       r.line("proc/sys/kernel/sched_autogroup_enabled"),
		"perf_event_paranoid":   r.line("proc/sys/kernel/perf_event_paranoid"),
		"timer_slack_ns":        r.line("proc/self/timerslack_ns"),
		"cgroup_cpu_max":        r.line("sys/fs/cgroup/cpu.max"),
		"cgroup_cpuset":         r.line("sys/fs/cgroup/cpuset.cpus.effective"),
		"cpu_vendor":            cpu.vendor,
		"microcode":             cpu.microcode,
		"cpu_flags_count":       strconv.Itoa(len(cpu.flags)),
	}
	if extra["numa_nodes"] == "0" {
		extra["numa_nodes"] = ""
	}
	if extra["cpu_flags_count"] == "0" {
		extra["cpu_flags_count"] = ""
	}
	for k, v := range extra {
		if v != "" {
			f.Extra[k] = v
		}
	}
	return f
}

// caches reads cpu0's cache sizes by level and type ("L1d", "L2", ...).
func caches(root string) map[string]string {
	out := map[string]string{}
	cacheDirs, _ := filepath.Glob(filepath.Join(root, "sys/devices/system/cpu/cpu0/cache/index*"))
	for _, d := range cacheDirs {
		level, typ, size := readLine(filepath.Join(d, "level")), readLine(filepath.Join(d, "type")), readLine(filepath.Join(d, "size"))
		if level == "" || size == "" {
			continue
		}
		key := "L" + level
		switch typ {
		case "Data":
			key += "d"
		case "Instruction":
			key += "i"
		}
		out[key] = size
	}
	return out
}

// vulnerabilities reads the kernel's CPU vulnerability mitigations by name.
func vulnerabilities(root string) map[string]string {
	out := map[string]string{}
	vulns, _ := filepath.Glob(filepath.Join(root, "sys/devices/system/cpu/vulnerabilities/*"))
	for _, p := range vulns {
		out[filepath.Base(p)] = readLine(p)
	}
	return out
}

type reader string

func (r reader) read(rel string) string {
	b, err := os.ReadFile(filepath.Join(string(r), rel))
	if err != nil {
		return ""
	}
	return string(b)
}

func (r reader) line(rel string) string { return strings.TrimSpace(r.read(rel)) }

func readLine(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func osRelease(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "PRETTY_NAME="); ok {
			return strings.Trim(v, `"'`)
		}
	}
	return ""
}

type cpuInfo struct {
	model, vendor, mhz string
	microcode          string // the first CPU's revision (x86); a microcode update changes figures
	logical, cores     int
	hypervisor         bool
	flags              []string
}

func parseCPUInfo(s string) cpuInfo {
	var c cpuInfo
	type core struct{ pkg, id string }
	cores := map[core]bool{}
	var pkg, coreID string
	flush := func() {
		if coreID != "" {
			cores[core{pkg, coreID}] = true
		}
		pkg, coreID = "", ""
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			if strings.TrimSpace(sc.Text()) == "" {
				flush()
			}
			continue
		}
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		switch key {
		case "processor":
			c.logical++
		case "model name", "Model Name", "cpu model":
			if c.model == "" {
				c.model = val
			}
		case "vendor_id", "CPU implementer":
			if c.vendor == "" {
				c.vendor = val
			}
		case "microcode":
			if c.microcode == "" {
				c.microcode = val
			}
		case "cpu MHz":
			if c.mhz == "" {
				c.mhz = val
			}
		case "physical id":
			pkg = val
		case "core id":
			coreID = val
		case "flags", "Features":
			if c.flags == nil {
				c.flags = strings.Fields(val)
				for _, fl := range c.flags {
					if fl == "hypervisor" {
						c.hypervisor = true
					}
				}
			}
		}
	}
	flush()
	c.cores = len(cores)
	return c
}

// topologyCores counts distinct (package, core) pairs in /sys/devices/system/cpu/cpu*/topology.
func topologyCores(root string) int {
	dirs, _ := filepath.Glob(filepath.Join(root, "sys/devices/system/cpu/cpu[0-9]*/topology"))
	cores := map[[2]string]bool{}
	for _, d := range dirs {
		core := readLine(filepath.Join(d, "core_id"))
		if core == "" {
			continue
		}
		cores[[2]string{readLine(filepath.Join(d, "physical_package_id")), core}] = true
	}
	return len(cores)
}

// countCPUList counts the CPUs in a list like "0-3,8,10-11".
func countCPUList(s string) int {
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return 0
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return 0
			}
		}
		n += b - a + 1
	}
	return n
}

func memTotal(s string) uint64 {
	for _, line := range strings.Split(s, "\n") {
		if v, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			fields := strings.Fields(v)
			if len(fields) == 0 {
				return 0
			}
			kb, err := strconv.ParseUint(fields[0], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}

func boost(r reader) string {
	switch r.line("sys/devices/system/cpu/cpufreq/boost") {
	case "1":
		return "on"
	case "0":
		return "off"
	}
	switch r.line("sys/devices/system/cpu/intel_pstate/no_turbo") {
	case "0":
		return "on"
	case "1":
		return "off"
	}
	return ""
}

func loadAverage(s string) []float64 {
	fields := strings.Fields(s)
	var out []float64
	for i := 0; i < 3 && i < len(fields); i++ {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

// bracketed picks the selected value out of "always [madvise] never".
func bracketed(s string) string {
	if i := strings.IndexByte(s, '['); i >= 0 {
		if j := strings.IndexByte(s[i:], ']'); j > 0 {
			return s[i+1 : i+j]
		}
	}
	return s
}

// virtualization names the hypervisor and/or container: "kvm", "docker", "kvm+docker", "none" on
// bare metal, "" when it cannot tell.
func virtualization(r reader, hypervisorFlag bool) string {
	var parts []string
	if hv := hypervisor(r, hypervisorFlag); hv != "" {
		parts = append(parts, hv)
	}
	if ct := container(r); ct != "" {
		parts = append(parts, ct)
	}
	if len(parts) == 0 {
		if r.read("proc/cpuinfo") == "" {
			return ""
		}
		return "none"
	}
	return strings.Join(parts, "+")
}

func hypervisor(r reader, flag bool) string {
	dmi := strings.ToLower(r.line("sys/class/dmi/id/sys_vendor") + " " + r.line("sys/class/dmi/id/product_name"))
	known := []struct{ needle, name string }{
		{"kvm", "kvm"}, {"qemu", "qemu"}, {"vmware", "vmware"}, {"virtualbox", "virtualbox"},
		{"microsoft corporation virtual", "hyperv"}, {"xen", "xen"}, {"amazon ec2", "aws"},
		{"google compute engine", "gce"}, {"openstack", "openstack"}, {"bochs", "bochs"},
		{"parallels", "parallels"}, {"cloud hypervisor", "cloud-hypervisor"}, {"firecracker", "firecracker"},
	}
	for _, k := range known {
		if strings.Contains(dmi, k.needle) {
			return k.name
		}
	}
	if r.line("sys/hypervisor/type") != "" {
		return r.line("sys/hypervisor/type")
	}
	if flag {
		return "vm"
	}
	return ""
}

func container(r reader) string {
	if _, err := os.Stat(filepath.Join(string(r), ".dockerenv")); err == nil {
		return "docker"
	}
	if _, err := os.Stat(filepath.Join(string(r), "run/.containerenv")); err == nil {
		return "podman"
	}
	cg := r.read("proc/1/cgroup")
	for _, k := range []string{"docker", "kubepods", "containerd", "lxc", "libpod"} {
		if strings.Contains(cg, k) {
			return k
		}
	}
	if env := r.read("proc/1/environ"); strings.Contains(env, "container=") {
		for _, kv := range strings.Split(env, "\x00") {
			if v, ok := strings.CutPrefix(kv, "container="); ok && v != "" {
				return v
			}
		}
	}
	return ""
}
