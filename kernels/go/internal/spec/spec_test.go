package spec

import "testing"

func TestIntParse(t *testing.T) {
	p := IntParam("goroutines", 2, 1, 16, nil, "")
	for text, want := range map[string]int64{"1": 1, "16": 16, "7": 7} {
		v, err := p.Parse(text)
		if err != nil || v != want {
			t.Errorf("Parse(%q) = %v, %v; want %d", text, v, err, want)
		}
	}
	for _, text := range []string{"0", "17", "-1", "1.5", "", "two", "0x10", "99999999999999999999"} {
		if v, err := p.Parse(text); err == nil {
			t.Errorf("Parse(%q) = %v, want an error", text, v)
		}
	}
}

func TestChoiceParse(t *testing.T) {
	p := ChoiceParam("topology", "star", []string{"star", "pairs"}, "")
	if v, err := p.Parse("pairs"); err != nil || v != "pairs" {
		t.Errorf("Parse(pairs) = %v, %v", v, err)
	}
	for _, text := range []string{"", "Star", "ring"} {
		if _, err := p.Parse(text); err == nil {
			t.Errorf("Parse(%q) succeeded", text)
		}
	}
}

func TestResolve(t *testing.T) {
	k := Kernel{ID: "k", Params: []Param{
		IntParam("n", 2, 1, 8, nil, ""),
		ChoiceParam("mode", "a", []string{"a", "b"}, ""),
	}}
	v, err := k.Resolve(map[string]string{"mode": "b"})
	if err != nil {
		t.Fatal(err)
	}
	if v.Int("n") != 2 || v.String("mode") != "b" {
		t.Errorf("resolved %v", v)
	}
	if _, err := k.Resolve(map[string]string{"m": "1"}); err == nil {
		t.Error("unknown parameter accepted")
	}
	if _, err := k.Resolve(map[string]string{"n": "9"}); err == nil {
		t.Error("out-of-range value accepted")
	}
}
