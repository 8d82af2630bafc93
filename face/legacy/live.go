package legacyface

// Limits are the bounds of the legacy face that may change while it serves
// (bridge serve re-reads them from its config file on SIGHUP): the session
// table (Config.MaxSessions), each source's share of it
// (Config.MaxSessionsPerPrincipal) and the per-principal limits (L-72,
// L-73). Zero means the default (the share's is derived from MaxSessions)
// and a negative value no bound, as in Config.
type Limits struct {
	MaxSessions             int
	MaxSessionsPerPrincipal int
	MaxTasksPerPrincipal    int
	MaxWaitersPerPrincipal  int
}

// SetLimits replaces the face's limits. What is already admitted stays: a
// lowered bound refuses only new sessions, calls and waits until the count
// is below it again.
func (b *Bridge) SetLimits(l Limits) {
	c := Config{MaxSessions: l.MaxSessions, MaxSessionsPerPrincipal: l.MaxSessionsPerPrincipal, MaxTasksPerPrincipal: l.MaxTasksPerPrincipal, MaxWaitersPerPrincipal: l.MaxWaitersPerPrincipal}
	c.normalizeLimits()
	b.liveMaxSessions.Store(int64(c.MaxSessions))
	b.liveSessionShare.Store(int64(c.MaxSessionsPerPrincipal))
	b.limits.maxTasks.Store(int64(c.MaxTasksPerPrincipal))
	b.limits.maxWaiters.Store(int64(c.MaxWaitersPerPrincipal))
}

// CurrentLimits returns the limits in force, defaults filled in (no bound:
// the largest int for sessions, -1 for the per-principal limits).
func (b *Bridge) CurrentLimits() Limits {
	return Limits{MaxSessions: b.maxSessions(), MaxSessionsPerPrincipal: b.maxSessionShare(), MaxTasksPerPrincipal: int(b.limits.maxTasks.Load()), MaxWaitersPerPrincipal: int(b.limits.maxWaiters.Load())}
}

// maxSessions is the session bound in force.
func (b *Bridge) maxSessions() int { return int(b.liveMaxSessions.Load()) }

// maxSessionShare is each source's share of the session table in force.
func (b *Bridge) maxSessionShare() int { return int(b.liveSessionShare.Load()) }

// normalizeLimits applies Config.defaults' rules to the three limits.
func (c *Config) normalizeLimits() {
	switch {
	case c.MaxSessions == 0:
		c.MaxSessions = defaultMaxSessions()
	case c.MaxSessions < 0:
		c.MaxSessions = int(^uint(0) >> 1)
	}
	switch {
	case c.MaxSessionsPerPrincipal == 0:
		c.MaxSessionsPerPrincipal = max(c.MaxSessions/DefaultSessionShareDivisor, min(c.MaxSessions, DefaultSessionShareFloor))
	case c.MaxSessionsPerPrincipal < 0:
		c.MaxSessionsPerPrincipal = int(^uint(0) >> 1)
	}
	if c.MaxTasksPerPrincipal == 0 {
		c.MaxTasksPerPrincipal = DefaultMaxTasksPerPrincipal
	}
	if c.MaxWaitersPerPrincipal == 0 {
		c.MaxWaitersPerPrincipal = DefaultMaxWaitersPerPrincipal
	}
}
