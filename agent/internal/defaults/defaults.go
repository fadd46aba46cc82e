// Package defaults fills the unset fields of an options struct: the one rule every constructor and
// Run in the agent applies (zero or negative means "the default"; a nil logger means slog's default).
package defaults

import "log/slog"

// Positive sets *v to def when *v is zero or negative (unset: a duration, count or ratio).
func Positive[T ~int | ~int32 | ~int64 | ~float64](v *T, def T) {
	if *v <= 0 {
		*v = def
	}
}

// Log returns l, or slog.Default() when l is nil.
func Log(l *slog.Logger) *slog.Logger {
	if l == nil {
		return slog.Default()
	}
	return l
}
