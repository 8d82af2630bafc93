package face

// Sweep runs the session table's periodic sweep now (tests with an
// injected clock).
func Sweep(b *Bridge) { b.sweep() }
