package conn

import (
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// maxAssembledItems bounds a run assembled from parts (the server's own budget is far below it), so a
// stream that never sends the last part cannot grow the agent's memory without end.
const maxAssembledItems = 1_000_000

// startParts assembles a StartRun the server sent in parts (StartRun.more, then messages with
// continued set): the run reaches the runner only whole. One per stream: parts never span streams (the
// server re-sends a run's open items after a reconnect).
type startParts struct {
	run *agentv1.StartRun
}

// add takes one StartRun message and returns the run it completes, or nil while parts are missing, or
// with dropped set when the message cannot belong to a run being assembled (logged by the caller).
func (p *startParts) add(m *agentv1.StartRun) (run *agentv1.StartRun, dropped bool) {
	if m.GetContinued() {
		if p.run == nil || p.run.GetRunId() != m.GetRunId() ||
			len(p.run.GetItems())+len(m.GetItems()) > maxAssembledItems {
			p.run = nil
			return nil, true
		}
		p.run.Items = append(p.run.Items, m.GetItems()...)
	} else {
		// A first part, or a whole run: any half-assembled one is abandoned (the server moved on).
		p.run = &agentv1.StartRun{RunId: m.GetRunId(), Items: append([]*agentv1.RunItem(nil), m.GetItems()...)}
	}
	if m.GetMore() {
		return nil, false
	}
	run, p.run = p.run, nil
	return run, false
}
