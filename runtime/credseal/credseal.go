// Package credseal seals the upstream credentials the bridge keeps in its
// store (so that a refreshed token reaches every replica and survives a
// restart) with AES-256-GCM: a fresh random 96-bit nonce per record and the
// record's owner (principal and upstream) as additional authenticated data,
// so a sealed record copied to another principal's key does not open.
//
// A sealed value is: version byte (1), key id byte, nonce (12 bytes),
// ciphertext and tag. The key id lets an operator rotate keys: the new key
// seals, and the previous one, given as a decrypt-only key, still opens
// what it sealed until those records expire with their credentials.
//
// Make a key with `head -c 32 /dev/urandom | base64`.
package credseal

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"
)

// KeySize is the size of a key: AES-256.
const KeySize = 32

// EnvKey is the environment variable that holds a base64 key when no key
// file is given.
const EnvKey = "TASKSBRIDGE_CREDENTIAL_KEY"

const version = 1

// ErrOpen is every failure to open a sealed value: wrong key, another
// owner's record, a damaged or tampered value. The reasons are not told
// apart on purpose (nothing to learn for whoever tampered with it).
var ErrOpen = errors.New("credseal: the sealed credential cannot be opened (another key, another owner, or damaged)")

// Sealer seals with one key and opens with it or with a decrypt-only
// previous key. Safe for concurrent use.
type Sealer struct {
	seal  cipher.AEAD
	id    byte
	openK map[byte]cipher.AEAD
}

// New returns a Sealer that seals with key and also opens values sealed
// with any of previous (rotation). Each key is KeySize bytes. Keys are told
// apart by an id derived from their bytes; two keys with the same id are
// refused (make a new one).
func New(key []byte, previous ...[]byte) (*Sealer, error) {
	s := &Sealer{openK: map[byte]cipher.AEAD{}}
	for i, k := range append([][]byte{key}, previous...) {
		a, err := newAEAD(k)
		if err != nil {
			return nil, err
		}
		id := KeyID(k)
		if _, dup := s.openK[id]; dup {
			return nil, errors.New("credseal: two credential keys share a key id; generate a new key")
		}
		s.openK[id] = a
		if i == 0 {
			s.seal, s.id = a, id
		}
	}
	return s, nil
}

func newAEAD(k []byte) (cipher.AEAD, error) {
	if len(k) != KeySize {
		return nil, fmt.Errorf("credseal: a credential key is %d bytes, this one is %d (make one with: head -c 32 /dev/urandom | base64)", KeySize, len(k))
	}
	b, err := aes.NewCipher(k)
	if err != nil {
		return nil, fmt.Errorf("credseal: %w", err)
	}
	return cipher.NewGCM(b)
}

// KeyID is the key's id byte: the first byte of a domain-separated
// SHA-256 of the key (not the key, and too short to help guess it).
func KeyID(key []byte) byte {
	h := sha256.Sum256(append([]byte("tasksbridge/credseal/key-id\x00"), key...))
	return h[0]
}

// ad is the additional data: the owner of the record, length-prefixed so
// (principal, upstream) pairs cannot be confused.
func ad(principal, upstream string) []byte {
	return fmt.Appendf(nil, "tasksbridge/credseal/v1\x00%d:%s\x00%d:%s", len(principal), principal, len(upstream), upstream)
}

// Seal encrypts plaintext for (principal, upstream).
func (s *Sealer) Seal(plaintext []byte, principal, upstream string) ([]byte, error) {
	nonce := make([]byte, s.seal.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, fmt.Errorf("credseal: nonce: %w", err)
	}
	out := make([]byte, 0, 2+len(nonce)+len(plaintext)+s.seal.Overhead())
	out = append(out, version, s.id)
	out = append(out, nonce...)
	return s.seal.Seal(out, nonce, plaintext, ad(principal, upstream)), nil
}

// Open decrypts a value Seal made for (principal, upstream); ErrOpen
// otherwise.
func (s *Sealer) Open(sealed []byte, principal, upstream string) ([]byte, error) {
	if len(sealed) < 2 || sealed[0] != version {
		return nil, ErrOpen
	}
	a, ok := s.openK[sealed[1]]
	if !ok {
		return nil, ErrOpen
	}
	n := a.NonceSize()
	if len(sealed) < 2+n+a.Overhead() {
		return nil, ErrOpen
	}
	pt, err := a.Open(nil, sealed[2:2+n], sealed[2+n:], ad(principal, upstream))
	if err != nil {
		return nil, ErrOpen
	}
	return pt, nil
}

// ParseKey decodes a base64 key (standard or URL alphabet, padded or not;
// surrounding white space is ignored, so a file written by
// `head -c 32 /dev/urandom | base64 > FILE` works).
func ParseKey(text string) ([]byte, error) {
	t := strings.TrimSpace(text)
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(t); err == nil {
			if len(k) != KeySize {
				return nil, fmt.Errorf("credseal: the credential key decodes to %d bytes, want %d (make one with: head -c 32 /dev/urandom | base64)", len(k), KeySize)
			}
			return k, nil
		}
	}
	return nil, errors.New("credseal: the credential key is not base64 (make one with: head -c 32 /dev/urandom | base64)")
}

// Load returns the Sealer of the key in file (when file is not ""), else of
// the key in $TASKSBRIDGE_CREDENTIAL_KEY; nil and no error when neither is
// set (the bridge then keeps credentials in memory only). A second key (a
// second line of the file, or after a comma in the variable) is the
// previous key, decrypt-only (rotation). Errors never
// contain key material.
func Load(file string, getenv func(string) string) (*Sealer, error) {
	var text, from string
	switch {
	case file != "":
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("credseal: read the credential key file: %w", err)
		}
		text, from = string(b), "the credential key file "+file
	default:
		if getenv == nil {
			getenv = os.Getenv
		}
		text, from = getenv(EnvKey), EnvKey
		if strings.TrimSpace(text) == "" {
			return nil, nil
		}
	}
	var keys [][]byte
	for _, line := range strings.FieldsFunc(text, func(r rune) bool { return r == '\n' || r == ',' }) {
		if strings.TrimSpace(line) == "" {
			continue
		}
		k, err := ParseKey(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", from, err)
		}
		keys = append(keys, k)
	}
	switch len(keys) {
	case 0:
		return nil, fmt.Errorf("credseal: %s holds no key (make one with: head -c 32 /dev/urandom | base64)", from)
	case 1, 2:
	default:
		return nil, fmt.Errorf("credseal: %s holds %d keys; at most two (the current one, then the previous one)", from, len(keys))
	}
	s, err := New(keys[0], keys[1:]...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", from, err)
	}
	return s, nil
}
