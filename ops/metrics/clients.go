package metrics

import (
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Unknown is the client or version label value for an empty clientInfo field.
const Unknown = "unknown"

// Sanitised label lengths: long enough for real clientInfo values, short
// enough that a label cannot carry a payload.
const (
	maxNameLen    = 64
	maxVersionLen = 32
)

// clientTable bounds the client and version label values and remembers when
// each (era, client, version) was last seen, for tasksbridge_clients.
//
// Bounding is by first sight: the first MaxClients distinct (sanitised) names
// keep their own label value for the life of the process, later names are
// "other"; likewise the first MaxVersionsPerClient versions of each kept name.
// First-seen (rather than top-by-count) keeps a label value's meaning stable,
// so counters never move between series. The version of an "other" client is
// "other".
type clientTable struct {
	maxClients  int
	maxVersions int
	window      time.Duration
	now         func() time.Time

	mu       sync.Mutex
	versions map[string]map[string]bool // kept client name → kept versions
	seen     map[clientKey]time.Time    // last sight within the window
}

type clientKey struct{ era, client, version string }

func newClientTable(o Options) *clientTable {
	return &clientTable{
		maxClients:  o.MaxClients,
		maxVersions: o.MaxVersionsPerClient,
		window:      o.ClientWindow,
		now:         o.Now,
		versions:    make(map[string]map[string]bool),
		seen:        make(map[clientKey]time.Time),
	}
}

// client returns the bounded label value for a clientInfo name.
func (t *clientTable) client(name string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.clientLocked(name)
}

// ClientName is a clientInfo name as it may appear in a label or a log line:
// sanitised and bounded like the client label, "other" when it looks like a
// credential or a random id.
func ClientName(name string) string {
	if looksSecret(name) {
		return Other
	}
	return sanitize(name, maxNameLen)
}

func (t *clientTable) clientLocked(name string) string {
	if looksSecret(name) {
		return Other
	}
	c := sanitize(name, maxNameLen)
	if c == Other {
		return Other
	}
	if _, ok := t.versions[c]; ok {
		return c
	}
	if len(t.versions) >= t.maxClients {
		return Other
	}
	t.versions[c] = make(map[string]bool)
	return c
}

func (t *clientTable) versionLocked(client, version string) string {
	vs, ok := t.versions[client]
	if !ok || looksSecret(version) { // client is "other"
		return Other
	}
	v := sanitize(version, maxVersionLen)
	if vs[v] || v == Other {
		return v
	}
	if len(vs) >= t.maxVersions {
		return Other
	}
	vs[v] = true
	return v
}

// touch records a sight of a client and returns its bounded labels.
func (t *clientTable) touch(era, name, version string) (client, ver string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	client = t.clientLocked(name)
	ver = t.versionLocked(client, version)
	t.seen[clientKey{era, client, ver}] = t.now()
	return client, ver
}

// clientsCollector exports tasksbridge_clients and
// tasksbridge_client_last_seen_timestamp_seconds from a clientTable. Entries
// older than the window are dropped at collection time, so the gauge is 1
// exactly for the clients seen within the window.
type clientsCollector struct {
	t        *clientTable
	clients  *prometheus.Desc
	lastSeen *prometheus.Desc
}

func (c *clientsCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.clients
	ch <- c.lastSeen
}

func (c *clientsCollector) Collect(ch chan<- prometheus.Metric) {
	t := c.t
	t.mu.Lock()
	now := t.now()
	type entry struct {
		k  clientKey
		at time.Time
	}
	live := make([]entry, 0, len(t.seen))
	for k, at := range t.seen {
		if now.Sub(at) > t.window {
			delete(t.seen, k)
			continue
		}
		live = append(live, entry{k, at})
	}
	t.mu.Unlock()
	for _, e := range live {
		ch <- prometheus.MustNewConstMetric(c.clients, prometheus.GaugeValue, 1, e.k.era, e.k.client, e.k.version)
		ch <- prometheus.MustNewConstMetric(c.lastSeen, prometheus.GaugeValue,
			float64(e.at.UnixNano())/1e9, e.k.era, e.k.client, e.k.version)
	}
}

// sanitize trims s, maps every byte outside a conservative set to '_' and
// cuts it to max bytes; an empty value is "unknown".
func sanitize(s string, max int) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return Unknown
	}
	if len(s) <= max && labelSafe(s) {
		return s // the usual case, on every request: nothing to map
	}
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= max {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', strings.ContainsRune(" ._-@/+:", r):
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// labelSafe reports whether sanitize keeps every byte of s.
func labelSafe(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', strings.IndexByte(" ._-@/+:", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// looksSecret reports whether a clientInfo field looks like a credential or
// a random identifier rather than a product name or version, so that a client
// (or a face bug) cannot put a token, session id or task id into a label.
// It is defence in depth: the bridge's own ids never reach this package's
// API, because no method takes one. Flagged values become "other". Flagged:
//
//   - an HTTP auth scheme prefix ("Bearer x", "Basic x", ...);
//   - a run of 16 or more id characters [A-Za-z0-9+/=_-] that mixes letters
//     and digits, unless it is made of kebab/snake words (every part between
//     '-' and '_' has at most 4 characters, or is at most 8 digits, or is
//     letters without random case: "mcp-client-v2-1234");
//   - such a run of digits only, of upper-case letters only (unless
//     kebab/snake words), or of letters in random mixed case (about as many
//     upper as lower case letters, or a case change at least every third
//     letter; "VisualStudioCodeInsiders" is kept).
//
// It catches every hex, UUID and rand.Text (base32) id and about 99.9% of
// random base64url ids (the rest are letters-only strings that happen to
// read like CamelCase); see TestLooksSecretDetectionRates.
func looksSecret(s string) bool {
	low := strings.ToLower(strings.TrimSpace(s))
	for _, scheme := range []string{"bearer ", "basic ", "token ", "digest ", "negotiate ", "apikey "} {
		if strings.HasPrefix(low, scheme) {
			return true
		}
	}
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && isIDChar(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 && i-start >= 16 && randomRun(s[start:i]) {
			return true
		}
		start = -1
	}
	return false
}

func isIDChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '+' || c == '/' || c == '=' || c == '_' || c == '-'
}

func randomRun(run string) bool {
	letters, digits, upper, changes, pairs := charStats(run)
	switch {
	case letters > 0 && digits > 0:
		return !wordLike(run)
	case digits > 0:
		return true
	case letters == 0:
		return false
	case upper == letters:
		return !strings.ContainsAny(run, "-_") || !wordLike(run)
	default:
		return randomCase(letters, upper, changes, pairs)
	}
}

// charStats counts letters, digits and upper-case letters of s, and how
// often the case changes between adjacent letters (changes of pairs).
func charStats(s string) (letters, digits, upper, changes, pairs int) {
	prevLetter, prevUpper := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		isLetter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		isUpper := c >= 'A' && c <= 'Z'
		switch {
		case isLetter:
			letters++
			if isUpper {
				upper++
			}
			if prevLetter {
				pairs++
				if isUpper != prevUpper {
					changes++
				}
			}
		case c >= '0' && c <= '9':
			digits++
		}
		prevLetter, prevUpper = isLetter, isUpper
	}
	return
}

// randomCase: random mixed case is about half upper case and changes case on
// about half of the adjacent letter pairs; CamelCase words have one capital
// per word and change case about once in five letters.
func randomCase(letters, upper, changes, pairs int) bool {
	lower := letters - upper
	return pairs >= 7 && (3*changes >= pairs || 3*upper >= letters && 3*lower >= letters)
}

// wordLike reports whether every '-'/'_'-separated part of run reads like a
// word: at most 4 characters, digits only (at most 8), or letters only
// without random case.
func wordLike(run string) bool {
	for _, part := range strings.FieldsFunc(run, func(r rune) bool { return r == '-' || r == '_' }) {
		if len(part) <= 4 {
			continue
		}
		letters, digits, upper, changes, pairs := charStats(part)
		switch {
		case letters+digits < len(part), letters > 0 && digits > 0:
			return false
		case digits > 8:
			return false
		case letters > 0 && randomCase(letters, upper, changes, pairs):
			return false
		}
	}
	return true
}
