package legacy

import (
	"testing"
	"time"
)

func TestFormatTime(t *testing.T) {
	loc := time.FixedZone("X", 2*3600)
	in := time.Date(2025, 11, 25, 12, 30, 0, 123456789, loc)
	if got, want := FormatTime(in), "2025-11-25T10:30:00.123Z"; got != want {
		t.Errorf("FormatTime = %q, want %q", got, want)
	}
	if got, want := FormatTime(time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC)), ts0; got != want {
		t.Errorf("FormatTime = %q, want %q (milliseconds always present)", got, want)
	}
	if got, want := FormatTimeNano(in), "2025-11-25T10:30:00.123456789Z"; got != want {
		t.Errorf("FormatTimeNano = %q, want %q", got, want)
	}
}

func TestParseTimeLenient(t *testing.T) {
	want := time.Date(2025, 11, 25, 10, 30, 0, 0, time.UTC)
	for _, s := range []string{
		"2025-11-25T10:30:00Z",
		"2025-11-25T10:30:00.000Z",
		"2025-11-25T10:30:00.000000000Z",
		"2025-11-25T11:30:00+01:00",
		"2025-11-25T11:30:00+0100",
		"2025-11-25T11:30:00+01",
		"2025-11-25t10:30:00z",
		"2025-11-25 10:30:00Z",
		"2025-11-25T10:30:00",
		"2025-11-25T10:30Z",
		"2025-11-25T10:30",
		" 2025-11-25T10:30:00Z ",
	} {
		got, err := ParseTime(s)
		if err != nil {
			t.Errorf("ParseTime(%q): %v", s, err)
			continue
		}
		if !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("ParseTime(%q) = %v, want %v in UTC", s, got, want)
		}
	}
	if got, err := ParseTime("2025-11-25"); err != nil || !got.Equal(time.Date(2025, 11, 25, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseTime(date) = %v, %v", got, err)
	}
	for _, s := range []string{"", "yesterday", "2025-13-45T00:00:00Z", "1700000000", "2025-11-25T25:00:00Z"} {
		if _, err := ParseTime(s); err == nil {
			t.Errorf("ParseTime(%q) succeeded", s)
		}
	}
	// Round trip through FormatTime keeps millisecond precision.
	now := time.Date(2031, 1, 2, 3, 4, 5, 678_000_000, time.UTC)
	if got, err := ParseTime(FormatTime(now)); err != nil || !got.Equal(now) {
		t.Errorf("round trip = %v, %v; want %v", got, err, now)
	}
}
