// Package rawjson edits JSON objects without re-encoding what it does not
// touch: an object is split into its members in input order, each keeping its
// key literal (escapes included) and its value bytes exactly as they came;
// members are looked up, replaced in place, appended or dropped, and the
// object is written back. A proxy that forwards what it does not understand
// byte for byte (unknown members, number spellings, string escapes, opaque
// values such as requestState: M-18) is built on this. Never HTML-escapes.
//
// It is the one raw-JSON layer of the wire packages (legacy, modern,
// translate), which stay free of I/O; so does this package. Validation and
// its error codes stay with the callers: the scanners here assume input that
// has already passed json.Valid.
package rawjson

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"unicode/utf8"
)

// Member is one "key": value pair of a JSON object.
type Member struct {
	Key    string          // unescaped
	RawKey []byte          // the key literal, quotes included, as in the input
	Val    json.RawMessage // the value as in the input (or as encoded by Set)
}

// Marshal is json.Marshal without HTML escaping (encoding/json re-escapes <,
// > and & inside every MarshalJSON's output, changing opaque strings at the
// byte level) and without a trailing newline.
func Marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// Key returns the JSON literal of a member key.
func Key(k string) []byte {
	b, _ := Marshal(k) // a Go string always encodes
	return b
}

// Kind names the JSON type of a value for error messages: "an object", "an
// array", "a string", "a boolean", "null", "a number", or "nothing" for no
// bytes.
func Kind(v []byte) string {
	v = bytes.TrimLeft(v, " \t\r\n")
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// IsNull reports whether v is the literal null.
func IsNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

// IsAbsent reports whether v counts as not given: no bytes, or null.
func IsAbsent(v []byte) bool { return len(bytes.TrimSpace(v)) == 0 || IsNull(v) }

// IsObject reports whether v (valid JSON) is an object.
func IsObject(v []byte) bool { return Kind(v) == "an object" }

func isSpace(c byte) bool { return space[c] }

// space marks JSON's insignificant whitespace.
var space = func() (t [256]bool) {
	t[' '], t['\t'], t['\n'], t['\r'] = true, true, true, true
	return t
}()

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// nesting is what a byte outside strings does to the depth: +1 opens an
// object or array, -1 closes one.
var nesting = func() (t [256]int8) {
	t['{'], t['['], t['}'], t[']'] = 1, 1, -1, -1
	return t
}()

// skipString returns the index just past the string literal at b[i].
func skipString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		for i < len(b) && !special[b[i]] {
			i++
		}
		if i >= len(b) {
			break
		}
		switch b[i] {
		case '\\':
			i++
		case '"':
			return i + 1
		}
	}
	return min(i, len(b)) // cut short (a backslash last): never past the end
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
		// One table lookup a byte: a run of brackets (a deeply nested
		// value) costs as little as a run of digits.
		depth := 0
		for i < len(b) {
			c := b[i]
			if c == '"' {
				i = skipString(b, i)
				continue
			}
			i++
			if depth += int(nesting[c]); depth == 0 {
				return i
			}
		}
		return i
	}
	for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && !isSpace(b[i]) {
		i++
	}
	return i
}

// Members splits obj, a JSON object that has passed json.Valid, into its
// members in input order, duplicates included. The members share obj's
// bytes. Anything but an object gives no members and an error.
func Members(obj []byte) ([]Member, error) {
	if !IsObject(obj) {
		return nil, fmt.Errorf("not a JSON object: %s", Kind(obj))
	}
	var ms []Member
	for rawKey, val := range All(obj) {
		m := Member{RawKey: rawKey, Val: json.RawMessage(val)}
		if inner := rawKey[1 : len(rawKey)-1]; bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
			m.Key = string(inner) // no escapes: the literal is the key
		} else if err := json.Unmarshal(m.RawKey, &m.Key); err != nil {
			return nil, fmt.Errorf("member key: %w", err) // unreachable after json.Valid
		}
		ms = append(ms, m)
	}
	return ms, nil
}

// All yields the members of obj (a JSON object that has passed json.Valid)
// in input order, duplicates included, without allocating: each key's
// literal (quotes and escapes as written; KeyBytes reads it) and the value's
// bytes, both sharing obj's bytes. Anything but an object yields nothing.
// Readers that need a few members of every message (a router, a meter) walk
// it once with All instead of decoding it into a map or a struct.
func All(obj []byte) iter.Seq2[[]byte, []byte] {
	return func(yield func(rawKey, val []byte) bool) {
		i := skipSpace(obj, 0)
		if i >= len(obj) || obj[i] != '{' {
			return
		}
		i = skipSpace(obj, i+1)
		if i < len(obj) && obj[i] == '}' {
			return
		}
		for i < len(obj) {
			ke := skipString(obj, i)
			rawKey := obj[i:ke]
			i = skipSpace(obj, skipSpace(obj, ke)+1) // past ':'
			if i >= len(obj) {
				return // cut short: no value (valid input always has one)
			}
			ve := skipValue(obj, i)
			if !yield(rawKey, obj[i:ve]) {
				return
			}
			i = skipSpace(obj, ve)
			if i >= len(obj) || obj[i] != ',' {
				return
			}
			i = skipSpace(obj, i+1)
		}
	}
}

