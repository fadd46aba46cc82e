package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// userHZ is the unit of /proc/stat (USER_HZ, 100 on every Linux ABI the agent builds for).
const userHZ = 100

// CPUTicks are one CPU's cumulative /proc/stat counters, in USER_HZ ticks.
type CPUTicks struct {
	Busy  uint64 // user + nice + system + irq + softirq (guest time is already inside user)
	Steal uint64
}

// HostStat reads per-CPU counters, keyed by CPU number. ReadProcStat is the real one; tests inject
// fakes so that which launch is disturbed is deterministic.
type HostStat func() (map[int]CPUTicks, error)

// ReadProcStat parses the cpuN lines of /proc/stat.
func ReadProcStat() (map[int]CPUTicks, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return nil, fmt.Errorf("read /proc/stat: %w", err)
	}
	return parseProcStat(b), nil
}

func parseProcStat(b []byte) map[int]CPUTicks {
	out := map[int]CPUTicks{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 9 || !strings.HasPrefix(f[0], "cpu") || f[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(f[0][3:])
		if err != nil {
			continue
		}
		v := make([]uint64, 8)
		for i := range v {
			v[i], _ = strconv.ParseUint(f[i+1], 10, 64)
		}
		// user nice system idle iowait irq softirq steal
		out[n] = CPUTicks{Busy: v[0] + v[1] + v[2] + v[5] + v[6], Steal: v[7]}
	}
	return out
}

// Disturbance settings (docs/architecture.md "Sampling design" gives the measurements behind them).
const (
	// DefaultDisturbThreshold: a launch is disturbed when other processes kept more than this share of
	// the CPUs it could use busy, or steal took more than this share.
	DefaultDisturbThreshold = 0.10
	// DefaultMinCPUWallRatio: a cpu_bound kernel whose cpu_wall_ratio counter falls below this lost
	// the CPU to someone else for a tenth of its timed span.
	DefaultMinCPUWallRatio = 0.90
)

// meter measures what else used the host during one launch.
type meter struct {
	stat HostStat
	cpus []int // CPUs the kernel may run on (the agent's affinity, which the kernel inherits)
	cg   string
}

func newMeter(stat HostStat) *meter {
	m := &meter{stat: stat, cg: cgroupCPUStatPath()}
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err == nil {
		for i := 0; i < 1024 && len(m.cpus) < set.Count(); i++ {
			if set.IsSet(i) {
				m.cpus = append(m.cpus, i)
			}
		}
	}
	return m
}

type meterStart struct {
	ticks     map[int]CPUTicks
	self      time.Duration
	throttled float64
	err       error
}

func (m *meter) begin() meterStart {
	s := meterStart{self: selfCPU(), throttled: readThrottledS(m.cg)}
	s.ticks, s.err = m.stat()
	return s
}

// launchLoad is what the meter found for one launch.
type launchLoad struct {
	otherBusyFrac, stealFrac, throttledS float64
	ok                                   bool // /proc/stat was readable both times
}

// end compares with s; kernelCPU is the kernel tree's CPU time (rusage), wall its wall time.
func (m *meter) end(s meterStart, wall, kernelCPU time.Duration) launchLoad {
	ticks, err := m.stat()
	load := launchLoad{throttledS: max(0, readThrottledS(m.cg)-s.throttled)}
	if err != nil || s.err != nil || wall <= 0 {
		return load
	}
	cpus := m.cpus
	if len(cpus) == 0 {
		for n := range ticks {
			cpus = append(cpus, n)
		}
	}
	var busy, steal uint64
	for _, n := range cpus {
		a, b := s.ticks[n], ticks[n]
		if b.Busy >= a.Busy {
			busy += b.Busy - a.Busy
		}
		if b.Steal >= a.Steal {
			steal += b.Steal - a.Steal
		}
	}
	capacity := wall.Seconds() * float64(len(cpus))
	if capacity <= 0 {
		return load
	}
	own := kernelCPU + max(0, selfCPU()-s.self)
	other := float64(busy)/userHZ - own.Seconds()
	load.otherBusyFrac = max(0, other) / capacity
	load.stealFrac = float64(steal) / userHZ / capacity
	load.ok = true
	return load
}

// selfCPU is the agent's own CPU time (user + system), which the launch's busy time includes.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// cgroupCPUStatPath is the cpu.stat of the agent's own cgroup (v2, or v1's cpu controller), "" when
// there is none to read.
func cgroupCPUStatPath() string {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return ""
	}
	var candidates []string
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(line, ":", 3)
		if len(parts) != 3 {
			continue
		}
		if parts[0] == "0" && parts[1] == "" {
			candidates = append(candidates, filepath.Join("/sys/fs/cgroup", parts[2], "cpu.stat"))
		}
		for _, c := range strings.Split(parts[1], ",") {
			if c == "cpu" {
				candidates = append(candidates,
					filepath.Join("/sys/fs/cgroup/cpu", parts[2], "cpu.stat"),
					filepath.Join("/sys/fs/cgroup/cpu,cpuacct", parts[2], "cpu.stat"),
					"/sys/fs/cgroup/cpu/cpu.stat") // a container sees its own cgroup at the root
			}
		}
	}
	for _, c := range candidates {
		if b, err := os.ReadFile(c); err == nil && bytes.Contains(b, []byte("throttled")) {
			return c
		}
	}
	return ""
}

// readThrottledS is the cgroup's cumulative throttled time in seconds (v1 throttled_time ns, v2
// throttled_usec), 0 when unknown.
func readThrottledS(path string) float64 {
	if path == "" {
		return 0
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			continue
		}
		switch k {
		case "throttled_time":
			return n / 1e9
		case "throttled_usec":
			return n / 1e6
		}
	}
	return 0
}
