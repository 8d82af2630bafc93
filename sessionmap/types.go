package sessionmap

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/tasksbridge/tasksbridge/era"
)

// Errors returned by every Store. Faces map ErrNotFound and ErrInvalidCursor to
// -32602 and ErrTerminal (from PinCancel) to -32602 as well (L-51, L-55, L-65).
var (
	// ErrNotFound: no such session or task in the caller's scope. It is returned
	// unwrapped, so a foreign id and an unknown id are indistinguishable.
	ErrNotFound = errors.New("sessionmap: not found")
	// ErrInvalidCursor: a tasks/list cursor that is forged, damaged or from
	// another scope.
	ErrInvalidCursor = errors.New("sessionmap: invalid cursor")
	// ErrTerminal: PinCancel on a task that is already terminal.
	ErrTerminal = errors.New("sessionmap: task is already terminal")
	// ErrExists: a create with an id that is already taken.
	ErrExists = errors.New("sessionmap: id already exists")
	// ErrInvalidArgument: a caller bug (bad status, empty scope, bad JSON payload...).
	ErrInvalidArgument = errors.New("sessionmap: invalid argument")
	// ErrCorrupt: a stored record cannot be decoded.
	ErrCorrupt = errors.New("sessionmap: corrupt record")
	// ErrUnsupportedVersion: a record written by a newer bridge.
	ErrUnsupportedVersion = errors.New("sessionmap: record written by a newer bridge")
	// ErrLocked: the data directory is in use by another process.
	ErrLocked = errors.New("sessionmap: data directory is locked")
	// ErrNeedsRecovery: a read-only open of a store that was not closed cleanly.
	ErrNeedsRecovery = errors.New("sessionmap: store needs crash recovery")
	// ErrReadOnly: a write to a store opened read-only.
	ErrReadOnly = errors.New("sessionmap: store is read-only")
	// ErrClosed: use of a closed store.
	ErrClosed = errors.New("sessionmap: store is closed")
)

// MaxIDLen bounds task and session ids. Longer ids are never stored, so a
// lookup with one is simply ErrNotFound.
const MaxIDLen = 512

// Status is a task status; the strings are the same in both eras.
type Status string

const (
	StatusWorking       Status = "working"
	StatusInputRequired Status = "input_required"
	StatusCompleted     Status = "completed"
	StatusFailed        Status = "failed"
	StatusCancelled     Status = "cancelled"
)

// Terminal reports whether s is completed, failed or cancelled.
func (s Status) Terminal() bool {
	return s == StatusCompleted || s == StatusFailed || s == StatusCancelled
}

// Valid reports whether s is one of the five statuses.
func (s Status) Valid() bool {
	return s == StatusWorking || s == StatusInputRequired || s.Terminal()
}

// Statuses lists every valid status, in lifecycle order.
var Statuses = []Status{StatusWorking, StatusInputRequired, StatusCompleted, StatusFailed, StatusCancelled}

// Direction says which era the client and the upstream speak.
type Direction string

const (
	// LegacyToModern: a 2025-11-25 client, a 2026-07-28 upstream (the main job).
	LegacyToModern Direction = "legacy_to_modern"
	// ModernToLegacy: a 2026-07-28 client, a 2025-11-25 upstream.
	ModernToLegacy Direction = "modern_to_legacy"
)

// Valid reports whether d is a known direction.
func (d Direction) Valid() bool { return d == LegacyToModern || d == ModernToLegacy }

// Origin says where a task came from.
type Origin string

const (
	// OriginUpstreamTask: the upstream created a task and the bridge maps it.
	OriginUpstreamTask Origin = "upstream_task"
	// OriginSynthesized: the upstream answered synchronously and the bridge
	// made a completed task to satisfy a task-augmented legacy request.
	OriginSynthesized Origin = "synthesized"
)

// Valid reports whether o is a known origin.
func (o Origin) Valid() bool { return o == OriginUpstreamTask || o == OriginSynthesized }

// Scope is who owns a session or task; see the package doc for the rule.
type Scope struct {
	// Principal is a credential hash from one of the PrincipalFrom* funcs
	// (Authorization, MTLSSubject, Subject, GatewayUser), or "" when the
	// request carried no credential.
	Principal string `json:"principal,omitempty"`
	// Session is the session id (the legacy Mcp-Session-Id, or a bridge id for stdio).
	Session string `json:"session,omitempty"`
}

// Key is the ownership key: the principal when there is one, else the session.
// Two scopes own the same tasks exactly when their keys are equal.
func (s Scope) Key() string {
	if s.Principal != "" {
		return "p\x00" + s.Principal
	}
	return "s\x00" + s.Session
}

