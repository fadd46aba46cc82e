package harness

import (
	"testing"
)

func TestRunCollectsSamples(t *testing.T) {
	var sum int64
	c := &Case{OpsPerIter: 3, Procs: 1, Bench: func(b *testing.B, m *Meter) {
		m.Begin(b)
		for i := 0; i < b.N*3; i++ {
			sum += int64(i)
		}
		m.End(b)
	}}
	res, err := Run(c, 3, 0.001)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Samples) != 3 || len(res.Iterations) != 3 {
		t.Fatalf("result %+v", res)
	}
	for i, s := range res.Samples {
		if !(s > 0) || res.Iterations[i] <= 0 || res.Iterations[i]%3 != 0 {
			t.Errorf("sample %d: %v ns over %d ops", i, s, res.Iterations[i])
		}
	}
	if res.Counters["gomaxprocs"] != 1 || res.Harness.Name != HarnessName || res.Harness.MinTimeS != 0.001 {
		t.Errorf("counters %v, harness %+v", res.Counters, res.Harness)
	}
}

func TestRunReportsSelfCheckFailure(t *testing.T) {
	c := &Case{OpsPerIter: 1, Bench: func(b *testing.B, m *Meter) {
		m.Begin(b)
		m.End(b)
		m.Fail("count is %d, want %d", 1, 2)
	}}
	_, err := Run(c, 1, 0.001)
	if err == nil || !IsCheck(err) {
		t.Fatalf("err = %v, want a self-check failure", err)
	}
}

func TestRunRejectsBodyWithoutEnd(t *testing.T) {
	c := &Case{OpsPerIter: 1, Bench: func(b *testing.B, m *Meter) { m.Begin(b) }}
	if _, err := Run(c, 1, 0.001); err == nil || !IsCheck(err) {
		t.Fatalf("err = %v, want a self-check failure", err)
	}
}
