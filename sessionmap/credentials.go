package sessionmap

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dgraph-io/badger/v4"
)

// Credential is one principal's credential for one upstream, as the store
// keeps it: Sealed is opaque to the store (runtime/credseal seals it with
// the principal and upstream as additional data), so a store dump never
// shows a token. The record expires with the credential.
type Credential struct {
	// Principal owns the record (Scope.Principal); never "".
	Principal string
	// Upstream names the upstream the credential is for (its URL or
	// command, as the faces name it); never "".
	Upstream string
	// Sealed is the sealed credential (at most MaxSealedCredential bytes).
	Sealed []byte
	// Expires is when the credential stops being valid, and when the
	// record goes. Required.
	Expires time.Time
	// WrittenAt is when the record was written (zero on Put: the store's
	// now). It breaks ties between credentials that expire together.
	WrittenAt time.Time
}

// MaxSealedCredential bounds Credential.Sealed.
const MaxSealedCredential = 16 << 10

// CredentialStore is the optional part of a Store that keeps upstream
// credentials, one record per (principal, upstream): the freshest
// credential a principal presented, so that a watcher or an outbox delivery
// on any replica, or after a restart, calls the upstream with it (a
// refreshed token reaches tasks created under the old one).
//
// It is a separate interface, not part of Store, so that Store
// implementations outside this module keep compiling; the faces
// type-assert it, and a store without it keeps credentials in each
// process's memory only. Memory, Badger and Redis implement it.
type CredentialStore interface {
	// PutCredential stores c unless the record already holds a fresher
	// one, atomically per (principal, upstream): fresher means a later
	// Expires, then a later (or equal) WrittenAt. It returns the record as
	// stored afterwards and whether c replaced it. A credential already
	// expired at the store's clock is not stored.
	PutCredential(ctx context.Context, c Credential) (Credential, bool, error)
	// GetCredential returns the record of (principal, upstream);
	// ErrNotFound when there is none or it has expired.
	GetCredential(ctx context.Context, principal, upstream string) (Credential, error)
}

var (
	_ CredentialStore = (*Memory)(nil)
	_ CredentialStore = (*Badger)(nil)
	_ CredentialStore = (*Redis)(nil)
)

// Fresher reports whether a is a fresher credential than b: it expires
// later, or at the same time and was written no earlier.
func (a Credential) Fresher(b Credential) bool {
	if !a.Expires.Equal(b.Expires) {
		return a.Expires.After(b.Expires)
	}
	return !a.WrittenAt.Before(b.WrittenAt)
}

// Expired reports whether the record has expired at now.
func (a Credential) Expired(now time.Time) bool { return !now.Before(a.Expires) }

func prepareCredential(c Credential, now time.Time) (Credential, error) {
	switch {
	case c.Principal == "":
		return c, invalid("a credential record needs a principal")
	case c.Upstream == "":
		return c, invalid("a credential record needs an upstream")
	case len(c.Sealed) == 0 || len(c.Sealed) > MaxSealedCredential:
		return c, invalid("a sealed credential is 1 to %d bytes, not %d", MaxSealedCredential, len(c.Sealed))
	case c.Expires.IsZero():
		return c, invalid("a credential record needs an expiry")
	}
	if c.WrittenAt.IsZero() {
		c.WrittenAt = now
	}
	c.Expires, c.WrittenAt = c.Expires.UTC(), c.WrittenAt.UTC()
	c.Sealed = bytes.Clone(c.Sealed)
	return c, nil
}

// putFreshest is the shared rule of PutCredential: next is what to store
// (when store is true) and what to return.
func putFreshest(cur Credential, have bool, c Credential, now time.Time) (next Credential, store bool) {
	if have && cur.Expired(now) {
		have = false
	}
	if c.Expired(now) {
		return cur, false
	}
	if have && !c.Fresher(cur) {
		return cur, false
	}
	return c, true
}

func cloneCredential(c Credential) Credential {
	c.Sealed = bytes.Clone(c.Sealed)
	return c
}

// credentialID is the record's key within a backend: a digest of the
// owner, so the key shows neither the upstream's URL nor anything of the
// credential.
func credentialID(principal, upstream string) [32]byte {
	return sha256.Sum256(fmt.Appendf(nil, "tasksbridge/sessionmap/credential\x00%d:%s\x00%s", len(principal), principal, upstream))
}

