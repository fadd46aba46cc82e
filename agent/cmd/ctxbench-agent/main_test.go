package main

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

// buildAgent builds the real binary once per test run.
func buildAgent(t *testing.T) string {
	t.Helper()
	return testkit.Binary(t, "github.com/ctxbench/ctxbench/agent/cmd/ctxbench-agent")
}

func TestConfigErrorsExit2WithOneLine(t *testing.T) {
	bin := buildAgent(t)
	for _, args := range [][]string{
		{},
		{"--server", "h:1", "--token", "t", "--kernels", "/nonexistent", "--spool", t.TempDir()},
		{"--no-such-flag"},
		{"--server", "h:1", "--token", "t", "--kernels", t.TempDir(), "--spool", t.TempDir(), "--label", "env=prod", "--label", "bad label=x"},
	} {
		cmd := exec.Command(bin, args...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		err := cmd.Run()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("args %v: %v, want exit 2", args, err)
		}
		if lines := strings.Split(strings.TrimSpace(stderr.String()), "\n"); len(lines) != 1 || !strings.HasPrefix(lines[0], "ctxbench-agent: ") {
			t.Errorf("args %v: stderr %q, want one line", args, stderr.String())
		}
	}
	out, err := exec.Command(bin, "--version").Output()
	if err != nil || strings.TrimSpace(string(out)) != "ctxbench-agent dev" {
		t.Errorf("--version: %q, %v", out, err)
	}
}

// startRunServer accepts one agent and asks it to run a kernel that sleeps with a grandchild.
type startRunServer struct {
	agentv1.UnimplementedAgentServiceServer
	pidfile string
}

func (s *startRunServer) Enroll(_ context.Context, req *agentv1.EnrollRequest) (*agentv1.EnrollResponse, error) {
	return &agentv1.EnrollResponse{MachineId: req.GetProposedMachineId(), MachineCredential: "c"}, nil
}

func (s *startRunServer) Connect(stream agentv1.AgentService_ConnectServer) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	for _, m := range []*agentv1.ConnectResponse{
		{Msg: &agentv1.ConnectResponse_Welcome{Welcome: &agentv1.Welcome{HeartbeatIntervalS: 10}}},
		{Msg: &agentv1.ConnectResponse_StartRun{StartRun: &agentv1.StartRun{RunId: "r", Items: []*agentv1.RunItem{
			{ItemId: "i", KernelId: "fake.sleep", Params: map[string]string{"pidfile": s.pidfile}}}}}},
	} {
		if err := stream.Send(m); err != nil {
			return err
		}
	}
	for {
		if _, err := stream.Recv(); err != nil {
			return nil
		}
	}
}

func TestSIGTERMStopsKernelAndExitsZero(t *testing.T) {
	bin := buildAgent(t)
	kernels := t.TempDir()
	testkit.FakeKernel(t, kernels, "ctxbench-kernels-fake")
	pidfile := filepath.Join(t.TempDir(), "pids")

	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := grpc.NewServer()
	agentv1.RegisterAgentServiceServer(g, &startRunServer{pidfile: pidfile})
	go func() { _ = g.Serve(lis) }()
	defer g.Stop()

	cmd := exec.Command(bin, "--server", lis.Addr().String(), "--insecure", "--kernels", kernels, "--spool", t.TempDir())
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "CTXBENCH_AGENT_TOKEN=t"}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("agent stderr:\n%s", stderr.String())
		}
	}()

	var pids []int
	deadline := time.Now().Add(20 * time.Second)
	for len(pids) != 2 {
		if time.Now().After(deadline) {
			t.Fatal("kernel did not start")
		}
		time.Sleep(20 * time.Millisecond)
		b, err := os.ReadFile(pidfile)
		if err != nil {
			continue
		}
		pids = nil
		for _, f := range strings.Fields(string(b)) {
			p, _ := strconv.Atoi(f)
			pids = append(pids, p)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("agent exited with %v, want 0", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("agent did not exit after SIGTERM")
	}
	for _, pid := range pids {
		if err := syscall.Kill(pid, 0); err == nil && !zombie(pid) {
			t.Errorf("kernel process %d survived the agent", pid)
		}
	}
}

func zombie(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] == 'Z'
}
