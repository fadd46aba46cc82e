package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"
)

// Result is what the CLI reads of a result (GET /runs/{id}/results, the events' `result`).
type Result struct {
	ID        string   `json:"id"`
	RunID     string   `json:"run_id"`
	MachineID string   `json:"machine_id"`
	Kernel    string   `json:"kernel"`
	ParamsKey string   `json:"params_key"`
	Unit      string   `json:"unit"`
	N         int      `json:"n"`
	Median    *float64 `json:"median"`
	Figure    *float64 `json:"figure"` // the compared figure (the median, or p5 of short samples)
	CILow     *float64 `json:"ci_low"`
	CIHigh    *float64 `json:"ci_high"`
	CIMethod  *string  `json:"ci_method"`
	CV        *float64 `json:"cv"`
}

// runEvent is one event of a run's stream: a Run (`run`, or `end` when end is set), a Result, or the
// error the stream gave up with.
type runEvent struct {
	runID  string
	run    *Run
	end    bool
	result *Result
	err    error
}

const (
	// streamIdle: the server sends a keepalive every 15 s; this long without a byte, the stream is dead.
	streamIdle = 60 * time.Second
	// streamRetries: reconnects in a row that got nothing before the CLI gives up on a run's stream.
	streamRetries = 5
)

// streamRun follows GET /runs/{id}/events until `end`, reconnecting when the stream drops (the server
// closes a reader that falls behind; a new stream starts from the run's current state).
func streamRun(ctx context.Context, c *Client, runID string, out chan<- runEvent) {
	failures := 0
	for {
		got, ended, err := readStream(ctx, c, runID, out)
		if ended || ctx.Err() != nil {
			return
		}
		if got {
			failures = 0
		}
		failures++
		var ae *APIError
		if (errors.As(err, &ae) && ae.exitCode() == ExitUsage) || failures > streamRetries {
			if err == nil {
				err = serverErrorf("the events of run %s keep ending before the run does", runID)
			}
			send(ctx, out, runEvent{runID: runID, err: err})
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(failures) * 500 * time.Millisecond):
		}
	}
}

func send(ctx context.Context, out chan<- runEvent, ev runEvent) bool {
	select {
	case out <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}

// readStream reads one connection's events; got: it delivered at least one event.
func readStream(ctx context.Context, c *Client, runID string, out chan<- runEvent) (got, ended bool, err error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	path := "/runs/" + runID + "/events"
	resp, err := c.send(ctx, "GET", path, nil, nil, "text/event-stream")
	if err != nil {
		return false, false, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 400 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		return false, false, &APIError{"GET", apiPrefix + path, resp.StatusCode, detail(data, resp.Status)}
	}
	idle := time.AfterFunc(streamIdle, cancel)
	defer idle.Stop()
	rd := bufio.NewReaderSize(resp.Body, 64<<10)
	var event string
	var data strings.Builder
	for {
		line, err := rd.ReadString('\n')
		idle.Reset(streamIdle)
		if err != nil {
			return got, false, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case line == "":
			if event != "" || data.Len() > 0 {
				ev, ok := parseEvent(runID, event, data.String())
				if ok {
					if !send(ctx, out, ev) {
						return got, false, ctx.Err()
					}
					got = true
					if ev.end {
						return got, true, nil
					}
				}
			}
			event = ""
			data.Reset()
		case strings.HasPrefix(line, ":"): // a comment: keepalive, or "fell behind" before a close
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
}

// parseEvent decodes one event; ok is false for kinds the CLI does not use (or cannot read).
func parseEvent(runID, event, data string) (runEvent, bool) {
	switch event {
	case "run", "end":
		var r Run
		if json.Unmarshal([]byte(data), &r) != nil {
			return runEvent{}, false
		}
		return runEvent{runID: runID, run: &r, end: event == "end"}, true
	case "result":
		var r Result
		if json.Unmarshal([]byte(data), &r) != nil {
			return runEvent{}, false
		}
		return runEvent{runID: runID, result: &r}, true
	}
	return runEvent{}, false
}
