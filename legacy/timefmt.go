package legacy

import (
	"fmt"
	"strings"
	"time"
)

// timeLayout is RFC 3339 in UTC with milliseconds, the form of the spec
// examples and of JavaScript's Date.toISOString ("2025-11-25T10:30:00.000Z").
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// FormatTime renders t for createdAt/lastUpdatedAt: RFC 3339, UTC, "Z",
// millisecond precision (L-18, L-19).
func FormatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

// FormatTimeNano renders t as RFC 3339 in UTC with full (trailing-zero-free)
// nanosecond precision, for callers that need sub-millisecond ordering.
func FormatTimeNano(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// parseLayouts are tried in order by ParseTime. Go's parser accepts a
// fractional second after "05" even when the layout has none.
var parseLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700", // +0000 without colon
	"2006-01-02T15:04:05Z07",   // +00
	"2006-01-02T15:04:05",      // no zone: taken as UTC
	"2006-01-02T15:04Z07:00",   // no seconds
	"2006-01-02T15:04",
	"2006-01-02",
}

// ParseTime parses an ISO 8601 / RFC 3339 timestamp leniently: lower-case "t"
// and "z", a space instead of "T", offsets with or without a colon, missing
// seconds, a missing zone (taken as UTC) and a bare date are all accepted. The
// result is in UTC.
func ParseTime(s string) (time.Time, error) {
	norm := strings.TrimSpace(s)
	if len(norm) > 10 && (norm[10] == ' ' || norm[10] == 't') {
		norm = norm[:10] + "T" + norm[11:]
	}
	if strings.HasSuffix(norm, "z") {
		norm = norm[:len(norm)-1] + "Z"
	}
	for _, layout := range parseLayouts {
		if t, err := time.Parse(layout, norm); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("legacy: %q is not an ISO 8601 timestamp", s)
}
