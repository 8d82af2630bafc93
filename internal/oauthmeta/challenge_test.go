package oauthmeta

import (
	"net/url"
	"strings"
	"testing"
)

const meta = "https://bridge.example/.well-known/oauth-protected-resource/mcp"

func TestRewriteChallenge(t *testing.T) {
	q := `"` + meta + `"`
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"bare bearer gets the parameter", `Bearer`, `Bearer resource_metadata=` + q, true},
		{"missing parameter appended after the others",
			`Bearer realm="mcp", error="invalid_token"`,
			`Bearer realm="mcp", error="invalid_token", resource_metadata=` + q, true},
		{"present parameter replaced in place",
			`Bearer resource_metadata="https://up.internal/.well-known/oauth-protected-resource/mcp", scope="files:read"`,
			`Bearer resource_metadata=` + q + `, scope="files:read"`, true},
		{"parameter name and scheme are case-insensitive",
			`bearer Resource_Metadata="https://up.internal/x"`,
			`bearer Resource_Metadata=` + q, true},
		{"insufficient_scope 403 keeps scope and error byte for byte",
			`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata="https://up/x", error_description="need write"`,
			`Bearer error="insufficient_scope", scope="files:read files:write", resource_metadata=` + q + `, error_description="need write"`, true},
		{"escaped quotes and commas inside a quoted value stay",
			`Bearer error_description="bad \"token\", really, resource_metadata=no", realm="a,b"`,
			`Bearer error_description="bad \"token\", really, resource_metadata=no", realm="a,b", resource_metadata=` + q, true},
		{"DPoP challenge left alone, Bearer rewritten",
			`DPoP algs="ES256 PS256", error="invalid_token", Bearer realm="mcp"`,
			`DPoP algs="ES256 PS256", error="invalid_token", Bearer realm="mcp", resource_metadata=` + q, true},
		{"Bearer first then DPoP",
			`Bearer error="invalid_token", DPoP algs="ES256"`,
			`Bearer error="invalid_token", resource_metadata=` + q + `, DPoP algs="ES256"`, true},
		{"two Bearer challenges both rewritten",
			`Bearer realm="a", Bearer realm="b", resource_metadata="https://up/x"`,
			`Bearer realm="a", resource_metadata=` + q + `, Bearer realm="b", resource_metadata=` + q, true},
		{"other scheme with token68 left alone",
			`Basic dXNlcjpwYXNz==, Bearer`,
			`Basic dXNlcjpwYXNz==, Bearer resource_metadata=` + q, true},
		{"bare Bearer followed by another challenge",
			`Bearer, Basic realm="x"`,
			`Bearer resource_metadata=` + q + `, Basic realm="x"`, true},
		{"token-form values and BWS kept",
			`Bearer error = invalid_token ,scope=read`,
			`Bearer error = invalid_token ,scope=read, resource_metadata=` + q, true},
		{"empty list elements accepted",
			`, Bearer realm="x",, , Basic realm="y"`,
			`, Bearer realm="x", resource_metadata=` + q + `,, , Basic realm="y"`, true},
		{"only other schemes: unchanged, ok", `Basic realm="x", Digest realm="y", nonce="abc"`, `Basic realm="x", Digest realm="y", nonce="abc"`, true},
		{"empty value: unchanged, ok", ``, ``, true},
		{"unterminated quoted string refused", `Bearer realm="mcp`, `Bearer realm="mcp`, false},
		{"control character refused", "Bearer realm=\"a\x01b\"", "Bearer realm=\"a\x01b\"", false},
		{"garbage after a parameter refused", `Bearer realm="x" junk`, `Bearer realm="x" junk`, false},
		{"Bearer with token68 cannot carry a parameter", `Bearer abc123==`, `Bearer abc123==`, false},
		{"duplicate resource_metadata refused", `Bearer resource_metadata="a", resource_metadata="b"`, `Bearer resource_metadata="a", resource_metadata="b"`, false},
		{"scheme glued to a parameter refused", `Bearer,realm="x"`, `Bearer,realm="x"`, false},
		{"tab instead of SP after scheme refused", "Bearer\trealm=\"x\"", "Bearer\trealm=\"x\"", false},
		{"bad escape at end refused", `Bearer realm="x\`, `Bearer realm="x\`, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := RewriteChallenge(tc.in, meta)
			if got != tc.want || ok != tc.ok {
				t.Errorf("RewriteChallenge(%q)\n got  %q, %v\n want %q, %v", tc.in, got, ok, tc.want, tc.ok)
			}
			if ok {
				if _, valid := parseChallenges(got); !valid {
					t.Errorf("output %q does not parse", got)
				}
			}
		})
	}
}

func TestRewriteChallengeRefusesBadURL(t *testing.T) {
	for _, u := range []string{"", "https://h/\r\nSet-Cookie: x=y", "https://h/\x00"} {
		if got, ok := RewriteChallenge(`Bearer realm="x"`, u); ok || got != `Bearer realm="x"` {
			t.Errorf("RewriteChallenge with URL %q = %q, %v; want unchanged, false", u, got, ok)
		}
	}
	// A quote or backslash in the URL is escaped, never breaks the header.
	got, ok := RewriteChallenge(`Bearer`, `https://h/a"b\c`)
	if want := `Bearer resource_metadata="https://h/a\"b\\c"`; !ok || got != want {
		t.Errorf("got %q, %v; want %q", got, ok, want)
	}
	chs, _ := parseChallenges(got)
	if v, _ := chs[0].param(got, "resource_metadata"); v != `https://h/a"b\c` {
		t.Errorf("unquoted value = %q", v)
	}
}

