package conn

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

// EnrollRefusedError ends Run when the server refused a join token: it cannot become valid again.
type EnrollRefusedError struct{ Err error }

func (e *EnrollRefusedError) Error() string {
	return "enrollment refused: " + status.Convert(e.Err).Message()
}

func (e *EnrollRefusedError) Unwrap() error { return e.Err }

// ExitRevoked is the agent's exit status when the server revoked this machine (sysexits' EX_NOPERM).
// The systemd unit lists it in RestartPreventExitStatus=: a revoked machine never becomes valid again
// (an admin cannot approve it back), so restarting would only knock on the server every 30 s forever.
const ExitRevoked = 77

// RevokedError ends Run when the server says this machine has been revoked (or revoked and deleted,
// its id retired): PERMISSION_DENIED whose message says "has been revoked", the server's wording in
// docs/architecture.md ("Enrollment and TLS").
type RevokedError struct{ Err error }

func (e *RevokedError) Error() string { return "machine revoked: " + status.Convert(e.Err).Message() }

func (e *RevokedError) Unwrap() error { return e.Err }

func isRevoked(err error) bool {
	return status.Code(err) == codes.PermissionDenied && strings.Contains(status.Convert(err).Message(), "has been revoked")
}

// enrollTimeout is how long an Enroll waits for its answer. A fleet enrolling at once waits in the
// server's queue (the server queues an Enroll only if its turn comes within half of this, else tells it
// when to come back): two minutes lets a queue of a few hundred wait instead of being refused.
const enrollTimeout = 2 * time.Minute

// enroll trades the enrollment token for this machine's credential and stores it before using it.
func (c *client) enroll(ctx context.Context) error {
	if c.o.EnrollToken == "" {
		return status.Error(codes.Unauthenticated, "no machine credential and no token to enroll with")
	}
	var key string
	if c.o.EnrollKey != nil {
		// Made before the first Enroll is sent and reused by every retry: the server may have stored
		// the machine under it even when its answer never arrived.
		k, err := c.o.EnrollKey()
		if err != nil {
			return fmt.Errorf("load the enrollment key: %w", err)
		}
		key = k
	}
	ectx, cancel := context.WithTimeout(ctx, enrollTimeout)
	defer cancel()
	var trailer metadata.MD
	resp, err := c.api.Enroll(ectx, &agentv1.EnrollRequest{
		JoinToken:         c.o.EnrollToken,
		ProposedMachineId: c.o.AgentID,
		Name:              c.o.Name,
		Hostname:          c.o.Hostname,
		AgentVersion:      c.o.AgentVersion,
		EnrollmentKey:     key,
	}, grpc.Trailer(&trailer))
	if err != nil {
		return withPushback(err, trailer)
	}
	if resp.GetMachineId() != c.o.AgentID {
		return status.Errorf(codes.FailedPrecondition, "server enrolled machine %q, not this agent's id %q", resp.GetMachineId(), c.o.AgentID)
	}
	if err := c.o.SaveCredential(resp.GetMachineCredential()); err != nil {
		return fmt.Errorf("store the machine credential: %w", err)
	}
	c.cred = resp.GetMachineCredential()
	c.log.Info("enrolled", "machine_id", resp.GetMachineId(), "pending_approval", resp.GetPending())
	return nil
}

// isTLSError says the connection failed in the TLS handshake (wrong CA, fingerprint, name).
func isTLSError(err error) bool {
	if err == nil {
		return false
	}
	m := err.Error()
	return strings.Contains(m, "authentication handshake failed") || strings.Contains(m, ErrFingerprintMismatch.Error())
}

// tlsReason is the handshake's own words, without gRPC's wrapping.
func tlsReason(err error) string {
	m := status.Convert(err).Message()
	if i := strings.Index(m, "authentication handshake failed: "); i >= 0 {
		m = strings.TrimSuffix(m[i+len("authentication handshake failed: "):], `"`)
	}
	return m
}
