// Package spool keeps the agent's durable state on disk: its identity and the results the server has
// not acknowledged yet. Every write is atomic and durable (temp file, fsync, rename, fsync dir), so a
// crash leaves either the old file or the new one, never a torn one.
package spool

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/google/uuid"
	"golang.org/x/sys/unix"
	"google.golang.org/protobuf/encoding/protojson"

	agentv1 "github.com/ctxbench/ctxbench/agent/internal/gen/ctxbench/agent/v1"
)

const (
	agentIDFile = "agent-id"
	resultsDir  = "results"
	rejectedDir = "rejected"
	// quarantineDir holds spooled results that cannot be decoded (a disk error, a hand edit): set aside
	// once for a human to inspect instead of being re-read on every connect.
	quarantineDir = "quarantine"
	tmpPrefix     = ".tmp-"
)

// Spool is a directory holding agent-id and results/<result_id>.json. Safe for concurrent use.
type Spool struct {
	dir string
	mu  sync.Mutex
}

// Open creates the spool directory (and results/) when missing.
func Open(dir string) (*Spool, error) {
	if err := os.MkdirAll(filepath.Join(dir, resultsDir), 0o700); err != nil {
		return nil, fmt.Errorf("open spool %s: %w", dir, err)
	}
	return &Spool{dir: dir}, nil
}

// Lock takes an exclusive lock on the spool so that two agents never share one (they would share an
// identity and delete each other's results), and removes temp files a crash left behind. The lock
// lasts until release is called or the process exits.
func (s *Spool) Lock() (release func(), err error) {
	path := filepath.Join(s.dir, "lock")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open spool lock: %w", err)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("spool %s is in use by another agent", s.dir)
		}
		return nil, fmt.Errorf("lock spool %s: %w", s.dir, err)
	}
	for _, d := range []string{s.dir, filepath.Join(s.dir, resultsDir)} {
		stale, _ := filepath.Glob(filepath.Join(d, tmpPrefix+"*"))
		for _, p := range stale {
			_ = os.Remove(p)
		}
	}
	return func() {
		_ = unix.Flock(int(f.Fd()), unix.LOCK_UN)
		f.Close()
	}, nil
}

// Dir is the spool directory.
func (s *Spool) Dir() string { return s.dir }

// AgentID returns the agent's identity, generating and storing a UUID the first time.
func (s *Spool) AgentID() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := filepath.Join(s.dir, agentIDFile)
	b, err := os.ReadFile(path)
	if err == nil {
		id := strings.TrimSpace(string(b))
		if _, perr := uuid.Parse(id); perr != nil {
			return "", fmt.Errorf("read agent id %s: not a UUID: %q", path, id)
		}
		return id, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read agent id: %w", err)
	}
	id := uuid.NewString()
	if err := writeFileAtomic(s.dir, agentIDFile, []byte(id+"\n")); err != nil {
		return "", fmt.Errorf("store agent id: %w", err)
	}
	return id, nil
}

// ResultPath is where a result id is stored; "" when the id is not a UUID (never a path outside the spool).
func (s *Spool) ResultPath(resultID string) string {
	if _, err := uuid.Parse(resultID); err != nil {
		return ""
	}
	return filepath.Join(s.dir, resultsDir, resultID+".json")
}

// checkedPath is ResultPath, or an error naming what was being done (verb) when the id is not a UUID.
func (s *Spool) checkedPath(verb, resultID string) (string, error) {
	path := s.ResultPath(resultID)
	if path == "" {
		return "", fmt.Errorf("%s: result id %q is not a UUID", verb, resultID)
	}
	return path, nil
}

