package sessionmap_test

import (
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/sessionmap"
	"github.com/tasksbridge/tasksbridge/sessionmap/storetest"
)

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func TestBadgerConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) func() sessionmap.Store {
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

func TestMemoryConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, clock func() time.Time) func() sessionmap.Store {
		m := sessionmap.NewMemory(sessionmap.WithClock(clock))
		return func() sessionmap.Store { return m }
	})
}
