package sessionmap_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/sessionmap/storetest"
)

func TestMemoryCredentials(t *testing.T) {
	storetest.RunCredentials(t, func(t *testing.T, clock func() time.Time) func() sessionmap.Store {
		m := sessionmap.NewMemory(sessionmap.WithClock(clock))
		return func() sessionmap.Store { return m }
	})
}

func TestBadgerCredentials(t *testing.T) {
	storetest.RunCredentials(t, func(t *testing.T, clock func() time.Time) func() sessionmap.Store {
		dir := t.TempDir()
		return func() sessionmap.Store {
			s, err := sessionmap.OpenBadger(dir, sessionmap.WithClock(clock), sessionmap.WithGCInterval(0),
				sessionmap.WithLogger(quietLogger()))
			if err != nil {
				t.Fatalf("OpenBadger: %v", err)
			}
			return s
		}
	})
}

func TestRedisCredentials(t *testing.T) {
	srv := redistest.Start(t)
	storetest.RunCredentials(t, func(t *testing.T, clock func() time.Time) func() sessionmap.Store {
		cfg := sessionmap.RedisConfig{URL: srv.URL, Prefix: srv.Prefix(t)}
		return func() sessionmap.Store { return openRedis(t, cfg, sessionmap.WithClock(clock)) }
	})
}

// Every credential key carries a hash tag on its principal (one Redis
// Cluster slot per principal) and a Redis TTL at the credential's expiry.
func TestRedisCredentialKeys(t *testing.T) {
	srv := redistest.Start(t)
	ctx := context.Background()
	prefix := srv.Prefix(t)
	s := openRedis(t, sessionmap.RedisConfig{URL: srv.URL, Prefix: prefix})
	t.Cleanup(func() { _ = s.Close() })
	p := sessionmap.PrincipalFromAuthorization("Bearer x")
	for _, principal := range []string{p, "odd {principal}:x"} {
		if _, _, err := s.PutCredential(ctx, sessionmap.Credential{Principal: principal, Upstream: "https://u.example/mcp",
			Sealed: []byte("sealed"), Expires: time.Now().Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	keys := keysUnder(t, rawClient(t, srv), prefix)
	if len(keys) != 2 {
		t.Fatalf("keys = %q, want 2 credential keys", keys)
	}
	c := rawClient(t, srv)
	for _, k := range keys {
		open, end := strings.Index(k, "{"), strings.Index(k, "}")
		if !strings.HasPrefix(k, prefix+":c:{") || open < 0 || end < open+2 {
			t.Fatalf("key %q has no hash tag", k)
		}
		if tag := k[open+1 : end]; tag != p && !strings.HasPrefix(tag, "h") {
			t.Fatalf("key %q: tag %q is neither the principal nor its digest", k, tag)
		}
		if ttl := c.PTTL(ctx, k).Val(); ttl <= 0 || ttl > time.Minute {
			t.Fatalf("key %q: TTL %v, want at most the credential's minute", k, ttl)
		}
	}
}
