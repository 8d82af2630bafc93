package router

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/ops/metrics"
	"github.com/tasksbridge/tasksbridge/ops/oplog"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// Bounds of the observer's correlation tables.
const (
	maxSessionInfos  = 100_000
	maxPendingInputs = 100_000
)

// wireMeter is the bridge's client-side instrumentation. It reads the
// JSON-RPC messages that cross the listener — every client request and every
// message the bridge sends back, whichever of the four paths served it — so
// the request figures mean the same for the faces and for passthrough, and
// count exactly what clients saw (a face's internal replays, such as the
// initialize a rehydrated session replays, never reach the wire).
//
// It records tasksbridge_requests_total, _client_requests_total, _clients,
// _legacy_calls_total, _tasks_created_total, _task_result_wait_seconds,
// _input_requests_total and the modern half of _sessions_active. Labels come
// only from method names, eras, outcomes and clientInfo; ids are used as
// in-memory correlation keys and never leave this type.
type wireMeter struct {
	m     *metrics.Metrics
	store *meteredStore

	// sessions maps a legacy Mcp-Session-Id to its client's clientInfo,
	// learnt from the initialize the session started with.
	sessions *sessionInfos
	// inputs maps a pending input request (legacy: session and JSON-RPC id
	// of a server→client request; modern: task id and inputRequests key) to
	// its method, until the client answers it.
	inputs *boundedMap[string]
	// storedSession reads a legacy session's clientInfo from the store (a
	// session this process did not see start: a restart).
	storedSession func(ctx context.Context, sc sessionmap.Scope) (implView, bool)
	// refusals logs refused and failed requests for operators (nil: none).
	refusals *oplog.Refusals
	// stopping is set by Server.Shutdown: the -32603 answers from then on
	// are the hand-back of blocked waits ("call again"), counted in
	// handedBack for the stop report instead of logged as failures.
	stopping   atomic.Bool
	handedBack atomic.Int64
}

func newWireMeter(m *metrics.Metrics, store *meteredStore) *wireMeter {
	return &wireMeter{
		m:        m,
		store:    store,
		sessions: newSessionInfos(maxSessionInfos),
		inputs:   newBoundedMap[string](maxPendingInputs),
	}
}

// exchange is one client request being answered.
type exchange struct {
	mt          *wireMeter
	clientEra   string
	upstreamEra string
	method      string
	id          string
	params      *paramsView
	// up is the upstream request of a passthrough exchange, settled by
	// the answer this exchange observes (nil on the other paths).
	up     atomic.Pointer[upstreamCall]
	client implView
	sess   string // legacy session key for input correlation
	start  time.Time
	// call is the /mcp request this exchange meters (nil on stdio): told
	// once the answer has been observed, before it reaches the client
	// (the router finishes the exchange there), and once the exchange is
	// recorded.
	call       *httpCall
	legacyCall bool
	// anyID accepts the first response as the answer whatever its id
	// spelling (an HTTP POST stream carries only its own request's answer;
	// a server may re-encode an id such as 1.0 as 1).
	anyID bool

	mu        sync.Mutex
	responded bool
	finished  bool
	outcome   string
	forced    string
	// reason is the answer's error message: the refusal log line says it.
	reason string
}

// request starts observing one client message (read once by the router,
// readClientMsg). It returns nil for messages that are not requests
// (notifications; a legacy client's answer to an input request, which it
// records here) and for batches, which it does not inspect. sess is the
// legacy session key ("" when none); client resolves a legacy session's
// clientInfo lazily.
func (mt *wireMeter) request(clientEra, upstreamEra, sess string, cm *clientMsg, client func() implView) *exchange {
	return mt.requestInto(new(exchange), clientEra, upstreamEra, sess, cm, client)
}

// requestInto is request with the exchange's memory the caller's (an
// httpCall): it fills ex and returns it, or nil as request does.
func (mt *wireMeter) requestInto(ex *exchange, clientEra, upstreamEra, sess string, cm *clientMsg, client func() implView) *exchange {
	*ex = exchange{mt: mt, clientEra: clientEra, upstreamEra: upstreamEra, sess: sess, start: time.Now()}
	msg := &cm.wire
	switch {
	case !cm.wireOK:
		if len(cm.body) > 0 && cm.body[0] == '[' {
			return nil // a 2025-03-26 batch
		}
		return ex // unparsable: counted under method "other" with the answer's outcome
	case msg.Method == "":
		if msg.hasID() && clientEra == metrics.EraLegacy {
			mt.legacyAnswer(sess, msg)
		}
		return nil
	case !msg.hasID():
		return nil
	}
	p := &msg.Params
	ex.method, ex.id, ex.params = msg.Method, idKey(msg.ID), p
	switch clientEra {
	case metrics.EraLegacy:
		if ex.method == legacy.MethodInitialize {
			if p.hasClientInfo {
				ex.client = p.ClientInfo
			}
		} else if client != nil {
			ex.client = client()
		}
		ex.legacyCall = isLegacyCall(ex.method, p)
	case metrics.EraModern:
		if p.hasMetaClientInfo {
			ex.client = p.MetaClientInfo
		}
		for k := range rawjson.All(p.raw.inputResponses) {
			if method, ok := mt.inputs.take(modernInputKey(p.TaskID, string(rawjson.KeyBytes(k)))); ok {
				mt.m.InputRequest(method, metrics.OutcomeOK)
			}
		}
		if ex.method == modern.MethodSubscriptionsListen {
			mt.m.SessionOpened(metrics.EraModern)
		}
	}
	return ex
}

