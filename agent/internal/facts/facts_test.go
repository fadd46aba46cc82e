package facts

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func TestGatherOnThisHost(t *testing.T) {
	f := Gather()
	if f.GetHostname() == "" || f.GetLogicalCpus() < 1 || f.GetArch() == "" || f.GetKernelRelease() == "" {
		t.Fatalf("facts = %v", f)
	}
	if f.GetMemoryBytes() == 0 {
		t.Errorf("memory_bytes = 0")
	}
	if f.GetExtra()["timer_slack_ns"] == "" {
		t.Errorf("timer_slack_ns missing")
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestGatherFromFakeTree(t *testing.T) {
	root := t.TempDir()
	cpu := ""
	// 2 packages × 2 cores × 2 threads
	for i := 0; i < 8; i++ {
		cpu += "processor\t: " + string(rune('0'+i)) + "\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Fake\n" +
			"cpu MHz\t\t: 2100.000\nmicrocode\t: 0xde\nphysical id\t: " + string(rune('0'+i/4)) + "\ncore id\t\t: " + string(rune('0'+(i/2)%2)) +
			"\nflags\t\t: fpu tsc hypervisor\n\n"
	}
	write(t, root, "proc/cpuinfo", cpu)
	write(t, root, "proc/meminfo", "MemTotal:       16384 kB\nMemFree: 1 kB\n")
	write(t, root, "proc/loadavg", "0.50 0.25 0.10 1/100 42\n")
	write(t, root, "proc/cmdline", "quiet mitigations=off\n")
	write(t, root, "etc/os-release", "NAME=\"Debian\"\nPRETTY_NAME=\"Debian GNU/Linux 12 (bookworm)\"\n")
	write(t, root, "sys/devices/system/cpu/online", "0-7\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index0/level", "1\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index0/type", "Data\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index0/size", "32K\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index1/level", "1\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index1/type", "Instruction\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index1/size", "32K\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index3/level", "3\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index3/type", "Unified\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cache/index3/size", "32768K\n")
	write(t, root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "performance\n")
	write(t, root, "sys/devices/system/cpu/intel_pstate/no_turbo", "1\n")
	write(t, root, "sys/devices/system/cpu/vulnerabilities/spectre_v2", "Mitigation: Retpolines\n")
	write(t, root, "sys/devices/system/clocksource/clocksource0/current_clocksource", "tsc\n")
	write(t, root, "sys/class/dmi/id/sys_vendor", "QEMU\n")
	write(t, root, "sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never\n")
	write(t, root, "sys/fs/cgroup/cpu.max", "max 100000\n")
	write(t, root, ".dockerenv", "")

	f := gatherFrom(root)
	if f.GetCpuModel() != "Intel(R) Xeon(R) Fake" || f.GetLogicalCpus() != 8 || f.GetPhysicalCores() != 4 || !f.GetSmtActive() {
		t.Errorf("cpu facts = %q %d %d %v", f.GetCpuModel(), f.GetLogicalCpus(), f.GetPhysicalCores(), f.GetSmtActive())
	}
	if f.GetMemoryBytes() != 16384*1024 || f.GetOsRelease() != "Debian GNU/Linux 12 (bookworm)" ||
		f.GetKernelCmdline() != "quiet mitigations=off" {
		t.Errorf("facts = %v", f)
	}
	if want := map[string]string{"L1d": "32K", "L1i": "32K", "L3": "32768K"}; !reflect.DeepEqual(f.GetCaches(), want) {
		t.Errorf("caches = %v", f.GetCaches())
	}
	if f.GetGovernor() != "performance" || f.GetBoost() != "off" || f.GetClocksource() != "tsc" {
		t.Errorf("governor/boost/clocksource = %q %q %q", f.GetGovernor(), f.GetBoost(), f.GetClocksource())
	}
	if f.GetVulnerabilities()["spectre_v2"] != "Mitigation: Retpolines" {
		t.Errorf("vulnerabilities = %v", f.GetVulnerabilities())
	}
	if f.GetVirtualization() != "qemu+docker" {
		t.Errorf("virtualization = %q", f.GetVirtualization())
	}
	if !reflect.DeepEqual(f.GetLoadAverage(), []float64{0.5, 0.25, 0.1}) {
		t.Errorf("load = %v", f.GetLoadAverage())
	}
	if f.GetExtra()["thp"] != "madvise" || f.GetExtra()["cgroup_cpu_max"] != "max 100000" || f.GetExtra()["cpu_mhz"] != "2100.000" ||
		f.GetExtra()["microcode"] != "0xde" {
		t.Errorf("extra = %v", f.GetExtra())
	}
}

func TestGatherFromEmptyTreeNeverFails(t *testing.T) {
	f := gatherFrom(t.TempDir())
	if f.GetCpuModel() != "" || f.GetVirtualization() != "" || f.GetBoost() != "" {
		t.Errorf("facts from nothing = %v", f)
	}
}

func TestPhysicalCoresFromTopologyWhenCpuinfoHasNone(t *testing.T) {
	root := t.TempDir()
	write(t, root, "proc/cpuinfo", "processor\t: 0\nBogoMIPS\t: 50\n\nprocessor\t: 1\n\nprocessor\t: 2\n\nprocessor\t: 3\n")
	for cpu, core := range []string{"0", "0", "1", "1"} {
		d := "sys/devices/system/cpu/cpu" + string(rune('0'+cpu)) + "/topology/"
		write(t, root, d+"core_id", core+"\n")
		write(t, root, d+"physical_package_id", "0\n")
	}
	f := gatherFrom(root)
	if f.GetLogicalCpus() != 4 || f.GetPhysicalCores() != 2 || !f.GetSmtActive() {
		t.Errorf("logical %d physical %d smt %v", f.GetLogicalCpus(), f.GetPhysicalCores(), f.GetSmtActive())
	}
}

func TestPreflightOnAFakeTree(t *testing.T) {
	root := t.TempDir()
	write(t, root, "proc/42/comm", "irqbalance\n")
	write(t, root, "proc/self/cgroup", "0::/bench\n")
	write(t, root, "sys/fs/cgroup/bench/cpu.max", "50000 100000\n")
	f := &agentv1.MachineFacts{Governor: "powersave", Boost: "on", SmtActive: true, Virtualization: "kvm"}
	got := map[string]*agentv1.PreflightCheck{}
	for _, c := range preflight(reader(root), f, 0.05) {
		got[c.GetCheck()] = c
	}
	for _, name := range []string{"governor", "boost", "smt", "irqbalance", "isolated_cpus", "virtualization", "steal", "cpu_quota"} {
		if c := got[name]; c == nil || c.GetStatus() != "warn" || c.GetFix() == "" || c.GetDetail() == "" {
			t.Errorf("%s: %v, want a warning with a fix", name, c)
		}
	}
	if d := got["cpu_quota"].GetDetail(); !strings.Contains(d, "0.50 CPUs") {
		t.Errorf("cpu_quota detail %q", d)
	}

	write(t, root, "sys/devices/system/cpu/isolated", "1\n")
	quiet := &agentv1.MachineFacts{Governor: "performance", Boost: "off", Virtualization: "none"}
	for _, c := range preflight(reader(t.TempDir()), quiet, 0) {
		if c.GetCheck() != "isolated_cpus" && (c.GetStatus() != "ok" || c.GetFix() != "") {
			t.Errorf("quiet host: %v", c)
		}
	}
}
