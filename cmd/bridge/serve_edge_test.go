package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
	"time"
)

// The edge's flags refuse what cannot work, at start, saying what to do.
func TestServeEdgeFlagsRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--allowed-host", "*"}, "non-loopback"},
		{[]string{"--allowed-origin", "*"}, "M-43"},
		{[]string{"--trusted-proxy", "proxy.example"}, "CIDR"},
		{[]string{"--public-url", "mcp.example.com"}, "absolute http(s) URL"},
		{[]string{"--principal", "header:X-Forwarded-User"}, "--trusted-proxy"},
		{[]string{"--principal", "header:bad header"}, "header:NAME"},
		{[]string{"--principal", "cookie"}, "want authorization"},
		{[]string{"--principal", "introspection", "--introspection-url", "https://issuer.example/introspect", "--public-url", "https://mcp.example.com/mcp"}, "--introspection-client-id"},
		{[]string{"--principal", "jwt", "--public-url", "https://mcp.example.com/mcp"}, "needs --oidc-issuer"},
		{[]string{"--principal", "jwt", "--oidc-issuer", "https://issuer.example"}, "--public-url"},
	} {
		args := append([]string{"serve", "--upstream", "http://127.0.0.1:1/mcp", "--data-dir", t.TempDir()}, tc.args...)
		lines, _, done := runApp(ctx, t, nil, args...)
		go func() {
			for range lines {
			}
		}()
		if err := <-done; err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve %v: %v, want an error with %q", tc.args, err, tc.want)
		}
	}
}

func TestServeHelpEdgeFlags(t *testing.T) {
	app := newApp()
	var out bytes.Buffer
	app.Writer = &out
	app.ErrWriter = io.Discard
	if err := app.Run([]string{"bridge", "serve", "--help"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--principal", "TASKSBRIDGE_PRINCIPAL", "--oidc-issuer", "--jwks-url", "--audience", "--introspection-url",
		"--introspection-client-id", "--introspection-client-secret-file", "TASKSBRIDGE_INTROSPECTION_CLIENT_SECRET", "--trusted-proxy",
		"TASKSBRIDGE_TRUSTED_PROXIES", "--allowed-host", "TASKSBRIDGE_ALLOWED_HOSTS", "--public-url", "TASKSBRIDGE_PUBLIC_URL",
		"--no-forwarded-headers", "--oauth-proxy-auth-server"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help lacks %q", want)
		}
	}
}