// detach drops the exchange's view of the request's params (and through
// it the decoded message and the body it was read from), which nothing
// reads once the request was handed on; nil-safe.
func (ex *exchange) detach() {
	if ex != nil {
		ex.params = nil
	}
}

// isLegacyCall reports whether a legacy client's request uses the legacy
// task protocol or session setup (tasksbridge_legacy_calls_total).
func isLegacyCall(method string, p *paramsView) bool {
	switch method {
	case legacy.MethodInitialize, legacy.MethodTasksGet, legacy.MethodTasksResult, legacy.MethodTasksList, legacy.MethodTasksCancel:
		return true
	case legacy.MethodToolsCall:
		return p.hasTask()
	}
	return false
}

func legacyInputKey(sess, id string) string  { return "l\x00" + sess + "\x00" + id }
func modernInputKey(task, key string) string { return "m\x00" + task + "\x00" + key }

// legacyAnswer records a legacy client's answer to an input request.
func (mt *wireMeter) legacyAnswer(sess string, msg *wireMsg) {
	method, ok := mt.inputs.take(legacyInputKey(sess, idKey(msg.ID)))
	if !ok {
		return
	}
	outcome := metrics.OutcomeOK
	if msg.hasError {
		outcome = metrics.OutcomeOf(&rpc.Error{Code: msg.ErrorCode})
	}
	mt.m.InputRequest(method, outcome)
}

// serverMessage observes one message the bridge sent to a client outside
// any request's answer (a legacy GET stream): server→client requests.
func (mt *wireMeter) serverMessage(clientEra, sess string, b []byte) {
	var msg wireMsg
	if decodeWire(b, &msg) {
		mt.serverRequest(clientEra, sess, &msg)
	}
}

func (mt *wireMeter) serverRequest(clientEra, sess string, msg *wireMsg) {
	if msg.Method != "" && msg.hasID() && clientEra == metrics.EraLegacy {
		mt.inputs.put(legacyInputKey(sess, idKey(msg.ID)), msg.Method)
	}
}

// message observes one message the bridge sent on the request's stream:
// its answer, or a server→client request or notification before it.
func (ex *exchange) message(b []byte) {
	var msg wireMsg
	if decodeWire(b, &msg) {
		ex.observe(&msg)
	}
}

// observe is message for a message already decoded.
func (ex *exchange) observe(msg *wireMsg) {
	if msg.Method != "" {
		ex.mt.serverRequest(ex.clientEra, ex.sess, msg)
		return
	}
	ex.mu.Lock()
	if ex.responded || (!ex.anyID && ex.id != "" && idKey(msg.ID) != ex.id) {
		ex.mu.Unlock()
		return
	}
	ex.responded = true
	ex.mu.Unlock()
	up := ex.up.Load()
	ex.answer(msg)
	if up != nil {
		// Passthrough: the client's answer is the upstream's, byte for
		// byte, so it settles the upstream request too (one decode).
		up.answer(msg)
	}
	if ex.call != nil {
		ex.call.answered()
	}
}

// answer records what the answer says: its outcome, a task handed to the
// client, a modern client's input requests.
func (ex *exchange) answer(msg *wireMsg) {
	outcome := metrics.OutcomeOK
	switch {
	case msg.hasError && msg.taskCancelled && msg.ErrorCode == rpc.CodeInternalError:
		// tasks/result of a task that was cancelled (L-41): what the
		// client asked for, not a failure of the bridge or the upstream.
		outcome = metrics.OutcomeCancelled
	case msg.hasError:
		outcome = metrics.OutcomeOf(&rpc.Error{Code: msg.ErrorCode})
	case msg.hasResult && msg.Result.IsError:
		outcome = metrics.OutcomeToolError
	}
	ex.mu.Lock()
	ex.outcome = outcome
	if msg.hasError {
		ex.reason = msg.ErrorMessage
	}
	ex.mu.Unlock()
	if !msg.hasResult {
		return
	}
	r := &msg.Result
	if ex.method == legacy.MethodToolsCall {
		switch {
		case ex.clientEra == metrics.EraLegacy && r.TaskTaskID != "":
			ex.taskCreated(r.TaskTaskID)
		case ex.clientEra == metrics.EraModern && r.ResultType == string(modern.ResultTask):
			ex.taskCreated(r.TaskID)
		}
	}
	if ex.clientEra == metrics.EraModern {
		task := ""
		if ex.method != legacy.MethodToolsCall {
			task = r.TaskID
		}
		for k, ir := range rawjson.All(r.inputRequests) {
			var d viewDec
			ex.mt.inputs.put(modernInputKey(task, string(rawjson.KeyBytes(k))), inputMethod(ir, &d))
		}
	}
}

