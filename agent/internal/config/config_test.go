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
		{key: "--join-token", val: "j", want: "either a join token or --token"},
		{key: "--ca-fingerprint", val: "sha256:abc", want: "invalid --ca-fingerprint"},
		{key: "--ca-fingerprint", val: strings.Repeat("a", 64), want: "invalid --ca-fingerprint"},
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

func TestEnrollmentAndTLSFlags(t *testing.T) {
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "join")
	_ = os.WriteFile(tokenFile, []byte("cxj_secret\n"), 0o600)
	fp := "sha256:" + strings.Repeat("ab", 32)
	c, err := Parse([]string{"--server", "h:1", "--join-token-file", tokenFile, "--kernels", dir, "--state-dir", dir,
		"--ca-fingerprint", fp, "--scratch-dir", "/a, /b"}, env(nil), io.Discard)
	if err != nil || c.Token != "cxj_secret" || !c.JoinToken || c.Spool != dir || c.CAFingerprint != fp ||
		strings.Join(c.ScratchDirs, ":") != "/a:/b" || c.Insecure {
		t.Fatalf("Parse = %+v, %v", c, err)
	}
	// Environment, as the installer's agent.env writes it; the default scratch dir is in the state dir.
	c, err = Parse(nil, env(map[string]string{"CTXBENCH_AGENT_SERVER": "h:1", "CTXBENCH_AGENT_JOIN_TOKEN_FILE": tokenFile,
		"CTXBENCH_AGENT_KERNELS": dir, "CTXBENCH_AGENT_STATE_DIR": dir, "CTXBENCH_AGENT_CA_FINGERPRINT": fp}), io.Discard)
	if err != nil || !c.JoinToken || c.Token != "cxj_secret" || c.CAFingerprint != fp ||
		len(c.ScratchDirs) != 1 || c.ScratchDirs[0] != filepath.Join(dir, "scratch") {
		t.Fatalf("Parse from env = %+v, %v", c, err)
	}
	if _, err := Parse([]string{"--server", "h:1", "--token", "t", "--kernels", dir, "--spool", dir, "--insecure",
		"--ca-file", tokenFile}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--insecure") {
		t.Errorf("--insecure with --ca-file: %v", err)
	}
	c, err = Parse([]string{"--server", "h:1", "--token", "t", "--kernels", dir, "--spool", dir},
		env(map[string]string{"CTXBENCH_AGENT_INSECURE": "true"}), io.Discard)
	if err != nil || !c.Insecure || c.JoinToken {
		t.Errorf("CTXBENCH_AGENT_INSECURE=true: %+v, %v", c, err)
	}
	// Once enrolled, no token is needed.
	_ = os.WriteFile(filepath.Join(dir, "machine-credential"), []byte("cxm_x\n"), 0o600)
	if _, err := Parse([]string{"--server", "h:1", "--kernels", dir, "--spool", dir}, env(nil), io.Discard); err != nil {
		t.Errorf("enrolled agent without a token: %v", err)
	}
}

// Kernels run in their scratch directory: a relative --kernels, --state-dir or --scratch-dir given on the
// command line must mean the directory it names where the agent was started.
func TestRelativeDirectoriesAreResolvedAtStart(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"build/kernels", "state", "scratch"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(root)
	c, err := Parse([]string{"--server", "h:1", "--token", "t", "--kernels", "build/kernels", "--state-dir", "state",
		"--scratch-dir", "scratch"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Kernels != filepath.Join(root, "build/kernels") || c.Spool != filepath.Join(root, "state") ||
		len(c.ScratchDirs) != 1 || c.ScratchDirs[0] != filepath.Join(root, "scratch") {
		t.Errorf("Parse = kernels %q, state %q, scratch %v: want them under %s", c.Kernels, c.Spool, c.ScratchDirs, root)
	}
}
