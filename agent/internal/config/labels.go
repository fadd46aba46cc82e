package config

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// MaxLabels is the most labels an agent may carry (the server's machines/labels.py MAX_LABELS).
const MaxLabels = 32

// The server's label shape (machines/labels.py, after Kubernetes' labels): a key of 1-63 letters, digits,
// '-', '_', '.', '/', beginning and ending with a letter or digit; a value of the same, or empty.
var (
	labelKey   = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?$`)
	labelValue = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9._/-]{0,61}[A-Za-z0-9])?)?$`)
)

// labelFlag collects repeated --label key=value flags, in order.
type labelFlag []string

func (l *labelFlag) String() string { return strings.Join(*l, ",") }

func (l *labelFlag) Set(v string) error {
	*l = append(*l, v)
	return nil
}

// parseLabels turns key=value arguments into labels; an error names the first bad one. A key given twice
// keeps its last value (flags come after the environment's, so a flag overrides it).
func parseLabels(args []string) (map[string]string, error) {
	out := map[string]string{}
	for _, arg := range args {
		key, value, ok := strings.Cut(arg, "=")
		if !ok {
			return nil, usagef("invalid label %q (--label, CTXBENCH_AGENT_LABELS): want key=value", arg)
		}
		if !labelKey.MatchString(key) {
			return nil, usagef("invalid label %q (--label, CTXBENCH_AGENT_LABELS): the key must be 1-63 letters, digits, '-', '_', '.' or '/', beginning and ending with a letter or digit", arg)
		}
		if !labelValue.MatchString(value) {
			return nil, usagef("invalid label %q (--label, CTXBENCH_AGENT_LABELS): the value must be empty or 1-63 letters, digits, '-', '_', '.' or '/', beginning and ending with a letter or digit", arg)
		}
		out[key] = value
	}
	if len(out) > MaxLabels {
		return nil, usagef("too many labels: %d, at most %d", len(out), MaxLabels)
	}
	return out, nil
}

// splitLabelsEnv splits CTXBENCH_AGENT_LABELS ("k=v,k2=v2") into key=value arguments; blanks are skipped.
func splitLabelsEnv(v string) []string {
	var out []string
	for _, part := range strings.Split(v, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// LabelArgs are the labels as sorted key=value strings (for the start-up log line).
func LabelArgs(labels map[string]string) []string {
	out := make([]string, 0, len(labels))
	for k, v := range labels {
		out = append(out, fmt.Sprintf("%s=%s", k, v))
	}
	sort.Strings(out)
	return out
}
