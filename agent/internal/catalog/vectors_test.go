package catalog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// The golden vectors every parameter implementation is tested against (kernels/contract/README.md).
const vectorsPath = "../../../kernels/contract/param-vectors.json"

type vectorFile struct {
	Params map[string]json.RawMessage `json:"params"`
	Wire   []vector                   `json:"wire"`
	JSON   []vector                   `json:"json"`
}

type vector struct {
	Param     string          `json:"param"`
	Input     json.RawMessage `json:"input"`
	Canonical json.RawMessage `json:"canonical"`
	Error     string          `json:"error"`
}

// text is a vector string: a JSON string, or {"repeat": S, "times": N}.
func text(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s
	}
	var r struct {
		Repeat string `json:"repeat"`
		Times  int    `json:"times"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Times == 0 {
		t.Fatalf("bad vector string %s", raw)
	}
	return strings.Repeat(r.Repeat, r.Times)
}

func loadVectors(t *testing.T) (vectorFile, map[string]*agentv1.ParamSpec) {
	t.Helper()
	data, err := os.ReadFile(filepath.FromSlash(vectorsPath))
	if err != nil {
		t.Fatal(err)
	}
	var vf vectorFile
	if err := json.Unmarshal(data, &vf); err != nil {
		t.Fatal(err)
	}
	// The vector params through the same --list parsing the agent applies to a kernel executable.
	specs := map[string]*agentv1.ParamSpec{}
	for name, raw := range vf.Params {
		var lp listedParam
		if err := json.Unmarshal(raw, &lp); err != nil {
			t.Fatal(err)
		}
		p, err := lp.spec()
		if err != nil {
			t.Fatalf("param %s: %v", name, err)
		}
		specs[name] = p
	}
	if len(vf.Wire) == 0 || len(vf.JSON) == 0 {
		t.Fatal("no vectors")
	}
	return vf, specs
}

func TestWireVectors(t *testing.T) {
	vf, specs := loadVectors(t)
	for _, v := range vf.Wire {
		in := text(t, v.Input)
		got, err := CheckValue(specs[v.Param], in)
		if v.Error != "" {
			if err == nil {
				t.Errorf("%s %q = %q, want an error (%s)", v.Param, in, got, v.Error)
			}
			continue
		}
		if want := text(t, v.Canonical); err != nil || got != want {
			t.Errorf("%s %q = %q, %v; want %q", v.Param, in, got, err, want)
		}
	}
}

// The agent reads typed values from kernel output (--list, results), which the conformance suite holds
// to the schema; as a reader it also takes a canonical string in place of a typed value, and any JSON
// scalar as a string parameter's text (README "Parameter values": readers lenient, writers strict).
// Those vectors are the server's alone.
func TestJSONVectors(t *testing.T) {
	vf, specs := loadVectors(t)
	for _, v := range vf.JSON {
		p := specs[v.Param]
		isString := len(v.Input) > 0 && v.Input[0] == '"'
		switch p.GetType() {
		case agentv1.ParamType_PARAM_TYPE_INT, agentv1.ParamType_PARAM_TYPE_FLOAT, agentv1.ParamType_PARAM_TYPE_BOOL:
			if isString {
				continue
			}
		case agentv1.ParamType_PARAM_TYPE_STRING:
			if !isString && v.Input[0] != '{' {
				continue
			}
		}
		raw := v.Input
		if v.Input[0] == '{' {
			raw, _ = json.Marshal(text(t, v.Input))
		}
		got, err := CanonicalJSON(raw, p.GetType())
		if err == nil {
			got, err = CheckValue(p, got)
		}
		if v.Error != "" {
			if err == nil {
				t.Errorf("%s %s = %q, want an error (%s)", v.Param, raw, got, v.Error)
			}
			continue
		}
		if want := text(t, v.Canonical); err != nil || got != want {
			t.Errorf("%s %s = %q, %v; want %q", v.Param, raw, got, err, want)
		}
	}
}
