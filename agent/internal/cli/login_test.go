package cli

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func sessionRoute(f *fakeAPI, token string) {
	f.mux.HandleFunc("GET /api/v1/session", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer "+token {
			w.WriteHeader(401)
			w.Write([]byte(`{"detail":"unknown token"}`))
			return
		}
		w.Write([]byte(`{"authenticated":true,"scope":"write","public_read":false,"expires_at":null}`))
	})
}

func TestLoginReadsTheTokenFromStdinAndSavesIt0600(t *testing.T) {
	f := newFake(t)
	sessionRoute(f, "s3cret")
	cfgDir := t.TempDir()
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "CTXBENCH_SERVER": ""}
	got := runCLI(t, f, env, "s3cret\n", "login", "--server", f.srv.URL+"/api/v1/")
	if got.code != 0 {
		t.Fatalf("login: %+v", got)
	}
	path := filepath.Join(cfgDir, "ctxbench", "config.json")
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("config mode %v, want 0600", st.Mode().Perm())
	}
	if dir, _ := os.Stat(filepath.Dir(path)); dir.Mode().Perm() != 0o700 {
		t.Errorf("config dir mode %v, want 0700", dir.Mode().Perm())
	}
	var cfg Config
	data, _ := os.ReadFile(path)
	if err := json.Unmarshal(data, &cfg); err != nil || cfg != (Config{Server: f.srv.URL, Token: "s3cret"}) {
		t.Errorf("config %s (%v)", data, err)
	}
	if !strings.Contains(got.stdout, "scope write") {
		t.Errorf("stdout %q", got.stdout)
	}

	// The saved login is used by later commands: the token goes with every request.
	f.answer("GET /api/v1/machines", 200, twoMachines)
	got = runCLI(t, f, env, "", "machines")
	if got.code != 0 {
		t.Fatalf("machines: %+v", got)
	}
	if reqs := f.seen("GET", "/api/v1/machines"); len(reqs) != 1 || reqs[0].auth != "Bearer s3cret" {
		t.Errorf("machines sent %+v", reqs)
	}
}

func TestLoginNeverTakesTheTokenFromArgv(t *testing.T) {
	f := newFake(t)
	sessionRoute(f, "s3cret")
	for _, args := range [][]string{
		{"login", "--server", f.srv.URL, "s3cret"},
		{"login", "--server", f.srv.URL, "--token", "s3cret"},
		{"login", "--server", f.srv.URL, "--token=s3cret"},
	} {
		got := runCLI(t, f, nil, "", args...)
		if got.code != ExitUsage {
			t.Errorf("%v: exit %d, want 2 (%s)", args, got.code, got.stderr)
		}
		if strings.Count(got.stderr, "\n") != 1 {
			t.Errorf("%v: want one line on stderr, got %q", args, got.stderr)
		}
	}
	if reqs := f.seen("GET", "/api/v1/session"); len(reqs) != 0 {
		t.Errorf("a token from argv reached the server: %+v", reqs)
	}
	// No flag of any command takes a token.
	for _, c := range commands() {
		for _, fl := range commandFlags(c) {
			if strings.Contains(fl.name, "token") {
				t.Errorf("%s has a --%s flag: secrets must not be in argv", c.name, fl.name)
			}
		}
	}
}

func TestLoginTakesCTXBENCH_TOKEN(t *testing.T) {
	f := newFake(t)
	sessionRoute(f, "from-env")
	got := runCLI(t, f, map[string]string{"CTXBENCH_TOKEN": "from-env"}, "", "login")
	if got.code != 0 {
		t.Fatalf("%+v", got)
	}
}

func TestLoginRefusedTokenSavesNothing(t *testing.T) {
	f := newFake(t)
	sessionRoute(f, "s3cret")
	cfgDir := t.TempDir()
	got := runCLI(t, f, map[string]string{"XDG_CONFIG_HOME": cfgDir}, "wrong\n", "login")
	if got.code != ExitServer || !strings.Contains(got.stderr, "401 unknown token") {
		t.Fatalf("%+v", got)
	}
	if _, err := os.Stat(filepath.Join(cfgDir, "ctxbench")); !os.IsNotExist(err) {
		t.Errorf("config written after a refusal: %v", err)
	}
	if got := runCLI(t, f, nil, "\n", "login"); got.code != ExitUsage {
		t.Errorf("empty token: %+v", got)
	}
}

func TestSaveConfigTightensAnExistingFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ctxbench", "config.json")
	os.MkdirAll(filepath.Dir(path), 0o755)
	os.WriteFile(path, []byte("{}"), 0o644)
	if err := saveConfig(path, Config{Server: "http://x", Token: "t"}); err != nil {
		t.Fatal(err)
	}
	st, _ := os.Stat(path)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", st.Mode().Perm())
	}
	if c, err := loadConfig(path); err != nil || c.Token != "t" {
		t.Errorf("%+v %v", c, err)
	}
	if c, err := loadConfig(filepath.Join(t.TempDir(), "none.json")); err != nil || c != (Config{}) {
		t.Errorf("missing file: %+v %v", c, err)
	}
}

func TestConfigPath(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	p, _ := configPath(env(map[string]string{"XDG_CONFIG_HOME": "/x", "HOME": "/h"}))
	q, _ := configPath(env(map[string]string{"HOME": "/h"}))
	r, _ := configPath(env(map[string]string{"XDG_CONFIG_HOME": "relative", "HOME": "/h"}))
	if p != "/x/ctxbench/config.json" || q != "/h/.config/ctxbench/config.json" || r != q {
		t.Errorf("%s %s %s", p, q, r)
	}
}

func TestSavedTokenGoesOnlyToItsServer(t *testing.T) {
	saved, other := newFake(t), newFake(t)
	saved.answer("GET /api/v1/machines", 200, twoMachines)
	other.answer("GET /api/v1/machines", 200, twoMachines)
	cfgDir := t.TempDir()
	if err := saveConfig(filepath.Join(cfgDir, "ctxbench", "config.json"), Config{Server: saved.srv.URL, Token: "tok"}); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"XDG_CONFIG_HOME": cfgDir, "CTXBENCH_SERVER": ""}
	if got := runCLI(t, nil, env, "", "machines"); got.code != 0 {
		t.Fatalf("%+v", got)
	}
	if got := runCLI(t, nil, env, "", "machines", "--server", other.srv.URL); got.code != 0 {
		t.Fatalf("%+v", got)
	}
	if r := saved.seen("GET", "/api/v1/machines"); len(r) != 1 || r[0].auth != "Bearer tok" {
		t.Errorf("saved server got %+v", r)
	}
	if r := other.seen("GET", "/api/v1/machines"); len(r) != 1 || r[0].auth != "" {
		t.Errorf("the saved token went to another server: %+v", r)
	}
	env["CTXBENCH_TOKEN"] = "envtok"
	runCLI(t, nil, env, "", "--server", other.srv.URL, "machines")
	if r := other.seen("GET", "/api/v1/machines"); len(r) != 2 || r[1].auth != "Bearer envtok" {
		t.Errorf("CTXBENCH_TOKEN not sent: %+v", r)
	}
}