// Encoding of a record's value (Badger, Memory does not encode): version
// 1, Expires and WrittenAt in Unix nanoseconds, the owner (length-prefixed,
// so a record read back is checked against the key it was read under),
// then the sealed bytes.
func encodeCredential(c Credential) []byte {
	b := []byte{1}
	b = binary.BigEndian.AppendUint64(b, uint64(c.Expires.UnixNano()))
	b = binary.BigEndian.AppendUint64(b, uint64(c.WrittenAt.UnixNano()))
	for _, s := range []string{c.Principal, c.Upstream} {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return append(b, c.Sealed...)
}

func decodeCredential(b []byte) (Credential, error) {
	bad := fmt.Errorf("%w: credential record", ErrCorrupt)
	if len(b) < 17 || b[0] != 1 {
		return Credential{}, bad
	}
	c := Credential{
		Expires:   time.Unix(0, int64(binary.BigEndian.Uint64(b[1:9]))).UTC(),
		WrittenAt: time.Unix(0, int64(binary.BigEndian.Uint64(b[9:17]))).UTC(),
	}
	rest := b[17:]
	var owner [2]string
	for i := range owner {
		n, k := binary.Uvarint(rest)
		if k <= 0 || uint64(len(rest)-k) < n {
			return Credential{}, bad
		}
		owner[i] = string(rest[k : k+int(n)])
		rest = rest[k+int(n):]
	}
	c.Principal, c.Upstream = owner[0], owner[1]
	if len(rest) == 0 {
		return Credential{}, bad
	}
	c.Sealed = bytes.Clone(rest)
	return c, nil
}

// --- Memory ---

// credTable is Memory's credential records (its zero value is ready).
type credTable struct {
	mu sync.Mutex
	m  map[[32]byte]Credential
}

// PutCredential implements CredentialStore.
func (m *Memory) PutCredential(ctx context.Context, c Credential) (Credential, bool, error) {
	now := m.now()
	c, err := prepareCredential(c, now)
	if err != nil {
		return Credential{}, false, err
	}
	id := credentialID(c.Principal, c.Upstream)
	m.creds.mu.Lock()
	defer m.creds.mu.Unlock()
	for k, old := range m.creds.m {
		if old.Expired(now) {
			delete(m.creds.m, k) // records go with their credentials
		}
	}
	cur, have := m.creds.m[id]
	next, store := putFreshest(cur, have, c, now)
	if store {
		if m.creds.m == nil {
			m.creds.m = map[[32]byte]Credential{}
		}
		m.creds.m[id] = next
	}
	return cloneCredential(next), store, nil
}

// GetCredential implements CredentialStore.
func (m *Memory) GetCredential(ctx context.Context, principal, upstream string) (Credential, error) {
	id := credentialID(principal, upstream)
	m.creds.mu.Lock()
	defer m.creds.mu.Unlock()
	c, ok := m.creds.m[id]
	if !ok {
		return Credential{}, ErrNotFound
	}
	if c.Expired(m.now()) {
		delete(m.creds.m, id) // expires with its credential
		return Credential{}, ErrNotFound
	}
	return cloneCredential(c), nil
}

// --- Badger ---

// credentialKey is c/<digest of principal and upstream> (see the key
// layout in badger.go). The record carries a Badger TTL at the
// credential's expiry, so it goes by itself; reads check the expiry at the
// injected clock too.
func credentialKey(principal, upstream string) []byte {
	id := credentialID(principal, upstream)
	return append([]byte("c/"), id[:]...)
}

// PutCredential implements CredentialStore.
func (b *Badger) PutCredential(ctx context.Context, c Credential) (Credential, bool, error) {
	done, err := b.enter(ctx)
	if err != nil {
		return Credential{}, false, err
	}
	defer done()
	now := b.now()
	if c, err = prepareCredential(c, now); err != nil {
		return Credential{}, false, err
	}
	key := credentialKey(c.Principal, c.Upstream)
	var out Credential
	var stored bool
	err = b.update(ctx, func(txn *wtxn) error {
		cur, have, err := b.loadCredential(txn.Txn, key, c.Principal, c.Upstream)
		if err != nil {
			return err
		}
		out, stored = putFreshest(cur, have, c, now)
		if !stored {
			return nil
		}
		return setWithExpiry(txn, key, encodeCredential(out), b.physicalExpiry(out.Expires, now))
	})
	if err != nil {
		return Credential{}, false, fmt.Errorf("sessionmap: put credential: %w", err)
	}
	return cloneCredential(out), stored, nil
}

// loadCredential reads the record under key; a record that does not
// decode, or names another owner, counts as absent (it is overwritten).
func (b *Badger) loadCredential(txn *badger.Txn, key []byte, principal, upstream string) (Credential, bool, error) {
	v, err := getValue(txn, key)
	if errors.Is(err, badger.ErrKeyNotFound) {
		return Credential{}, false, nil
	}
	if err != nil {
		return Credential{}, false, err
	}
	c, err := decodeCredential(v)
	if err != nil || c.Principal != principal || c.Upstream != upstream {
		return Credential{}, false, nil
	}
	return c, true, nil
}

// GetCredential implements CredentialStore.
func (b *Badger) GetCredential(ctx context.Context, principal, upstream string) (Credential, error) {
	done, err := b.enter(ctx)
	if err != nil {
		return Credential{}, err
	}
	defer done()
	var c Credential
	var have bool
	err = b.view(func(txn *badger.Txn) error {
		c, have, err = b.loadCredential(txn, credentialKey(principal, upstream), principal, upstream)
		return err
	})
	if err != nil {
		return Credential{}, fmt.Errorf("sessionmap: get credential: %w", err)
	}
	if !have || c.Expired(b.now()) {
		return Credential{}, ErrNotFound
	}
	return c, nil
}
