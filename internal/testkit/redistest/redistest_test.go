package redistest

import (
	"fmt"
	"net"
	"strings"
	"testing"
)

// recorder is a testing.TB whose Fatal and Skip are recorded instead of
// ending the real test.
type recorder struct {
	testing.TB
	fatal, skipped string
}

func (r *recorder) Helper() {}
func (r *recorder) Fatal(a ...any) {
	r.fatal = fmt.Sprint(a...)
	panic(r)
}
func (r *recorder) Fatalf(f string, a ...any) { r.Fatal(fmt.Sprintf(f, a...)) }
func (r *recorder) Skip(a ...any)             { r.skipped = fmt.Sprint(a...); panic(r) }
func (r *recorder) Skipf(f string, a ...any)  { r.Skip(fmt.Sprintf(f, a...)) }
func (r *recorder) SkipNow()                  { r.Skip("SkipNow") }

func run(r *recorder, fn func(testing.TB)) {
	defer func() {
		if p := recover(); p != nil && p != r {
			panic(p)
		}
	}()
	fn(r)
}

// Without redis-server on PATH (and no TASKSBRIDGE_REDIS_URL) a test fails
// with the install hint; it never skips.
func TestMissingRedisServerFailsWithHint(t *testing.T) {
	t.Setenv(EnvURL, "")
	t.Setenv("PATH", t.TempDir())
	r := &recorder{TB: t}
	run(r, func(tb testing.TB) { Start(tb) })
	if r.skipped != "" || !strings.Contains(r.fatal, "apt-get install redis-server") {
		t.Fatalf("fatal %q, skipped %q; want a failure with the install hint", r.fatal, r.skipped)
	}
}

// A started server answers PING on its address and is gone after cleanup.
func TestStartLocalServesAndStops(t *testing.T) {
	var addr string
	t.Run("server", func(t *testing.T) {
		s := StartLocal(t)
		addr = s.Addr
		if !s.Started || s.URL != "redis://"+s.Addr+"/0" {
			t.Fatalf("server = %+v", s)
		}
		c, err := net.Dial("tcp", s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.Write([]byte("PING\r\n")); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 16)
		n, err := c.Read(buf)
		if err != nil || string(buf[:n]) != "+PONG\r\n" {
			t.Fatalf("PING = %q, %v", buf[:n], err)
		}
	})
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Fatalf("redis-server still listens on %s after its test ended", addr)
	}
	// The URL of the environment wins and is used as given.
	t.Setenv(EnvURL, "redis://:pw@127.0.0.1:1/5")
	if s := Start(t); s.Started || s.Addr != "127.0.0.1:1" {
		t.Fatalf("Start with %s = %+v", EnvURL, s)
	}
}
