package demo

import "sync"

// hub fans task changes out to subscriptions/listen streams. A subscriber
// keeps the set of changed ids it has not sent yet; changes coalesce, which
// is correct because every notifications/tasks carries the complete current
// DetailedTask (M-63), never a delta.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

type subscriber struct {
	ids     map[string]bool // acknowledged task ids
	pending []string        // changed ids, in change order, not yet sent
	wake    chan struct{}   // cap 1: "pending is non-empty"
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

func (h *hub) subscribe(ids []string) *subscriber {
	sub := &subscriber{ids: map[string]bool{}, wake: make(chan struct{}, 1)}
	for _, id := range ids {
		sub.ids[id] = true
	}
	h.mu.Lock()
	h.subs[sub] = struct{}{}
	h.mu.Unlock()
	return sub
}

func (h *hub) unsubscribe(sub *subscriber) {
	h.mu.Lock()
	delete(h.subs, sub)
	h.mu.Unlock()
}

// publish marks id as changed for every subscriber that acknowledged it.
func (h *hub) publish(id string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for sub := range h.subs {
		if !sub.ids[id] {
			continue
		}
		dup := false
		for _, p := range sub.pending {
			if p == id {
				dup = true
				break
			}
		}
		if !dup {
			sub.pending = append(sub.pending, id)
		}
		select {
		case sub.wake <- struct{}{}:
		default:
		}
	}
}

// take returns and clears sub's pending ids.
func (h *hub) take(sub *subscriber) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := sub.pending
	sub.pending = nil
	return p
}

// count returns the number of live subscribers (for tests).
func (h *hub) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}
