package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// RunCredentials runs the sessionmap.CredentialStore rules against f's
// stores: round trip and durability, freshest wins (by expiry, then by
// write time, atomically), expiry with the credential, owner isolation and
// validation. A store that does not implement CredentialStore fails.
func RunCredentials(t *testing.T, f Factory) {
	tests := []struct {
		name string
		fn   func(*testing.T, *credEnv)
	}{
		{"RoundTripAndReopen", testCredRoundTrip},
		{"FreshestWins", testCredFreshest},
		{"ExpiresWithCredential", testCredExpiry},
		{"OwnersIsolated", testCredIsolation},
		{"Validation", testCredValidation},
		{"ConcurrentPutsFreshestWins", testCredConcurrent},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := NewClock()
			open := f(t, clk.Now)
			e := &credEnv{env: env{t: t, clock: clk, open: open, ctx: context.Background()}}
			e.s = open()
			t.Cleanup(func() { _ = e.s.Close() })
			tc.fn(t, e)
		})
	}
}

type credEnv struct{ env }

func (e *credEnv) cs() sessionmap.CredentialStore {
	e.t.Helper()
	cs, ok := e.s.(sessionmap.CredentialStore)
	if !ok {
		e.t.Fatalf("%T does not implement sessionmap.CredentialStore", e.s)
	}
	return cs
}

func (e *credEnv) put(c sessionmap.Credential) (sessionmap.Credential, bool) {
	e.t.Helper()
	got, stored, err := e.cs().PutCredential(e.ctx, c)
	if err != nil {
		e.t.Fatalf("PutCredential: %v", err)
	}
	return got, stored
}

func (e *credEnv) get(p, u string) (sessionmap.Credential, error) {
	return e.cs().GetCredential(e.ctx, p, u)
}

func (e *credEnv) mustGet(p, u string) sessionmap.Credential {
	e.t.Helper()
	c, err := e.get(p, u)
	if err != nil {
		e.t.Fatalf("GetCredential(%q, %q): %v", p, u, err)
	}
	return c
}

const credUp = "https://upstream.example/mcp"

func cred(p string, sealed string, expires, written time.Time) sessionmap.Credential {
	return sessionmap.Credential{Principal: p, Upstream: credUp, Sealed: []byte(sealed), Expires: expires, WrittenAt: written}
}

func sameCred(t *testing.T, want, got sessionmap.Credential) {
	t.Helper()
	if got.Principal != want.Principal || got.Upstream != want.Upstream || !bytes.Equal(got.Sealed, want.Sealed) ||
		!got.Expires.Equal(want.Expires) || !got.WrittenAt.Equal(want.WrittenAt) {
		t.Fatalf("credential = %+v, want %+v", got, want)
	}
}

func testCredRoundTrip(t *testing.T, e *credEnv) {
	now := e.clock.Now()
	if _, err := e.get("p1", credUp); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatalf("empty store: %v, want ErrNotFound", err)
	}
	c := cred("p1", "sealed-A", now.Add(time.Hour), time.Time{})
	got, stored := e.put(c)
	if !stored {
		t.Fatal("first put not stored")
	}
	if !got.WrittenAt.Equal(now) {
		t.Fatalf("WrittenAt = %v, want the store's now %v", got.WrittenAt, now)
	}
	c.WrittenAt = now
	sameCred(t, c, got)
	sameCred(t, c, e.mustGet("p1", credUp))
	e.reopen()
	sameCred(t, c, e.mustGet("p1", credUp))
}

func testCredFreshest(t *testing.T, e *credEnv) {
	now := e.clock.Now()
	a := cred("p1", "A", now.Add(time.Hour), now)
	e.put(a)
	// An older credential (earlier expiry) never replaces a fresher one,
	// even written later.
	older := cred("p1", "old", now.Add(30*time.Minute), now.Add(time.Second))
	if got, stored := e.put(older); stored {
		t.Fatal("a credential expiring earlier replaced a fresher one")
	} else {
		sameCred(t, a, got)
	}
	sameCred(t, a, e.mustGet("p1", credUp))
	// Same expiry: the later write wins, an earlier write does not.
	later := cred("p1", "A2", a.Expires, now.Add(2*time.Second))
	if _, stored := e.put(later); !stored {
		t.Fatal("same expiry, later write: not stored")
	}
	earlier := cred("p1", "A0", a.Expires, now.Add(time.Second))
	if _, stored := e.put(earlier); stored {
		t.Fatal("same expiry, earlier write replaced a later one")
	}
	sameCred(t, later, e.mustGet("p1", credUp))
	// A later expiry wins.
	b := cred("p1", "B", now.Add(2*time.Hour), now.Add(time.Millisecond))
	if _, stored := e.put(b); !stored {
		t.Fatal("a fresher credential was not stored")
	}
	sameCred(t, b, e.mustGet("p1", credUp))
	e.reopen()
	sameCred(t, b, e.mustGet("p1", credUp))
}