// KeyBytes returns the name a key literal (as All yields it) spells: its
// inside when it has no escape and is valid UTF-8 (no allocation; compare it with
// string(KeyBytes(k)) == "name", which does not allocate either), else the
// decoded name.
func KeyBytes(rawKey []byte) []byte {
	if len(rawKey) < 2 {
		return nil
	}
	inner := rawKey[1 : len(rawKey)-1]
	if bytes.IndexByte(inner, '\\') < 0 && utf8.Valid(inner) {
		return inner
	}
	var s string
	if json.Unmarshal(rawKey, &s) != nil {
		return inner // unreachable after json.Valid
	}
	return []byte(s)
}

// Dedup keeps, of every key that occurs more than once, only its last
// member, at the position of that last occurrence (encoding/json lets the
// last duplicate win too). ms is not changed.
func Dedup(ms []Member) []Member {
	out := make([]Member, 0, len(ms))
	if len(ms) > 16 {
		// An object of many members (a client's body can hold 100,000) is
		// deduplicated in linear time: the last index of every key first.
		last := make(map[string]int, len(ms))
		for i, m := range ms {
			last[m.Key] = i
		}
		for i, m := range ms {
			if last[m.Key] == i {
				out = append(out, m)
			}
		}
		return out
	}
	for i, m := range ms {
		if lastIndex(ms[i+1:], m.Key) < 0 {
			out = append(out, m)
		}
	}
	return out
}

func lastIndex(ms []Member, key string) int {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Key == key {
			return i
		}
	}
	return -1
}

// Lookup returns the value of the last member named key.
func Lookup(ms []Member, key string) (json.RawMessage, bool) {
	if i := lastIndex(ms, key); i >= 0 {
		return ms[i].Val, true
	}
	return nil, false
}

// Without returns ms minus every member named by keys (ms is not changed).
func Without(ms []Member, keys ...string) []Member {
	out := make([]Member, 0, len(ms))
	for _, m := range ms {
		drop := false
		for _, k := range keys {
			if m.Key == k {
				drop = true
				break
			}
		}
		if !drop {
			out = append(out, m)
		}
	}
	return out
}

// With returns ms with key set to val: the last member of that name keeps
// its position and key spelling with the new value, earlier duplicates are
// dropped; a new key is appended. ms is not changed.
func With(ms []Member, key string, val json.RawMessage) []Member {
	last := lastIndex(ms, key)
	out := make([]Member, 0, len(ms)+1)
	for i, m := range ms {
		if m.Key == key && i != last {
			continue
		}
		if i == last {
			m.Val = val
		}
		out = append(out, m)
	}
	if last < 0 {
		out = append(out, Member{Key: key, RawKey: Key(key), Val: val})
	}
	return out
}

// Append writes ms as a JSON object to dst with compact separators, keys as
// they came and values byte for byte.
func Append(dst []byte, ms []Member) []byte {
	dst = append(dst, '{')
	for i, m := range ms {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.RawKey...)
		dst = append(dst, ':')
		dst = append(dst, m.Val...)
	}
	return append(dst, '}')
}

