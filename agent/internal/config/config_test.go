package config

import (
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFlagsOverrideEnv(t *testing.T) {
	kernels := t.TempDir()
	e := env(map[string]string{
		"CTXBENCH_AGENT_SERVER": "envhost:1", "CTXBENCH_AGENT_TOKEN": "envtoken",
		"CTXBENCH_AGENT_KERNELS": kernels, "CTXBENCH_AGENT_SPOOL": "/var/spool/x", "CTXBENCH_AGENT_NAME": "envname",
	})
	c, err := Parse([]string{"--server", "flaghost:50051", "--name", "flagname", "--log-level", "debug"}, e, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Server != "flaghost:50051" || c.Name != "flagname" || c.Token != "envtoken" || c.Kernels != kernels ||
		c.Spool != "/var/spool/x" || c.LogLevel != slog.LevelDebug {
		t.Fatalf("config = %+v", c)
	}
}

func TestTokenFile(t *testing.T) {
	dir := t.TempDir()
	tf := filepath.Join(dir, "token")
	if err := os.WriteFile(tf, []byte("  s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"--server", "h:1", "--kernels", dir, "--spool", dir}
	c, err := Parse(append(base, "--token-file", tf), env(map[string]string{"CTXBENCH_AGENT_TOKEN": "envtoken"}), io.Discard)
	if err != nil || c.Token != "s3cret" {
		t.Fatalf("token = %q, %v (flag --token-file beats env token)", c.Token, err)
	}
	c, err = Parse(base, env(map[string]string{"CTXBENCH_AGENT_TOKEN_FILE": tf}), io.Discard)
	if err != nil || c.Token != "s3cret" {
		t.Fatalf("token = %q, %v (from CTXBENCH_AGENT_TOKEN_FILE)", c.Token, err)
	}
	if _, err := Parse(append(base, "--token", "a", "--token-file", tf), env(nil), io.Discard); err == nil {
		t.Fatal("--token with --token-file accepted")
	}
	if _, err := Parse(append(base, "--token-file", filepath.Join(dir, "nope")), env(nil), io.Discard); err == nil {
		t.Fatal("missing token file accepted")
	}
}

func TestInvalidConfigIsOneClearUsageError(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f")
	_ = os.WriteFile(file, nil, 0o600)
	ok := map[string]string{"--server": "h:1", "--token": "t", "--kernels": dir, "--spool": dir}
	cases := []struct {
		drop, key, val, want string
	}{
		{drop: "--server", want: "missing --server"},
		{key: "--server", val: "nohost", want: "invalid --server"},
		{key: "--server", val: "h:99999", want: "port"},
		{drop: "--token", want: "missing enrollment token"},
		{key: "--token", val: "a b", want: "whitespace"},
		{drop: "--kernels", want: "missing --kernels"},
		{key: "--kernels", val: file, want: "not a directory"},
		{key: "--kernels", val: filepath.Join(dir, "nope"), want: "invalid --kernels"},
		{drop: "--spool", want: "missing --state-dir"},
		{key: "--log-level", val: "loud", want: "invalid --log-level"},
		{key: "--bogus", val: "1", want: "flag provided but not defined"},
	}
	for _, c := range cases {
		var args []string
		for k, v := range ok {
			if k != c.drop && k != c.key {
				args = append(args, k, v)
			}
		}
		if c.key != "" {
			args = append(args, c.key, c.val)
		}
		_, err := Parse(args, env(nil), io.Discard)
		var ue *UsageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("args %v: err = %v, want a one-line usage error containing %q", args, err, c.want)
		}
	}
}

func TestVersionNeedsNothingElse(t *testing.T) {
	c, err := Parse([]string{"--version"}, env(nil), io.Discard)
	if err != nil || !c.Version {
		t.Fatalf("--version: %+v, %v", c, err)
	}
}
