// Command server is a legacy (MCP 2025-11-25 tasks) fixture server built on
// github.com/mark3labs/mcp-go v1.2.1, for tasksbridge's interop tests
// (interop/README.md). It serves stateful Streamable HTTP at /mcp on an
// explicit loopback address and prints "listening http://HOST:PORT/mcp" on
// stdout once it accepts connections.
//
// Tools:
//   - echo {text}: synchronous.
//   - slow_task {ms=2000, text}: hybrid (taskSupport optional): a task when the
//     call carries params.task, otherwise synchronous.
//   - slow_required {ms=1000, text}: task tool, taskSupport required.
//   - fail_task {ms=300, reason}: task tool, taskSupport required; ends failed,
//     and mcp-go answers tasks/result with JSON-RPC -32603.
//
// Legacy twins of the conformance 0.2.0-alpha.12 task fixtures that need no
// input (mcp-go v1.2.1 has no input_required), so the suite's tasks-*
// scenarios run through the bridge against this server too:
//   - greet {name}: synchronous, "Hello, {name}!".
//   - slow_compute {seconds=3, label}: hybrid (optional); tasks/cancel
//     settles it cancelled.
//   - failing_job: task tool (required); completes with an isError result.
//   - protocol_error_job: task tool (required); ends failed, tasks/result
//     answers JSON-RPC -32603.
//
// Durations are multiplied by -time-scale.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "loopback address to listen on (port 0 = ephemeral)")
	scale := flag.Float64("time-scale", 1, "multiplier for every tool duration")
	exitOnStdin := flag.Bool("exit-on-stdin-close", false, "exit when stdin reaches EOF (the parent test went away)")
	flag.Parse()
	log.SetPrefix("mcpgo-server: ")
	log.SetFlags(0)

	if err := run(*listen, *scale, *exitOnStdin); err != nil {
		log.Fatal(err)
	}
}

func run(addr string, scale float64, exitOnStdin bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("bad -listen %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-listen %q: only loopback IP addresses are allowed", addr)
	}
	if scale < 0 {
		return fmt.Errorf("-time-scale %v: must not be negative", scale)
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", server.NewStreamableHTTPServer(newServer(scale), server.WithStateful(true)))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if exitOnStdin {
		go func() {
			_, _ = io.Copy(io.Discard, bufio.NewReader(os.Stdin))
			stop()
		}()
	}

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	fmt.Printf("listening http://%s/mcp\n", ln.Addr())

	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdownCtx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("shutdown: %w", err)
	}
	return nil
}

func newServer(scale float64) *server.MCPServer {
	s := server.NewMCPServer("tasksbridge-mcpgo-fixture", "1.0.0",
		server.WithTaskCapabilities(true, true, true),
		server.WithToolCapabilities(false),
	)
	scaled := func(ms float64) time.Duration {
		if ms < 0 {
			ms = 0
		}
		return time.Duration(ms * scale * float64(time.Millisecond))
	}

	s.AddTool(mcp.NewTool("echo",
		mcp.WithDescription("Synchronous: returns text unchanged."),
		mcp.WithString("text", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.GetString("text", "")), nil
	})

	s.AddTool(mcp.NewTool("slow_task",
		mcp.WithDescription("Hybrid (taskSupport optional): sleeps ms, then returns text."),
		mcp.WithTaskSupport(mcp.TaskSupportOptional),
		mcp.WithNumber("ms", mcp.DefaultNumber(2000)),
		mcp.WithString("text"),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		d := scaled(req.GetFloat("ms", 2000))
		sleep(d)
		return mcp.NewToolResultText(fmt.Sprintf("slept %dms: %s", d.Milliseconds(), req.GetString("text", ""))), nil
	})

	s.AddTaskTool(mcp.NewTool("slow_required",
		mcp.WithDescription("Task (required): sleeps ms, then completes with text."),
		mcp.WithTaskSupport(mcp.TaskSupportRequired),
		mcp.WithNumber("ms", mcp.DefaultNumber(1000)),
		mcp.WithString("text"),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		d := scaled(req.GetFloat("ms", 1000))
		sleep(d)
		return &mcp.CreateTaskResult{Content: []mcp.Content{
			mcp.NewTextContent(fmt.Sprintf("slept %dms: %s", d.Milliseconds(), req.GetString("text", ""))),
		}}, nil
	})

	s.AddTaskTool(mcp.NewTool("fail_task",
		mcp.WithDescription("Task (required): after ms ends failed with reason (tasks/result: JSON-RPC -32603)."),
		mcp.WithTaskSupport(mcp.TaskSupportRequired),
		mcp.WithNumber("ms", mcp.DefaultNumber(300)),
		mcp.WithString("reason"),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		sleep(scaled(req.GetFloat("ms", 300)))
		return nil, errors.New(req.GetString("reason", "fail_task failed"))
	})

	s.AddTool(mcp.NewTool("greet",
		mcp.WithDescription("Synchronous: returns \"Hello, {name}!\"."),
		mcp.WithString("name", mcp.Required()),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(fmt.Sprintf("Hello, %s!", req.GetString("name", ""))), nil
	})

	s.AddTool(mcp.NewTool("slow_compute",
		mcp.WithDescription("Hybrid (taskSupport optional): sleeps seconds, then completes; tasks/cancel settles it cancelled."),
		mcp.WithTaskSupport(mcp.TaskSupportOptional),
		mcp.WithNumber("seconds", mcp.DefaultNumber(3)),
		mcp.WithString("label"),
	), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		secs := req.GetFloat("seconds", 3)
		sleep(scaled(secs * 1000))
		label := req.GetString("label", "")
		if label == "" {
			label = "result"
		}
		return mcp.NewToolResultText(fmt.Sprintf("computed %s after %gs", label, secs)), nil
	})

	s.AddTaskTool(mcp.NewTool("failing_job",
		mcp.WithDescription("Task (required): after ~1s completes with an isError tool result."),
		mcp.WithTaskSupport(mcp.TaskSupportRequired),
	), func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		sleep(scaled(1000))
		return &mcp.CreateTaskResult{
			Content: []mcp.Content{mcp.NewTextContent("failing_job: simulated tool execution error")},
			IsError: true,
		}, nil
	})

	s.AddTaskTool(mcp.NewTool("protocol_error_job",
		mcp.WithDescription("Task (required): ends failed; tasks/result answers JSON-RPC -32603."),
		mcp.WithTaskSupport(mcp.TaskSupportRequired),
	), func(_ context.Context, _ mcp.CallToolRequest) (*mcp.CreateTaskResult, error) {
		sleep(scaled(200))
		return nil, errors.New("protocol_error_job: simulated internal failure")
	})
	return s
}

// sleep waits d without looking at the handler's context. mcp-go v1.2.1 runs
// a task's handler under the tools/call request context, which Streamable
// HTTP cancels as soon as the CreateTaskResult is written (interop/README.md,
// Peer quirks seen); a handler that honoured it would be marked cancelled at once. A real
// tasks/cancel still ends the task: mcp-go ignores a late completion.
func sleep(d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	<-t.C
}
