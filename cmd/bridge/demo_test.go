package main

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/tasksbridge/tasksbridge/internal/demo"
)

// runApp runs the CLI in-process with args; stdout lines arrive on the
// returned channel, and the error of Run on done.
func runApp(ctx context.Context, t *testing.T, stdin io.Reader, args ...string) (lines <-chan string, stdout *io.PipeReader, done <-chan error) {
	t.Helper()
	pr, pw := io.Pipe()
	app := newApp()
	app.Writer = pw
	app.ErrWriter = io.Discard
	if stdin != nil {
		app.Reader = stdin
	}
	errc := make(chan error, 1)
	go func() {
		err := app.RunContext(ctx, append([]string{"bridge"}, args...))
		pw.Close()
		errc <- err
	}()
	if stdin != nil {
		return nil, pr, errc
	}
	ch := make(chan string, 16)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch, pr, errc
}

func modernClient() *mcp.Client {
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension(demo.TasksExtension, nil)
	return mcp.NewClient(&mcp.Implementation{Name: "demo-cmd-test", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
}

func TestDemoUpstreamOnlyServesDiscover(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	lines, _, done := runApp(runCtx, t, nil, "demo", "--upstream-only", "--listen", "127.0.0.1:0")

	var url string
	for url == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("demo exited before printing its URL: %v", <-done)
			}
			if u, found := strings.CutPrefix(l, "upstream: "); found {
				url = u
			}
		case <-ctx.Done():
			t.Fatal("no upstream URL printed")
		}
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") || !strings.HasSuffix(url, "/mcp") {
		t.Fatalf("upstream URL %q is not a loopback /mcp endpoint", url)
	}
	go func() {
		for range lines { // keep the pipe drained
		}
	}()

	cs, err := modernClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: demo.ProtocolVersion})
	if err != nil {
		t.Fatalf("connect (server/discover): %v", err)
	}
	res := cs.InitializeResult()
	if res.ProtocolVersion != demo.ProtocolVersion {
		t.Errorf("negotiated %q, want %q", res.ProtocolVersion, demo.ProtocolVersion)
	}
	if _, ok := res.Capabilities.Extensions[demo.TasksExtension]; !ok {
		t.Errorf("server/discover capabilities lack the tasks extension (M-49): %+v", res.Capabilities)
	}
	cs.Close()

	stop()
	if err := <-done; err != nil {
		t.Fatalf("demo returned %v after cancellation", err)
	}
}

func TestDemoWithoutUpstreamOnlyNotAvailableYet(t *testing.T) {
	if startDemoBridge != nil {
		t.Skip("the bridge part is available")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	lines, _, done := runApp(ctx, t, nil, "demo", "--listen", "127.0.0.1:0")
	go func() {
		for range lines {
		}
	}()
	err := <-done
	if err == nil {
		t.Fatal("bridge demo without --upstream-only succeeded; want a not-available error")
	}
	if !strings.Contains(err.Error(), "not available yet") {
		t.Errorf("error %q does not say the bridge part is not available", err)
	}
}

func TestDemoUpstreamOnlyStdio(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	inR, inW := io.Pipe()
	_, out, done := runApp(ctx, t, inR, "demo", "--upstream-only", "--stdio")

	cs, err := modernClient().Connect(ctx, &mcp.IOTransport{Reader: out, Writer: inW},
		&mcp.ClientSessionOptions{ProtocolVersion: demo.ProtocolVersion})
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	if _, ok := cs.InitializeResult().Capabilities.Extensions[demo.TasksExtension]; !ok {
		t.Errorf("stdio server/discover lacks the tasks extension")
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "over stdio"}})
	if err != nil {
		t.Fatalf("echo: %v", err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "over stdio" {
		t.Errorf("echo returned %+v", r.Content)
	}
	cs.Close() // closes stdin: the server sees EOF and the command returns
	if err := <-done; err != nil {
		t.Fatalf("demo --stdio returned %v", err)
	}
}