func TestParseChallengesRFC9110Example(t *testing.T) {
	// The example of RFC 9110 §11.6.1: two challenges, the first with a
	// quoted value that holds escaped quotes.
	v := `Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`
	chs, ok := parseChallenges(v)
	if !ok || len(chs) != 2 {
		t.Fatalf("parseChallenges = %d challenges, %v; want 2, true", len(chs), ok)
	}
	if chs[0].scheme != "Newauth" || len(chs[0].params) != 3 || chs[1].scheme != "Basic" || len(chs[1].params) != 1 {
		t.Fatalf("challenges = %+v", chs)
	}
	if title, _ := chs[0].param(v, "TITLE"); title != `Login to "apps"` {
		t.Errorf("title = %q", title)
	}
}

func TestMetadataURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://h/mcp", "https://h/.well-known/oauth-protected-resource/mcp"},
		{"https://h/", "https://h/.well-known/oauth-protected-resource"},
		{"https://h", "https://h/.well-known/oauth-protected-resource"},
		{"http://127.0.0.1:8080/mcp", "http://127.0.0.1:8080/.well-known/oauth-protected-resource/mcp"},
		{"https://h/tenant/a/mcp", "https://h/.well-known/oauth-protected-resource/tenant/a/mcp"},
		{"https://h/mcp/", "https://h/.well-known/oauth-protected-resource/mcp/"},
		{"https://h/mcp?tenant=1", "https://h/.well-known/oauth-protected-resource/mcp?tenant=1"},
		{"https://user:pw@h/mcp#frag", "https://h/.well-known/oauth-protected-resource/mcp"},
		{"https://h/a%20b", "https://h/.well-known/oauth-protected-resource/a%20b"},
		{"/mcp", ""},
	}
	for _, tc := range tests {
		u, err := url.Parse(tc.in)
		if err != nil {
			t.Fatal(err)
		}
		if got := MetadataURL(u); got != tc.want {
			t.Errorf("MetadataURL(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := MetadataURL(nil); got != "" {
		t.Errorf("MetadataURL(nil) = %q", got)
	}
}

// FuzzRewriteChallenge checks, for any field value, that a rewrite never
// makes a header invalid, that a refusal changes nothing, and that a
// rewrite leaves every non-Bearer challenge and every other parameter as
// sent. The seeds run in every go test.
func FuzzRewriteChallenge(f *testing.F) {
	for _, s := range []string{
		``, `Bearer`, `bearer`, `Bearer realm="x"`, `Bearer resource_metadata="https://u/x"`,
		`Bearer error="insufficient_scope", scope="a b", resource_metadata="https://u/x"`,
		`Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple"`,
		`DPoP algs="ES256", Bearer realm="x"`, `Basic abc==, Bearer`, `Bearer abc==`,
		`, , Bearer ,realm=x`, `Bearer , Basic`, `Bearer realm="a\"b,c"`, "Bearer realm=\"\xff\"",
		`Bearer realm="x`, `Bearer realm=`, `=`, `Bearer error = x , scope = y`,
	} {
		f.Add(s, meta)
	}
	f.Add(`Bearer`, `https://h/a"b\c`)
	f.Fuzz(func(t *testing.T, in, u string) {
		out, ok := RewriteChallenge(in, u)
		if !ok {
			if out != in {
				t.Fatalf("refused but changed: %q -> %q", in, out)
			}
			return
		}
		before, valid := parseChallenges(in)
		if !valid {
			t.Fatalf("accepted an invalid value %q", in)
		}
		after, valid := parseChallenges(out)
		if !valid {
			t.Fatalf("rewrite of %q produced invalid %q", in, out)
		}
		if strings.ContainsAny(out, "\r\n\x00") {
			t.Fatalf("rewrite produced a control byte: %q", out)
		}
		if len(before) != len(after) {
			t.Fatalf("challenge count %d -> %d: %q -> %q", len(before), len(after), in, out)
		}
		for i := range before {
			b, a := before[i], after[i]
			if b.scheme != a.scheme {
				t.Fatalf("scheme %q -> %q", b.scheme, a.scheme)
			}
			if !b.isBearer() {
				if in[b.valueStartOrEnd():b.end] != out[a.valueStartOrEnd():a.end] {
					t.Fatalf("non-Bearer challenge changed: %q -> %q", in, out)
				}
				continue
			}
			if v, _ := a.param(out, resourceMetadataParam); v != u {
				t.Fatalf("resource_metadata = %q, want %q (in %q, out %q)", v, u, in, out)
			}
			for _, p := range b.params {
				if strings.EqualFold(p.name, resourceMetadataParam) {
					continue
				}
				v, found := a.param(out, p.name)
				if !found || out[paramIn(a, p.name).valueStart:paramIn(a, p.name).valueEnd] != in[p.valueStart:p.valueEnd] || v != p.value(in) {
					t.Fatalf("param %s changed: %q -> %q", p.name, in, out)
				}
			}
		}
	})
}

func (c challenge) valueStartOrEnd() int { return c.schemeEnd }

func paramIn(c challenge, name string) authParam {
	for _, p := range c.params {
		if strings.EqualFold(p.name, name) {
			return p
		}
	}
	return authParam{}
}
