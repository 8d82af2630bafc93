package rawjson

import "encoding/json"

// Valid reports whether data is one JSON value, optionally surrounded by
// whitespace: exactly what json.Valid accepts (string contents are not
// checked for UTF-8, as there), in one pass without allocating for any
// nesting up to 1,024 levels. The wire packages check every message and
// each part they take apart; on a 1 MB body encoding/json's scanner, a state
// machine that calls a function per byte, cost several times the rest of a
// forwarded call.
func Valid(data []byte) bool {
	ok, _ := scan(data)
	return ok
}

// maxScanDepth is the nesting scan tracks on its own stack; a deeper value
// (only ever refused input, the router's limit is 128) is left to
// encoding/json.
const maxScanDepth = 1024

// special marks the bytes a string literal cannot hold as they are: the
// control characters, the quote and the backslash.
var special = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// hexDigit marks 0-9, a-f and A-F.
var hexDigit = func() (t [256]bool) {
	for _, c := range []byte("0123456789abcdefABCDEF") {
		t[c] = true
	}
	return t
}()

// scan is Valid that also reports whether data holds whitespace outside
// its string literals (json.Compact would change it).
func scan(b []byte) (ok, spaced bool) {
	var stackBuf [64]bool // true: an object, false: an array
	stack := stackBuf[:0]
	n := len(b)
	i := 0
	const (
		stValue = iota // a value must come
		stKey          // an object member's key must come
		stAfter        // a value ended
	)
	state := stValue
	for {
		switch state {
		case stValue:
			if i < n && isSpace(b[i]) {
				i, spaced = skipSpace(b, i), true
			}
			if i >= n {
				return false, spaced
			}
			switch c := b[i]; {
			case c == '{' || c == '[':
				i++
				if i < n && isSpace(b[i]) {
					i, spaced = skipSpace(b, i), true
				}
				if i < n && (c == '{' && b[i] == '}' || c == '[' && b[i] == ']') {
					i++
					state = stAfter
					continue
				}
				if len(stack) == maxScanDepth {
					return json.Valid(b), true // report spaced: callers then take the slow path
				}
				stack = append(stack, c == '{')
				if c == '{' {
					state = stKey
				}
				continue
			case c == '"':
				if i = scanString(b, i); i < 0 {
					return false, spaced
				}
			case c == 't':
				if !hasLiteral(b, i, "true") {
					return false, spaced
				}
				i += 4
			case c == 'f':
				if !hasLiteral(b, i, "false") {
					return false, spaced
				}
				i += 5
			case c == 'n':
				if !hasLiteral(b, i, "null") {
					return false, spaced
				}
				i += 4
			case c == '-' || c >= '0' && c <= '9':
				if i = scanNumber(b, i); i < 0 {
					return false, spaced
				}
			default:
				return false, spaced
			}
			state = stAfter
		case stKey:
			if i < n && isSpace(b[i]) {
				i, spaced = skipSpace(b, i), true
			}
			if i >= n || b[i] != '"' {
				return false, spaced
			}
			if i = scanString(b, i); i < 0 {
				return false, spaced
			}
			if i < n && isSpace(b[i]) {
				i, spaced = skipSpace(b, i), true
			}
			if i >= n || b[i] != ':' {
				return false, spaced
			}
			i++
			state = stValue
		case stAfter:
			if i < n && isSpace(b[i]) {
				i, spaced = skipSpace(b, i), true
			}
			if len(stack) == 0 {
				return i == n, spaced
			}
			if i >= n {
				return false, spaced
			}
			obj := stack[len(stack)-1]
			switch c := b[i]; {
			case c == ',':
				i++
				if obj {
					state = stKey
				} else {
					state = stValue
				}
			case obj && c == '}' || !obj && c == ']':
				i++
				stack = stack[:len(stack)-1]
			default:
				return false, spaced
			}
		}
	}
}

func hasLiteral(b []byte, i int, lit string) bool {
	return len(b)-i >= len(lit) && string(b[i:i+len(lit)]) == lit
}

// scanString returns the index just past the valid string literal at b[i]
// (a quote), or -1.
func scanString(b []byte, i int) int {
	n := len(b)
	for i++; ; {
		for i < n && !special[b[i]] {
			i++
		}
		if i >= n {
			return -1
		}
		switch b[i] {
		case '"':
			return i + 1
		case '\\':
			if i+1 >= n {
				return -1
			}
			switch b[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if n-i < 6 || !hexDigit[b[i+2]] || !hexDigit[b[i+3]] || !hexDigit[b[i+4]] || !hexDigit[b[i+5]] {
					return -1
				}
				i += 6
			default:
				return -1
			}
		default: // a control character
			return -1
		}
	}
}

// scanNumber returns the index just past the valid number at b[i], or -1.
func scanNumber(b []byte, i int) int {
	n := len(b)
	digits := func() bool {
		j := i
		for i < n && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i > j
	}
	if b[i] == '-' {
		i++
	}
	if i < n && b[i] == '0' {
		i++
	} else if !digits() {
		return -1
	}
	if i < n && b[i] == '.' {
		i++
		if !digits() {
			return -1
		}
	}
	if i < n && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < n && (b[i] == '+' || b[i] == '-') {
			i++
		}
		if !digits() {
			return -1
		}
	}
	return i
}

// IsCompact reports whether b is valid JSON (Valid) that json.Compact
// leaves as it is: no whitespace outside its strings. Such a value can be
// copied where an encoder would compact it.
func IsCompact(b []byte) bool {
	ok, spaced := scan(b)
	return ok && !spaced
}