// AppendCompact is Append with every value compacted (insignificant
// whitespace removed; nothing else changes). A value that is not valid JSON
// is an error naming its key.
func AppendCompact(dst []byte, ms []Member) ([]byte, error) {
	// Sized once: compacting never lengthens a value, and growing the
	// buffer value by value cost about twice a large object (a client's
	// 1 MB arguments are written out more than once on their way).
	need := 2
	for _, m := range ms {
		need += len(m.RawKey) + len(m.Val) + 2
	}
	if cap(dst)-len(dst) < need {
		dst = append(make([]byte, 0, len(dst)+need), dst...)
	}
	b := bytes.NewBuffer(dst)
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(m.RawKey)
		b.WriteByte(':')
		// One fast pass tells a valid value that is already compact (what
		// the wire carries, almost always) from one json.Compact must
		// rewrite or refuse.
		if ok, spaced := scan(m.Val); ok && !spaced {
			b.Write(m.Val)
		} else if err := json.Compact(b, m.Val); err != nil {
			return nil, fmt.Errorf("member %q: not valid JSON: %w", m.Key, err)
		}
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Object is a JSON object kept as its members, without duplicate keys (a
// decoded duplicate keeps its last value, at its last position). A replaced
// member keeps its position; new members are appended. The zero value is
// {}. Values are never changed in place, so copies may share them.
type Object struct {
	ms []Member
}

// Decode splits obj (valid JSON, see Members) into an Object.
func Decode(obj []byte) (Object, error) {
	ms, err := Members(obj)
	if err != nil {
		return Object{}, err
	}
	return Object{ms: Dedup(ms)}, nil
}

// Get returns the value of key.
func (o Object) Get(key string) (json.RawMessage, bool) { return Lookup(o.ms, key) }

// Has reports whether key is present (null included).
func (o Object) Has(key string) bool { return lastIndex(o.ms, key) >= 0 }

// Len is the number of members.
func (o Object) Len() int { return len(o.ms) }

// Keys returns the member keys in order.
func (o Object) Keys() []string {
	out := make([]string, len(o.ms))
	for i, m := range o.ms {
		out[i] = m.Key
	}
	return out
}

// Members returns the members in order (do not change them).
func (o Object) Members() []Member { return o.ms }

// Put stores raw under key: in place when key exists, appended otherwise.
func (o *Object) Put(key string, raw json.RawMessage) { o.ms = With(o.ms, key, raw) }

// Set stores the JSON encoding (Marshal) of v under key.
func (o *Object) Set(key string, v any) error {
	b, err := Marshal(v)
	if err != nil {
		return fmt.Errorf("encode %s: %w", key, err)
	}
	o.Put(key, b)
	return nil
}

// Del removes the members named by keys.
func (o *Object) Del(keys ...string) { o.ms = Without(o.ms, keys...) }

// Clone returns a copy whose members can be changed without touching o.
func (o Object) Clone() Object { return Object{ms: append([]Member(nil), o.ms...)} }

// Map returns the members as a map.
func (o Object) Map() map[string]json.RawMessage {
	m := make(map[string]json.RawMessage, len(o.ms))
	for _, mem := range o.ms {
		m[mem.Key] = mem.Val
	}
	return m
}

// Bytes encodes o in member order, keys as they came, values compacted but
// otherwise byte for byte. A value that is not valid JSON (only Put can
// store one) is written as null.
func (o Object) Bytes() json.RawMessage {
	b, err := AppendCompact(nil, o.ms)
	if err != nil {
		ms := make([]Member, len(o.ms))
		for i, m := range o.ms {
			if !json.Valid(m.Val) {
				m.Val = json.RawMessage("null")
			}
			ms[i] = m
		}
		b, _ = AppendCompact(nil, ms)
	}
	return b
}

// DefaultMaxDepth is the nesting limit of the bridge's request decoders:
// 128 levels of objects and arrays. MCP messages nest a handful of levels
// (a tool call's arguments, a schema or an elicitation form a few dozen at
// most), so no honest request comes near it, while every recursive decoder
// behind it (encoding/json into any, go-sdk's jsonrpc, the faces' param
// parsing) then works on a tree at most 128 levels deep: bounded stack,
// bounded per-level work, whatever the body's size.
const DefaultMaxDepth = 128

// DepthExceeds returns the offset of the first '{' or '[' of b that opens
// nesting level limit+1 (the outermost value is level 1), or -1 when b
// stays within limit. It reads b once, skipping string literals, allocates
// nothing and does not need b to be valid JSON, so that a caller can refuse
// a too-deep body before anything recursive decodes it.
func DepthExceeds(b []byte, limit int) int {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			i = skipString(b, i) - 1
		case '{', '[':
			if depth++; depth > limit {
				return i
			}
		case '}', ']':
			depth--
		}
	}
	return -1
}

// DepthError is CheckDepth's refusal: the body nests deeper than Limit
// levels, level Limit+1 opening at Offset. It may well be valid JSON; callers
// answer it with -32600, not as a parse error.
type DepthError struct{ Limit, Offset int }

func (e *DepthError) Error() string {
	return fmt.Sprintf("request nesting is deeper than %d levels (level %d opens at offset %d); "+
		"send a request whose objects and arrays nest at most %d levels deep", e.Limit, e.Limit+1, e.Offset, e.Limit)
}

// CheckDepth is DepthExceeds as an error: nil when b stays within limit.
func CheckDepth(b []byte, limit int) error {
	if off := DepthExceeds(b, limit); off >= 0 {
		return &DepthError{Limit: limit, Offset: off}
	}
	return nil
}
