package modern

import (
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// RequestMeta is params._meta of a 2026-07-28 request: the per-request
// protocol fields that replace initialize (§3.1). Keys this type does not model
// (traceparent, relatedTaskIds, vendor keys, ...) pass through in Other.
type RequestMeta struct {
	// ProtocolVersion is required on every request (M-01).
	ProtocolVersion string
	// ClientCapabilities is required on every request (M-01); nil = absent.
	// An empty object means "no optional capabilities".
	ClientCapabilities *ClientCapabilities
	// ClientInfo SHOULD be sent (M-02); nil = absent.
	ClientInfo *Implementation
	// LogLevel opts the request into notifications/message; "" = absent (M-46).
	LogLevel LoggingLevel
	// ProgressToken is the raw string|integer token; nil = absent.
	ProgressToken json.RawMessage
	// Other holds every other _meta key, raw.
	Other map[string]json.RawMessage
}

var requestMetaKeys = []string{MetaKeyProtocolVersion, MetaKeyClientCapabilities, MetaKeyClientInfo, MetaKeyLogLevel, MetaKeyProgressToken}

// NewRequestMeta returns the _meta a modern client puts on every request:
// protocol version 2026-07-28, the given capabilities and clientInfo.
func NewRequestMeta(caps ClientCapabilities, clientInfo *Implementation) RequestMeta {
	return RequestMeta{ProtocolVersion: ProtocolVersion, ClientCapabilities: &caps, ClientInfo: clientInfo}
}

// TasksDeclared reports whether this request declares the tasks extension
// (M-50, M-61: capabilities are judged per request, never remembered).
func (m RequestMeta) TasksDeclared() bool {
	return m.ClientCapabilities != nil && m.ClientCapabilities.HasTasksExtension()
}

// Validate checks the required per-request fields and returns -32602 naming
// the missing or invalid key (M-37). It does not judge whether the version is
// supported; use CheckProtocolVersion for that (-32022, M-38).
func (m RequestMeta) Validate() error {
	if m.ProtocolVersion == "" {
		return rpc.Errorf(rpc.CodeInvalidParams,
			"Invalid params: missing required _meta field %q: every MCP %s request must carry its protocol version in params._meta",
			MetaKeyProtocolVersion, ProtocolVersion)
	}
	if m.ClientCapabilities == nil {
		return rpc.Errorf(rpc.CodeInvalidParams,
			"Invalid params: missing required _meta field %q: every MCP %s request must declare its client capabilities in params._meta (use {} for none)",
			MetaKeyClientCapabilities, ProtocolVersion)
	}
	if m.LogLevel != "" && !m.LogLevel.Valid() {
		return rpc.Errorf(rpc.CodeInvalidParams,
			"Invalid params: _meta field %q has unknown level %q (want one of debug, info, notice, warning, error, critical, alert, emergency)",
			MetaKeyLogLevel, string(m.LogLevel))
	}
	if m.ProgressToken != nil {
		if _, ok := parseID(m.ProgressToken); !ok {
			return rpc.Errorf(rpc.CodeInvalidParams, "Invalid params: _meta field %q must be a string or an integer", MetaKeyProgressToken)
		}
	}
	return nil
}

// CheckProtocolVersion returns -32022 UnsupportedProtocolVersion when requested
// is not in supported (M-38), nil otherwise.
func CheckProtocolVersion(requested string, supported []string) error {
	for _, v := range supported {
		if v == requested {
			return nil
		}
	}
	return ErrUnsupportedProtocolVersion(requested, supported)
}

// DecodeRequestMeta reads params._meta out of raw request params. Absent params
// or an absent _meta yield a zero RequestMeta (Validate then reports what is
// missing); a _meta or known key of the wrong JSON type is -32602.
func DecodeRequestMeta(params []byte) (RequestMeta, error) {
	if isNull(params) {
		return RequestMeta{}, nil
	}
	r, err := topReader("request params", params)
	if err != nil {
		return RequestMeta{}, err
	}
	return readMetaField(r)
}

// readMetaField reads the "_meta" key of a params object.
func readMetaField(r *reader) (RequestMeta, error) {
	if !r.has("_meta") {
		return RequestMeta{}, nil
	}
	c, err := r.child("_meta")
	if err != nil {
		return RequestMeta{}, err
	}
	return readRequestMeta(c)
}

// DecodeRequestMetaObject decodes the _meta object itself.
func DecodeRequestMetaObject(data []byte) (RequestMeta, error) {
	r, err := topReader("_meta", data)
	if err != nil {
		return RequestMeta{}, err
	}
	return readRequestMeta(r)
}

func readRequestMeta(r *reader) (RequestMeta, error) {
	var m RequestMeta
	var err error
	if m.ProtocolVersion, _, err = r.str(MetaKeyProtocolVersion); err != nil {
		return m, err
	}
	if r.has(MetaKeyClientCapabilities) {
		c, err := r.child(MetaKeyClientCapabilities)
		if err != nil {
			return m, err
		}
		caps, err := readClientCaps(c)
		if err != nil {
			return m, err
		}
		m.ClientCapabilities = &caps
	}
	if r.has(MetaKeyClientInfo) {
		c, err := r.child(MetaKeyClientInfo)
		if err != nil {
			return m, err
		}
		im, err := readImplementation(c)
		if err != nil {
			return m, err
		}
		m.ClientInfo = &im
	}
	lvl, _, err := r.str(MetaKeyLogLevel)
	if err != nil {
		return m, err
	}
	m.LogLevel = LoggingLevel(lvl)
	if v := r.raw(MetaKeyProgressToken); v != nil {
		if _, ok := parseID(v); !ok {
			return m, r.fail(MetaKeyProgressToken, "must be a string or an integer, got %s", describe(v))
		}
		m.ProgressToken = v
	}
	m.Other = r.rest(requestMetaKeys...)
	return m, nil
}

// MarshalJSON encodes the _meta object. It writes whatever is set, so a
// partial RequestMeta can be merged by StampRequestMeta; Validate checks
// completeness.
func (m RequestMeta) MarshalJSON() ([]byte, error) {
	w := newWriter()
	if m.ProtocolVersion != "" {
		w.field(MetaKeyProtocolVersion, m.ProtocolVersion)
	}
	if m.ClientInfo != nil {
		w.field(MetaKeyClientInfo, *m.ClientInfo)
	}
	if m.ClientCapabilities != nil {
		w.field(MetaKeyClientCapabilities, *m.ClientCapabilities)
	}
	if m.LogLevel != "" {
		w.field(MetaKeyLogLevel, string(m.LogLevel))
	}
	if m.ProgressToken != nil {
		w.raw(MetaKeyProgressToken, m.ProgressToken)
	}
	w.extra(m.Other)
	return w.bytes()
}

// UnmarshalJSON decodes the _meta object leniently.
func (m *RequestMeta) UnmarshalJSON(data []byte) error {
	return decodeInto(m, DecodeRequestMetaObject, data)
}

// fields returns the _meta keys this RequestMeta sets, raw.
func (m RequestMeta) fields() (map[string]json.RawMessage, error) {
	b, err := m.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var out map[string]json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, encodeErr("_meta: %v", err)
	}
	return out, nil
}

