package modern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// This file holds the small JSON toolkit every codec in the package uses:
// a field reader that names the offending field in its -32602 errors, and an
// ordered object writer that never HTML-escapes (so opaque strings such as
// requestState survive byte-for-byte, M-18).

// maxSafeInt is 2^53-1, the integer bound of the official schemas (@format int).
const maxSafeInt = 1<<53 - 1

// Marshal is json.Marshal without HTML escaping. encoding/json's Marshal
// re-escapes <, > and & (and U+2028/U+2029) inside the output of every
// MarshalJSON; the values stay equal, but opaque strings such as requestState
// then differ from what the server sent at the byte level. Faces should encode
// outgoing messages with Marshal or the Encode* envelope helpers.
func Marshal(v any) ([]byte, error) { return rawjson.Marshal(v) }

// marshal is Marshal (internal/rawjson: no HTML escaping, no trailing newline).
var marshal = rawjson.Marshal

// encodeErr is the error of a strict encoder: the value violates the schema, a
// programming error on our side, so a face answers it with -32603.
func encodeErr(format string, a ...any) *rpc.Error {
	return rpc.Errorf(rpc.CodeInternalError, "modern: encode "+format, a...)
}

// invalidParams is the -32602 of every decoder: "<ctx>: <msg>".
func invalidParams(ctx, format string, a ...any) *rpc.Error {
	return rpc.Errorf(rpc.CodeInvalidParams, ctx+": "+format, a...)
}

// parseError is the -32700 for input that is not JSON at all.
func parseError(ctx string, err error) *rpc.Error {
	msg := "not valid JSON"
	var se *json.SyntaxError
	if errors.As(err, &se) {
		msg = fmt.Sprintf("not valid JSON (offset %d: %v)", se.Offset, se)
	}
	return rpc.Errorf(rpc.CodeParseError, "Parse error: %s: %s", ctx, msg)
}

// checkJSON returns a -32700 when data is not a single JSON value.
func checkJSON(ctx string, data []byte) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return rpc.Errorf(rpc.CodeParseError, "Parse error: %s: empty input", ctx)
	}
	if !rawjson.Valid(data) {
		var v any
		return parseError(ctx, json.Unmarshal(data, &v))
	}
	return nil
}

// isNull reports whether raw is absent or the JSON literal null.
func isNull(raw json.RawMessage) bool { return rawjson.IsAbsent(raw) }

// JSONKind names the JSON type of raw for error messages ("an object", "a
// number", "nothing" when absent, …).
func JSONKind(raw json.RawMessage) string { return jsonKind(raw) }

// jsonKind names the JSON type of raw for error messages.
func jsonKind(raw json.RawMessage) string { return rawjson.Kind(raw) }

func isObject(raw json.RawMessage) bool { return rawjson.IsObject(raw) }

func isString(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '"'
}

// reader reads the fields of one JSON object. ctx names the message ("tasks/get
// params"), prefix the object's path inside it ("inputRequests.name.").
type reader struct {
	ctx    string
	prefix string
	m      map[string]json.RawMessage
}

// newReader parses data (already valid JSON) as an object.
func newReader(ctx, prefix string, data []byte) (*reader, error) {
	if !isObject(data) {
		where := ctx
		if prefix != "" {
			where = fmt.Sprintf("%s: field %q", ctx, strings.TrimSuffix(prefix, "."))
		}
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "%s must be a JSON object, got %s", where, jsonKind(data))
	}
	m, err := memberMap(data)
	if err != nil {
		return nil, invalidParams(ctx, "%v", err)
	}
	return &reader{ctx: ctx, prefix: prefix, m: m}, nil
}

// memberMap is the object data as a map, the last duplicate winning (as
// encoding/json decodes it), values sharing data's bytes (topReader copies
// the input once): split by the raw-JSON scanner instead of a reflective
// decode, since every message the bridge forwards is read this way. data is
// valid JSON — topReader's input after checkJSON, or a value inside it — so
// it is not validated again at every level.
func memberMap(data []byte) (map[string]json.RawMessage, error) {
	ms, err := rawjson.Members(data)
	if err != nil {
		return nil, err
	}
	m := make(map[string]json.RawMessage, len(ms))
	for _, mem := range ms {
		m[mem.Key] = mem.Val
	}
	return m, nil
}

// topReader is newReader for a decoder's entry point: -32700 for non-JSON.
func topReader(ctx string, data []byte) (*reader, error) {
	if err := checkJSON(ctx, data); err != nil {
		return nil, err
	}
	// One copy of the input: every value read from it (and from its nested
	// readers) shares these bytes, so decoded messages never alias a buffer
	// the caller may reuse.
	return newReader(ctx, "", bytes.Clone(data))
}

func (r *reader) name(key string) string { return r.prefix + key }

