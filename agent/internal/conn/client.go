// Package conn keeps the agent's one Connect stream to the server: dial, Hello, Welcome, dispatch of
// server messages, heartbeats, re-sending spooled results, and reconnecting forever with jittered
// exponential backoff.
package conn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/keepalive"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/ctxbench/ctxbench/agent/internal/defaults"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"github.com/ctxbench/ctxbench/agent/internal/spool"
)

// Defaults for Options.
const (
	DefaultMinBackoff        = 500 * time.Millisecond
	DefaultMaxBackoff        = 60 * time.Second
	DefaultStableAfter       = 30 * time.Second
	DefaultHeartbeatInterval = 10 * time.Second
	outboxDepth              = 64
	// Progress held longer than this would no longer be live, whatever a server asks.
	maxProgressIntervalMs = 60_000
)

// Handler receives the server's work messages (the runner).
type Handler interface {
	StartRun(*agentv1.StartRun)
	CancelRun(*agentv1.CancelRun)
	CurrentRunID() string
}

// Options configure Run.
type Options struct {
	Server string // HOST:PORT
	// EnrollToken is traded for a machine credential by Enroll while Credential is empty: a join token
	// (JoinToken) or the server's multi-use agent token.
	EnrollToken string
	JoinToken   bool
	// Credential is the machine credential from an earlier Enroll ("" before the first one).
	Credential string
	// SaveCredential stores a new credential durably before the agent uses it.
	SaveCredential func(credential string) error
	// EnrollKey returns the state dir's enrollment key (spool.EnrollKey), the same on every retry, so a
	// retry whose first answer was lost still gets a credential. Nil: Enroll sends none.
	EnrollKey    func() (string, error)
	TLS          TLSOptions
	Hostname     string
	AgentID      string
	AgentVersion string
	Name         string
	Labels       map[string]string // the host's labels (config.Labels), sent in every Hello
	Kernels      []*agentv1.KernelSpec
	Facts        func() *agentv1.MachineFacts // gathered afresh for every Hello
	Spool        *spool.Spool
	Outbox       *Outbox
	Handler      Handler
	Log          *slog.Logger

	MinBackoff  time.Duration // first reconnect wait; DefaultMinBackoff if zero
	MaxBackoff  time.Duration // cap, also the wait after a refusal; DefaultMaxBackoff if zero
	StableAfter time.Duration // a stream that lived this long resets the backoff; DefaultStableAfter if zero
}

