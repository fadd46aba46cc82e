// Package spec is the kernel contract as the Go kernels use it: the `--list` structs and the
// parameter grammar live once, in kernels/contract/go/kernelspec (shared with the agent); these
// names keep the kernels' code short.
package spec

import "github.com/ctxbench/ctxbench/kernels/contract/go/kernelspec"

// MaxString is the longest string parameter value, in characters (kernels/contract/README.md).
const MaxString = kernelspec.MaxString

// Parameter types, as `--list` names them.
const (
	TypeInt    = kernelspec.TypeInt
	TypeFloat  = kernelspec.TypeFloat
	TypeChoice = kernelspec.TypeChoice
	TypeBool   = kernelspec.TypeBool
	TypeString = kernelspec.TypeString
)

type (
	// Param is one typed kernel parameter (kernelspec.Param).
	Param = kernelspec.Param
	// SeedReference is the figure a seed write-up measured for the same thing.
	SeedReference = kernelspec.SeedReference
	// Kernel is one element of the `--list` array.
	Kernel = kernelspec.Kernel
	// Values are typed parameter values by name.
	Values = kernelspec.Values
)

// IntParam builds an int parameter with its default sweep.
func IntParam(name string, def, min, max int64, sweep []int64, help string) Param {
	return kernelspec.IntParam(name, def, min, max, sweep, help)
}

// ChoiceParam builds a choice parameter.
func ChoiceParam(name, def string, choices []string, help string) Param {
	return kernelspec.ChoiceParam(name, def, choices, help)
}