func (r *reader) fail(key, format string, a ...any) *rpc.Error {
	return invalidParams(r.ctx, "field %q %s", r.name(key), fmt.Sprintf(format, a...))
}

func (r *reader) missing(key string) *rpc.Error {
	return invalidParams(r.ctx, "missing required field %q", r.name(key))
}

// child opens the object at key for nested reading.
func (r *reader) child(key string) (*reader, error) {
	return newReader(r.ctx, r.name(key)+".", r.m[key])
}

// has reports whether key is present and not null.
func (r *reader) has(key string) bool { return !isNull(r.m[key]) }

// raw returns the value at key, nil when absent or null.
func (r *reader) raw(key string) json.RawMessage {
	if !r.has(key) {
		return nil
	}
	return bytes.TrimSpace(r.m[key])
}

// str reads an optional string (absent or null → "", false).
func (r *reader) str(key string) (string, bool, error) {
	v := r.raw(key)
	if v == nil {
		return "", false, nil
	}
	if !isString(v) {
		return "", false, r.fail(key, "must be a string, got %s", describe(v))
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", false, r.fail(key, "is not a valid string: %v", err)
	}
	return s, true, nil
}

// reqStr reads a required, non-empty string.
func (r *reader) reqStr(key string) (string, error) {
	s, ok, err := r.str(key)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", r.missing(key)
	}
	if s == "" {
		return "", r.fail(key, "must not be empty")
	}
	return s, nil
}

// int reads an optional integer; integral floats (5000.0, 5e3, as JavaScript
// may send them) are accepted. Absent or null → nil.
func (r *reader) int(key string) (*int64, error) {
	v := r.raw(key)
	if v == nil {
		return nil, nil
	}
	n, ok := parseInt(v)
	if !ok {
		return nil, r.fail(key, "must be an integer, got %s", describe(v))
	}
	return &n, nil
}

func parseInt(v json.RawMessage) (int64, bool) {
	s := string(v)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return n, true
	}
	if len(s) == 0 || !(s[0] == '-' || (s[0] >= '0' && s[0] <= '9')) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || math.Abs(f) > math.MaxInt64/2 {
		return 0, false
	}
	return int64(f), true
}

// describe is jsonKind, plus the literal for short scalars.
func describe(v json.RawMessage) string {
	k := jsonKind(v)
	if (k == "a number" || k == "a string") && len(v) <= 40 {
		return k + " " + string(v)
	}
	return k
}

// bool reads an optional boolean.
func (r *reader) bool(key string) (bool, bool, error) {
	v := r.raw(key)
	if v == nil {
		return false, false, nil
	}
	switch string(v) {
	case "true":
		return true, true, nil
	case "false":
		return false, true, nil
	}
	return false, false, r.fail(key, "must be a boolean, got %s", jsonKind(v))
}

// strList reads an optional array of strings; present-but-empty gives a
// non-nil empty slice so callers can tell [] from absent.
func (r *reader) strList(key string) ([]string, error) {
	v := r.raw(key)
	if v == nil {
		return nil, nil
	}
	if jsonKind(v) != "an array" {
		return nil, r.fail(key, "must be an array of strings, got %s", jsonKind(v))
	}
	var items []json.RawMessage
	if err := json.Unmarshal(v, &items); err != nil {
		return nil, r.fail(key, "is not a valid array: %v", err)
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		if !isString(it) {
			return nil, invalidParams(r.ctx, "field %q must be a string, got %s", fmt.Sprintf("%s[%d]", r.name(key), i), jsonKind(it))
		}
		var s string
		if err := json.Unmarshal(it, &s); err != nil {
			return nil, r.fail(key, "is not a valid array of strings: %v", err)
		}
		out = append(out, s)
	}
	return out, nil
}

// object reads an optional JSON object as an Object (absent or null → nil).
func (r *reader) object(key string) (Object, error) {
	v := r.raw(key)
	if v == nil {
		return nil, nil
	}
	if !isObject(v) {
		return nil, r.fail(key, "must be an object, got %s", jsonKind(v))
	}
	o, err := memberMap(v)
	if err != nil {
		return nil, r.fail(key, "is not a valid object: %v", err)
	}
	return Object(o), nil
}

// objPtr is object for presence-carrying capability leaves.
func (r *reader) objPtr(key string) (*Object, error) {
	o, err := r.object(key)
	if err != nil || o == nil {
		return nil, err
	}
	return &o, nil
}

// objectMap reads an optional map of objects (experimental, extensions).
func (r *reader) objectMap(key string) (map[string]Object, error) {
	c, err := r.optChild(key)
	if err != nil || c == nil {
		return nil, err
	}
	out := make(map[string]Object, len(c.m))
	for k := range c.m {
		o, err := c.object(k)
		if err != nil {
			return nil, err
		}
		if o == nil { // null settings: lenient, treat as {}
			o = Object{}
		}
		out[k] = o
	}
	return out, nil
}

