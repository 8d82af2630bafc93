package router_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/router"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// A store written by an older bridge keeps the upstream's era as a session
// record owned by sessionmap.BridgePrincipal. A bridge started on it while
// the upstream is down reads that record once (a re-probe cannot answer
// now, and the remembered era is what lets stored tasks be served): it
// routes by it, moves it to the store's UpstreamEra and deletes the old
// record.
func TestOldUpstreamEraRecordMigrates(t *testing.T) {
	ctx := ctxT(t)
	up := newSwitchable(t, upstreamDown)
	st := sessionmap.NewMemory()
	t.Cleanup(func() { _ = st.Close() })
	sum := sha256.Sum256([]byte(up.url))
	old := sessionmap.Scope{Principal: sessionmap.BridgePrincipal, Session: "upstream-era-" + hex.EncodeToString(sum[:8])}
	if err := st.CreateSession(ctx, sessionmap.Session{ID: old.Session, Principal: old.Principal, Era: era.Legacy,
		InitializeParams: []byte(`{"upstream":"` + up.url + `","note":"the upstream's protocol era, remembered by the bridge"}`)}); err != nil {
		t.Fatal(err)
	}

	br := startBridge(t, router.Config{Upstream: up.url, UpstreamEra: "auto", Store: st})
	if got, _, err := st.UpstreamEra(ctx, up.url); err != nil || got != era.Legacy {
		t.Fatalf("UpstreamEra after start-up = %v, %v; want the old record's legacy", got, err)
	}
	if _, err := st.GetSession(ctx, old); !errors.Is(err, sessionmap.ErrNotFound) {
		t.Fatalf("the old era record is still there (%v); want it deleted once moved", err)
	}
	// Routed by the remembered era: a modern client reaches the modern face
	// (legacy upstream), which names the unreachable upstream, instead of
	// the router's "cannot determine its protocol era".
	mc := newModernClient(t, br.url, "modern-app")
	r := mc.call(ctx, "tools/list", nil)
	if r.Err == nil || strings.Contains(r.Err.Message, "cannot determine") || !strings.Contains(r.Err.Message, up.url) {
		t.Fatalf("tools/list while down: %+v; want the modern face's error naming the upstream", r.Err)
	}
	if code, body := get(t, br.base+"/readyz"); !strings.Contains(body, "era legacy") {
		t.Errorf("/readyz = %d %q; want the remembered legacy era", code, body)
	}

	// A second start finds the named record and no old one.
	startBridge(t, router.Config{Upstream: up.url, UpstreamEra: "auto", Store: st})
	all, err := st.AllSessions(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range all {
		if strings.HasPrefix(s.ID, "upstream-era-") {
			t.Errorf("session record %q after a second start", s.ID)
		}
	}
	if got, _, err := st.UpstreamEra(ctx, up.url); err != nil || got != era.Legacy {
		t.Fatalf("UpstreamEra after a second start = %v, %v", got, err)
	}
}
