package kernelspec_test

import (
	"strconv"
	"testing"

	"github.com/ctxbench/ctxbench/kernels/contract/go/kernelspec"
	"github.com/ctxbench/ctxbench/kernels/contract/go/paramvectors"
)

// The golden vectors (kernels/contract/README.md): every wire input gives its canonical string and the
// typed value that string stands for, or an error. Run once here for the agent's gate
// (Param.Check) and the Go kernels' --param parser (Param.Parse), which are this one function.
func TestWireVectors(t *testing.T) {
	vf, err := paramvectors.Load("../../param-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range vf.Wire {
		p, ok := vf.Params[v.Param]
		if !ok {
			t.Fatalf("vector names unknown param %q", v.Param)
		}
		in := text(t, v)
		got, typed, err := p.Check(in)
		if v.Error != "" {
			if err == nil {
				t.Errorf("%s %q = %q, want an error (%s)", v.Param, in, got, v.Error)
			}
			if _, perr := p.Parse(in); perr == nil {
				t.Errorf("Parse(%s %q) accepted it", v.Param, in)
			}
			continue
		}
		want, err2 := paramvectors.Text(v.Canonical)
		if err2 != nil {
			t.Fatal(err2)
		}
		if err != nil || got != want {
			t.Errorf("%s %q = %q, %v; want %q", v.Param, in, got, err, want)
			continue
		}
		if w := typedOf(t, p.Type, want); typed != w {
			t.Errorf("%s %q typed = %#v, want %#v", v.Param, in, typed, w)
		}
	}
}

func text(t *testing.T, v paramvectors.Vector) string {
	t.Helper()
	s, err := paramvectors.Text(v.Input)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// typedOf is the value a canonical string stands for.
func typedOf(t *testing.T, typ, canonical string) any {
	t.Helper()
	switch typ {
	case kernelspec.TypeInt:
		n, err := strconv.ParseInt(canonical, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	case kernelspec.TypeFloat:
		f, err := strconv.ParseFloat(canonical, 64)
		if err != nil {
			t.Fatal(err)
		}
		return f
	case kernelspec.TypeBool:
		return canonical == "true"
	}
	return canonical
}
