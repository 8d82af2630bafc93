package legacy

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// This file holds the byte-faithful object editing used by every helper that
// patches a raw message: members that are not touched keep their exact key and
// value bytes. The scanner assumes its input already passed json.Valid.

// member is one "key": value pair of a JSON object.
type member struct {
	key    string // unescaped
	rawKey []byte // the key literal as in the input, quotes included
	val    []byte // the value as in the input
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) int {
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
				depth--
				if depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	default:
		for i < len(b) && b[i] != ',' && b[i] != '}' && b[i] != ']' && !isSpace(b[i]) {
			i++
		}
		return i
	}
}

// skipString returns the index just past the string literal starting at b[i].
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

// kindOf names the JSON type of a valid value, for error messages.
func kindOf(v []byte) string {
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

func isNull(v []byte) bool { return string(bytes.TrimSpace(v)) == "null" }

// isAbsent reports whether a raw value counts as not given: no bytes or null.
func isAbsent(v []byte) bool { return len(bytes.TrimSpace(v)) == 0 || isNull(v) }

func parseError(what string) *rpc.Error {
	return rpc.Errorf(rpc.CodeParseError, "Parse error: %s is not valid JSON", what)
}

// objectMembers checks that data is a JSON object and splits it into members.
// Not JSON → -32700; JSON but not an object → notObjectCode.
func objectMembers(data []byte, what string, notObjectCode int64) ([]member, error) {
	if !json.Valid(data) {
		return nil, parseError(what)
	}
	i := skipSpace(data, 0)
	if data[i] != '{' {
		return nil, rpc.Errorf(notObjectCode, "%s must be a JSON object, got %s", what, kindOf(data))
	}
	var ms []member
	i = skipSpace(data, i+1)
	if data[i] == '}' {
		return ms, nil
	}
	for {
		i = skipSpace(data, i)
		ke := skipString(data, i)
		m := member{rawKey: data[i:ke]}
		if err := json.Unmarshal(m.rawKey, &m.key); err != nil {
			return nil, parseError(what) // unreachable after json.Valid
		}
		i = skipSpace(data, ke)
		i = skipSpace(data, i+1) // ':'
		ve := skipValue(data, i)
		m.val = data[i:ve]
		ms = append(ms, m)
		i = skipSpace(data, ve)
		if i >= len(data) || data[i] != ',' {
			return ms, nil
		}
		i++
	}
}

// buildObject renders members as a compact-separator JSON object.
func buildObject(ms []member) json.RawMessage {
	n := 2
	for _, m := range ms {
		n += len(m.rawKey) + len(m.val) + 2
	}
	out := make([]byte, 0, n)
	out = append(out, '{')
	for i, m := range ms {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, m.rawKey...)
		out = append(out, ':')
		out = append(out, m.val...)
	}
	return append(out, '}')
}

// lookup returns the value of the last member named key (encoding/json also
// lets the last duplicate win).
func lookup(ms []member, key string) ([]byte, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].key == key {
			return ms[i].val, true
		}
	}
	return nil, false
}

// without returns ms minus every member named key.
func without(ms []member, key string) []member {
	out := make([]member, 0, len(ms))
	for _, m := range ms {
		if m.key != key {
			out = append(out, m)
		}
	}
	return out
}

// withMember returns ms with key set to val: the last member of that name is
// replaced in place and earlier duplicates are dropped; a new key is appended.
func withMember(ms []member, key string, val []byte) []member {
	last := -1
	for i := range ms {
		if ms[i].key == key {
			last = i
		}
	}
	out := make([]member, 0, len(ms)+1)
	for i, m := range ms {
		if m.key == key && i != last {
			continue
		}
		if i == last {
			m.val = val
		}
		out = append(out, m)
	}
	if last < 0 {
		k, _ := json.Marshal(key)
		out = append(out, member{key: key, rawKey: k, val: val})
	}
	return out
}

// objectOrEmpty is objectMembers that treats no bytes and null as {}.
func objectOrEmpty(data []byte, what string, notObjectCode int64) ([]member, error) {
	if isAbsent(data) {
		return nil, nil
	}
	return objectMembers(data, what, notObjectCode)
}

// mustMarshal encodes values this package built itself; they cannot fail.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("legacy: encoding %T: %v", v, err))
	}
	return b
}
