package catalog

import (
	"encoding/json"
	"strings"
	"testing"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

func TestCanonicalJSON(t *testing.T) {
	cases := []struct {
		raw  string
		typ  agentv1.ParamType
		want string
		bad  bool
	}{
		{"4", agentv1.ParamType_PARAM_TYPE_INT, "4", false},
		{"4.0", agentv1.ParamType_PARAM_TYPE_INT, "4", false},
		{"4.5", agentv1.ParamType_PARAM_TYPE_INT, "", true},
		{`"16"`, agentv1.ParamType_PARAM_TYPE_INT, "16", false},
		{"0.5", agentv1.ParamType_PARAM_TYPE_FLOAT, "0.5", false},
		{"2", agentv1.ParamType_PARAM_TYPE_FLOAT, "2.0", false},
		{"true", agentv1.ParamType_PARAM_TYPE_BOOL, "true", false},
		{"1", agentv1.ParamType_PARAM_TYPE_BOOL, "", true},
		{`"same_core"`, agentv1.ParamType_PARAM_TYPE_CHOICE, "same_core", false},
		{"8", agentv1.ParamType_PARAM_TYPE_CHOICE, "8", false},
		{`"/tmp"`, agentv1.ParamType_PARAM_TYPE_STRING, "/tmp", false},
		{"null", agentv1.ParamType_PARAM_TYPE_STRING, "", false},
		{"true", agentv1.ParamType_PARAM_TYPE_INT, "", true},
	}
	for _, c := range cases {
		got, err := CanonicalJSON(json.RawMessage(c.raw), c.typ)
		if c.bad {
			if err == nil {
				t.Errorf("CanonicalJSON(%s, %v) = %q, want error", c.raw, c.typ, got)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("CanonicalJSON(%s, %v) = %q, %v; want %q", c.raw, c.typ, got, err, c.want)
		}
	}
}

func testCatalog(t *testing.T) *Catalog {
	t.Helper()
	specs, err := ParseList([]byte(`[{"id": "ctx.pingpong", "unit": "ns/op", "params": [
	  {"name": "threads", "type": "int", "default": 1, "min": 1, "max": 4096},
	  {"name": "ratio", "type": "float", "default": 0.5, "min": 0, "max": 1},
	  {"name": "placement", "type": "choice", "default": "same_core", "choices": ["same_core", "cross_core"]},
	  {"name": "direct", "type": "bool", "default": false},
	  {"name": "dir", "type": "string", "default": "/tmp"}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	return New(specs)
}

func TestValidateFillsDefaultsAndCanonicalises(t *testing.T) {
	c := testCatalog(t)
	_, got, err := c.Validate("ctx.pingpong", map[string]string{"threads": "0016", "ratio": "1", "direct": "true"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"threads": "16", "ratio": "1.0", "placement": "same_core", "direct": "true", "dir": "/tmp"}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("param %s = %q, want %q", k, got[k], v)
		}
	}
}

func TestValidateRefuses(t *testing.T) {
	c := testCatalog(t)
	cases := []struct {
		kernel string
		params map[string]string
		want   []string // substrings of the error
	}{
		{"ctx.nope", nil, []string{`"ctx.nope"`, "not in this agent's catalog"}},
		{"ctx.pingpong", map[string]string{"cores": "2"}, []string{"ctx.pingpong", `unknown parameter "cores"`}},
		{"ctx.pingpong", map[string]string{"threads": "two"}, []string{"threads", "not an integer"}},
		{"ctx.pingpong", map[string]string{"threads": "1.5"}, []string{"threads", "not an integer"}},
		{"ctx.pingpong", map[string]string{"threads": "0"}, []string{"threads", "below the minimum 1"}},
		{"ctx.pingpong", map[string]string{"threads": "5000"}, []string{"threads", "above the maximum 4096"}},
		{"ctx.pingpong", map[string]string{"ratio": "1.5"}, []string{"ratio", "above the maximum 1"}},
		{"ctx.pingpong", map[string]string{"ratio": "NaN"}, []string{"ratio", "not a finite number"}},
		{"ctx.pingpong", map[string]string{"placement": "numa"}, []string{"placement", "not one of same_core, cross_core"}},
		{"ctx.pingpong", map[string]string{"direct": "yes"}, []string{"direct", "not a bool"}},
	}
	for _, c2 := range cases {
		_, _, err := c.Validate(c2.kernel, c2.params)
		if err == nil {
			t.Errorf("Validate(%s, %v): no error", c2.kernel, c2.params)
			continue
		}
		for _, w := range c2.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%s, %v) = %q, want it to contain %q", c2.kernel, c2.params, err, w)
			}
		}
	}
}
