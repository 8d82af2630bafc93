package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A bad --credential-key-file is refused at start, naming the flag and how
// to make a key, never repeating the file's content; a good one starts.
func TestServeCredentialKeyFile(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad")
	if err := os.WriteFile(bad, []byte("c2hvcnQ=\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lines, _, done := runApp(ctx, t, nil, "serve", "--upstream", "http://127.0.0.1:1/mcp", "--data-dir", t.TempDir(),
		"--credential-key-file", bad)
	go func(lines <-chan string) {
		for range lines {
		}
	}(lines)
	if err := <-done; err == nil || !strings.Contains(err.Error(), "--credential-key-file") ||
		!strings.Contains(err.Error(), "head -c 32 /dev/urandom | base64") || strings.Contains(err.Error(), "c2hvcnQ") {
		t.Fatalf("serve with a 5-byte key: %v", err)
	}

	k := make([]byte, 32)
	_, _ = rand.Read(k)
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte(base64.StdEncoding.EncodeToString(k)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	lines2, _, done := runApp(runCtx, t, nil, "serve", "--upstream", "http://127.0.0.1:1/mcp", "--data-dir", t.TempDir(),
		"--listen", "127.0.0.1:0", "--credential-key-file", good)
	if url := awaitLine(ctx, t, lines2, done, "bridge: "); !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("endpoint %q", url)
	}
	stop()
	if err := <-done; err != nil {
		t.Fatalf("serve with a good key returned %v", err)
	}
}
