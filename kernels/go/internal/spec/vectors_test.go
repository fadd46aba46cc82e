package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The golden vectors every parameter implementation is tested against (kernels/contract/README.md).
// Parse returns typed values, so a vector's canonical string is compared as the value it stands for.
const vectorsPath = "../../../contract/param-vectors.json"

type vectorParam struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Min     *float64 `json:"min"`
	Max     *float64 `json:"max"`
	Choices []string `json:"choices"`
}

type vector struct {
	Param     string          `json:"param"`
	Input     json.RawMessage `json:"input"`
	Canonical json.RawMessage `json:"canonical"`
	Error     string          `json:"error"`
}

func vectorText(t *testing.T, raw json.RawMessage) string {
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

func (vp vectorParam) param() Param {
	p := Param{Name: vp.Name, Type: vp.Type, Choices: vp.Choices}
	switch vp.Type {
	case TypeInt:
		if vp.Min != nil {
			p.Min = int64(*vp.Min)
		}
		if vp.Max != nil {
			p.Max = int64(*vp.Max)
		}
	case TypeFloat:
		if vp.Min != nil {
			p.Min = *vp.Min
		}
		if vp.Max != nil {
			p.Max = *vp.Max
		}
	}
	return p
}

// typed is the value a canonical string stands for.
func typed(t *testing.T, typ, canonical string) any {
	t.Helper()
	switch typ {
	case TypeInt:
		n, err := strconv.ParseInt(canonical, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	case TypeFloat:
		f, err := strconv.ParseFloat(canonical, 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	case TypeBool:
		return canonical == "true"
	}
	return canonical
}

func TestWireVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.FromSlash(vectorsPath))
	if err != nil {
		t.Fatal(err)
	}
	var vf struct {
		Params map[string]vectorParam `json:"params"`
		Wire   []vector               `json:"wire"`
	}
	if err := json.Unmarshal(data, &vf); err != nil {
		t.Fatal(err)
	}
	if len(vf.Wire) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range vf.Wire {
		vp := vf.Params[v.Param]
		in := vectorText(t, v.Input)
		got, err := vp.param().Parse(in)
		if v.Error != "" {
			if err == nil {
				t.Errorf("%s %q = %v, want an error (%s)", v.Param, in, got, v.Error)
			}
			continue
		}
		if want := typed(t, vp.Type, vectorText(t, v.Canonical)); err != nil || got != want {
			t.Errorf("%s %q = %#v, %v; want %#v", v.Param, in, got, err, want)
		}
	}
}
