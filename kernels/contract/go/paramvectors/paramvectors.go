// Package paramvectors reads kernels/contract/param-vectors.json, the golden vectors every
// implementation of the parameter types is tested against, for the Go tests that use them (the
// contract's own in kernelspec, the agent's reader of typed JSON).
package paramvectors

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/ctxbench/ctxbench/kernels/contract/go/kernelspec"
)

// File is the vector file: the parameters the vectors name, then wire and typed-JSON vectors.
type File struct {
	Params map[string]kernelspec.Param `json:"params"`
	Wire   []Vector                    `json:"wire"`
	JSON   []Vector                    `json:"json"`
}

// Vector is one input and its canonical string, or the rule it breaks (Error).
type Vector struct {
	Param     string          `json:"param"`
	Input     json.RawMessage `json:"input"`
	Canonical json.RawMessage `json:"canonical"`
	Error     string          `json:"error"`
}

// Load reads the vector file at path; params' numbers are json.Number, as a --list reader has them.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read param vectors: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("parse param vectors %s: %w", path, err)
	}
	if len(f.Params) == 0 || len(f.Wire) == 0 || len(f.JSON) == 0 {
		return nil, fmt.Errorf("param vectors %s: no vectors", path)
	}
	return &f, nil
}

// Text is a vector string: a JSON string, or {"repeat": S, "times": N} for S repeated N times.
func Text(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	var r struct {
		Repeat string `json:"repeat"`
		Times  int    `json:"times"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Times == 0 {
		return "", fmt.Errorf("bad vector string %s", raw)
	}
	return strings.Repeat(r.Repeat, r.Times), nil
}