// taskCreated counts a task handed to the client: a task the bridge tracks
// carries its own direction and origin; any other (passthrough) was created
// by the upstream.
func (ex *exchange) taskCreated(id string) {
	direction, origin, ok := "", metrics.OriginUpstream, false
	if ex.mt.store != nil {
		direction, origin, ok = ex.mt.store.origin(id)
	}
	if !ok {
		direction, origin = metrics.Direction(ex.clientEra, ex.upstreamEra), metrics.OriginUpstream
	}
	ex.mt.m.TaskCreated(direction, origin)
}

// attach makes c, the upstream request of a passthrough exchange, settle
// with this exchange's answer (observe) instead of parsing the same bytes
// itself.
func (ex *exchange) attach(c *upstreamCall) { ex.up.Store(c) }

// settleUpstream settles an attached upstream request that the answer did
// not: after the exchange has seen the last bytes of the upstream's body
// (final false), or when the exchange is over (final true).
func (ex *exchange) settleUpstream(final bool) {
	if ex == nil {
		return
	}
	if up := ex.up.Load(); up != nil {
		up.settleEnded(final)
	}
}

// force sets the outcome of a request the router answered itself.
func (ex *exchange) force(outcome string) {
	if ex == nil {
		return
	}
	ex.mu.Lock()
	ex.forced = outcome
	ex.mu.Unlock()
}

// finish records the request once it has been answered (or abandoned).
// status is the HTTP status (0 on stdio), overflow whether the answer was
// too large to inspect, cancelled whether the client went away.
func (ex *exchange) finish(status int, overflow, cancelled bool) {
	if ex == nil {
		return
	}
	ex.mu.Lock()
	if ex.finished {
		ex.mu.Unlock()
		return
	}
	ex.finished = true
	outcome, reason := ex.forced, ex.reason
	switch {
	case outcome != "":
	case status == http.StatusUnauthorized || status == http.StatusForbidden:
		// The upstream's refusal of the client's credentials, relayed (or
		// passed through): whatever error body it carries.
		outcome = metrics.OutcomeUnauthorized
	case ex.responded:
		outcome = ex.outcome
	case status >= 400:
		outcome = outcomeOfStatus(status)
	case overflow:
		outcome = metrics.OutcomeOK
	case cancelled:
		outcome = metrics.OutcomeCancelled
	default:
		outcome = metrics.OutcomeInternal // a stream that ended without an answer
	}
	ex.mu.Unlock()

	m := ex.mt.m
	m.ObserveCall(metrics.Call{
		ClientEra: ex.clientEra, UpstreamEra: ex.upstreamEra, Method: ex.method, Outcome: outcome,
		ClientName: ex.client.Name, ClientVersion: ex.client.Version, Legacy: ex.legacyCall,
	})
	if outcome == metrics.OutcomeInternal && ex.mt.stopping.Load() {
		ex.mt.handedBack.Add(1)
	} else {
		ex.mt.refusals.ObserveReason(ex.clientEra, ex.method, outcome, ex.client.Name, reason)
	}
	switch {
	case ex.clientEra == metrics.EraLegacy && ex.method == legacy.MethodTasksResult:
		m.ObserveResultWait(time.Since(ex.start))
	case ex.clientEra == metrics.EraModern && ex.method == modern.MethodSubscriptionsListen:
		m.SessionClosed(metrics.EraModern)
	}
	if ex.call != nil {
		ex.call.finished()
	}
}

// ok reports whether the request ended with a successful answer.
func (ex *exchange) ok() bool {
	ex.mu.Lock()
	defer ex.mu.Unlock()
	return ex.forced == "" && ex.responded && (ex.outcome == metrics.OutcomeOK || ex.outcome == metrics.OutcomeToolError)
}

// outcomeOfStatus classifies an HTTP refusal without a JSON-RPC body.
func outcomeOfStatus(status int) string {
	switch {
	case status == http.StatusTooManyRequests, status == http.StatusBadGateway,
		status == http.StatusServiceUnavailable, status == http.StatusGatewayTimeout:
		return metrics.OutcomeUpstreamUnavailable
	case status >= 500:
		return metrics.OutcomeInternal
	}
	return metrics.OutcomeInvalidRequest
}

// clientInfoOf extracts clientInfo from stored initialize params.
func clientInfoOf(initParams json.RawMessage) implView {
	b := bytes.TrimSpace(initParams)
	if len(b) == 0 || b[0] != '{' || !json.Valid(b) {
		return implView{}
	}
	var p paramsView
	p.read(b, &viewDec{})
	return p.ClientInfo
}
