package config

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestLabelsFromFlagsAndEnv(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--server", "h:1", "--token", "t", "--kernels", dir, "--spool", dir}
	e := env(map[string]string{"CTXBENCH_AGENT_LABELS": " env=staging, rack=r7 ,,canary="})
	c, err := Parse(append(base, "--label", "env=prod", "--label", "team/db=pg16"), e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"env": "prod", "rack": "r7", "canary": "", "team/db": "pg16"}
	if len(c.Labels) != len(want) {
		t.Fatalf("labels = %v, want %v", c.Labels, want)
	}
	for k, v := range want {
		if got, ok := c.Labels[k]; !ok || got != v {
			t.Fatalf("labels = %v, want %v (a flag wins over the environment)", c.Labels, want)
		}
	}
	if got := strings.Join(LabelArgs(c.Labels), " "); got != "canary= env=prod rack=r7 team/db=pg16" {
		t.Errorf("LabelArgs = %q", got)
	}
	c, err = Parse(base, env(nil), io.Discard)
	if err != nil || len(c.Labels) != 0 {
		t.Errorf("no labels: %v, %v", c.Labels, err)
	}
}

func TestABadLabelIsOneUsageLineNamingIt(t *testing.T) {
	dir := t.TempDir()
	base := []string{"--server", "h:1", "--token", "t", "--kernels", dir, "--spool", dir}
	for _, bad := range []string{
		"noequals", "=v", "-env=prod", "env-=prod", "env=-prod", "env=prod-", "e v=1", "env=a b",
		strings.Repeat("k", 64) + "=v", "k=" + strings.Repeat("v", 64), "k=v,w",
	} {
		_, err := Parse(append(base, "--label", bad), env(nil), io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), bad) || strings.Contains(err.Error(), "\n") {
			t.Errorf("--label %q: err = %v, want one usage line naming it", bad, err)
		}
	}
	_, err := Parse(base, env(map[string]string{"CTXBENCH_AGENT_LABELS": "ok=1,bad label"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), `"bad label"`) {
		t.Errorf("CTXBENCH_AGENT_LABELS with a bad label: %v", err)
	}
	var many []string
	for i := 0; i < MaxLabels+1; i++ {
		many = append(many, "--label", "k"+strings.Repeat("x", i%5)+string(rune('a'+i%26))+string(rune('a'+i/26))+"=v")
	}
	if _, err := Parse(append(base, many...), env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "too many labels") {
		t.Errorf("%d labels: %v", MaxLabels+1, err)
	}
	// The longest key and value are fine.
	if _, err := Parse(append(base, "--label", strings.Repeat("k", 63)+"="+strings.Repeat("v", 63)), env(nil), io.Discard); err != nil {
		t.Errorf("63-character key and value: %v", err)
	}
}
