package cli

import (
	"os/exec"
	"strings"
	"testing"
)

func TestVersionHelpAndUsageErrors(t *testing.T) {
	if got := runCLI(t, nil, nil, "", "--version"); got.code != 0 || got.stdout != "ctxbench 1.2.3+test\n" {
		t.Errorf("%+v", got)
	}
	if got := runCLI(t, nil, nil, "", "help"); got.code != 0 || !strings.Contains(got.stdout, "gate ") ||
		strings.Contains(got.stdout, "__complete") {
		t.Errorf("%+v", got)
	}
	if got := runCLI(t, nil, nil, "", "help", "compare"); got.code != 0 || !strings.Contains(got.stdout, "--format") {
		t.Errorf("%+v", got)
	}
	if got := runCLI(t, nil, nil, "", "run", "-h"); got.code != 0 || !strings.Contains(got.stdout, "--follow") {
		t.Errorf("%+v", got)
	}
	for _, args := range [][]string{{}, {"nope"}, {"--nope"}, {"help", "nope"}, {"machines", "extra"}, {"completion", "tcsh"}} {
		got := runCLI(t, nil, nil, "", args...)
		if got.code != ExitUsage || !strings.HasSuffix(got.stderr, "\n") ||
			!strings.HasPrefix(got.stderr[strings.LastIndex(strings.TrimSuffix(got.stderr, "\n"), "\n")+1:], "ctxbench: ") {
			t.Errorf("%v: %+v", args, got)
		}
	}
	// No server anywhere: a usage error naming the ways to give one.
	got := runCLI(t, nil, map[string]string{"CTXBENCH_SERVER": ""}, "", "machines")
	if got.code != ExitUsage || !strings.Contains(got.stderr, "--server") {
		t.Errorf("%+v", got)
	}
}

func TestNormaliseServer(t *testing.T) {
	for in, want := range map[string]string{
		"http://h:8080": "http://h:8080", "http://h:8080/": "http://h:8080", "https://h/api/v1/": "https://h",
		"https://h/bench/api/v1": "https://h/bench", " http://h ": "http://h",
	} {
		if got, err := normaliseServer(in); got != want || err != nil {
			t.Errorf("%q: %q %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "h:8080", "ftp://h", "http://", "http://u:p@h", "http://h/?x=1"} {
		if _, err := normaliseServer(bad); exitCode(err) != ExitUsage {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestDetailIsOneReadableLine(t *testing.T) {
	for body, want := range map[string]string{
		`{"detail":"unknown run"}`: "unknown run",
		`{"detail":[{"loc":["query","sides",0],"msg":"bad side","type":"x"}]}`: "query.sides.0: bad side",
		`{"detail":{"odd":1}}`:     `{"odd":1}`,
		`<html>Bad Gateway</html>`: "Bad Gateway",
		``:                         "Bad Gateway",
		`upstream connect error`:   "upstream connect error",
	} {
		if got := detail([]byte(body), "502 Bad Gateway"); got != want {
			t.Errorf("%s: %q, want %q", body, got, want)
		}
	}
}

func TestMachinesTableShowsLabelsWhenThereAreAny(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines)
	got := runCLI(t, f, nil, "", "machines")
	want := "ID   NAME   ONLINE  KERNELS  LABELS\n" +
		"m-a  alpha  yes     2        rack=r1\n" +
		"m-b  beta   no      1        -\n"
	if got.code != 0 || got.stdout != want {
		t.Errorf("%+v\nwant:\n%s", got, want)
	}
	f2 := newFake(t)
	f2.answer("GET /api/v1/machines", 200, []any{map[string]any{"id": "x", "name": "old", "online": true, "kernels": []string{}}})
	if got := runCLI(t, f2, nil, "", "machines"); got.stdout != "ID  NAME  ONLINE  KERNELS\nx   old   yes     0\n" {
		t.Errorf("without labels: %q", got.stdout)
	}
}

func TestMachinesSelectorGoesToTheServer(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, twoMachines[:1])
	got := runCLI(t, f, nil, "", "machines", "--selector", "rack=r1,env!=dev")
	if got.code != 0 || !strings.Contains(got.stdout, "m-a  alpha") || strings.Contains(got.stdout, "beta") {
		t.Errorf("%+v", got)
	}
	if q := f.requests[len(f.requests)-1].query; q != "selector=rack%3Dr1%2Cenv%21%3Ddev" {
		t.Errorf("query %q", q)
	}
	bad := newFake(t)
	bad.answer("GET /api/v1/machines", 422, `{"detail":[{"loc":["query","selector"],"msg":"bad selector"}]}`)
	if got := runCLI(t, bad, nil, "", "machines", "--selector", "=x"); got.code == 0 || !strings.Contains(got.stderr, "selector") {
		t.Errorf("a refused selector: %+v", got)
	}
}

func TestKernelsTableAndJSON(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/kernels", 200, someKernels)
	got := runCLI(t, f, nil, "", "kernels")
	if got.code != 0 || !strings.Contains(got.stdout, "syscall.getppid  syscall    ns/op  Raw getppid system call\n") {
		t.Errorf("%+v", got)
	}
	got = runCLI(t, f, nil, "", "kernels", "--json")
	if got.code != 0 || !strings.HasPrefix(got.stdout, `[{"aliases":[],"family":"syscall"`) {
		t.Errorf("%+v", got)
	}
}

func TestResolveMachine(t *testing.T) {
	ms := []Machine{{ID: "1", Name: "a", Hostname: "h"}, {ID: "2", Name: "b", AgentName: "x", Hostname: "h"}, {ID: "3", Name: "b"}}
	for ref, want := range map[string]string{"1": "1", "a": "1", "x": "2", "3": "3"} {
		if m, err := resolveMachine(ms, ref); err != nil || m.ID != want {
			t.Errorf("%s: %+v %v", ref, m, err)
		}
	}
	for _, ref := range []string{"b", "h", "zzz"} { // ambiguous name, ambiguous hostname, unknown
		if _, err := resolveMachine(ms, ref); exitCode(err) != ExitUsage {
			t.Errorf("%s: %v", ref, err)
		}
	}
}

func TestCompleteNamesAndScripts(t *testing.T) {
	f := newFake(t)
	f.answer("GET /api/v1/machines", 200, append(twoMachines,
		map[string]any{"id": "m-c", "name": "two words", "online": true, "kernels": []string{}}))
	f.answer("GET /api/v1/kernels", 200, someKernels)
	if got := runCLI(t, f, nil, "", "__complete", "machines"); got.stdout != "alpha\nbeta\nm-c\n" {
		t.Errorf("%+v", got)
	}
	if got := runCLI(t, f, nil, "", "__complete", "kernels"); got.stdout != "ctxswitch.pipe\nsyscall.getppid\n" {
		t.Errorf("%+v", got)
	}
	for _, shell := range []string{"bash", "zsh", "fish"} {
		got := runCLI(t, nil, nil, "", "completion", shell)
		for _, want := range []string{"__complete machines", "__complete kernels", "gate", "baseline-run", "follow", "thorough"} {
			if !strings.Contains(got.stdout, want) {
				t.Errorf("%s script lacks %q", shell, want)
			}
		}
		if strings.Contains(got.stdout, "__complete\n") {
			t.Errorf("%s script offers the hidden command", shell)
		}
		if sh, err := exec.LookPath(shell); err == nil {
			cmd := exec.Command(sh, "-n")
			if shell == "fish" {
				cmd = exec.Command(sh, "--no-execute")
			}
			cmd.Stdin = strings.NewReader(got.stdout)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Errorf("%s -n: %v\n%s", shell, err, out)
			}
		}
	}
}
