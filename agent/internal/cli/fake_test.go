package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeAPI is a REST server on a real socket (httptest) whose answers a test sets per route.
type fakeAPI struct {
	srv      *httptest.Server
	mux      *http.ServeMux
	mu       sync.Mutex
	requests []recorded
}

type recorded struct {
	method, path, query, auth string
	body                      []byte
}

func newFake(t *testing.T) *fakeAPI {
	t.Helper()
	f := &fakeAPI{mux: http.NewServeMux()}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.requests = append(f.requests, recorded{r.Method, r.URL.Path, r.URL.RawQuery, r.Header.Get("Authorization"), body})
		f.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.mux.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

// answer serves pattern (e.g. "GET /api/v1/machines") with a JSON body.
func (f *fakeAPI) answer(pattern string, status int, body any) {
	f.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		if s, ok := body.(string); ok {
			io.WriteString(w, s)
			return
		}
		json.NewEncoder(w).Encode(body)
	})
}

func (f *fakeAPI) seen(method, path string) []recorded {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []recorded
	for _, r := range f.requests {
		if r.method == method && r.path == path {
			out = append(out, r)
		}
	}
	return out
}

type result struct {
	code           int
	stdout, stderr string
}

// runCLI runs Main in-process with env (CTXBENCH_SERVER defaults to the fake, XDG_CONFIG_HOME to a
// temp dir).
func runCLI(t *testing.T, f *fakeAPI, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	vars := map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "HOME": t.TempDir()}
	if f != nil {
		vars["CTXBENCH_SERVER"] = f.srv.URL
	}
	for k, v := range env {
		vars[k] = v
	}
	var out, errOut strings.Builder
	e := Env{
		Stdin:   strings.NewReader(stdin),
		Stdout:  &out,
		Stderr:  &errOut,
		Getenv:  func(k string) string { return vars[k] },
		Version: "1.2.3+test",
	}
	code := Main(context.Background(), e, args)
	return result{code, out.String(), errOut.String()}
}

var twoMachines = []map[string]any{
	{"id": "m-a", "name": "alpha", "agent_name": "alpha", "hostname": "ha", "online": true,
		"kernels": []string{"syscall.getppid", "ctxswitch.pipe"}, "labels": map[string]string{"rack": "r1"}},
	{"id": "m-b", "name": "beta", "agent_name": "beta", "hostname": "hb", "online": false,
		"kernels": []string{"syscall.getppid"}, "labels": map[string]string{}},
}

var someKernels = []map[string]any{
	{"id": "syscall.getppid", "title": "Raw getppid system call", "family": "syscall", "unit": "ns/op",
		"params": []any{}, "machines": []string{"m-a", "m-b"}, "aliases": []string{}},
	{"id": "ctxswitch.pipe", "title": "Context switch: pipe ping-pong", "family": "ctxswitch", "unit": "ns/op",
		"params": []map[string]any{
			{"name": "placement", "type": "choice", "choices": []string{"same_core", "cross_core"}},
			{"name": "threads", "type": "int"},
			{"name": "ratio", "type": "float"},
			{"name": "pin", "type": "bool"},
			{"name": "dir", "type": "string"},
		},
		"machines": []string{"m-a"}, "aliases": []string{"old.pipe"}},
}
