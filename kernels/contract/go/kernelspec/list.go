// Package kernelspec is the kernel contract (kernels/contract/README.md) in Go, written once for the
// two Go programs that speak it: the Go kernels print `--list` with these structs and parse
// `--param` with Param.Parse; the agent reads every executable's `--list` into them and checks every
// run item's values with Param.Check before it runs anything.
package kernelspec

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// MaxString is the longest string parameter value, in characters.
const MaxString = 4096

// Parameter types, as `--list` names them.
const (
	TypeInt    = "int"
	TypeFloat  = "float"
	TypeChoice = "choice"
	TypeBool   = "bool"
	TypeString = "string"
)

// Param is one typed kernel parameter, one element of a kernel's `params`. A writer (the Go kernels)
// puts int64 in Default, Min, Max and Sweep for int parameters, float64 for float, bool for bool and
// string for choice and string; a reader decoding JSON with UseNumber gets json.Number for numbers.
// Every key is always printed, as the schema asks: min and max are null where they do not apply,
// sweep and choices empty lists.
type Param struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Default any      `json:"default"`
	Min     any      `json:"min"`
	Max     any      `json:"max"`
	Sweep   []any    `json:"sweep"`
	Choices []string `json:"choices"`
	Help    string   `json:"help"`
}

// SeedReference is the figure a seed write-up (../shared/seeds/NNN_*.txt) measured for the same thing.
// Params is the seed's parameter point, as canonical strings.
type SeedReference struct {
	Seed    string  `json:"seed"`
	Value   float64 `json:"value"`
	Unit    string  `json:"unit"`
	Machine string  `json:"machine"`
	Params  Texts   `json:"params,omitempty"`
	Note    string  `json:"note,omitempty"`
}

// Texts are parameter values as wire strings, by name. Writers give canonical strings; read from JSON,
// a number or bool in place of a string is taken as its JSON text (the agent reads kernel output
// leniently and canonicalises each value by its parameter's type).
type Texts map[string]string

// UnmarshalJSON reads an object of strings, numbers or bools.
func (t *Texts) UnmarshalJSON(data []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	out := make(Texts, len(raw))
	for name, v := range raw {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			out[name] = s
			continue
		}
		var x any
		if err := json.Unmarshal(v, &x); err != nil {
			return err
		}
		switch x.(type) {
		case float64, bool:
			out[name] = string(bytes.TrimSpace(v))
		default:
			return fmt.Errorf("params %s: %s is not a string, number or bool", name, v)
		}
	}
	*t = out
	return nil
}

// Kernel is one kernel spec, one element of the `--list` array.
type Kernel struct {
	ID            string         `json:"id"`
	Title         string         `json:"title"`
	Family        string         `json:"family"`
	Unit          string         `json:"unit"`
	Description   string         `json:"description"`
	Params        []Param        `json:"params"`
	SeedReference *SeedReference `json:"seed_reference,omitempty"`
}

// IntParam builds an int parameter with its default sweep.
func IntParam(name string, def, min, max int64, sweep []int64, help string) Param {
	p := Param{Name: name, Type: TypeInt, Default: def, Min: min, Max: max, Sweep: []any{}, Choices: []string{},
		Help: help}
	for _, s := range sweep {
		p.Sweep = append(p.Sweep, s)
	}
	return p
}

// ChoiceParam builds a choice parameter.
func ChoiceParam(name, def string, choices []string, help string) Param {
	return Param{Name: name, Type: TypeChoice, Default: def, Sweep: []any{}, Choices: choices, Help: help}
}
