package defaults

import (
	"log/slog"
	"testing"
	"time"
)

func TestPositiveFillsOnlyUnsetValues(t *testing.T) {
	d, n, f := time.Duration(0), -3, 0.25
	Positive(&d, time.Second)
	Positive(&n, 7)
	Positive(&f, 0.5)
	if d != time.Second || n != 7 || f != 0.25 {
		t.Errorf("got %v, %d, %v; want 1s, 7, 0.25 (a set value kept)", d, n, f)
	}
}

func TestLog(t *testing.T) {
	if Log(nil) != slog.Default() {
		t.Error("nil logger: want slog.Default()")
	}
	l := slog.New(slog.DiscardHandler)
	if Log(l) != l {
		t.Error("a logger given is replaced")
	}
}
