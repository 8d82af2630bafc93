package oauthmeta

import (
	"sort"
	"strings"
)

// This file is a small tokenizer for one WWW-Authenticate field value as
// RFC 9110 §11 defines it:
//
//	WWW-Authenticate = #challenge
//	challenge   = auth-scheme [ 1*SP ( token68 / #auth-param ) ]
//	auth-param  = token BWS "=" BWS ( token / quoted-string )
//	token68     = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
//
// The comma separates both challenges and the parameters of one challenge;
// RFC 9110 §11.2 resolves it: after a comma, `token BWS "="` continues the
// current challenge's parameters, anything else starts a new challenge. The
// parser records byte offsets rather than copies so that a rewrite changes
// only the bytes it means to and every other parameter survives as sent.

// authParam is one auth-param of a challenge, by byte offsets into the value.
type authParam struct {
	name       string // as sent; compare case-insensitively (RFC 9110 §11.2)
	valueStart int    // first byte of the value (the opening quote when quoted)
	valueEnd   int    // one past its last byte
}

// challenge is one challenge of a field value, by byte offsets.
type challenge struct {
	scheme    string
	schemeEnd int // one past the scheme's last byte
	token68   bool
	params    []authParam
	end       int // one past the challenge's last non-whitespace byte
}

// value returns p's value in v, unquoted.
func (p authParam) value(v string) string {
	raw := v[p.valueStart:p.valueEnd]
	if !strings.HasPrefix(raw, `"`) {
		return raw
	}
	raw = raw[1 : len(raw)-1]
	if !strings.Contains(raw, `\`) {
		return raw
	}
	var b strings.Builder
	for i := 0; i < len(raw); i++ {
		if raw[i] == '\\' && i+1 < len(raw) {
			i++
		}
		b.WriteByte(raw[i])
	}
	return b.String()
}

// param returns the value of c's auth-param name (case-insensitive) in v.
func (c challenge) param(v, name string) (string, bool) {
	for _, p := range c.params {
		if strings.EqualFold(p.name, name) {
			return p.value(v), true
		}
	}
	return "", false
}

// isBearer reports whether c is a Bearer challenge (RFC 6750 §3); scheme
// names are case-insensitive (RFC 9110 §11.1).
func (c challenge) isBearer() bool { return strings.EqualFold(c.scheme, "Bearer") }

type challengeParser struct {
	s string
	i int
}

func isTchar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func isToken68Char(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-._~+/", c) >= 0
}

// isQdtext: HTAB / SP / %x21 / %x23-5B / %x5D-7E / obs-text (RFC 9110 §5.6.4).
func isQdtext(c byte) bool {
	return c == '\t' || c == ' ' || c == 0x21 || (0x23 <= c && c <= 0x5B) || (0x5D <= c && c <= 0x7E) || c >= 0x80
}

// isQuotedPairChar: HTAB / SP / VCHAR / obs-text.
func isQuotedPairChar(c byte) bool {
	return c == '\t' || c == ' ' || (0x21 <= c && c <= 0x7E) || c >= 0x80
}

func (p *challengeParser) ows() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// separators skips a run of OWS and commas: the empty list elements
// RFC 9110 §5.6.1 tells recipients to accept.
func (p *challengeParser) separators() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func (p *challengeParser) token() (string, bool) {
	start := p.i
	for p.i < len(p.s) && isTchar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i], p.i > start
}

// quoted consumes a quoted-string at p.i.
func (p *challengeParser) quoted() bool {
	if p.i >= len(p.s) || p.s[p.i] != '"' {
		return false
	}
	for i := p.i + 1; i < len(p.s); {
		switch c := p.s[i]; {
		case c == '"':
			p.i = i + 1
			return true
		case c == '\\':
			if i+1 >= len(p.s) || !isQuotedPairChar(p.s[i+1]) {
				return false
			}
			i += 2
		case isQdtext(c):
			i++
		default:
			return false
		}
	}
	return false
}

// param consumes `token BWS "=" BWS ( token / quoted-string )`, or nothing.
func (p *challengeParser) param() (authParam, bool) {
	start := p.i
	name, ok := p.token()
	if !ok {
		return authParam{}, false
	}
	p.ows()
	if p.i >= len(p.s) || p.s[p.i] != '=' {
		p.i = start
		return authParam{}, false
	}
	p.i++
	p.ows()
	vs := p.i
	if _, ok := p.token(); !ok && !p.quoted() {
		p.i = start
		return authParam{}, false
	}
	return authParam{name: name, valueStart: vs, valueEnd: p.i}, true
}

// token68 consumes a token68, or nothing.
func (p *challengeParser) token68() bool {
	start := p.i
	for p.i < len(p.s) && isToken68Char(p.s[p.i]) {
		p.i++
	}
	if p.i == start {
		return false
	}
	for p.i < len(p.s) && p.s[p.i] == '=' {
		p.i++
	}
	return true
}

// challenge parses one challenge starting at p.i. It leaves p.i at the end
// of the value or at the comma that ends the challenge.
func (p *challengeParser) challenge() (challenge, bool) {
	scheme, ok := p.token()
	if !ok {
		return challenge{}, false
	}
	c := challenge{scheme: scheme, schemeEnd: p.i, end: p.i}
	ws := p.i
	p.ows()
	hadSP := p.i > ws && strings.Trim(p.s[ws:p.i], " ") == ""
	if p.i == len(p.s) {
		return c, true
	}
	if p.s[p.i] != ',' {
		// The first element after the scheme: 1*SP then token68 or auth-param.
		if !hadSP {
			return challenge{}, false
		}
		if a, ok := p.param(); ok {
			c.params = append(c.params, a)
			c.end = p.i
		} else if p.token68() {
			c.token68 = true
			c.end = p.i
			p.ows()
			return c, p.i == len(p.s) || p.s[p.i] == ','
		} else {
			return challenge{}, false
		}
	} else if !hadSP {
		// "Bearer, …": a challenge without parameters, then the next element.
		return c, true
	}
	for {
		p.ows()
		if p.i == len(p.s) {
			return c, true
		}
		if p.s[p.i] != ',' {
			return challenge{}, false
		}
		comma := p.i
		p.separators()
		if p.i == len(p.s) {
			return c, true
		}
		if a, ok := p.param(); ok {
			c.params = append(c.params, a)
			c.end = p.i
			continue
		}
		// Not `token BWS "="`: the next challenge starts after this comma.
		p.i = comma
		return c, true
	}
}

// parseChallenges splits one WWW-Authenticate field value into challenges.
// It reports false when the value is not valid RFC 9110 §11 syntax.
func parseChallenges(s string) ([]challenge, bool) {
	p := challengeParser{s: s}
	var out []challenge
	p.separators()
	for p.i < len(p.s) {
		c, ok := p.challenge()
		if !ok {
			return nil, false
		}
		out = append(out, c)
		if p.i < len(p.s) {
			if p.s[p.i] != ',' {
				return nil, false
			}
			p.separators()
		}
	}
	return out, true
}

// quoteString renders v as an RFC 9110 §5.6.4 quoted-string. It reports
// false when v holds a byte no quoted-string may carry (CR, LF, NUL and the
// other controls): such a value would make the header invalid.
func quoteString(v string) (string, bool) {
	var b strings.Builder
	b.Grow(len(v) + 2)
	b.WriteByte('"')
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case isQdtext(c):
			b.WriteByte(c)
		default:
			return "", false
		}
	}
	b.WriteByte('"')
	return b.String(), true
}

const resourceMetadataParam = "resource_metadata"

// RewriteChallenge sets the resource_metadata auth-param (RFC 9728 §5.1) of
// every Bearer challenge in value, one WWW-Authenticate field value, to
// metadataURL: it replaces the value of a present parameter and appends the
// parameter to a challenge that lacks it. Every other byte stays as sent:
// the other parameters (realm, scope, error, error_description, …), their
// quoting and spacing, and challenges of other schemes (DPoP, Basic, …).
//
// It reports false, and returns value unchanged, when value is not valid
// RFC 9110 §11 syntax, when a Bearer challenge carries a token68 or names
// resource_metadata twice (RFC 9110 §11.2 allows a name once per challenge),
// or when metadataURL is empty or cannot be a quoted-string; the caller
// should then log, as the client will follow the upstream's own metadata.
func RewriteChallenge(value, metadataURL string) (string, bool) {
	if metadataURL == "" {
		return value, false
	}
	quoted, ok := quoteString(metadataURL)
	if !ok {
		return value, false
	}
	chs, ok := parseChallenges(value)
	if !ok {
		return value, false
	}
	type edit struct {
		start, end int
		text       string
	}
	var edits []edit
	for _, c := range chs {
		if !c.isBearer() {
			continue
		}
		if c.token68 {
			return value, false
		}
		found := -1
		for i, p := range c.params {
			if strings.EqualFold(p.name, resourceMetadataParam) {
				if found >= 0 {
					return value, false
				}
				found = i
			}
		}
		switch {
		case found >= 0:
			p := c.params[found]
			edits = append(edits, edit{p.valueStart, p.valueEnd, quoted})
		case len(c.params) > 0:
			edits = append(edits, edit{c.end, c.end, ", " + resourceMetadataParam + "=" + quoted})
		default:
			edits = append(edits, edit{c.schemeEnd, c.schemeEnd, " " + resourceMetadataParam + "=" + quoted})
		}
	}
	if len(edits) == 0 {
		return value, true
	}
	sort.Slice(edits, func(i, j int) bool { return edits[i].start < edits[j].start })
	var b strings.Builder
	last := 0
	for _, e := range edits {
		b.WriteString(value[last:e.start])
		b.WriteString(e.text)
		last = e.end
	}
	b.WriteString(value[last:])
	return b.String(), true
}

// bearerParam returns the value of the auth-param name in the first Bearer
// challenge of values (WWW-Authenticate field values) that carries it.
func bearerParam(values []string, name string) (string, bool) {
	for _, v := range values {
		chs, ok := parseChallenges(v)
		if !ok {
			continue
		}
		for _, c := range chs {
			if !c.isBearer() {
				continue
			}
			if pv, ok := c.param(v, name); ok {
				return pv, true
			}
		}
	}
	return "", false
}
