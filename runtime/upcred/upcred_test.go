package upcred

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/runtime/coord"
	"github.com/tasksbridge/tasksbridge/runtime/credseal"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func sealer(t *testing.T) *credseal.Sealer {
	t.Helper()
	k := make([]byte, credseal.KeySize)
	_, _ = rand.Read(k)
	s, err := credseal.New(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

const up = "https://upstream.example/mcp"

func TestObserveCurrentRefuse(t *testing.T) {
	clk := &clock{now: time.Now()}
	k := New(Config{Upstream: up, Clock: clk.Now, Logger: quiet()})
	ctx := context.Background()
	if _, ok := k.Current(ctx, "alice"); ok {
		t.Fatal("a credential for a principal never seen")
	}
	k.Observe(ctx, "alice", "Bearer A", clk.Now().Add(time.Minute))
	if v, ok := k.Current(ctx, "alice"); !ok || v != "Bearer A" {
		t.Fatalf("Current = %q, %v", v, ok)
	}
	// An older credential does not displace a fresher one.
	k.Observe(ctx, "alice", "Bearer OLD", clk.Now().Add(30*time.Second))
	if v, _ := k.Current(ctx, "alice"); v != "Bearer A" {
		t.Fatalf("an older credential won: %q", v)
	}
	k.Observe(ctx, "alice", "Bearer B", clk.Now().Add(2*time.Minute))
	if v, _ := k.Current(ctx, "alice"); v != "Bearer B" {
		t.Fatalf("Current after refresh = %q", v)
	}
	if _, ok := k.Current(ctx, "bob"); ok {
		t.Fatal("bob has alice's credential")
	}
	k.Refused("alice", "Bearer B")
	if _, ok := k.Current(ctx, "alice"); ok || !k.Exhausted("alice") {
		t.Fatal("a refused credential is still used")
	}
	// Presenting the same token again vouches for it.
	k.Observe(ctx, "alice", "Bearer B", time.Time{})
	if v, ok := k.Current(ctx, "alice"); !ok || v != "Bearer B" || k.Exhausted("alice") {
		t.Fatalf("after the client presented it again: %q, %v", v, ok)
	}
	clk.Advance(3 * time.Minute)
	if _, ok := k.Current(ctx, "alice"); ok || !k.Exhausted("alice") {
		t.Fatal("an expired credential is still used")
	}
}

// Two replicas on one store and one fan-out: a refresh on one reaches the
// other's exhausted principal at once (OnFresh), sealed in the store.
func TestReplicasShareThroughStore(t *testing.T) {
	ctx := context.Background()
	store := sessionmap.NewMemory()
	fan := coord.NewLocal(nil)
	seal := sealer(t)
	fresh := make(chan string, 4)
	a := New(Config{Upstream: up, Store: store, Sealer: seal, Fanout: fan, Logger: quiet()})
	b := New(Config{Upstream: up, Store: store, Sealer: seal, Fanout: fan, Logger: quiet(),
		OnFresh: func(p string) { fresh <- p }})
	for _, k := range []*Keeper{a, b} {
		if err := k.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(k.Close)
	}
	exp := time.Now().Add(time.Hour)
	a.Observe(ctx, "alice", "Bearer A", exp)
	if v, ok := b.Current(ctx, "alice"); !ok || v != "Bearer A" {
		t.Fatalf("replica b: %q, %v; want the stored credential", v, ok)
	}
	b.Refused("alice", "Bearer A")
	if _, ok := b.Current(ctx, "alice"); ok || !b.Exhausted("alice") {
		t.Fatal("replica b still uses a refused credential")
	}
	a.Observe(ctx, "alice", "Bearer B", exp.Add(time.Hour))
	select {
	case p := <-fresh:
		if p != "alice" {
			t.Fatalf("OnFresh(%q)", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("replica b was not told of the refresh")
	}
	if v, ok := b.Current(ctx, "alice"); !ok || v != "Bearer B" {
		t.Fatalf("replica b after the refresh: %q, %v", v, ok)
	}
	// The store holds the record sealed for alice, not the token.
	rec, err := store.GetCredential(ctx, "alice", up)
	if err != nil || bytes.Contains(rec.Sealed, []byte("Bearer B")) {
		t.Fatalf("store record: %v (sealed %d bytes)", err, len(rec.Sealed))
	}
}

// Without a sealing key nothing reaches the store.
func TestMemoryOnlyWithoutKey(t *testing.T) {
	ctx := context.Background()
	store := sessionmap.NewMemory()
	a := New(Config{Upstream: up, Store: store, Logger: quiet()})
	if a.Shared() {
		t.Fatal("a keeper without a key says it shares credentials")
	}
	a.Observe(ctx, "alice", "Bearer A", time.Now().Add(time.Hour))
	if _, err := store.GetCredential(ctx, "alice", up); err == nil {
		t.Fatal("a credential reached the store without a sealing key")
	}
	b := New(Config{Upstream: up, Store: store, Logger: quiet()})
	if _, ok := b.Current(ctx, "alice"); ok {
		t.Fatal("another keeper sees a memory-only credential")
	}
}

// A Badger data directory, read byte by byte, holds no credential bytes;
// neither does the log.
func TestStoreDumpHasNoToken(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := sessionmap.OpenBadger(dir, sessionmap.WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	var logs syncbuf.Buffer
	log := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	k := New(Config{Upstream: up, Store: st, Sealer: sealer(t), Logger: log})
	token := "Bearer sekrit-" + base64.RawURLEncoding.EncodeToString([]byte(fmt.Sprint(time.Now().UnixNano())))
	k.Observe(ctx, "alice", token, time.Now().Add(time.Hour))
	k.Refused("alice", token)
	k.Current(ctx, "alice")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	secret := []byte(token[len("Bearer "):])
	n := 0
	err = filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		n += len(b)
		if bytes.Contains(b, secret) {
			t.Errorf("%s contains the token", filepath.Base(p))
		}
		return nil
	})
	if err != nil || n == 0 {
		t.Fatalf("walk: %v (%d bytes)", err, n)
	}
	if bytes.Contains([]byte(logs.String()), secret) {
		t.Fatal("the log contains the token")
	}
	// Reopened, the record opens again.
	st2, err := sessionmap.OpenBadger(dir, sessionmap.WithLogger(quiet()))
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if _, err := st2.GetCredential(ctx, "alice", up); err != nil {
		t.Fatalf("the record did not survive the reopen: %v", err)
	}
}

func TestExpiryOf(t *testing.T) {
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	jwt := "Bearer " + enc(`{"alg":"none"}`) + "." + enc(`{"sub":"a","exp":1900000000}`) + ".sig"
	if got := ExpiryOf(jwt); !got.Equal(time.Unix(1900000000, 0)) {
		t.Fatalf("ExpiryOf(jwt) = %v", got)
	}
	for _, v := range []string{"", "Bearer opaque", "Basic " + enc("a:b"), "Bearer a.b.c", "Bearer " + enc("{}") + "." + enc(`{"exp":"soon"}`) + ".s"} {
		if got := ExpiryOf(v); !got.IsZero() {
			t.Fatalf("ExpiryOf(%q) = %v, want zero", v, got)
		}
	}
}

// HasNewer tells a replica whether it holds a credential the store (and so
// the lease holder) lacks; slots of expired credentials are swept.
func TestHasNewerAndSweep(t *testing.T) {
	ctx := context.Background()
	clk := &clock{now: time.Now()}
	store := sessionmap.NewMemory(sessionmap.WithClock(clk.Now))
	seal := sealer(t)
	a := New(Config{Upstream: up, Store: store, Sealer: seal, Clock: clk.Now, Logger: quiet()})
	b := New(Config{Upstream: up, Store: store, Sealer: seal, Clock: clk.Now, Logger: quiet()})
	if a.HasNewer(ctx, "alice") {
		t.Fatal("HasNewer with nothing held")
	}
	a.Observe(ctx, "alice", "Bearer A", clk.Now().Add(time.Minute))
	b.Observe(ctx, "alice", "Bearer A", clk.Now().Add(time.Minute))
	if a.HasNewer(ctx, "alice") || b.HasNewer(ctx, "alice") {
		t.Fatal("HasNewer for the credential the store holds")
	}
	// b's B reaches the store: b holds nothing newer than it, a does not
	// hold B at all (its A is older than the store's).
	b.Observe(ctx, "alice", "Bearer B", clk.Now().Add(2*time.Minute))
	if b.HasNewer(ctx, "alice") || a.HasNewer(ctx, "alice") {
		t.Fatal("HasNewer after the store got the freshest one")
	}
	memOnly := New(Config{Upstream: up, Clock: clk.Now, Logger: quiet()})
	memOnly.Observe(ctx, "alice", "Bearer C", time.Time{})
	if !memOnly.HasNewer(ctx, "alice") {
		t.Fatal("a memory-only keeper cannot know the others have its credential")
	}
	// An opaque token the client keeps sending stays usable past Lifetime.
	k := New(Config{Upstream: up, Clock: clk.Now, Logger: quiet(), Lifetime: time.Hour})
	k.Observe(ctx, "carol", "Bearer opaque", time.Time{})
	for range 3 {
		clk.Advance(40 * time.Minute)
		k.Observe(ctx, "carol", "Bearer opaque", time.Time{})
	}
	if _, ok := k.Current(ctx, "carol"); !ok {
		t.Fatal("an opaque token still in use expired")
	}
	// Unused for longer than Lifetime: gone, and its slot swept.
	clk.Advance(2 * time.Hour)
	k.Observe(ctx, "dave", "Bearer D", time.Time{})
	k.mu.Lock()
	_, kept := k.slots["carol"]
	k.mu.Unlock()
	if kept {
		t.Fatal("the slot of an expired credential was not swept")
	}
}