// Valid reports whether s identifies an owner at all.
func (s Scope) Valid() bool {
	return (s.Principal != "" || s.Session != "") && len(s.Principal) <= MaxIDLen && len(s.Session) <= MaxIDLen
}

// Owns reports whether a caller with scope s may see task t.
func (s Scope) Owns(t Task) bool { return s.Key() == t.Scope.Key() }

// Domain-separation prefixes, so that the same bytes used as two kinds of
// credential never give the same principal.
const (
	authzDomain = "tasksbridge/principal/v1/authorization\x00"
	mtlsDomain  = "tasksbridge/principal/v1/mtls-subject\x00"
	// subjectDomain and gatewayDomain take two fields each, encoded with
	// length prefixes so that no (a, b) pair encodes like another.
	subjectDomain = "tasksbridge/principal/v1/issuer-subject\x00"
	gatewayDomain = "tasksbridge/principal/v1/gateway-user\x00"
)

// PrincipalFromAuthorization returns the principal for an HTTP Authorization
// header value: hex SHA-256 over a domain prefix and the value, with the
// (case-insensitive) scheme lower-cased and surrounding space trimmed. An empty
// header is no credential and gives "".
func PrincipalFromAuthorization(header string) string {
	h := strings.TrimSpace(header)
	if h == "" {
		return ""
	}
	if scheme, rest, ok := strings.Cut(h, " "); ok {
		h = strings.ToLower(scheme) + " " + strings.TrimSpace(rest)
	}
	return hashPrincipal(authzDomain, h)
}

// PrincipalFromMTLSSubject returns the principal for a verified client
// certificate subject (e.g. pkix.Name.String() or the raw subject DER as a
// string). An empty subject gives "".
func PrincipalFromMTLSSubject(subject string) string {
	if subject == "" {
		return ""
	}
	return hashPrincipal(mtlsDomain, subject)
}

// PrincipalFromSubject returns the principal for a verified token's issuer
// and subject (a JWT's iss and sub, or an RFC 7662 introspection answer's):
// the same for every token the issuer mints for that subject, so it survives
// token refresh. Either field empty gives "".
func PrincipalFromSubject(iss, sub string) string {
	if iss == "" || sub == "" {
		return ""
	}
	return hashPrincipal(subjectDomain, lengthPrefixed(iss, sub))
}

// PrincipalFromGatewayUser returns the principal for the identity a trusted
// gateway put into request header name (canonical form, e.g. "X-Forwarded-User").
// An empty value gives "".
func PrincipalFromGatewayUser(name, value string) string {
	if name == "" || value == "" {
		return ""
	}
	return hashPrincipal(gatewayDomain, lengthPrefixed(name, value))
}

// lengthPrefixed encodes a and b unambiguously: each as its decimal byte
// length, ':', the bytes.
func lengthPrefixed(a, b string) string {
	return strconv.Itoa(len(a)) + ":" + a + strconv.Itoa(len(b)) + ":" + b
}

func hashPrincipal(domain, v string) string {
	sum := sha256.Sum256([]byte(domain + v))
	return hex.EncodeToString(sum[:])
}

// NewTaskID returns a fresh task id: 144 bits from crypto/rand, base64url
// without padding (24 characters). L-70, M-65.
func NewTaskID() string {
	var b [18]byte
	for {
		_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (it aborts the program instead)
		// The first character comes from b[0]'s top six bits; 62 and 63 encode
		// '-' and '_'. An id starting with '-' reads as a flag to CLIs
		// (`bridge tasks show ID`), so draw again (≥ 143 bits remain).
		if b[0]>>2 < 62 {
			return base64.RawURLEncoding.EncodeToString(b[:])
		}
	}
}

// Session is one client session the bridge serves.
type Session struct {
	ID        string `json:"id"`
	Principal string `json:"principal,omitempty"`
	// Era is the era the session's client speaks (Legacy or Modern).
	Era era.Era `json:"era"`
	// ProtocolVersion is the negotiated protocol version.
	ProtocolVersion string `json:"protocolVersion,omitempty"`
	// InitializeParams is the client's full initialize params (capabilities,
	// clientInfo), kept so the session can be rehydrated after a restart.
	InitializeParams json.RawMessage `json:"initializeParams,omitempty"`
	LogLevel         string          `json:"logLevel,omitempty"`
	CreatedAt        time.Time       `json:"createdAt"`
	LastSeenAt       time.Time       `json:"lastSeenAt"`
	// IdleTimeoutMs > 0 makes the session expire that long after it was last
	// seen; 0 means it never expires on its own.
	IdleTimeoutMs int64 `json:"idleTimeoutMs,omitempty"`
	// ExpiresAt is when the session expires (zero: never). Maintained by the store.
	ExpiresAt time.Time `json:"expiresAt,omitzero"`
}

