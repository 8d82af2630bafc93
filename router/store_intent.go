package router

import (
	"context"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The metered store passes create intents (sessionmap.IntentStore) through
// when the store under it keeps them, so the legacy face's type assertion
// sees them through the wrapper; over a store without them it does nothing
// (HasIntents reports false, and the face writes none).

var _ sessionmap.IntentStore = (*meteredStore)(nil)

func (s *meteredStore) intents() (sessionmap.IntentStore, bool) {
	is, ok := s.next.(sessionmap.IntentStore)
	return is, ok
}

// HasIntents reports whether the wrapped store keeps intents (the face
// asks before it relies on them).
func (s *meteredStore) HasIntents() bool { _, ok := s.intents(); return ok }

func (s *meteredStore) PutIntent(ctx context.Context, in sessionmap.Intent, settled ...string) error {
	is, ok := s.intents()
	if !ok {
		return nil
	}
	return s.op("put_intent", func() error { return is.PutIntent(ctx, in, settled...) })
}

func (s *meteredStore) DeleteIntents(ctx context.Context, ids ...string) error {
	is, ok := s.intents()
	if !ok {
		return nil
	}
	return s.op("delete_intents", func() error { return is.DeleteIntents(ctx, ids...) })
}

func (s *meteredStore) AllIntents(ctx context.Context) (out []sessionmap.Intent, err error) {
	is, ok := s.intents()
	if !ok {
		return nil, nil
	}
	err = s.op("all_intents", func() error { out, err = is.AllIntents(ctx); return err })
	return out, err
}
