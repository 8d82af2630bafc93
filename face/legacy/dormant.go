package legacyface

import (
	"encoding/base64"
	"maps"
	"time"
	"unique"
)

// Dormant sessions. The session table holds a full *session (a few hundred
// bytes, plus its stored initialize params) only for sessions in use and for
// the most recently used idle ones (Config.MaxIdleCached, an LRU). An idle
// session beyond that goes dormant: it keeps just what the session bound, the
// idle timeout and the release of its record need — its id as 16 raw bytes,
// its principal (interned) and when it was last seen, about 40 bytes — and
// its next request loads it back from the store like a session another
// replica created (sessions are records: the store holds everything else).
// This is what keeps a flood of idle sessions cheap: memory per idle session
// is bounded by the dormant entry, not by the session's state.

// DefaultMaxIdleCached is how many idle sessions stay whole in memory by
// default: beyond it the least recently used go dormant.
const DefaultMaxIdleCached = 4096

// sessionKey is a session id as the 16 random bytes randomID encoded.
type sessionKey [16]byte

// dormant is what an idle session keeps in memory once dormant.
type dormant struct {
	lastSeen  int64 // the bridge's clock, Unix nanoseconds
	principal unique.Handle[string]
	source    source // the share it counts against (sessionshare.go)
}

var idCodec = base64.RawURLEncoding.Strict()

// keyOf is id's table key; false for an id randomID cannot have made (such
// a session never goes dormant, so its id round-trips exactly).
func keyOf(id string) (sessionKey, bool) {
	var k sessionKey
	if len(id) != idCodec.EncodedLen(len(k)) {
		return k, false
	}
	n, err := idCodec.Decode(k[:], []byte(id))
	return k, err == nil && n == len(k)
}

func (k sessionKey) id() string { return idCodec.EncodeToString(k[:]) }

// shrunk returns m, or a fresh copy of it once it holds less than a
// quarter of the peak it grew to (*peak, which it then resets): Go maps keep
// their buckets after deletes, so without this a flood of sessions that has
// expired would keep its table's memory for the life of the process.
func shrunk[K comparable, V any](m map[K]V, peak *int) map[K]V {
	*peak = max(*peak, len(m))
	if *peak < 256 || len(m) >= *peak/4 {
		return m
	}
	out := make(map[K]V, len(m))
	maps.Copy(out, m)
	*peak = len(m)
	return out
}

// idleList is the LRU of whole sessions in the table with no request in
// flight (under Bridge.mu): front is the least recently used.
type idleList struct {
	head, tail *session
	n          int
}

func (l *idleList) pushBack(s *session) {
	if s.onIdle {
		l.remove(s)
	}
	s.idlePrev, s.idleNext, s.onIdle = l.tail, nil, true
	if l.tail != nil {
		l.tail.idleNext = s
	} else {
		l.head = s
	}
	l.tail = s
	l.n++
}

func (l *idleList) remove(s *session) {
	if !s.onIdle {
		return
	}
	if s.idlePrev != nil {
		s.idlePrev.idleNext = s.idleNext
	} else {
		l.head = s.idleNext
	}
	if s.idleNext != nil {
		s.idleNext.idlePrev = s.idlePrev
	} else {
		l.tail = s.idlePrev
	}
	s.idlePrev, s.idleNext, s.onIdle = nil, nil, false
	l.n--
}

// idleLocked puts s at the back of the idle LRU if it is an idle HTTP
// session of the table (b.mu held); it reports whether the LRU is over its
// bound, so the caller demotes (after unlocking).
func (b *Bridge) idleLocked(s *session) bool {
	if !s.inTable || s.busy != 0 || s.transport != transportHTTP {
		return false
	}
	b.idle.pushBack(s)
	return b.idle.n > b.cfg.MaxIdleCached
}

// demoteOverflow makes dormant the least recently used idle sessions beyond
// Config.MaxIdleCached. A session that still holds something in memory (a
// go-sdk half, a stream, a subscription, a status follower, an input
// question shown to it) leaves the LRU whole; its next use puts it back.
func (b *Bridge) demoteOverflow() { b.demoteBeyond(b.cfg.MaxIdleCached) }

// demoteBeyond makes dormant (or drops from the LRU) up to a few of the least
// recently used idle sessions while the LRU holds more than keep.
func (b *Bridge) demoteBeyond(keep int) {
	// Bounded work per call: each idle transition adds one session to the
	// LRU, so demoting a few per call keeps up.
	for range 4 {
		b.mu.Lock()
		if b.idle.n <= keep {
			b.mu.Unlock()
			return
		}
		s := b.idle.head
		b.idle.remove(s)
		b.mu.Unlock()
		k, ok := keyOf(s.id)
		if !ok || !s.demotable() {
			continue
		}
		b.mu.Lock()
		// Still idle and untouched since it left the LRU: a request in
		// between would have put it back on the LRU (or be in flight).
		if b.sessions[s.id] == s && s.busy == 0 && !s.onIdle {
			delete(b.sessions, s.id)
			s.inTable = false
			b.dormant[k] = dormant{lastSeen: s.lastSeen.UnixNano(), principal: unique.Make(s.principal), source: s.source}
			b.dormantPeak = max(b.dormantPeak, len(b.dormant))
		}
		b.mu.Unlock()
	}
}

// demotable reports whether s holds nothing but what its record holds.
func (s *session) demotable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.started && !s.closed && !s.rehydrating && s.srv == nil && s.ss == nil &&
		s.getStream == nil && s.subs == nil && s.notify == nil &&
		len(s.watched) == 0 && !anyPresented(s.presented)
}

func anyPresented(m map[string]map[string]bool) bool {
	for _, keys := range m {
		if len(keys) > 0 {
			return true
		}
	}
	return false
}

// dormantSession is a stand-in for dormant session k, so it can be ended
// like a whole one (the caller has taken it out of the dormant table).
func (b *Bridge) dormantSession(k sessionKey, p dormant) *session {
	s := b.newSession(k.id(), p.principal.Value(), transportHTTP)
	s.source = p.source
	s.started = true
	s.lastSeen = time.Unix(0, p.lastSeen)
	return s
}

// dropDormantLocked removes session id of principal from the dormant table
// for good (b.mu held): ok when it was there.
func (b *Bridge) dropDormantLocked(id, principal string) (p dormant, k sessionKey, ok bool) {
	p, k, ok, _ = b.takeDormantLocked(id, principal)
	if ok {
		b.unheldLocked(p.source, true)
	}
	return p, k, ok
}

// takeDormantLocked removes session id of principal from the dormant table
// (b.mu held) to make it whole again (it still counts in its share; an
// entry removed for good goes through dropDormantLocked): ok when it was
// there, foreign when it is another principal's (then it stays).
func (b *Bridge) takeDormantLocked(id, principal string) (p dormant, k sessionKey, ok, foreign bool) {
	k, valid := keyOf(id)
	if !valid {
		return p, k, false, false
	}
	p, ok = b.dormant[k]
	if !ok {
		return p, k, false, false
	}
	if p.principal.Value() != principal {
		return p, k, false, true
	}
	delete(b.dormant, k)
	return p, k, true, false
}

// expiredDormant reports whether dormant entry p has been idle longer than
// the timeout.
func (b *Bridge) expiredDormant(p dormant, now time.Time) bool {
	idle := b.cfg.SessionIdleTimeout
	return idle > 0 && now.Sub(time.Unix(0, p.lastSeen)) > idle
}