// Run connects and reconnects until ctx ends, then returns nil. It returns an error only when the
// gRPC client cannot be created at all (a malformed address).
//
// A refusal by the server (UNAUTHENTICATED, PERMISSION_DENIED; see Retryable) does not stop the agent:
// it logs an ERROR naming the cause at every attempt and retries only every MaxBackoff, so a token
// fixed on the server side is picked up without touching the host, and a wrong token is obvious in the
// agent's log without flooding the server.
func Run(ctx context.Context, o Options) error {
	defaults.Positive(&o.MinBackoff, DefaultMinBackoff)
	defaults.Positive(&o.MaxBackoff, DefaultMaxBackoff)
	defaults.Positive(&o.StableAfter, DefaultStableAfter)
	o.Log = defaults.Log(o.Log)
	creds, err := TransportCredentials(o.TLS)
	if err != nil {
		return err
	}
	dialOpts := []grpc.DialOption{
		grpc.WithTransportCredentials(creds),
		grpc.WithUserAgent("ctxbench-agent/" + o.AgentVersion),
		// Finds a dead server behind NAT within ~40 s even when nothing is written. The ctxbench
		// server permits pings every 10 s (grpc.http2.min_ping_interval_without_data_ms).
		grpc.WithKeepaliveParams(keepalive.ClientParameters{Time: 30 * time.Second, Timeout: 10 * time.Second, PermitWithoutStream: true}),
		// One connection attempt may take this long. The channel's own reconnect backoff is grpc-go's
		// default and never runs: see attempt.
		grpc.WithConnectParams(grpc.ConnectParams{Backoff: backoff.DefaultConfig, MinConnectTimeout: 10 * time.Second}),
	}
	// A malformed address is the only error grpc.NewClient returns: refuse it once, up front.
	cc, err := grpc.NewClient(o.Server, dialOpts...)
	if err != nil {
		return fmt.Errorf("create grpc client for %s: %w", o.Server, err)
	}
	cc.Close()
	c := &client{o: o, log: o.Log.With("server", o.Server), cred: o.Credential}

	// The agent's one reconnect backoff (jittered, capped at MaxBackoff, reset by a stream that lived
	// StableAfter). Every attempt dials a fresh channel and closes it when the attempt ends, so a
	// failed connection fails the attempt at once (no RPC waits for ready) and grpc-go's per-channel
	// reconnect backoff never stacks on this one.
	bo := Backoff{Initial: o.MinBackoff, Max: o.MaxBackoff}
	for {
		start := time.Now()
		welcomed, enrolling, err := c.attempt(ctx, dialOpts)
		if ctx.Err() != nil {
			return nil
		}
		if welcomed && time.Since(start) >= o.StableAfter {
			bo.Reset()
		}
		wait, stop := c.ended(err, enrolling, bo.Next())
		if stop != nil {
			return stop
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// ended logs why an attempt ended and returns the wait before the next one: wait (the backoff's), or
// MaxBackoff after a refusal; a non-nil error ends Run (a refused join token, a revoked machine).
func (c *client) ended(err error, enrolling bool, wait time.Duration) (time.Duration, error) {
	switch {
	case isRevoked(err):
		// Only a fresh state dir and a new join token bring this host back (as a new machine).
		c.log.Error("MACHINE REVOKED: "+status.Convert(err).Message()+"; the agent exits (status 77) and"+
			" is not restarted; to bring the host back, enroll it with a fresh state dir and a new join token",
			"code", status.Code(err).String())
		return 0, &RevokedError{Err: err}
	case enrolling && !Retryable(err) && c.o.JoinToken:
		// As buildkite-agent does when registration is refused: exit non-zero. A used, expired or
		// unknown join token never becomes valid again, so retrying only hides the cause; the
		// service manager's restart policy (or the operator, with a fresh token) takes it from here.
		c.log.Error("ENROLLMENT REFUSED: "+status.Convert(err).Message()+"; create a new join token",
			"code", status.Code(err).String())
		return 0, &EnrollRefusedError{Err: err}
	case enrolling && !Retryable(err):
		wait = c.o.MaxBackoff
		c.log.Error("ENROLLMENT REFUSED: "+status.Convert(err).Message()+"; check the agent token (--token-file / CTXBENCH_AGENT_TOKEN)",
			"code", status.Code(err).String(), "retry_in", wait)
	case isTLSError(err):
		c.log.Error("cannot verify the server's TLS certificate: "+tlsReason(err),
			"retry_in", wait.Round(time.Millisecond))
	case Retryable(err):
		if after, ok := pushbackOf(err); ok {
			// The server said when (spread over the agents it turned away): that, capped, not the backoff.
			wait = min(after, c.o.MaxBackoff)
		}
		c.log.Warn("stream to server ended; reconnecting", "err", errText(err), "retry_in", wait.Round(time.Millisecond))
	default:
		wait = c.o.MaxBackoff
		c.log.Error("SERVER REFUSED THIS AGENT: "+status.Convert(err).Message(),
			"code", status.Code(err).String(), "err", errText(err), "retry_in", wait)
		if status.Code(err) == codes.Unauthenticated && c.o.EnrollToken != "" {
			// The server does not know this credential (a fresh database): enroll again.
			c.cred = ""
		}
	}
	return wait, nil
}

// attempt dials a channel for one enrollment (when there is no credential yet) and one session, and
// closes it. welcomed says the server answered Hello; enrolling says err is enrollment's.
func (c *client) attempt(ctx context.Context, dialOpts []grpc.DialOption) (welcomed, enrolling bool, err error) {
	cc, err := grpc.NewClient(c.o.Server, dialOpts...)
	if err != nil {
		return false, false, fmt.Errorf("create grpc client for %s: %w", c.o.Server, err)
	}
	defer cc.Close()
	c.api = agentv1.NewAgentServiceClient(cc)
	if c.cred == "" {
		if err := c.enroll(ctx); err != nil {
			return false, true, err
		}
	}
	welcomed, err = c.session(ctx)
	return welcomed, false, err
}

func errText(err error) string {
	if err == nil {
		return "closed by server"
	}
	if s, ok := status.FromError(err); ok {
		return s.Code().String() + ": " + s.Message()
	}
	return err.Error()
}

type client struct {
	o    Options
	log  *slog.Logger
	api  agentv1.AgentServiceClient
	cred string
}

// session runs one Connect stream to its end. welcomed says the server answered Hello.
func (c *client) session(ctx context.Context) (welcomed bool, err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Attach the outbox before listing the spool: a result spooled after the listing is then sent
	// through the outbox, and one spooled before is in the list; none falls between.
	s := &session{ch: make(chan *agentv1.ConnectRequest, outboxDepth), done: sctx.Done()}
	c.o.Outbox.attach(s)
	defer c.o.Outbox.detach(s)

	stream, err := c.api.Connect(sctx, grpc.PerRPCCredentials(bearer(c.cred)))
	if err != nil {
		return false, err
	}
	pending, err := c.o.Spool.IDs()
	if err != nil {
		c.log.Error("cannot list spooled results; they will be re-sent on a later connect", "err", err)
	}
	hello := &agentv1.Hello{
		AgentId:          c.o.AgentID,
		AgentVersion:     c.o.AgentVersion,
		Name:             c.o.Name,
		Facts:            c.o.Facts(),
		Kernels:          c.o.Kernels,
		PendingResultIds: pending,
		CurrentRunId:     c.o.Handler.CurrentRunID(),
		StartRunParts:    true,
		BatchedAcks:      true,
		Labels:           c.o.Labels,
	}
	if err := stream.Send(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_Hello{Hello: hello}}); err != nil {
		return false, streamErr(stream, err)
	}
	first, err := stream.Recv()
	if err != nil {
		return false, withPushback(err, stream.Trailer())
	}
	w := first.GetWelcome()
	if w == nil {
		return false, fmt.Errorf("server's first message is %T, not Welcome", first.GetMsg())
	}
	interval := time.Duration(w.GetHeartbeatIntervalS()) * time.Second
	defaults.Positive(&interval, DefaultHeartbeatInterval)
	progress := time.Duration(min(w.GetProgressIntervalMs(), maxProgressIntervalMs)) * time.Millisecond
	c.o.Outbox.welcomed(s, progress)
	c.log.Info("connected", "machine_id", w.GetMachineId(), "server_version", w.GetServerVersion(),
		"heartbeat", interval, "progress_every", progress, "kernels", len(c.o.Kernels), "pending_results", len(pending),
		"current_run", hello.GetCurrentRunId())

	senderDone := make(chan struct{})
	go func() {
		defer close(senderDone)
		c.sendLoop(sctx, cancel, stream, s, pending, interval)
	}()
	err = c.recvLoop(stream)
	cancel()
	<-senderDone
	return true, err
}

// streamErr turns a failed Send into the stream's real status (Send reports only io.EOF).
func streamErr(stream agentv1.AgentService_ConnectClient, sendErr error) error {
	if _, err := stream.Recv(); err != nil {
		return err
	}
	return sendErr
}

func (c *client) recvLoop(stream agentv1.AgentService_ConnectClient) error {
	var parts startParts
	for {
		m, err := stream.Recv()
		if err != nil {
			return err
		}
		switch x := m.GetMsg().(type) {
		case *agentv1.ConnectResponse_StartRun:
			run, dropped := parts.add(x.StartRun)
			if dropped {
				c.log.Warn("StartRun part ignored: no first part of its run on this stream, or the run past "+
					"the agent's budget of items and bytes; the server re-sends open items", "run", x.StartRun.GetRunId())
			}
			if run == nil {
				continue
			}
			c.log.Info("StartRun received", "run", run.GetRunId(), "items", len(run.GetItems()))
			c.o.Handler.StartRun(run)
		case *agentv1.ConnectResponse_CancelRun:
			c.log.Info("CancelRun received", "run", x.CancelRun.GetRunId())
			c.o.Handler.CancelRun(x.CancelRun)
		case *agentv1.ConnectResponse_ResultAck:
			// its result, and the results stored with it (this agent's Hello sets batched_acks)
			for _, id := range append([]string{x.ResultAck.GetResultId()}, x.ResultAck.GetMoreResultIds()...) {
				if err := c.o.Spool.Delete(id); err != nil {
					c.log.Error("cannot delete acknowledged result from the spool", "result", id, "err", err)
				} else {
					c.log.Debug("result acknowledged", "result", id)
				}
			}
		case *agentv1.ConnectResponse_Reject:
			rj := x.Reject
			c.log.Error("server rejected a message from this agent", "code", codes.Code(rj.GetCode()).String(),
				"reason", rj.GetMessage(), "result", rj.GetResultId(), "run", rj.GetRunId())
			// INVALID_ARGUMENT: this result can never be stored, so stop re-sending it (a copy stays in
			// rejected/). Anything else (PERMISSION_DENIED...) may be the server's state, not the
			// result's: keep it and re-send after the next Hello.
			if id := rj.GetResultId(); id != "" && codes.Code(rj.GetCode()) == codes.InvalidArgument {
				if err := c.o.Spool.Reject(id); err != nil {
					c.log.Error("cannot set the rejected result aside; it will be re-sent", "result", id, "err", err)
				} else {
					c.log.Warn("rejected result removed from the spool (a copy is in rejected/); it will not be re-sent", "result", id)
				}
			}
		case *agentv1.ConnectResponse_Welcome:
			c.log.Debug("repeated Welcome ignored")
		default:
			c.log.Warn("unknown message from server ignored", "type", fmt.Sprintf("%T", m.GetMsg()))
		}
	}
}

// sendLoop is the only goroutine that calls stream.Send after Hello. It re-sends the spooled results
// first, then forwards the outbox and sends heartbeats. A failed Send ends the session.
func (c *client) sendLoop(ctx context.Context, cancel context.CancelFunc, stream agentv1.AgentService_ConnectClient,
	s *session, pending []string, interval time.Duration) {
	send := func(m *agentv1.ConnectRequest) bool {
		if err := stream.Send(m); err != nil {
			c.log.Debug("send failed; ending stream", "err", err)
			cancel()
			return false
		}
		return true
	}
	resent := 0
	for _, id := range pending {
		if ctx.Err() != nil {
			return
		}
		r, err := c.o.Spool.Get(id)
		if err != nil {
			switch {
			case errors.Is(err, spool.ErrQuarantined): // logged once: the file is no longer listed
				c.log.Error("spooled result cannot be decoded; set aside, it will not be re-sent",
					"result", id, "err", err)
			case !errors.Is(err, os.ErrNotExist):
				c.log.Error("cannot read spooled result; left in place", "result", id, "err", err)
			}
			continue // acknowledged meanwhile
		}
		if !send(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_ResultReport{ResultReport: r}}) {
			return
		}
		resent++
	}
	if resent > 0 {
		c.log.Info("re-sent spooled results", "count", resent)
	}
	ticker := time.NewTicker(interval)
	defer ticker.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case m := <-s.ch:
			if !send(m) {
				return
			}
		case <-ticker.C:
			hb := &agentv1.Heartbeat{SentAt: timestamppb.Now(), CurrentRunId: c.o.Handler.CurrentRunID()}
			if !send(&agentv1.ConnectRequest{Msg: &agentv1.ConnectRequest_Heartbeat{Heartbeat: hb}}) {
				return
			}
		}
	}
}

// bearer attaches `authorization: Bearer <token>` to every call.
type bearer string

func (b bearer) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

// RequireTransportSecurity is false so that --insecure (behind a TLS-terminating proxy) can work;
// TLS is the default and plaintext needs both sides to opt out.
func (b bearer) RequireTransportSecurity() bool { return false }