// Put stores a result durably. It returns only once the result is on disk.
func (s *Spool) Put(r *agentv1.ResultReport) error {
	if _, err := s.checkedPath("spool result", r.GetResultId()); err != nil {
		return err
	}
	b, err := protojson.Marshal(r)
	if err != nil {
		return fmt.Errorf("encode result %s: %w", r.GetResultId(), err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := writeFileAtomic(filepath.Join(s.dir, resultsDir), r.GetResultId()+".json", b); err != nil {
		return fmt.Errorf("spool result %s: %w", r.GetResultId(), err)
	}
	return nil
}

// Delete removes an acknowledged result. Unknown ids are not an error (acks may repeat).
func (s *Spool) Delete(resultID string) error {
	return s.locked("delete result", resultID, func(path string) error {
		if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return syncDir(filepath.Dir(path))
	})
}

// Reject moves a result the server refused for good (Reject message) to rejected/<id>.json: kept for
// a human to inspect, no longer re-sent. Unknown ids are not an error.
func (s *Spool) Reject(resultID string) error {
	return s.locked("reject result", resultID, func(path string) error {
		dir := filepath.Join(s.dir, rejectedDir)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		if err := os.Rename(path, filepath.Join(dir, resultID+".json")); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if err := syncDir(dir); err != nil {
			return err
		}
		return syncDir(filepath.Dir(path))
	})
}

// locked runs f on a result's file (its path from a checked id) under the spool's lock, the way every
// change to a stored result is made; f's error comes back naming verb and the id.
func (s *Spool) locked(verb, resultID string, f func(path string) error) error {
	path, err := s.checkedPath(verb, resultID)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := f(path); err != nil {
		return fmt.Errorf("%s %s: %w", verb, resultID, err)
	}
	return nil
}

// IDs lists the stored result ids, sorted.
func (s *Spool) IDs() ([]string, error) {
	entries, err := os.ReadDir(filepath.Join(s.dir, resultsDir))
	if err != nil {
		return nil, fmt.Errorf("list spool: %w", err)
	}
	var ids []string
	for _, e := range entries {
		name := e.Name()
		id, ok := strings.CutSuffix(name, ".json")
		if !ok || strings.HasPrefix(name, tmpPrefix) || !e.Type().IsRegular() {
			continue
		}
		if _, err := uuid.Parse(id); err != nil {
			continue
		}
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids, nil
}

// ErrQuarantined is wrapped by Get's error for a result file it could not decode and moved to
// quarantine/ beside results/; the file is not listed or read again.
var ErrQuarantined = errors.New("moved to quarantine")

// Get reads one stored result. A missing result returns an error wrapping os.ErrNotExist; one that
// cannot be decoded is moved to quarantine/ and the error wraps ErrQuarantined.
func (s *Spool) Get(resultID string) (*agentv1.ResultReport, error) {
	path, err := s.checkedPath("read result", resultID)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read result %s: %w", resultID, err)
	}
	r, err := decode(b)
	if err != nil {
		if qerr := s.quarantine(path); qerr != nil {
			return nil, fmt.Errorf("decode result %s: %w (and %w)", path, err, qerr)
		}
		return nil, fmt.Errorf("decode result %s: %w (%w: %s)", path, err, ErrQuarantined,
			filepath.Join(s.dir, quarantineDir))
	}
	return r, nil
}

// read is Get without the quarantine (ByItem only looks: the send loop sets a bad file aside and says so).
func (s *Spool) read(resultID string) (*agentv1.ResultReport, error) {
	b, err := os.ReadFile(s.ResultPath(resultID))
	if err != nil {
		return nil, err
	}
	return decode(b)
}

func decode(b []byte) (*agentv1.ResultReport, error) {
	r := &agentv1.ResultReport{}
	if err := protojson.Unmarshal(b, r); err != nil {
		return nil, err
	}
	return r, nil
}

// quarantine moves an undecodable result file to quarantine/, keeping its name.
func (s *Spool) quarantine(path string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir := filepath.Join(s.dir, quarantineDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("quarantine %s: %w", path, err)
	}
	if err := os.Rename(path, filepath.Join(dir, filepath.Base(path))); err != nil {
		if errors.Is(err, os.ErrNotExist) { // acknowledged meanwhile
			return nil
		}
		return fmt.Errorf("quarantine %s: %w", path, err)
	}
	if err := syncDir(dir); err != nil {
		return err
	}
	return syncDir(filepath.Dir(path))
}

// ByItem returns a stored result for the item, or nil when there is none.
func (s *Spool) ByItem(itemID string) (*agentv1.ResultReport, error) {
	ids, err := s.IDs()
	if err != nil {
		return nil, err
	}
	for _, id := range ids {
		r, err := s.read(id)
		if err != nil {
			continue // acknowledged meanwhile, or unreadable: not this item's result
		}
		if r.GetItemId() == itemID {
			return r, nil
		}
	}
	return nil, nil
}

// writeFileAtomic writes dir/name via a temp file: write, fsync, rename, fsync dir.
func writeFileAtomic(dir, name string, data []byte) error {
	f, err := os.CreateTemp(dir, tmpPrefix+name+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	ok := false
	defer func() {
		if !ok {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	ok = true
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("fsync %s: %w", dir, err)
	}
	return nil
}
