package face

// Sweep runs the session table's periodic sweep now (tests with an
// injected clock).
func Sweep(b *Bridge) { b.sweep() }

// DemoteAll makes every idle session that can be dormant (tests).
func (b *Bridge) DemoteAll() {
	for {
		b.mu.Lock()
		n := b.idle.n
		b.mu.Unlock()
		if n == 0 {
			return
		}
		b.demoteBeyond(0)
	}
}
