package legacyface

import (
	"context"
	"errors"
	"net/http"

	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/internal/oauthmeta"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/runtime/upcred"
	"github.com/tasksbridge/tasksbridge/runtime/watch"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// Upstream credentials over time. Access tokens live minutes and tasks live
// hours, so what the bridge does for a principal after the request that
// started it (a watcher polling the task, the outbox delivering an owed
// cancel or input answer) uses the freshest credential the principal has
// presented (runtime/upcred), fetched at call time, not the one captured
// when the task began. Every request of a session hands its Authorization
// to the keeper (noteCredential; an unchanged one costs a compare).
//
// When the upstream answers such a call with HTTP 401 and the keeper has
// nothing fresher (every credential of the principal expired or was
// refused), the task is not failed: the watcher stops asking the upstream
// (its polls find no credential and send nothing), waiting clients get
// CodeAuthorizationExpired, and the watchers of the principal poll again as
// soon as a fresh credential arrives, on this replica or on another one
// (the keeper's store and fan-out).

// CodeAuthorizationExpired is the JSON-RPC error a legacy client waiting
// on a task (tasks/result, or a tools/call answered by a task) gets when
// the upstream refused every credential the bridge holds for the client's
// principal. It is in the implementation-defined server error range
// (JSON-RPC 2.0 §5.1, -32000..-32099) and deliberately none of: -32602
// (the task is not unknown: a client that gets "task not found" forgets
// it, L-38), -32603 (clients read it as the call having failed), -32000
// and -32001 (the TypeScript SDK's own "connection closed" and "request
// timeout"), -32002 and -32042 (2025-11-25 meanings), -32020..-32022
// (2026-07-28 meanings). The task goes on: the same request with a fresh
// token answers it.
const CodeAuthorizationExpired int64 = -32030

// msgAuthorizationExpired is CodeAuthorizationExpired's message.
const msgAuthorizationExpired = "authorization expired: call again with a fresh token"

func errAuthorizationExpired() error {
	return rpc.Errorf(CodeAuthorizationExpired, msgAuthorizationExpired)
}

// credentialsExhausted is a call the bridge did not make (or made and had
// refused) because the principal has no usable credential. It does not
// unwrap: to the outbox it is a failure worth retrying (upstreamSettled),
// to the watchers an error to back off from, never "task gone".
type credentialsExhausted struct {
	// refusal is the upstream's last 401, when this call was refused (nil
	// when no call was made): a client whose own request it refused gets it
	// relayed (refusalFor), so its OAuth client refreshes.
	refusal *oauthmeta.UpstreamAuthError
}

func (credentialsExhausted) Error() string {
	return "the upstream refused every credential the bridge holds for this client; waiting for a fresh token"
}

// unauthorized reports whether err is the upstream's HTTP 401.
func unauthorized(err error) bool {
	ae, ok := oauthmeta.AsUpstreamAuthError(err)
	return ok && ae.Status == http.StatusUnauthorized
}

// startCredentials sets up the keeper (Config.Credentials, else one of this
// process's memory only) and the wake-up of a principal's watchers and
// owed deliveries when a fresh credential arrives.
func (b *Bridge) startCredentials() {
	b.creds = b.cfg.Credentials
	if b.creds == nil {
		b.creds = upcred.New(upcred.Config{Upstream: b.target, Logger: b.log})
	}
	b.creds.Notify(b.credentialFresh)
}

// noteCredential hands the request's credential to the keeper.
func (s *session) noteCredential(ri *reqInfo) {
	if ri == nil || s.principal == "" || ri.authz == "" {
		return
	}
	s.b.creds.Observe(context.Background(), s.principal, ri.authz, upcred.ExpiryOf(ri.authz))
}

// credentialFresh wakes what waits for principal's credential: its
// watchers poll now, and what a previous process still owed the upstream
// for it goes out.
func (b *Bridge) credentialFresh(principal string) {
	if !b.built.Load() {
		return // nothing watches or is owed yet
	}
	b.bindings.Range(func(k, v any) bool {
		if v.(*binding).scope.Principal == principal {
			b.watch.Refresh(k.(watch.Key))
		}
		return true
	})
	b.owed.mu.Lock()
	recs := b.owed.byPrincipal[principal]
	delete(b.owed.byPrincipal, principal)
	b.owed.mu.Unlock()
	for _, rec := range recs {
		b.deliverDebts(rec, modernup.CallOptions{})
	}
}

// withCredential runs call with opts carrying principal's freshest
// credential, at call time; after a 401 it marks that credential refused
// and tries the next freshest, if any. Without a principal, or when the
// keeper has never seen one for it (opts then carries the credential of
// the request that bound the task), opts is used as it is.
func (b *Bridge) withCredential(ctx context.Context, principal string, opts modernup.CallOptions, call func(modernup.CallOptions) error) error {
	if principal == "" {
		return call(opts)
	}
	tried := map[string]bool{}
	var last *oauthmeta.UpstreamAuthError
	for {
		authz, ok := b.creds.Current(ctx, principal)
		if !ok {
			if len(tried) > 0 || b.creds.Exhausted(principal) {
				return credentialsExhausted{refusal: last}
			}
			authz = opts.Authorization
		}
		if tried[authz] {
			return credentialsExhausted{refusal: last}
		}
		tried[authz] = true
		o := opts
		o.Authorization = authz
		err := call(o)
		if authz == "" || !unauthorized(err) {
			return err
		}
		last, _ = oauthmeta.AsUpstreamAuthError(err)
		b.creds.Refused(principal, authz)
	}
}

// expiredFor is the error a request of the client gets when its
// principal's credentials ran out (authExpired): the upstream's own 401,
// relayed while the response has not started, when the request carried a
// credential the upstream refused (its OAuth client then refreshes, RFC
// 6750 §3.1); -32030 otherwise (a wait already streaming, or no request
// credential).
//
// Exhausted credentials and a request credential mean the upstream refused
// that very credential: had it been new, the keeper would have made it the
// current one and the call would have been made with it.
func expiredFor(ri *reqInfo, err error) error {
	var ce credentialsExhausted
	if ri == nil || ri.authz == "" || !errors.As(err, &ce) {
		return errAuthorizationExpired()
	}
	refusal := ce.refusal
	if refusal == nil {
		// No call was made for this request (the keeper already knew): say
		// what the upstream said of this credential before.
		refusal = &oauthmeta.UpstreamAuthError{Status: http.StatusUnauthorized, Method: "tasks/get",
			Challenges: []string{`Bearer error="invalid_token", error_description="the upstream refused this access token; obtain a fresh one"`}}
	}
	return edge.KeepRefusal(rpc.Errorf(CodeAuthorizationExpired, msgAuthorizationExpired), refusal)
}

// authExpired reports whether snap says the principal's credentials ran
// out, and still do (a fresh one may have arrived since the snapshot). A
// snapshot relayed from the replica that polls the task (watch.Config.Coord)
// carries only the error's text; it counts when this process holds no
// credential the store (which that replica reads) lacks.
func (b *Bridge) authExpired(snap watch.Snapshot, principal string) bool {
	if snap.Err == nil {
		return false
	}
	var ce credentialsExhausted
	if errors.As(snap.Err, &ce) {
		return b.creds.Exhausted(principal)
	}
	return snap.Relayed && snap.Err.Error() == ce.Error() && !b.creds.HasNewer(context.Background(), principal)
}

// credSource is a watcher's upstream: the bound options with the
// principal's freshest credential on every call.
type credSource struct {
	b         *Bridge
	principal string
	opts      *modernup.CallOptions // the binding's (immutable)
}

var (
	_ watch.Source = credSource{}
	_ watch.Pusher = credSource{}
)

func (c credSource) GetTask(ctx context.Context, taskID string) (*modern.DetailedTask, error) {
	var t *modern.DetailedTask
	err := c.b.withCredential(ctx, c.principal, *c.opts, func(o modernup.CallOptions) error {
		var err error
		t, err = c.b.up.GetTask(ctx, taskID, o)
		return err
	})
	return t, err
}

func (c credSource) UpdateTask(ctx context.Context, taskID string, responses modern.InputResponses) error {
	return c.b.withCredential(ctx, c.principal, *c.opts, func(o modernup.CallOptions) error {
		return c.b.up.UpdateTask(ctx, taskID, responses, o)
	})
}

func (c credSource) ListenTasks(ctx context.Context, taskIDs []string) (<-chan *modern.DetailedTask, []string, error) {
	var ch <-chan *modern.DetailedTask
	var acked []string
	err := c.b.withCredential(ctx, c.principal, *c.opts, func(o modernup.CallOptions) error {
		var err error
		ch, acked, err = modernup.TaskSource{Client: c.b.up, Opts: o}.ListenTasks(ctx, taskIDs)
		return err
	})
	return ch, acked, err
}

// resolvedPrincipal is the principal resolved before the face saw r
// (upcred.WithPrincipal: the request edge, a test resolver), if any.
func resolvedPrincipal(r *http.Request) (string, bool) {
	p, ok := upcred.PrincipalOf(r.Context())
	return p.ID, ok
}
