package storetest

import (
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// testPrincipalKeyMigration: a store keeps a principal key that survives a
// reopen; the same credential gives different principals under different
// keys and neither shows the credential; and records written under the
// plain (unkeyed) hash, before principals were keyed, stay reachable by id
// for the caller whose keyed principal it is, and for nobody else.
func testPrincipalKeyMigration(t *testing.T, e *env) {
	pk, ok := e.s.(sessionmap.PrincipalKeyer)
	if !ok {
		t.Fatalf("%T keeps no principal key", e.s)
	}
	key := append([]byte(nil), pk.PrincipalKey()...)
	if len(key) != 32 {
		t.Fatalf("principal key of %d bytes", len(key))
	}
	const cred = "Bearer hunter2"
	plain := sessionmap.PrincipalFromAuthorization(cred)
	keyed := sessionmap.KeyPrincipal(key, plain)
	other := make([]byte, 32)
	if keyed == plain || keyed == sessionmap.KeyPrincipal(other, plain) || strings.Contains(keyed, "hunter2") ||
		sessionmap.KeyPrincipal(key, "") != "" || sessionmap.KeyPrincipal(key, keyed) != keyed {
		t.Fatalf("keyed principal %q (plain %q)", keyed, plain)
	}

	// Written before keying: the plain hash.
	old := e.create(sessionmap.Scope{Principal: plain, Session: "s-old"})
	if err := e.s.CreateSession(e.ctx, sessionmap.Session{ID: "s-old", Principal: plain, Era: era.Legacy}); err != nil {
		t.Fatal(err)
	}
	e.reopen()
	pk = e.s.(sessionmap.PrincipalKeyer)
	if string(pk.PrincipalKey()) != string(key) {
		t.Fatal("the principal key changed across a reopen")
	}
	me := sessionmap.Scope{Principal: keyed, Session: "s-new"}
	if got := e.get(me, old.ID); got.ID != old.ID {
		t.Fatalf("old task under the keyed principal: %+v", got)
	}
	if _, err := e.s.PinCancel(e.ctx, me, old.ID); err != nil {
		t.Fatalf("cancel an old task under the keyed principal: %v", err)
	}
	if _, err := e.s.GetSession(e.ctx, sessionmap.Scope{Principal: keyed, Session: "s-old"}); err != nil {
		t.Fatalf("old session under the keyed principal: %v", err)
	}
	// Nobody else: another credential's keyed principal, the plain hash of
	// another credential, a principal keyed with another key.
	for _, p := range []string{
		sessionmap.KeyPrincipal(key, sessionmap.PrincipalFromAuthorization("Bearer other")),
		sessionmap.PrincipalFromAuthorization("Bearer other"),
		sessionmap.KeyPrincipal(other, plain),
	} {
		_, err := e.s.GetTask(e.ctx, sessionmap.Scope{Principal: p, Session: "s-x"}, old.ID)
		sameNotFound(t, "old task under another principal", err)
		_, err = e.s.GetSession(e.ctx, sessionmap.Scope{Principal: p, Session: "s-old"})
		sameNotFound(t, "old session under another principal", err)
	}
	// New tasks are keyed, and listed under the keyed principal.
	fresh := e.create(me)
	p, err := e.s.ListTasks(e.ctx, me, 10, "")
	if err != nil || len(p.Tasks) != 1 || p.Tasks[0].ID != fresh.ID {
		t.Fatalf("list under the keyed principal = %v, %v", ids(p.Tasks), err)
	}
}
