package translate

import (
	"bytes"
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// object is a JSON object kept as its members in input order, each with the
// key literal and the value bytes exactly as they came (internal/rawjson). A
// proxy forwards what it does not touch byte for byte: Bytes() changes only
// insignificant whitespace (values are compacted), never member order, key
// spelling (escapes included), number spelling or string escapes. New
// members are appended; a replaced member keeps its position. The zero value
// is {}.
type object = rawjson.Object

// decodeObject decodes data as a JSON object: not JSON → -32700, anything but
// an object → -32602 naming what. Empty input and null are errors too unless
// allowEmpty, when they give an empty object. Duplicate keys keep the last
// value (as encoding/json does), at the position of that last occurrence.
func decodeObject(data []byte, what string, allowEmpty bool) (object, error) {
	trimmed := bytes.TrimSpace(data)
	if allowEmpty && rawjson.IsAbsent(trimmed) {
		return object{}, nil
	}
	if len(trimmed) == 0 {
		return object{}, rpc.Errorf(rpc.CodeInvalidParams, "%s is missing (want a JSON object)", what)
	}
	if !rawjson.Valid(trimmed) {
		return object{}, rpc.Errorf(rpc.CodeParseError, "%s is not valid JSON", what)
	}
	if trimmed[0] != '{' {
		return object{}, rpc.Errorf(rpc.CodeInvalidParams, "%s must be a JSON object", what)
	}
	o, err := rawjson.Decode(trimmed)
	if err != nil {
		return object{}, rpc.Errorf(rpc.CodeInvalidParams, "%s: %v", what, err)
	}
	return o, nil
}

// decodeSplitObject is decodeObject for params legacy.SplitTaskParam has
// accepted: absent, or a valid JSON object, which is split without being
// validated a second time (a pass over a large call fewer). Anything else
// goes to decodeObject, which words its error.
func decodeSplitObject(rest []byte, what string, allowEmpty bool) (object, error) {
	if rawjson.IsAbsent(rest) {
		return decodeObject(rest, what, allowEmpty)
	}
	o, err := rawjson.Decode(rest)
	if err != nil {
		return decodeObject(rest, what, allowEmpty)
	}
	return o, nil
}

// sub decodes member key of o as an object; absent or null gives (empty,
// false, nil).
func sub(o object, key, what string) (object, bool, error) {
	v, ok := o.Get(key)
	if !ok || rawjson.IsNull(v) {
		return object{}, false, nil
	}
	s, err := decodeObject(v, what, false)
	return s, err == nil, err
}

// str reads member key of o as a string; absent gives "".
func str(o object, key, what string) (string, error) {
	v, ok := o.Get(key)
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", rpc.Errorf(rpc.CodeInvalidParams, "%s must be a string", what)
	}
	return s, nil
}

// withoutMetaKeys returns o with the given _meta keys removed, and _meta
// itself removed when nothing is left. A malformed _meta is -32602.
func withoutMetaKeys(o object, what string, keys ...string) (object, error) {
	meta, ok, err := sub(o, "_meta", what+"._meta")
	if err != nil || !ok {
		return o, err
	}
	changed := false
	for _, k := range keys {
		if meta.Has(k) {
			meta.Del(k)
			changed = true
		}
	}
	if !changed {
		return o, nil
	}
	o = o.Clone()
	if meta.Len() == 0 {
		o.Del("_meta")
	} else {
		o.Put("_meta", meta.Bytes())
	}
	return o, nil
}

// internalErr is the -32603 for a message an upstream got wrong (L-66,
// M-62): the client did nothing wrong, so it must not see -32602.
func internalErr(format string, a ...any) *rpc.Error {
	return rpc.Errorf(rpc.CodeInternalError, format, a...)
}

// upstreamErr re-codes a decoding error of a message that came from an
// upstream as -32603, keeping its text.
func upstreamErr(what string, err error) error {
	if err == nil {
		return nil
	}
	return internalErr("upstream sent an invalid %s: %s", what, rpc.As(err).Message)
}
