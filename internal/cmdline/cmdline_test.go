package cmdline

import (
	"slices"
	"testing"
)

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"empty", "", nil},
		{"blank", " \t\n ", nil},
		{"words", "go run ./cmd/x", []string{"go", "run", "./cmd/x"}},
		{"extra spaces", "  a \t b\nc  ", []string{"a", "b", "c"}},
		{"single quotes literal", `a 'b c\n "d"'`, []string{"a", `b c\n "d"`}},
		{"double quotes", `a "b c"`, []string{"a", "b c"}},
		{"double quote escapes", `"\" \\ \$ \` + "`" + `"`, []string{`" \ $ ` + "`"}},
		{"double quote other backslash kept", `"a\nb\x"`, []string{`a\nb\x`}},
		{"backslash outside quotes", `a\ b c\'d \"`, []string{"a b", "c'd", `"`}},
		{"escaped backslash", `a\\b`, []string{`a\b`}},
		{"empty quoted word", `a "" ''`, []string{"a", "", ""}},
		{"quotes join words", `a'b'"c"d`, []string{"abcd"}},
		{"unicode", "héllo 'wörld'", []string{"héllo", "wörld"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.in)
			if err != nil {
				t.Fatalf("Split(%q): %v", tc.in, err)
			}
			if !slices.Equal(got, tc.want) || (got == nil) != (tc.want == nil) {
				t.Errorf("Split(%q) = %q, want %q", tc.in, got, tc.want)
			}
		})
	}
}

func TestSplitErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"trailing backslash", `a b\`, "trailing backslash"},
		{"unterminated single", `a 'b c`, "unterminated ' quote"},
		{"unterminated double", `a "b c`, `unterminated " quote`},
		{"escaped closing double", `"a\"`, `unterminated " quote`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Split(tc.in)
			if err == nil {
				t.Fatalf("Split(%q) = %q, want error %q", tc.in, got, tc.want)
			}
			if err.Error() != tc.want {
				t.Errorf("Split(%q) error = %q, want %q", tc.in, err, tc.want)
			}
		})
	}
}
