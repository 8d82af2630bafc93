package legacyface

import (
	"net/http"
	"reflect"
	"slices"

	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// One copy per session of what its requests carry alike. Every request of
// a session with the same credential, from the same peer, has the same
// forwarded headers (edge.Request.ForwardHeader: X-Forwarded-*, no trace
// header) and the same upstream options; a parked wait keeps both for as
// long as it waits, and each task's binding keeps the options for as long
// as the task runs. So a request's copies are swapped for the session's
// when they are equal: thousands of parked waits and tasks of one session
// then keep one. The copies are per session, and a session has one
// principal: a credential (opts.Authorization) is never shared across
// principals. A request whose values differ (another credential, a trace
// header) keeps its own, and becomes the session's latest.

// shareRequest swaps ri's credential and forwarded headers for the
// session's equal ones; nil-safe.
func (s *session) shareRequest(ri *reqInfo) {
	if s == nil || ri == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if ri.authz == s.sharedAuthz {
		ri.authz = s.sharedAuthz
	} else {
		s.sharedAuthz = ri.authz
	}
	if ri.fwd == nil {
		return
	}
	if sameHeader(ri.fwd, s.sharedFwd) {
		ri.fwd = s.sharedFwd
	} else {
		s.sharedFwd = ri.fwd
	}
}

// shareOpts returns opts (without its OnNotify, which is per request) as
// the session's immutable copy when equal to it, else as a new one that
// becomes the session's. Nobody modifies the value it points to.
func (s *session) shareOpts(opts modernup.CallOptions) *modernup.CallOptions {
	opts.OnNotify = nil
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.sharedOpts; p != nil && sameOptions(*p, opts) {
		return p
	}
	p := &opts
	s.sharedOpts = p
	return p
}

// callOptionsFields and clientCapsFields are how many fields sameOptions
// compares: a field added to CallOptions or to the capabilities must be
// compared there too (TestSameOptionsComparesEveryField).
const (
	callOptionsFields = 7
	clientCapsFields  = 6
)

// sameOptions reports whether a and b send the same upstream requests. The
// capabilities' maps are compared by identity: a session's requests copy
// them from its one prepared _meta, and options that differ only in
// identity are merely not shared.
func sameOptions(a, b modernup.CallOptions) bool {
	if a.Authorization != b.Authorization || a.ClientInfo != b.ClientInfo || a.LogLevel != b.LogLevel ||
		a.Stamped != b.Stamped || a.OnNotify != nil || b.OnNotify != nil || !sameHeader(a.Header, b.Header) {
		return false
	}
	ac, bc := a.Capabilities, b.Capabilities
	return ac.Roots == bc.Roots && ac.Sampling == bc.Sampling && ac.Elicitation == bc.Elicitation &&
		sameMap(ac.Experimental, bc.Experimental) && sameMap(ac.Extensions, bc.Extensions) && sameMap(ac.Extra, bc.Extra)
}

// sameMap reports whether a and b are the same map (or both nil).
func sameMap[M ~map[K]V, K comparable, V any](a, b M) bool {
	return reflect.ValueOf(a).UnsafePointer() == reflect.ValueOf(b).UnsafePointer()
}

// sameHeader reports whether a and b hold the same values.
func sameHeader(a, b http.Header) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || !slices.Equal(va, vb) {
			return false
		}
	}
	return true
}
