package translate

import (
	"bytes"
	"encoding/json"
	"sort"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// object is a JSON object kept raw per member, so members translate does not
// touch are forwarded as they came (only insignificant whitespace may change).
type object map[string]json.RawMessage

// decodeObject decodes data as a JSON object: not JSON → -32700, anything but
// an object → -32602 naming what. Empty input and null are errors too unless
// allowEmpty, when they give an empty object.
func decodeObject(data []byte, what string, allowEmpty bool) (object, error) {
	trimmed := bytes.TrimSpace(data)
	if allowEmpty && (len(trimmed) == 0 || string(trimmed) == "null") {
		return object{}, nil
	}
	if len(trimmed) == 0 {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "%s is missing (want a JSON object)", what)
	}
	if !json.Valid(trimmed) {
		return nil, rpc.Errorf(rpc.CodeParseError, "%s is not valid JSON", what)
	}
	if trimmed[0] != '{' {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "%s must be a JSON object", what)
	}
	var o object
	if err := json.Unmarshal(trimmed, &o); err != nil {
		return nil, rpc.Errorf(rpc.CodeInvalidParams, "%s: %v", what, err)
	}
	if o == nil {
		o = object{}
	}
	return o, nil
}

// sub decodes member key as an object; absent or null gives (nil, false, nil).
func (o object) sub(key, what string) (object, bool, error) {
	v, ok := o[key]
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return nil, false, nil
	}
	s, err := decodeObject(v, what, false)
	return s, err == nil, err
}

// str reads member key as a string; absent gives "".
func (o object) str(key, what string) (string, error) {
	v, ok := o[key]
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", rpc.Errorf(rpc.CodeInvalidParams, "%s must be a string", what)
	}
	return s, nil
}

// set stores the JSON encoding of v under key.
func (o object) set(key string, v any) error {
	b, err := marshalNoEscape(v)
	if err != nil {
		return rpc.Errorf(rpc.CodeInternalError, "encode %s: %v", key, err)
	}
	o[key] = b
	return nil
}

// clone returns a shallow copy (raw values are never mutated in place).
func (o object) clone() object {
	c := make(object, len(o))
	for k, v := range o {
		c[k] = v
	}
	return c
}

// raw encodes o with sorted keys and without HTML escaping, so opaque strings
// keep their bytes.
func (o object) raw() json.RawMessage {
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := marshalNoEscape(k)
		b.Write(kb)
		b.WriteByte(':')
		if err := json.Compact(&b, o[k]); err != nil {
			b.WriteString("null") // unreachable: members come from decoded JSON or set
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// withoutMetaKeys returns o with the given _meta keys removed, and _meta
// itself removed when nothing is left. A malformed _meta is -32602.
func withoutMetaKeys(o object, what string, keys ...string) (object, error) {
	meta, ok, err := o.sub("_meta", what+"._meta")
	if err != nil || !ok {
		return o, err
	}
	changed := false
	for _, k := range keys {
		if _, has := meta[k]; has {
			delete(meta, k)
			changed = true
		}
	}
	if !changed {
		return o, nil
	}
	o = o.clone()
	if len(meta) == 0 {
		delete(o, "_meta")
	} else {
		o["_meta"] = meta.raw()
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
