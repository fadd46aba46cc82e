package spool

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CredentialFile is the machine credential's file name in the state dir (mode 0600).
const CredentialFile = "machine-credential"

// EnrollKeyFile is the enrollment key's file name in the state dir (mode 0600).
const EnrollKeyFile = "enrollment-key"

// enrollKeyBytes of randomness, stored and sent as hex.
const enrollKeyBytes = 32

// Credential returns the machine credential Enroll stored, or "" when the agent has not enrolled yet.
func (s *Spool) Credential() (string, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, CredentialFile))
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(b)), nil
}

// SaveCredential stores the machine credential atomically, mode 0600 (a crash leaves none or all of it).
func (s *Spool) SaveCredential(credential string) error {
	return writeFileAtomic(s.dir, CredentialFile, []byte(credential+"\n"))
}

// EnrollKey returns this state dir's enrollment key, generating and storing it (atomically, 0600) the
// first time. The agent sends it with every Enroll: a retry whose first answer was lost (the server
// stored the machine, the credential never arrived) is then recognised as this agent's own and gets a
// credential instead of "already enrolled". The file is kept after enrolling: the server stops
// accepting the key once the machine's first Hello is recorded, and until then it lets the agent enroll
// again when the server does not know the credential it saved (a late first try replaced it).
func (s *Spool) EnrollKey() (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	path := filepath.Join(s.dir, EnrollKeyFile)
	b, err := os.ReadFile(path)
	if err == nil {
		key := strings.TrimSpace(string(b))
		if raw, herr := hex.DecodeString(key); herr != nil || len(raw) != enrollKeyBytes {
			// Never the content: it is a secret.
			return "", fmt.Errorf("read enrollment key %s: not %d hex-encoded bytes", path, enrollKeyBytes)
		}
		return key, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("read enrollment key: %w", err)
	}
	raw := make([]byte, enrollKeyBytes)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("generate enrollment key: %w", err)
	}
	key := hex.EncodeToString(raw)
	if err := writeFileAtomic(s.dir, EnrollKeyFile, []byte(key+"\n")); err != nil {
		return "", fmt.Errorf("store enrollment key: %w", err)
	}
	return key, nil
}
