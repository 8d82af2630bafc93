package face

// Sweep runs the session table's periodic sweep now (tests with an
// injected clock).
func Sweep(b *Bridge) { b.sweep() }

// ParkAll parks every idle session that can be parked (tests).
func (b *Bridge) ParkAll() {
	for {
		b.mu.Lock()
		n := b.idle.n
		b.mu.Unlock()
		if n == 0 {
			return
		}
		b.parkBeyond(0)
	}
}
