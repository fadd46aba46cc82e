package conn

import (
	"google.golang.org/protobuf/proto"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// A run assembled from parts is bounded in items and in bytes, so a stream that never sends the last
// part, or sends parts of big items, cannot grow the agent's memory without end. The server's runs are
// far below both: at most 1000 items, each parameter value at most 4096 characters.
const (
	maxAssembledItems = 1_000_000
	maxAssembledBytes = 64 << 20 // the parts' protobuf bytes together
)

// startParts assembles a StartRun the server sent in parts (StartRun.more, then messages with
// continued set): the run reaches the runner only whole. One per stream: parts never span streams (the
// server re-sends a run's open items after a reconnect).
type startParts struct {
	run   *agentv1.StartRun
	bytes int // the protobuf bytes of the parts assembled so far
}

// add takes one StartRun message and returns the run it completes, or nil while parts are missing, or
// with dropped set when the message cannot belong to a run being assembled or would take that run past
// its budget (logged by the caller; the half-assembled run is abandoned).
func (p *startParts) add(m *agentv1.StartRun) (run *agentv1.StartRun, dropped bool) {
	size := proto.Size(m)
	if m.GetContinued() {
		if p.run == nil || p.run.GetRunId() != m.GetRunId() ||
			len(p.run.GetItems())+len(m.GetItems()) > maxAssembledItems || p.bytes+size > maxAssembledBytes {
			p.run, p.bytes = nil, 0
			return nil, true
		}
		p.run.Items = append(p.run.Items, m.GetItems()...)
		p.bytes += size
	} else {
		// A first part, or a whole run: any half-assembled one is abandoned (the server moved on).
		p.run = &agentv1.StartRun{RunId: m.GetRunId(), Items: append([]*agentv1.RunItem(nil), m.GetItems()...)}
		p.bytes = size
	}
	if m.GetMore() {
		return nil, false
	}
	run, p.run, p.bytes = p.run, nil, 0
	return run, false
}
