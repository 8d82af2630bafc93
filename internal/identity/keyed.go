package identity

import (
	"context"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Keyed returns a Resolver whose principals are next's keyed with key
// (sessionmap.KeyPrincipal: HMAC-SHA-256 of the mode's plain hash under the
// store's principal key), for every mode alike, so a weak credential cannot
// be guessed offline from a principal in the audit log, a log line or the
// store. next nil is the authorization mode. An empty key returns next.
func Keyed(next Resolver, key []byte) Resolver {
	if next == nil {
		next = AuthorizationHeader{}
	}
	if len(key) == 0 {
		return next
	}
	return keyed{next: next, key: append([]byte(nil), key...)}
}

type keyed struct {
	next Resolver
	key  []byte
}

// Resolve implements Resolver.
func (k keyed) Resolve(ctx context.Context, req Request) (Principal, error) {
	p, err := k.next.Resolve(ctx, req)
	if err != nil {
		return p, err
	}
	p.ID = sessionmap.KeyPrincipal(k.key, p.ID)
	return p, nil
}
