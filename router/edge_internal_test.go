package router

import "testing"

// The challenge rewrite itself is oauthmeta's (TestRewriteChallenge).
func TestMetadataURL(t *testing.T) {
	for in, want := range map[string]string{
		"https://h.example/mcp":       "https://h.example/.well-known/oauth-protected-resource/mcp",
		"https://h.example:8443/a/b/": "https://h.example:8443/.well-known/oauth-protected-resource/a/b/", // RFC 9728 §3.1 drops only the slash after the host
		"http://127.0.0.1:8080":       "http://127.0.0.1:8080/.well-known/oauth-protected-resource",
		"not a url":                   "",
	} {
		if got := metadataURL(in); got != want {
			t.Errorf("metadataURL(%q) = %q, want %q", in, got, want)
		}
	}
}
