package catalog

import (
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/testkit"
)

func TestMain(m *testing.M) { testkit.Main(m) }

func TestParseListConvertsToCanonicalStrings(t *testing.T) {
	specs, err := ParseList([]byte(`[{"id": "syscall.getppid", "title": "getppid", "family": "syscall",
	  "unit": "ns/op", "description": "d",
	  "params": [{"name": "threads", "type": "int", "default": 1, "min": 1, "max": 4096,
	              "sweep": [1, 2, 4], "help": "h"},
	             {"name": "scale", "type": "float", "default": 1, "sweep": [0.5, 2]},
	             {"name": "placement", "type": "choice", "default": "same_core",
	              "choices": ["same_core", "cross_core"]}],
	  "seed_reference": {"seed": "000", "value": 49.47, "unit": "ns/op", "machine": "Pentium", "params": {"threads": 1}}}]`))
	if err != nil {
		t.Fatal(err)
	}
	s := specs[0]
	if s.GetId() != "syscall.getppid" || s.GetFamily() != "syscall" || len(s.GetParams()) != 3 {
		t.Fatalf("spec = %v", s)
	}
	th := s.GetParams()[0]
	if th.GetType() != agentv1.ParamType_PARAM_TYPE_INT || th.GetDefaultValue() != "1" || th.GetMin() != 1 ||
		th.GetMax() != 4096 || len(th.GetSweep()) != 3 || th.GetSweep()[2] != "4" || th.GetHelp() != "h" {
		t.Errorf("threads = %v", th)
	}
	sc := s.GetParams()[1]
	if sc.GetDefaultValue() != "1.0" || sc.GetSweep()[0] != "0.5" || sc.Min != nil || sc.Max != nil {
		t.Errorf("scale = %v", sc)
	}
	if pl := s.GetParams()[2]; pl.GetType() != agentv1.ParamType_PARAM_TYPE_CHOICE || len(pl.GetChoices()) != 2 {
		t.Errorf("placement = %v", pl)
	}
	ref := s.GetSeedReference()
	if ref.GetSeed() != "000" || ref.GetValue() != 49.47 || ref.GetParams()["threads"] != "1" {
		t.Errorf("seed_reference = %v", ref)
	}
}

func TestParseListRejectsBadSpecs(t *testing.T) {
	for _, in := range []string{
		`{"id": "x"}`,
		`[{"title": "no id"}]`,
		`[{"id": "x", "params": [{"name": "p", "type": "complex"}]}]`,
		`[{"id": "x", "params": [{"name": "p", "type": "choice"}]}]`,
		`[{"id": "x", "params": [{"name": "p", "type": "int", "default": "many"}]}]`,
	} {
		if _, err := ParseList([]byte(in)); err == nil {
			t.Errorf("ParseList(%s): no error", in)
		}
	}
}

func TestLoadRunsListOnEveryExecutable(t *testing.T) {
	dir := t.TempDir()
	testkit.FakeKernel(t, dir, "a-kernels")
	testkit.FakeKernel(t, dir, "b-broken")
	testkit.FakeKernel(t, dir, "c-dup")
	if err := os.WriteFile(filepath.Join(dir, "README"), []byte("not executable"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "subdir"), 0o755); err != nil {
		t.Fatal(err)
	}
	c, err := Load(context.Background(), dir, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	ok, found := c.Lookup("fake.ok")
	if !found || ok.GetExecutable() != "a-kernels" || ok.GetTitle() != "OK" {
		t.Errorf("fake.ok = %v (first executable in name order should win the clash)", ok)
	}
	if dup, found := c.Lookup("fake.dup_only"); !found || dup.GetExecutable() != "c-dup" {
		t.Errorf("fake.dup_only = %v", dup)
	}
	if n := len(c.Kernels()); n != 11 {
		t.Errorf("catalog has %d kernels, want 11", n)
	}
}

func TestLoadMissingDir(t *testing.T) {
	if _, err := Load(context.Background(), filepath.Join(t.TempDir(), "nope"), slog.Default()); err == nil {
		t.Fatal("no error for a missing kernels dir")
	}
}
