package main

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc"

	"github.com/ctxbench/ctxbench/agent/internal/conn"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// floorAgents open one bare Connect stream each (TLS as the agent dials it, no enrollment, no Hello) to
// a server that only acknowledges (server/benchmarks/grpc_floor.py --serve), each holding a run of
// `items` items made up here: the floor under the same messages the replay sends a real server.
func floorAgents(ctx context.Context, f replayFlags) ([]*loadAgent, error) {
	creds, err := conn.TransportCredentials(conn.TLSOptions{CAFile: f.caFile})
	if err != nil {
		return nil, err
	}
	agents := make([]*loadAgent, f.agents)
	for i := range agents {
		// A channel (a connection) per agent, as from separate hosts.
		cc, err := grpc.NewClient(f.server, grpc.WithTransportCredentials(creds))
		if err != nil {
			return nil, err
		}
		stream, err := agentv1.NewAgentServiceClient(cc).Connect(ctx)
		if err != nil {
			return nil, err
		}
		run := &agentv1.StartRun{RunId: fmt.Sprintf("floor-%d", i)}
		for j := range f.items {
			run.Items = append(run.Items, &agentv1.RunItem{ItemId: fmt.Sprintf("item-%d", j), KernelId: "k"})
		}
		agents[i] = &loadAgent{stream: stream, run: run}
	}
	return agents, nil
}

// sendFloor sends on the bare stream while another goroutine counts the acks.
func (a *loadAgent) sendFloor(items [][]*agentv1.ConnectRequest, pace func(k int)) error {
	acked := make(chan error, 1)
	go func() {
		for n := 0; n < len(items); {
			m, err := a.stream.Recv()
			if err != nil {
				acked <- err
				return
			}
			if m.GetResultAck() != nil {
				n++
			}
		}
		acked <- nil
	}()
	for k, msgs := range items {
		pace(k)
		for _, m := range msgs {
			if err := a.stream.Send(m); err != nil {
				return err
			}
		}
	}
	if err := <-acked; err != nil {
		return errors.Join(errors.New("floor stream ended before every ack"), err)
	}
	return a.stream.CloseSend()
}
