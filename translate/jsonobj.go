package translate

import (
	"bytes"
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// object is a JSON object kept as its members in input order, each with the
// key literal and the value bytes exactly as they came. A proxy forwards what
// it does not touch byte for byte: raw() changes only insignificant
// whitespace (values are compacted), never member order, key spelling
// (escapes included), number spelling or string escapes. New members are
// appended; a replaced member keeps its position. The zero value is {}.
type object struct {
	ms []member
}

// member is one "key": value pair.
type member struct {
	key    string          // unescaped
	rawKey []byte          // the key literal, quotes included, as in the input
	val    json.RawMessage // the value as in the input (or as encoded by set)
}

// decodeObject decodes data as a JSON object: not JSON → -32700, anything but
// an object → -32602 naming what. Empty input and null are errors too unless
// allowEmpty, when they give an empty object. Duplicate keys keep the last
// value (as encoding/json does), at the position of that last occurrence.
func decodeObject(data []byte, what string, allowEmpty bool) (object, error) {
	trimmed := bytes.TrimSpace(data)
	if allowEmpty && (len(trimmed) == 0 || string(trimmed) == "null") {
		return object{}, nil
	}
	if len(trimmed) == 0 {
		return object{}, rpc.Errorf(rpc.CodeInvalidParams, "%s is missing (want a JSON object)", what)
	}
	if !json.Valid(trimmed) {
		return object{}, rpc.Errorf(rpc.CodeParseError, "%s is not valid JSON", what)
	}
	if trimmed[0] != '{' {
		return object{}, rpc.Errorf(rpc.CodeInvalidParams, "%s must be a JSON object", what)
	}
	ms, err := scanMembers(trimmed)
	if err != nil {
		return object{}, rpc.Errorf(rpc.CodeInvalidParams, "%s: %v", what, err)
	}
	o := object{}
	for _, m := range ms {
		o.putMember(m)
	}
	return o, nil
}

// scanMembers splits a valid JSON object (json.Valid has passed) into its
// members without re-encoding anything.
func scanMembers(b []byte) ([]member, error) {
	var ms []member
	i := skipWS(b, 1) // past '{'
	if i < len(b) && b[i] == '}' {
		return nil, nil
	}
	for i < len(b) {
		ke := skipString(b, i)
		m := member{rawKey: b[i:ke]}
		if err := json.Unmarshal(m.rawKey, &m.key); err != nil {
			return nil, err // unreachable after json.Valid
		}
		i = skipWS(b, skipWS(b, ke)+1) // past ':'
		ve := skipValue(b, i)
		m.val = json.RawMessage(b[i:ve])
		ms = append(ms, m)
		i = skipWS(b, ve)
		if i >= len(b) || b[i] != ',' {
			break
		}
		i = skipWS(b, i+1)
	}
	return ms, nil
}

func skipWS(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// skipString returns the index just past the string literal at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return i
}

// skipValue returns the index just past the JSON value at b[i].
func skipValue(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	switch b[i] {
	case '"':
		return skipString(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = skipString(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && b[i] != ' ' && b[i] != '\t' && b[i] != '\n' && b[i] != '\r' {
		i++
	}
	return i
}

func (o *object) index(key string) int {
	for i := range o.ms {
		if o.ms[i].key == key {
			return i
		}
	}
	return -1
}

// putMember stores m: a member of the same key is dropped and m appended
// (decode order: the last duplicate wins at its own position).
func (o *object) putMember(m member) {
	if i := o.index(m.key); i >= 0 {
		o.ms = append(o.ms[:i:i], o.ms[i+1:]...)
	}
	o.ms = append(o.ms, m)
}

// get returns the raw value of key.
func (o object) get(key string) (json.RawMessage, bool) {
	if i := o.index(key); i >= 0 {
		return o.ms[i].val, true
	}
	return nil, false
}

// has reports whether key is present (null included).
func (o object) has(key string) bool { return o.index(key) >= 0 }

// len is the number of members.
func (o object) len() int { return len(o.ms) }

// keys returns the member keys in order.
func (o object) keys() []string {
	out := make([]string, len(o.ms))
	for i, m := range o.ms {
		out[i] = m.key
	}
	return out
}

// put stores raw under key: in place when key exists, appended otherwise.
func (o *object) put(key string, raw json.RawMessage) {
	if i := o.index(key); i >= 0 {
		o.ms = append(o.ms[:i:i], append([]member{{key: key, rawKey: o.ms[i].rawKey, val: raw}}, o.ms[i+1:]...)...)
		return
	}
	k, _ := marshalNoEscape(key) // a Go string always encodes
	o.ms = append(o.ms[:len(o.ms):len(o.ms)], member{key: key, rawKey: k, val: raw})
}

// del removes every member named by keys.
func (o *object) del(keys ...string) {
	out := make([]member, 0, len(o.ms))
	for _, m := range o.ms {
		drop := false
		for _, k := range keys {
			if m.key == k {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, m)
		}
	}
	o.ms = out
}

// sub decodes member key as an object; absent or null gives (empty, false, nil).
func (o object) sub(key, what string) (object, bool, error) {
	v, ok := o.get(key)
	if !ok || string(bytes.TrimSpace(v)) == "null" {
		return object{}, false, nil
	}
	s, err := decodeObject(v, what, false)
	return s, err == nil, err
}

// str reads member key as a string; absent gives "".
func (o object) str(key, what string) (string, error) {
	v, ok := o.get(key)
	if !ok {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return "", rpc.Errorf(rpc.CodeInvalidParams, "%s must be a string", what)
	}
	return s, nil
}

// set stores the JSON encoding of v under key (see put).
func (o *object) set(key string, v any) error {
	b, err := marshalNoEscape(v)
	if err != nil {
		return rpc.Errorf(rpc.CodeInternalError, "encode %s: %v", key, err)
	}
	o.put(key, b)
	return nil
}

// clone returns a copy whose member list can be changed without touching o
// (raw values are never mutated in place).
func (o object) clone() object {
	return object{ms: append([]member(nil), o.ms...)}
}

// toMap returns the members as a map (for the modern package's Object).
func (o object) toMap() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(o.ms))
	for _, mem := range o.ms {
		m[mem.key] = mem.val
	}
	return m
}

// raw encodes o in member order, keys as they came, values compacted but
// otherwise byte for byte (no HTML escaping is ever added).
func (o object) raw() json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o.ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.rawKey)
		b.WriteByte(':')
		if err := json.Compact(&b, m.val); err != nil {
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
		if meta.has(k) {
			meta.del(k)
			changed = true
		}
	}
	if !changed {
		return o, nil
	}
	o = o.clone()
	if meta.len() == 0 {
		o.del("_meta")
	} else {
		o.put("_meta", meta.raw())
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
