package router

import (
	"context"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// ListTasksFull is metered under the same operation name as ListTasks: to
// an operator both are one tasks/list page.
func (s *meteredStore) ListTasksFull(ctx context.Context, sc sessionmap.Scope, pageSize int, cursor string) (out sessionmap.Page, err error) {
	err = s.op("list_tasks", func() error { out, err = s.next.ListTasksFull(ctx, sc, pageSize, cursor); return err })
	if err == nil {
		for _, t := range out.Tasks {
			s.observe(t)
		}
	}
	return out, err
}

// CheckEpoch is not metered: it is readiness, not a request's store work.
func (s *meteredStore) CheckEpoch(ctx context.Context) error { return s.next.CheckEpoch(ctx) }

// PrincipalKey is the wrapped store's principal key (principal_key.go), or
// nil when it keeps none.
func (s *meteredStore) PrincipalKey() []byte {
	if k, ok := s.next.(sessionmap.PrincipalKeyer); ok {
		return k.PrincipalKey()
	}
	return nil
}

// UpstreamEra and SetUpstreamEra are not metered: they are the router's
// era bookkeeping (at start-up and when a probe changes the era), not a
// request's store work.
func (s *meteredStore) UpstreamEra(ctx context.Context, upstream string) (era.Era, time.Time, error) {
	return s.next.UpstreamEra(ctx, upstream)
}

func (s *meteredStore) SetUpstreamEra(ctx context.Context, upstream string, e era.Era, ttl time.Duration) error {
	return s.next.SetUpstreamEra(ctx, upstream, e, ttl)
}
