package era

// Era is a peer's protocol era: the era a client speaks on one request, the
// era an upstream's tasks speak, and the era recorded on a stored session.
// Its values are also its text in records and metric labels ("legacy",
// "modern"); the zero value is Unknown.
type Era string

const (
	// Unknown: not decided (an upstream that could not be probed).
	Unknown Era = ""
	// Legacy: the initialize handshake and the experimental tasks of
	// 2025-11-25 and earlier.
	Legacy Era = "legacy"
	// Modern: per-request _meta and the tasks extension, 2026-07-28 and
	// later.
	Modern Era = "modern"
)

// String is the era's name, "unknown" for Unknown.
func (e Era) String() string {
	if e == Unknown {
		return "unknown"
	}
	return string(e)
}

// Valid reports whether e is Legacy or Modern (what a record may hold).
func (e Era) Valid() bool { return e == Legacy || e == Modern }

// Parse reads an era's text as records hold it ("legacy" or "modern");
// anything else is Unknown and false.
func Parse(s string) (Era, bool) {
	if e := Era(s); e.Valid() {
		return e, true
	}
	return Unknown, false
}
