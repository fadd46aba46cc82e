package catalog

import (
	"encoding/json"
	"testing"

	"github.com/ctxbench/ctxbench/kernels/contract/go/paramvectors"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// The golden vectors every parameter implementation is tested against (kernels/contract/README.md).
// The wire vectors run once, in kernels/contract/go/kernelspec (CheckValue is its Param.Check); the
// typed-JSON vectors test what is the agent's own: reading kernel output.
const vectorsPath = "../../../kernels/contract/param-vectors.json"

// The agent reads typed values from kernel output (--list, results), which the conformance suite holds
// to the schema; as a reader it also takes a canonical string in place of a typed value, and any JSON
// scalar as a string parameter's text (README "Parameter values": readers lenient, writers strict).
// Those vectors are the server's alone.
func TestJSONVectors(t *testing.T) {
	vf, err := paramvectors.Load(vectorsPath)
	if err != nil {
		t.Fatal(err)
	}
	// The vector params through the same --list conversion the agent applies to a kernel executable.
	specs := map[string]*agentv1.ParamSpec{}
	for name := range vf.Params {
		lp := vf.Params[name]
		p, err := paramSpec(&lp)
		if err != nil {
			t.Fatalf("param %s: %v", name, err)
		}
		specs[name] = p
	}
	for _, v := range vf.JSON {
		p := specs[v.Param]
		raw, skip := jsonInput(t, p.GetType(), v.Input)
		if skip {
			continue
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
		if want := vectorText(t, v.Canonical); err != nil || got != want {
			t.Errorf("%s %s = %q, %v; want %q", v.Param, raw, got, err, want)
		}
	}
}

// jsonInput is a vector's JSON input as the agent reads it, or skip for the inputs the agent reads
// leniently (a string for a number or bool, a number for a string).
func jsonInput(t *testing.T, typ agentv1.ParamType, in json.RawMessage) (json.RawMessage, bool) {
	isString := len(in) > 0 && in[0] == '"'
	switch typ {
	case agentv1.ParamType_PARAM_TYPE_INT, agentv1.ParamType_PARAM_TYPE_FLOAT, agentv1.ParamType_PARAM_TYPE_BOOL:
		if isString {
			return nil, true
		}
	case agentv1.ParamType_PARAM_TYPE_STRING:
		if !isString && in[0] != '{' {
			return nil, true
		}
	}
	if in[0] == '{' {
		raw, _ := json.Marshal(vectorText(t, in))
		return raw, false
	}
	return in, false
}

func vectorText(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	s, err := paramvectors.Text(raw)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
