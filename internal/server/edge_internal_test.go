package server

import "testing"

func TestMetadataURLAndRewriteChallenge(t *testing.T) {
	for in, want := range map[string]string{
		"https://h.example/mcp":       "https://h.example/.well-known/oauth-protected-resource/mcp",
		"https://h.example:8443/a/b/": "https://h.example:8443/.well-known/oauth-protected-resource/a/b",
		"http://127.0.0.1:8080":       "http://127.0.0.1:8080/.well-known/oauth-protected-resource",
		"not a url":                   "",
	} {
		if got := metadataURL(in); got != want {
			t.Errorf("metadataURL(%q) = %q, want %q", in, got, want)
		}
	}
	const mu = "https://b.example/.well-known/oauth-protected-resource/mcp"
	for in, want := range map[string]string{
		`Bearer resource_metadata="https://up/x"`:                                   `Bearer resource_metadata="` + mu + `"`,
		`Bearer error="invalid_token", resource_metadata="https://up/x", scope="a"`: `Bearer error="invalid_token", resource_metadata="` + mu + `", scope="a"`,
		`Bearer Resource_Metadata = https://up/x, scope="a"`:                        `Bearer Resource_Metadata = "` + mu + `", scope="a"`,
		`Bearer error_description="see resource_metadata=x", realm="r"`:             `Bearer error_description="see resource_metadata=x", realm="r"`,
		`Bearer scope="a"`: `Bearer scope="a"`,
		`Basic realm="x"`:  `Basic realm="x"`,
	} {
		if got := rewriteChallenge(in, mu); got != want {
			t.Errorf("rewriteChallenge(%s)\n got %s\nwant %s", in, got, want)
		}
	}
	if got := rewriteChallenge(`Bearer resource_metadata="x"`, ""); got != `Bearer resource_metadata="x"` {
		t.Errorf("empty metadata URL changed the challenge: %s", got)
	}
}
