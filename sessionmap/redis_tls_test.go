package sessionmap_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/internal/testkit/redistest"
	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/sessionmap/storetest"
)

// tlsPassword is the server's requirepass: the TLS errors below must never
// carry it.
const tlsPassword = "tls-pa55-never-shown"

// openTLS opens the store at url with cfg's TLS files, bounded so a wrong
// configuration fails instead of hanging.
func openTLS(t *testing.T, cfg sessionmap.RedisConfig) (*sessionmap.Redis, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	s, err := sessionmap.OpenRedis(ctx, cfg, sessionmap.WithLogger(quietLogger()))
	if err == nil {
		t.Cleanup(func() { _ = s.Close() })
	}
	return s, err
}

// secretsOf are strings no error may carry: the password and the body of
// every private key file.
func secretsOf(t *testing.T, f redistest.TLSFiles) []string {
	t.Helper()
	out := []string{tlsPassword, "PRIVATE KEY"}
	for _, k := range []string{f.ClientKey, f.ServerKey} {
		b, err := os.ReadFile(k)
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if len(line) > 16 && !strings.HasPrefix(line, "-----") {
				out = append(out, line)
			}
		}
	}
	return out
}

// The store over TLS to a redis-server that listens only for TLS and
// requires a client certificate (rediss://, --redis-ca, --redis-cert,
// --redis-key, --redis-tls-server-name): the right files work end to end;
// a wrong CA, a missing client certificate and a wrong server name are
// refused with an error that says what is wrong and carries neither the
// password nor key material.
func TestRedisTLS(t *testing.T) {
	files := redistest.NewTLSFiles(t)
	srv := redistest.StartTLS(t, files, "--requirepass", tlsPassword)
	url := strings.Replace(srv.URL, "rediss://", "rediss://:"+tlsPassword+"@", 1)
	good := sessionmap.RedisConfig{URL: url, Prefix: srv.Prefix(t),
		CAFile: files.CA, CertFile: files.ClientCert, KeyFile: files.ClientKey}
	secrets := secretsOf(t, files)

	refused := func(t *testing.T, cfg sessionmap.RedisConfig, want ...string) {
		t.Helper()
		s, err := openTLS(t, cfg)
		if err == nil {
			_ = s.Close()
			t.Fatal("opened; want a refusal")
		}
		msg := err.Error()
		t.Logf("refused: %s", msg)
		for _, w := range want {
			if !strings.Contains(msg, w) {
				t.Errorf("error %q does not name %q", msg, w)
			}
		}
		if !strings.Contains(msg, srv.Addr) {
			t.Errorf("error %q does not name the server %s", msg, srv.Addr)
		}
		for _, s := range secrets {
			if strings.Contains(msg, s) {
				t.Errorf("error %q carries secret material %q", msg, s)
			}
		}
	}

	t.Run("MutualTLSRoundTrip", func(t *testing.T) {
		s, err := openTLS(t, good)
		if err != nil {
			t.Fatalf("OpenRedis over TLS: %v", err)
		}
		roundTrip(t, s)
	})
	t.Run("WrongCA", func(t *testing.T) {
		cfg := good
		cfg.CAFile = files.OtherCA
		refused(t, cfg, "tls", "certificate", "unknown authority")
	})
	t.Run("NoClientCertificate", func(t *testing.T) {
		cfg := good
		cfg.CertFile, cfg.KeyFile = "", ""
		refused(t, cfg, "tls", "certificate required")
	})
	t.Run("ServerName", func(t *testing.T) {
		cfg := good
		cfg.TLSServerName = "redis.wrong.example"
		refused(t, cfg, "certificate", "redis.wrong.example")
		cfg.TLSServerName = "localhost" // a SAN of the server's certificate
		s, err := openTLS(t, cfg)
		if err != nil {
			t.Fatalf("TLSServerName localhost: %v", err)
		}
		roundTrip(t, s)
	})
}

// roundTrip writes a session and a task and reads them back, and a second
// open over the same TLS settings sees them.
func roundTrip(t *testing.T, s *sessionmap.Redis) {
	t.Helper()
	ctx := context.Background()
	// A fresh principal: ListTasks below lists the principal's tasks of
	// every session, and each call writes its own.
	sid := "tls-" + sessionmap.NewTaskID()
	p := sessionmap.PrincipalFromAuthorization("Bearer " + sid)
	if err := s.CreateSession(ctx, sessionmap.Session{ID: sid, Principal: p, Era: era.Legacy,
		ProtocolVersion: "2025-11-25", IdleTimeoutMs: 60_000}); err != nil {
		t.Fatalf("CreateSession: %v", err)
	}
	sc := sessionmap.Scope{Principal: p, Session: sid}
	if got, err := s.GetSession(ctx, sc); err != nil || got.ID != sid || got.ProtocolVersion != "2025-11-25" {
		t.Fatalf("GetSession = %+v, %v", got, err)
	}
	task := sessionmap.Task{ID: sessionmap.NewTaskID(), Scope: sc, Direction: sessionmap.LegacyToModern,
		Origin: sessionmap.OriginUpstreamTask, Method: "tools/call", ToolName: "slow_task", StatusMessage: "over tls"}
	if err := s.CreateTask(ctx, task); err != nil {
		t.Fatalf("CreateTask: %v", err)
	}
	got, err := s.GetTask(ctx, sc, task.ID)
	if err != nil || got.ToolName != "slow_task" || got.StatusMessage != "over tls" || got.Status != sessionmap.StatusWorking {
		t.Fatalf("GetTask = %+v, %v", got, err)
	}
	page, err := s.ListTasks(ctx, sc, 10, "")
	if err != nil || len(page.Tasks) != 1 || page.Tasks[0].ID != task.ID {
		t.Fatalf("ListTasks = %+v, %v", page, err)
	}
}

// The whole store conformance suite passes over mutual TLS.
func TestRedisTLSConformance(t *testing.T) {
	files := redistest.NewTLSFiles(t)
	srv := redistest.StartTLS(t, files)
	storetest.Run(t, func(t *testing.T, clock func() time.Time) func() sessionmap.Store {
		cfg := sessionmap.RedisConfig{URL: srv.URL, Prefix: srv.Prefix(t),
			CAFile: files.CA, CertFile: files.ClientCert, KeyFile: files.ClientKey}
		return func() sessionmap.Store { return openRedis(t, cfg, sessionmap.WithClock(clock)) }
	})
}
