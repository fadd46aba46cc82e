package agent

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ctxbench/ctxbench/agent/internal/config"
	"github.com/ctxbench/ctxbench/agent/internal/conn"
	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// testPKI is a CA and a server certificate for 127.0.0.1 and localhost signed by it, as the ctxbench
// server generates them.
type testPKI struct {
	caPEM         []byte
	caFingerprint string
	server        tls.Certificate
}

func newPKI(t *testing.T) testPKI {
	t.Helper()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	leafTmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		DNSNames: []string{"localhost"}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	leafDER, err := x509.CreateCertificate(rand.Reader, leafTmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(caDER)
	return testPKI{
		caPEM:         pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		caFingerprint: "sha256:" + hex.EncodeToString(sum[:]),
		// The chain as the server sends it: leaf, then the CA (pinning finds the CA in it).
		server: tls.Certificate{Certificate: [][]byte{leafDER, caDER}, PrivateKey: key},
	}
}

func TestEnrollsOnceThenConnectsWithItsCredential(t *testing.T) {
	spoolDir := filepath.Join(t.TempDir(), "state")
	srv := startServer(t, token, spoolDir)
	kernels := newKernelsDir(t)
	a := startAgent(t, srv.addr, token, kernels, spoolDir)
	sc := srv.accept(t)
	cred := filepath.Join(spoolDir, "machine-credential")
	st, err := os.Stat(cred)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("credential file: %v, %v; want mode 0600", st, err)
	}
	if b, _ := os.ReadFile(cred); strings.TrimSpace(string(b)) != "cred-"+sc.hello.GetAgentId() {
		t.Errorf("credential file holds %q", b)
	}
	if strings.Contains(a.log.String(), "cred-") || strings.Contains(a.log.String(), token) {
		t.Errorf("a secret reached the log:\n%s", a.log.String())
	}
	a.stop()

	// Restarted without any token: the stored credential is enough, and no second Enroll happens.
	startAgentWith(t, config.Config{Server: srv.addr, Kernels: kernels, Spool: spoolDir, Insecure: true}, nil)
	if again := srv.accept(t).hello.GetAgentId(); again != sc.hello.GetAgentId() {
		t.Fatalf("agent id after restart = %s, want %s", again, sc.hello.GetAgentId())
	}
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.enrolled != 1 {
		t.Errorf("enrolled %d times, want 1", srv.enrolled)
	}
}

func TestUsedJoinTokenExitsWithTheReason(t *testing.T) {
	srv := startServer(t, token, t.TempDir())
	srv.singleUse = true
	kernels := newKernelsDir(t)
	startAgentWith(t, config.Config{Server: srv.addr, Token: token, JoinToken: true, Kernels: kernels, Spool: t.TempDir(), Insecure: true}, nil)
	srv.accept(t)

	exited := make(chan error, 1)
	b := startAgentWith(t, config.Config{Server: srv.addr, Token: token, JoinToken: true, Kernels: kernels, Spool: t.TempDir(), Insecure: true}, exited)
	select {
	case err := <-exited:
		var refused *conn.EnrollRefusedError
		if !errors.As(err, &refused) {
			t.Fatalf("Run returned %v, want an EnrollRefusedError", err)
		}
	case <-time.After(waitLong):
		t.Fatal("agent with a used join token did not stop")
	}
	if log := b.log.String(); !strings.Contains(log, "ENROLLMENT REFUSED: join token already used") {
		t.Errorf("log does not give the reason:\n%s", log)
	}
}

func TestRevokedMachineExitsWithStatus77(t *testing.T) {
	// Issue 26, item 4: the server ends the stream of a revoked machine (and refuses its credential
	// from then on); the agent stops instead of retrying every 60 s forever, with the exit status the
	// systemd unit's RestartPreventExitStatus= names.
	srv := startServer(t, token, t.TempDir())
	exited := make(chan error, 1)
	a := startAgentWith(t, config.Config{Server: srv.addr, Token: token, Kernels: newKernelsDir(t), Spool: t.TempDir(), Insecure: true}, exited)
	sc := srv.accept(t)
	sc.end <- status.Error(codes.PermissionDenied, "machine "+sc.hello.GetAgentId()+" has been revoked")
	select {
	case err := <-exited:
		var revoked *conn.RevokedError
		if !errors.As(err, &revoked) {
			t.Fatalf("Run returned %v, want a RevokedError", err)
		}
		if got := ExitStatus(err); got != 77 {
			t.Errorf("exit status %d, want 77", got)
		}
	case <-time.After(waitLong):
		t.Fatal("revoked agent did not stop")
	}
	if log := a.log.String(); !strings.Contains(log, "MACHINE REVOKED: machine "+sc.hello.GetAgentId()+" has been revoked") {
		t.Errorf("log does not give the reason:\n%s", log)
	}
	for err, want := range map[error]int{
		nil: 0,
		&conn.EnrollRefusedError{Err: status.Error(codes.Unauthenticated, "join token already used")}: 1,
		status.Error(codes.PermissionDenied, "credential belongs to another machine"):                 1,
	} {
		if got := ExitStatus(err); got != want {
			t.Errorf("ExitStatus(%v) = %d, want %d", err, got, want)
		}
	}
}