// Scope returns the session's own scope.
func (s Session) Scope() Scope { return Scope{Principal: s.Principal, Session: s.ID} }

// Task is one task handle the bridge gave a client.
type Task struct {
	// ID is the local id the client sees.
	ID    string `json:"id"`
	Scope Scope  `json:"scope"`

	Direction Direction `json:"direction"`
	Origin    Origin    `json:"origin"`
	// Upstream names the upstream target (its configured name or URL).
	Upstream string `json:"upstream,omitempty"`
	// UpstreamTaskID is the task id on the upstream ("" for synthesized tasks).
	UpstreamTaskID string `json:"upstreamTaskId,omitempty"`
	// UpstreamSessionID is the legacy upstream Mcp-Session-Id (ModernToLegacy).
	UpstreamSessionID string `json:"upstreamSessionId,omitempty"`
	// Method and ToolName are from the original request ("tools/call", tool).
	Method   string `json:"method,omitempty"`
	ToolName string `json:"toolName,omitempty"`

	// RequestedTTLMs is what the client asked for (nil: nothing asked).
	RequestedTTLMs *int64 `json:"requestedTtlMs"`
	// TTLMs is the effective TTL from CreatedAt (nil: unlimited).
	TTLMs *int64 `json:"ttlMs"`

	// Last known status snapshot.
	Status         Status    `json:"status"`
	StatusMessage  string    `json:"statusMessage,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
	LastUpdatedAt  time.Time `json:"lastUpdatedAt"`
	PollIntervalMs *int64    `json:"pollIntervalMs,omitempty"`

	// Cached terminal payload: the result, or the JSON-RPC error object
	// {code,message,data}. At most one is set, and only when terminal.
	Result json.RawMessage `json:"result,omitempty"`
	Error  json.RawMessage `json:"error,omitempty"`

	// AnsweredKeys are the input keys already answered upstream (sorted).
	AnsweredKeys []string `json:"answeredKeys,omitempty"`
	// OwedAnswers are the answers (an inputResponses value per key) the
	// bridge owes the upstream: each key is also in AnsweredKeys, so the
	// client is never asked for it again, and its payload stays here until
	// the upstream acknowledges it (SettleAnswers) or the task ends.
	// OweAnswers sets them.
	OwedAnswers map[string]json.RawMessage `json:"owedAnswers,omitempty"`
	// CancelPinned: the bridge pinned "cancelled" locally (legacy tasks/cancel);
	// later upstream states are ignored.
	CancelPinned bool `json:"cancelPinned,omitempty"`
	// UpstreamCancelPending: the bridge owes the upstream a tasks/cancel for
	// this task (the client cancelled it, or the bridge ended it) that the
	// upstream has not acknowledged yet. PinCancel sets it for a task with an
	// upstream task; SettleUpstream clears it.
	UpstreamCancelPending bool `json:"upstreamCancelPending,omitempty"`

	// WrittenAt is when the store last wrote this record.
	WrittenAt time.Time `json:"writtenAt"`
}

// ExpiresAt returns when the task expires, and false for an unlimited TTL.
func (t Task) ExpiresAt() (time.Time, bool) {
	if t.TTLMs == nil {
		return time.Time{}, false
	}
	return t.CreatedAt.Add(time.Duration(*t.TTLMs) * time.Millisecond), true
}

// Expired reports whether t has expired at now.
func (t Task) Expired(now time.Time) bool {
	at, ok := t.ExpiresAt()
	return ok && !now.Before(at)
}

// Snapshot is a status observation to merge into a task (from an upstream
// poll or notification, or from the bridge itself).
type Snapshot struct {
	Status        Status
	StatusMessage string
	// LastUpdatedAt is the status time; zero means "now". A non-terminal
	// snapshot older than the stored one is stale and ignored.
	LastUpdatedAt time.Time
	// PollIntervalMs replaces the stored value when non-nil.
	PollIntervalMs *int64
	// Result or Error is the terminal payload; ignored for non-terminal statuses.
	Result json.RawMessage
	Error  json.RawMessage
	// CancelUpstream, on a terminal snapshot the bridge makes itself (it ends
	// a task the upstream still runs), sets UpstreamCancelPending in the same
	// write when the snapshot takes effect.
	CancelUpstream bool
}

// Page is one page of ListTasks.
type Page struct {
	Tasks []Task
	// NextCursor is "" on the last page (L-50).
	NextCursor string
}
