package credseal

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func key(t *testing.T) []byte {
	t.Helper()
	k := make([]byte, KeySize)
	if _, err := rand.Read(k); err != nil {
		t.Fatal(err)
	}
	return k
}

// keyBesides is a new random key whose id is not other's: ids are one byte,
// so two random keys share one once in 256 draws, which New refuses (the
// operator makes another key).
func keyBesides(t *testing.T, other []byte) []byte {
	t.Helper()
	for {
		if k := key(t); KeyID(k) != KeyID(other) {
			return k
		}
	}
}

func TestRoundTrip(t *testing.T) {
	s, err := New(key(t))
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("Bearer eyJhbGciOi.secret-token")
	a, err := s.Seal(secret, "p1", "https://up.example/mcp")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.Seal(secret, "p1", "https://up.example/mcp")
	if bytes.Equal(a, b) {
		t.Fatal("two seals of one value are equal: the nonce is not fresh")
	}
	if bytes.Contains(a, secret) || bytes.Contains(a, []byte("secret-token")) {
		t.Fatal("the sealed value contains the plaintext")
	}
	got, err := s.Open(a, "p1", "https://up.example/mcp")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("Open = %q, %v", got, err)
	}
}

func TestWrongKeyOwnerTamper(t *testing.T) {
	s, _ := New(key(t))
	other, _ := New(key(t))
	sealed, _ := s.Seal([]byte("Bearer A"), "alice", "up")
	if _, err := other.Open(sealed, "alice", "up"); !errors.Is(err, ErrOpen) {
		t.Errorf("wrong key: %v, want ErrOpen", err)
	}
	for _, o := range []struct{ p, u string }{{"bob", "up"}, {"alice", "up2"}, {"alic", "eup"}, {"", "aliceup"}} {
		if _, err := s.Open(sealed, o.p, o.u); !errors.Is(err, ErrOpen) {
			t.Errorf("owner %q/%q opened alice's record: %v", o.p, o.u, err)
		}
	}
	for i := range sealed {
		bad := bytes.Clone(sealed)
		bad[i] ^= 0x01
		if _, err := s.Open(bad, "alice", "up"); !errors.Is(err, ErrOpen) {
			t.Fatalf("flipping byte %d: %v, want ErrOpen", i, err)
		}
	}
	for _, n := range []int{0, 1, 2, 13, len(sealed) - 1} {
		if _, err := s.Open(sealed[:n], "alice", "up"); !errors.Is(err, ErrOpen) {
			t.Fatalf("truncated to %d: %v, want ErrOpen", n, err)
		}
	}
}

func TestRotation(t *testing.T) {
	oldK := key(t)
	newK := keyBesides(t, oldK)
	old, _ := New(oldK)
	sealedOld, _ := old.Seal([]byte("v-old"), "p", "u")
	rot, err := New(newK, oldK)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rot.Open(sealedOld, "p", "u"); err != nil || string(got) != "v-old" {
		t.Fatalf("rotated sealer cannot open the previous key's record: %q, %v", got, err)
	}
	sealedNew, _ := rot.Seal([]byte("v-new"), "p", "u")
	if sealedNew[1] != KeyID(newK) {
		t.Fatal("the rotated sealer does not seal with the new key")
	}
	if _, err := old.Open(sealedNew, "p", "u"); !errors.Is(err, ErrOpen) {
		t.Fatalf("the previous key opened a record of the new one: %v", err)
	}
}

func TestLoad(t *testing.T) {
	k := key(t)
	b64 := base64.StdEncoding.EncodeToString(k)
	env := func(v string) func(string) string {
		return func(name string) string {
			if name == EnvKey {
				return v
			}
			return ""
		}
	}
	if s, err := Load("", env("")); s != nil || err != nil {
		t.Fatalf("no key: %v, %v; want nil, nil", s, err)
	}
	s, err := Load("", env(b64+"\n"))
	if err != nil || s == nil {
		t.Fatalf("env key: %v", err)
	}
	dir := t.TempDir()
	f := filepath.Join(dir, "key")
	prev := keyBesides(t, k)
	if err := os.WriteFile(f, []byte(b64+"\n"+base64.StdEncoding.EncodeToString(prev)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	fs, err := Load(f, env("ignored"))
	if err != nil {
		t.Fatalf("file key: %v", err)
	}
	sealed, _ := fs.Seal([]byte("x"), "p", "u")
	if got, err := s.Open(sealed, "p", "u"); err != nil || string(got) != "x" {
		t.Fatalf("env and file sealers disagree: %v", err)
	}
	for _, bad := range []string{"not base64!!", base64.StdEncoding.EncodeToString(k[:16]), "a,b,c"} {
		_, err := Load("", env(bad))
		if err == nil {
			t.Fatalf("key %q accepted", bad)
		}
		if strings.Contains(err.Error(), bad) && bad != "a,b,c" {
			t.Fatalf("the error repeats the key: %v", err)
		}
		if !strings.Contains(err.Error(), "head -c 32 /dev/urandom | base64") && !strings.Contains(err.Error(), "at most two") {
			t.Fatalf("the error does not say how to make a key: %v", err)
		}
	}
	if _, err := Load(filepath.Join(dir, "missing"), nil); err == nil {
		t.Fatal("a missing key file is accepted")
	}
}