// optChild is child for an optional object (absent or null → nil).
func (r *reader) optChild(key string) (*reader, error) {
	if !r.has(key) {
		return nil, nil
	}
	return r.child(key)
}

// id reads an optional JSON-RPC request id (string or integer).
func (r *reader) id(key string) (jsonrpc.ID, bool, error) {
	v := r.raw(key)
	if v == nil {
		return jsonrpc.ID{}, false, nil
	}
	id, ok := parseID(v)
	if !ok {
		return jsonrpc.ID{}, false, r.fail(key, "must be a string or an integer, got %s", describe(v))
	}
	return id, true, nil
}

// parseID accepts a JSON string or integer (M-03: never null).
func parseID(v json.RawMessage) (jsonrpc.ID, bool) {
	var x any
	if isString(v) {
		var s string
		if json.Unmarshal(v, &s) != nil {
			return jsonrpc.ID{}, false
		}
		x = s
	} else {
		n, ok := parseInt(v)
		if !ok || n > maxSafeInt || n < -maxSafeInt {
			return jsonrpc.ID{}, false
		}
		x = float64(n) // go-sdk's MakeID takes the default JSON decoding
	}
	id, err := jsonrpc.MakeID(x)
	return id, err == nil
}

// rest returns the fields not in known (nil when there are none).
func (r *reader) rest(known ...string) map[string]json.RawMessage {
	var out map[string]json.RawMessage
	for k, v := range r.m {
		if contains(known, k) {
			continue
		}
		if out == nil {
			out = map[string]json.RawMessage{}
		}
		out[k] = v
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// writer builds a JSON object with fields in insertion order.
type writer struct {
	buf  bytes.Buffer
	keys map[string]bool
	err  error
}

func newWriter() *writer {
	w := &writer{keys: map[string]bool{}}
	w.buf.WriteByte('{')
	return w
}

func (w *writer) key(k string) bool {
	if w.err != nil || w.keys[k] {
		return false
	}
	w.keys[k] = true
	if w.buf.Len() > 1 {
		w.buf.WriteByte(',')
	}
	kb, _ := marshal(k)
	w.buf.Write(kb)
	w.buf.WriteByte(':')
	return true
}

// field writes k: v (v marshalled without HTML escaping).
func (w *writer) field(k string, v any) {
	if w.err != nil || w.keys[k] {
		return
	}
	b, err := marshal(v)
	if err != nil {
		w.err = fmt.Errorf("modern: encode field %q: %w", k, err)
		return
	}
	if w.key(k) {
		w.buf.Write(b)
	}
}

// raw writes k: raw, compacted but otherwise byte-for-byte.
func (w *writer) raw(k string, raw json.RawMessage) {
	if w.err != nil || w.keys[k] {
		return
	}
	var c bytes.Buffer
	if err := json.Compact(&c, raw); err != nil {
		w.err = encodeErr("field %q: not valid JSON: %v", k, err)
		return
	}
	if w.key(k) {
		w.buf.Write(c.Bytes())
	}
}

// extra writes the unknown fields in key order, skipping keys already written.
func (w *writer) extra(m map[string]json.RawMessage) {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		w.raw(k, m[k])
	}
}

func (w *writer) bytes() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	w.buf.WriteByte('}')
	return w.buf.Bytes(), nil
}

// idValue is the JSON value of a valid id.
func idValue(id jsonrpc.ID) any { return id.Raw() }

// decodeInto runs a package decoder from UnmarshalJSON.
func decodeInto[T any](dst *T, dec func([]byte) (T, error), data []byte) error {
	v, err := dec(data)
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// rawMembers splits the JSON object data into its members in input order
// (internal/rawjson: keys and values exactly as in the input). Absent or null
// data is the empty object; anything but an object is -32602 (-32700 for
// non-JSON). A duplicate key keeps its last value, at the position of that
// last occurrence (encoding/json's last-wins rule).
func rawMembers(ctx string, data []byte) ([]rawjson.Member, error) {
	if isNull(data) {
		return nil, nil
	}
	if err := checkJSON(ctx, data); err != nil {
		return nil, err
	}
	if !isObject(data) {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "%s must be a JSON object, got %s", ctx, jsonKind(data))
	}
	ms, err := rawjson.Members(data)
	if err != nil {
		return nil, parseError(ctx, err)
	}
	return rawjson.Dedup(ms), nil
}

// writeRawMembers renders members in order: keys as they came, values
// compacted but otherwise byte for byte.
func writeRawMembers(ms []rawjson.Member) (json.RawMessage, error) {
	b, err := rawjson.AppendCompact(nil, ms)
	if err != nil {
		return nil, encodeErr("%v", err)
	}
	return b, nil
}