func testCredExpiry(t *testing.T, e *credEnv) {
	now := e.clock.Now()
	c := cred("p1", "A", now.Add(time.Minute), now)
	e.put(c)
	e.clock.Advance(59 * time.Second)
	sameCred(t, c, e.mustGet("p1", credUp))
	e.clock.Advance(time.Second)
	if _, err := e.get("p1", credUp); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatalf("at its expiry: %v, want ErrNotFound", err)
	}
	// An expired record no longer counts as fresher: anything live replaces it.
	d := cred("p1", "D", e.clock.Now().Add(10*time.Second), e.clock.Now())
	if _, stored := e.put(d); !stored {
		t.Fatal("a live credential did not replace an expired one")
	}
	sameCred(t, d, e.mustGet("p1", credUp))
	// An already expired credential is not stored.
	if _, stored := e.put(cred("p2", "X", e.clock.Now(), time.Time{})); stored {
		t.Fatal("an expired credential was stored")
	}
	if _, err := e.get("p2", credUp); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatalf("expired put: %v, want ErrNotFound", err)
	}
}

func testCredIsolation(t *testing.T, e *credEnv) {
	now := e.clock.Now()
	a := cred("alice", "A", now.Add(time.Hour), now)
	e.put(a)
	for _, o := range []struct{ p, u string }{{"bob", credUp}, {"alice", credUp + "/other"}, {"", credUp}, {"alic", "e" + credUp}} {
		if _, err := e.get(o.p, o.u); !errors.Is(err, sessionmap.ErrNotFound) {
			t.Fatalf("GetCredential(%q, %q) = %v, want ErrNotFound", o.p, o.u, err)
		}
	}
	b := cred("bob", "B", now.Add(time.Minute), now)
	e.put(b)
	sameCred(t, a, e.mustGet("alice", credUp))
	sameCred(t, b, e.mustGet("bob", credUp))
}

func testCredValidation(t *testing.T, e *credEnv) {
	now := e.clock.Now()
	for _, c := range []sessionmap.Credential{
		{Upstream: credUp, Sealed: []byte("x"), Expires: now.Add(time.Hour)},
		{Principal: "p", Sealed: []byte("x"), Expires: now.Add(time.Hour)},
		{Principal: "p", Upstream: credUp, Expires: now.Add(time.Hour)},
		{Principal: "p", Upstream: credUp, Sealed: make([]byte, sessionmap.MaxSealedCredential+1), Expires: now.Add(time.Hour)},
		{Principal: "p", Upstream: credUp, Sealed: []byte("x")},
	} {
		if _, _, err := e.cs().PutCredential(e.ctx, c); !errors.Is(err, sessionmap.ErrInvalidArgument) {
			t.Errorf("PutCredential(%+v) = %v, want ErrInvalidArgument", c, err)
		}
	}
}

func testCredConcurrent(t *testing.T, e *credEnv) {
	now := e.clock.Now()
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Expiries are a permutation, so exactly one is the freshest.
			exp := now.Add(time.Hour + time.Duration((i*7)%n)*time.Second)
			if _, _, err := e.cs().PutCredential(e.ctx, cred("p1", fmt.Sprintf("v%d", (i*7)%n), exp, now)); err != nil {
				t.Errorf("PutCredential: %v", err)
			}
		}()
	}
	wg.Wait()
	got := e.mustGet("p1", credUp)
	if string(got.Sealed) != fmt.Sprintf("v%d", n-1) || !got.Expires.Equal(now.Add(time.Hour+(n-1)*time.Second)) {
		t.Fatalf("after concurrent puts: %q expiring %v; want the freshest, v%d", got.Sealed, got.Expires, n-1)
	}
}
