package sessionmap

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Principals are hashes of credentials (PrincipalFrom*), and they are
// written to the store, the audit log and the logs. A plain SHA-256 of a
// weak credential (a short API key, a Basic password) can be guessed offline
// from any of them. So the bridge keys them: KeyPrincipal turns the plain
// hash into HMAC-SHA-256 under a per-deployment secret, the store's
// principal key.
//
// The key is generated once and kept in the store, like the cursor secret
// (SET NX on Redis, so every replica sharing the store uses the same key and
// a task is its owner's on every replica; with no configuration to get
// wrong). Whoever holds the audit log, a log line or a metric, but not the
// store, can no longer test guesses. Whoever holds a copy of the whole store
// holds the key too: protect the store (Redis AUTH and TLS, the data
// directory's permissions) as you protect the credentials.
//
// Migration: records written before keying hold the plain hash. A keyed
// caller still reaches them by id (tasks/get, tasks/result, tasks/cancel,
// its session): the store, which has the key, accepts a record whose plain
// principal keys to the caller's (OwnedBy). They are not listed under the
// keyed principal (a list index is per principal) and keep their plain
// principal until they expire; tasks created after the upgrade are keyed.

const (
	principalKeyLen = 32
	keyedDomain     = "tasksbridge/principal/v2/keyed\x00"
	// keyedMark starts every keyed principal, so a keyed principal never
	// equals a plain one (64 hex digits).
	keyedMark = "k"
)

// PrincipalKeyer is a store that keeps a principal key (every store of this
// package).
type PrincipalKeyer interface {
	// PrincipalKey returns the store's principal key (32 bytes); the same
	// for every process sharing the store.
	PrincipalKey() []byte
}

// KeyPrincipal returns the keyed principal for a plain one (a PrincipalFrom*
// hash): "k" and the hex HMAC-SHA-256 under key. "" stays "" (no
// credential), and so does a principal that is keyed already.
func KeyPrincipal(key []byte, plain string) string {
	if plain == "" || isKeyedPrincipal(plain) || len(key) == 0 {
		return plain
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte(keyedDomain))
	m.Write([]byte(plain))
	return keyedMark + hex.EncodeToString(m.Sum(nil))
}

func isKeyedPrincipal(p string) bool { return len(p) == 1+2*sha256.Size && p[:1] == keyedMark }

// isPlainPrincipal: a PrincipalFrom* hash (64 lowercase hex digits).
func isPlainPrincipal(p string) bool {
	if len(p) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func newPrincipalKey() []byte {
	k := make([]byte, principalKeyLen)
	_, _ = rand.Read(k)
	return k
}

// principalMatches: the record's principal is the caller's, or (migration)
// the record holds the plain hash whose keyed form is the caller's.
func principalMatches(key []byte, caller, record string) bool {
	if caller == record {
		return true
	}
	return isKeyedPrincipal(caller) && isPlainPrincipal(record) && hmac.Equal([]byte(KeyPrincipal(key, record)), []byte(caller))
}

// ownedBy is Scope.Owns with the migration rule for records written before
// principals were keyed.
func ownedBy(key []byte, sc Scope, rec Scope) bool {
	if sc.Principal == "" || rec.Principal == "" {
		return sc.Key() == rec.Key()
	}
	return principalMatches(key, sc.Principal, rec.Principal)
}

// sessionVisibleKeyed is sessionVisible with the same migration rule.
func sessionVisibleKeyed(key []byte, s Session, sc Scope, now time.Time) bool {
	return s.ID == sc.Session && principalMatches(key, sc.Principal, s.Principal) && !sessionExpired(s, now)
}
