package watch

import "time"

// DefaultLeaseTTL is Config.LeaseTTL's default: the holder of a task's lease
// renews it every third of this, and a follower with waiters tries to take
// it every third of it too, so when the holder dies (kill -9: it neither
// renews nor releases) another replica holds the lease at most
// DefaultLeaseTTL + DefaultLeaseTTL/3 = 1 s after the death and reads the
// upstream at once: a waiter whose replica died is answered within 1 s of
// its task's end (not the 6-8 s of the 6 s lease this replaced).
//
// Why a short lease rather than followers polling the upstream themselves
// when the holder is silent: a holder is silent whenever its task does not
// change, so silence cannot tell a dead holder from a quiet task without a
// heartbeat, which costs the same Redis round trips as a renewal; and
// followers polling on their own would multiply the upstream's tasks/get
// by the number of replicas (docs/ARCHITECTURE.md, One watcher per upstream
// task). The cost of the short lease is
// Redis work: 3 renewals per second per task being watched, plus 3
// acquisition attempts per second per following replica — small next to
// the store traffic of the waits themselves, and nothing for the upstream.
// A holder whose renewal fails (Redis unreachable, a failover) keeps
// reading; a second holder during a failover costs duplicate reads, never
// a wrong answer.
const DefaultLeaseTTL = 750 * time.Millisecond

// handoverBound is the longest a lease can stay with a dead holder's
// waiters unserved under cfg: the lease's expiry plus one follower attempt.
func handoverBound(cfg Config) time.Duration { return cfg.LeaseTTL + cfg.LeaseTTL/3 }