// StampRequestMeta merges meta into params._meta and returns the new params.
// Keys meta sets replace the same keys in an existing _meta (in place); every
// other _meta key and every other params member is kept as it was: same
// order, same key spelling, values copied byte for byte (only insignificant
// whitespace may change). New _meta keys are appended, a new _meta member goes
// last. Absent or null params become {"_meta":{...}}. The merged _meta must
// pass Validate (the bridge never sends an incomplete one, M-01); otherwise
// the error is -32603 carrying Validate's message.
func StampRequestMeta(params []byte, meta RequestMeta) (json.RawMessage, error) {
	ms, err := rawMembers("request params", params)
	if err != nil {
		return nil, err
	}
	var metaMs []rawjson.Member
	for _, m := range ms {
		if m.Key != "_meta" || isNull(m.Val) {
			continue
		}
		if !isObject(m.Val) {
			return nil, invalidParams("request params", "field %q must be an object, got %s", "_meta", jsonKind(m.Val))
		}
		if metaMs, err = rawMembers("request params: field \"_meta\"", m.Val); err != nil {
			return nil, err
		}
	}
	ab, err := meta.MarshalJSON()
	if err != nil {
		return nil, err
	}
	add, err := rawMembers("_meta", ab)
	if err != nil {
		return nil, err
	}
	for _, a := range add {
		metaMs = rawjson.With(metaMs, a.Key, a.Val)
	}
	mb, err := writeRawMembers(metaMs)
	if err != nil {
		return nil, err
	}
	final, err := DecodeRequestMetaObject(mb)
	if err != nil {
		return nil, err
	}
	if err := final.Validate(); err != nil {
		return nil, rpc.Errorf(rpc.CodeInternalError, "modern: stamp _meta: %s", rpc.As(err).Message)
	}
	return writeRawMembers(rawjson.With(ms, "_meta", mb))
}
