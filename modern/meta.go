package modern

import (
	"bytes"
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// RequestMeta is params._meta of a 2026-07-28 request: the per-request
// protocol fields that replace initialize (M-01, M-02). Keys this type does not model
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
	if err := checkJSON("request params", params); err != nil {
		return RequestMeta{}, err
	}
	if isObject(params) {
		// Only _meta is read: a reader over {"_meta":…} alone (the last
		// _meta, as the member map keeps it), so a large call's other
		// members are neither copied nor split.
		var meta []byte
		for k, v := range rawjson.All(params) {
			if string(rawjson.KeyBytes(k)) == "_meta" {
				meta = v
			}
		}
		if meta == nil {
			return RequestMeta{}, nil
		}
		params = append(append([]byte(`{"_meta":`), meta...), '}')
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
	ms, metaMs, err := splitParamsMeta(params)
	if err != nil {
		return nil, err
	}
	return stampFull(ms, metaMs, meta)
}

// splitParamsMeta splits params into their members and those of their _meta
// (nil when absent or null).
func splitParamsMeta(params []byte) (ms, metaMs []rawjson.Member, err error) {
	if ms, err = rawMembers("request params", params); err != nil {
		return nil, nil, err
	}
	if metaMs, err = metaOf(ms); err != nil {
		return nil, nil, err
	}
	return ms, metaMs, nil
}

// metaOf splits the _meta member of params' members ms (nil when absent or
// null).
func metaOf(ms []rawjson.Member) (metaMs []rawjson.Member, err error) {
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
	return metaMs, nil
}

// stampFull is StampRequestMeta after the split: encode meta, merge it,
// decode and validate the merged _meta (M-01), write the params back.
func stampFull(ms, metaMs []rawjson.Member, meta RequestMeta) (json.RawMessage, error) {
	add, err := metaMembers(meta)
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

// metaMembers is meta encoded and split into its members.
func metaMembers(meta RequestMeta) ([]rawjson.Member, error) {
	ab, err := meta.MarshalJSON()
	if err != nil {
		return nil, err
	}
	return rawMembers("_meta", ab)
}

// PreparedMeta is a RequestMeta encoded, split and validated once, for a
// sender that stamps the same _meta on many requests (a legacy session's
// upstream calls: the session's capabilities, clientInfo and log
// level change only with the session). StampPreparedMeta with it gives what
// StampRequestMeta gives with Meta(), byte for byte and error for error. It
// is never changed after PrepareRequestMeta, so requests share it freely.
type PreparedMeta struct {
	meta RequestMeta
	// add: meta's members as StampRequestMeta appends them to an _meta that
	// lacks them (key literals as rawjson.With writes them).
	add []rawjson.Member
	// enc: add written out, the whole _meta of params that carry none.
	enc json.RawMessage
	// ok: enc decodes and passes Validate on its own, so a merge that only
	// adds keys it cannot misread keeps it valid (the fast path's premise).
	ok bool
}

// PrepareRequestMeta encodes and validates meta once. A meta that does not
// encode or validate is kept too: stamping with it takes the full path and
// returns StampRequestMeta's error.
func PrepareRequestMeta(meta RequestMeta) *PreparedMeta {
	p := &PreparedMeta{meta: meta}
	add, err := metaMembers(meta)
	if err != nil {
		return p
	}
	for _, a := range add {
		p.add = rawjson.With(p.add, a.Key, a.Val)
	}
	if p.enc, err = writeRawMembers(p.add); err != nil {
		return p
	}
	final, err := DecodeRequestMetaObject(p.enc)
	p.ok = err == nil && final.Validate() == nil
	return p
}

// Meta returns the RequestMeta p was prepared from.
func (p *PreparedMeta) Meta() RequestMeta { return p.meta }

// StampPreparedMeta is StampRequestMeta(params, p.Meta()) without encoding,
// re-splitting, decoding and validating the same _meta on every request:
// when params carry no _meta, or one whose keys p does not set and which are
// not per-request keys (a valid progressToken excepted when p has none), the
// merged _meta is params' members followed by p's, valid because p is.
// Anything else takes StampRequestMeta's path, so its errors (M-37, -32602
// wording) stay the same.
func StampPreparedMeta(params []byte, p *PreparedMeta) (json.RawMessage, error) {
	ms, metaMs, err := splitParamsMeta(params)
	if err != nil {
		return nil, err
	}
	return stampPrepared(ms, metaMs, p, len(params))
}

// StampPreparedMembers is StampPreparedMeta for params a caller has already
// split: ms are the members of a valid JSON object without duplicate keys
// (a rawjson.Object's), written back compacted as StampPreparedMeta writes
// them. A translator that decoded and edited params stamps them without
// encoding them first only to have them split again (one copy and two
// scans of a 1 MB call fewer).
func StampPreparedMembers(ms []rawjson.Member, p *PreparedMeta) (json.RawMessage, error) {
	ms = ms[:len(ms):len(ms)] // the caller's members: appending must copy them
	metaMs, err := metaOf(ms)
	if err != nil {
		return nil, err
	}
	size := 2
	for _, m := range ms {
		size += len(m.RawKey) + len(m.Val) + 2
	}
	return stampPrepared(ms, metaMs, p, size)
}

// StampRequestMembers is StampRequestMeta for params already split, as
// StampPreparedMembers.
func StampRequestMembers(ms []rawjson.Member, meta RequestMeta) (json.RawMessage, error) {
	metaMs, err := metaOf(ms)
	if err != nil {
		return nil, err
	}
	return stampFull(ms, metaMs, meta)
}

// stampPrepared is StampPreparedMeta after the split; size bounds the
// length of params as written.
func stampPrepared(ms, metaMs []rawjson.Member, p *PreparedMeta, size int) (json.RawMessage, error) {
	var err error
	if !p.ok || !p.disjoint(metaMs) {
		return stampFull(ms, metaMs, p.meta)
	}
	mb := p.enc
	if len(metaMs) > 0 {
		merged := make([]rawjson.Member, 0, len(metaMs)+len(p.add))
		if mb, err = writeRawMembersSized(append(append(merged, metaMs...), p.add...), size+len(p.enc)); err != nil {
			return nil, err
		}
	}
	size += len(mb) + len(`,"_meta":{}`)
	if _, ok := rawjson.Lookup(ms, "_meta"); ok {
		return writeRawMembersSized(rawjson.With(ms, "_meta", mb), size)
	}
	// What rawjson.With appends for a new key, without encoding its literal
	// on every request.
	return writeRawMembersSized(append(ms, rawjson.Member{Key: "_meta", RawKey: metaKeyLiteral, Val: mb}), size)
}

var metaKeyLiteral = rawjson.Key("_meta")

// writeRawMembersSized is writeRawMembers into a buffer of capacity size (an
// upper bound of the output), so the per-request stamp grows no buffer.
func writeRawMembersSized(ms []rawjson.Member, size int) (json.RawMessage, error) {
	b, err := rawjson.AppendCompact(make([]byte, 0, size), ms)
	if err != nil {
		return nil, encodeErr("%v", err)
	}
	return b, nil
}

// disjoint reports whether merging p into an _meta with members metaMs only
// appends p's members and leaves every key the decoder reads (requestMetaKeys)
// to p, or to params' own well-formed progressToken when p sets none.
func (p *PreparedMeta) disjoint(metaMs []rawjson.Member) bool {
	for _, m := range metaMs {
		for _, a := range p.add {
			if a.Key == m.Key {
				return false
			}
		}
		if !contains(requestMetaKeys, m.Key) {
			continue
		}
		if m.Key != MetaKeyProgressToken || p.meta.ProgressToken != nil {
			return false
		}
		if _, ok := parseID(bytes.TrimSpace(m.Val)); !ok {
			return false
		}
	}
	return true
}
