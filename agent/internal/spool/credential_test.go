package spool

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEnrollKeyIsCreatedOnceAndKeptPrivate(t *testing.T) {
	dir := t.TempDir()
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	key, err := s.EnrollKey()
	if err != nil {
		t.Fatal(err)
	}
	if raw, err := hex.DecodeString(key); err != nil || len(raw) != 32 {
		t.Fatalf("key is not 32 hex-encoded bytes (%d characters)", len(key))
	}
	st, err := os.Stat(filepath.Join(dir, EnrollKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	if mode := st.Mode().Perm(); mode != 0o600 {
		t.Fatalf("enrollment key file mode %o, want 600", mode)
	}
	// A restarted agent (a new Spool on the same dir) sends the same key.
	again, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if k, err := again.EnrollKey(); err != nil || k != key {
		t.Fatalf("second EnrollKey: err %v, same key %v", err, k == key)
	}
	// Saving the credential keeps the key: the server decides when it stops working.
	if err := again.SaveCredential("cxm_x"); err != nil {
		t.Fatal(err)
	}
	if k, err := again.EnrollKey(); err != nil || k != key {
		t.Fatalf("EnrollKey after SaveCredential: err %v, same key %v", err, k == key)
	}
	if other, err := Open(t.TempDir()); err != nil {
		t.Fatal(err)
	} else if k, _ := other.EnrollKey(); k == key {
		t.Fatal("two state dirs share an enrollment key")
	}
}

func TestEnrollKeyRefusesGarbage(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, EnrollKeyFile), []byte("secret-not-hex\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.EnrollKey(); err == nil {
		t.Fatal("a malformed key file was accepted")
	} else if strings.Contains(err.Error(), "secret-not-hex") {
		t.Fatalf("error shows the file's content: %v", err)
	}
}
