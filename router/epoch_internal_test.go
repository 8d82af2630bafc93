package router

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

type epochStore struct {
	sessionmap.Store
	err error
}

func (s epochStore) CheckEpoch(context.Context) error { return s.err }

// Readiness names a lost store in plain words, and tells it apart from a
// store that does not answer.
func TestStoreEpochReady(t *testing.T) {
	ctx := context.Background()
	if err := storeEpochReady(ctx, sessionmap.NewMemory()); err != nil {
		t.Fatalf("memory store: %v", err)
	}
	lost := epochStore{err: errors.Join(sessionmap.ErrStoreLost)}
	if err := storeEpochReady(ctx, lost); !errors.Is(err, sessionmap.ErrStoreLost) ||
		!strings.Contains(err.Error(), "lost or replaced") || !strings.Contains(err.Error(), "restart") {
		t.Fatalf("lost store: %v", err)
	}
	down := epochStore{err: sessionmap.ErrUnavailable}
	if err := storeEpochReady(ctx, down); errors.Is(err, sessionmap.ErrStoreLost) || !errors.Is(err, sessionmap.ErrUnavailable) {
		t.Fatalf("unavailable store: %v", err)
	}
}