func TestTLSWithPinnedFingerprintOrCAFile(t *testing.T) {
	pki := newPKI(t)
	srv := startTLSServer(t, token, t.TempDir(), &pki.server)
	kernels := newKernelsDir(t)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pki.caPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []config.Config{
		{CAFingerprint: pki.caFingerprint},
		{CAFingerprint: strings.ToUpper(pki.caFingerprint[:7]) + pki.caFingerprint[7:]},
		{CAFile: caFile},
	} {
		cfg.Server, cfg.Token, cfg.Kernels, cfg.Spool = srv.addr, token, kernels, t.TempDir()
		a := startAgentWith(t, cfg, nil)
		srv.accept(t)
		a.stop()
	}
	// The server is dialled by a name of its certificate ("localhost"), as well as by IP above.
	_, port, _ := net.SplitHostPort(srv.addr)
	startAgentWith(t, config.Config{Server: "localhost:" + port, Token: token, Kernels: kernels, Spool: t.TempDir(),
		CAFingerprint: pki.caFingerprint}, nil)
	srv.accept(t)
}

func TestWrongFingerprintIsRefusedWithOneClearLine(t *testing.T) {
	pki := newPKI(t)
	srv := startTLSServer(t, token, t.TempDir(), &pki.server)
	want := "sha256:" + strings.Repeat("ab", 32)
	a := startAgentWith(t, config.Config{Server: srv.addr, Token: token, Kernels: newKernelsDir(t), Spool: t.TempDir(),
		CAFingerprint: want}, nil)
	line := "server CA fingerprint mismatch: got " + pki.caFingerprint + ", want " + want
	waitFor(t, "the mismatch in the log", func() bool { return strings.Count(a.log.String(), line) >= 2 })
	if srv.enrolled != 0 || srv.refused.Load() != 0 {
		t.Errorf("the agent reached the service through an unverified server")
	}
	for _, l := range strings.Split(a.log.String(), "\n") {
		if strings.Contains(l, "fingerprint mismatch") && !strings.Contains(l, "level=ERROR") {
			t.Errorf("mismatch not logged as an error: %s", l)
		}
	}
}

func TestScratchDirBoundsTheDirParameter(t *testing.T) {
	spoolDir := t.TempDir()
	srv := startServer(t, token, spoolDir)
	scratch := filepath.Join(t.TempDir(), "scratch")
	outside := t.TempDir()
	if err := os.Symlink(outside, filepath.Join(t.TempDir(), "x")); err != nil {
		t.Fatal(err)
	}
	// A symlink inside the scratch root that leads out of it.
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(scratch, "escape")); err != nil {
		t.Fatal(err)
	}
	startAgentWith(t, config.Config{Server: srv.addr, Token: token, Kernels: newKernelsDir(t), Spool: spoolDir, Insecure: true,
		ScratchDirs: []string{scratch}}, nil)
	sc := srv.accept(t)
	sc.startRun(t, "run-s",
		item("default", "fake.write", nil),
		item("inside", "fake.write", map[string]string{"dir": scratch + "/sub/../"}),
		item("etc", "fake.write", map[string]string{"dir": "/etc"}),
		item("missing", "fake.write", map[string]string{"dir": "/nonexistent/deeper"}),
		item("dotdot", "fake.write", map[string]string{"dir": scratch + "/../x"}),
		item("symlink", "fake.write", map[string]string{"dir": scratch + "/escape"}),
		item("relative", "fake.write", map[string]string{"dir": "scratch"}),
	)
	l := sc.collect(t, true, "run-s")
	for _, id := range []string{"default", "inside"} {
		r := l.results[id]
		if r.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_OK || r.GetParams()["dir"] != scratch {
			t.Errorf("item %s: %v dir=%q err=%q", id, r.GetStatus(), r.GetParams()["dir"], r.GetError())
		}
	}
	if _, err := os.Stat(filepath.Join(scratch, "fake-write.txt")); err != nil {
		t.Errorf("no scratch file: %v", err)
	}
	for _, id := range []string{"etc", "missing", "dotdot", "symlink", "relative"} {
		r := l.results[id]
		if r.GetStatus() != agentv1.ResultStatus_RESULT_STATUS_FAILED ||
			r.GetError() != "refused: kernel fake.write: dir must be under the agent's scratch directories" {
			t.Errorf("item %s: %v %q", id, r.GetStatus(), r.GetError())
		}
	}
	if _, err := os.Stat(filepath.Join(outside, "fake-write.txt")); err == nil {
		t.Errorf("a kernel wrote outside the scratch roots")
	}
	if st, err := os.Stat(filepath.Join(spoolDir, "scratch")); err == nil {
		t.Errorf("default scratch dir created although --scratch-dir was given: %v", st.Mode())
	}
}
