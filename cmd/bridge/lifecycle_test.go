package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tasksbridge/tasksbridge/router"
)

// legacyHTTP is a 2025-11-25 client by hand over plain HTTP (the tests
// below need to see statuses, headers and transport errors as they are).
type legacyHTTP struct {
	url string
	sid string
	hc  *http.Client
}

// rpcAnswer is one answer: HTTP status, Retry-After, and the JSON-RPC
// message (the last one of an SSE stream).
type rpcAnswer struct {
	Status     int             `json:"-"`
	RetryAfter string          `json:"-"`
	Raw        string          `json:"-"` // the last message as received
	ID         json.RawMessage `json:"id"`
	Result     json.RawMessage `json:"result"`
	Err        *struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// do posts one JSON-RPC request and reads its answer (JSON or SSE). opened,
// when set, is called once the answer's first bytes arrived (a blocked
// wait's stream is open: its handler is in flight).
func (c *legacyHTTP) do(ctx context.Context, id any, method string, params any, opened func()) (rpcAnswer, error) {
	msg := map[string]any{"jsonrpc": "2.0", "method": method}
	if id != nil {
		msg["id"] = id
	}
	if params != nil {
		msg["params"] = params
	}
	b, _ := json.Marshal(msg)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(string(b)))
	if err != nil {
		return rpcAnswer{}, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.sid != "" {
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	}
	hc := c.hc
	if hc == nil {
		hc = http.DefaultClient
	}
	res, err := hc.Do(req)
	if err != nil {
		return rpcAnswer{}, err
	}
	defer res.Body.Close()
	a := rpcAnswer{Status: res.StatusCode, RetryAfter: res.Header.Get("Retry-After")}
	if method == "initialize" {
		c.sid = res.Header.Get("Mcp-Session-Id")
	}
	var last string
	if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		rd := bufio.NewReader(res.Body)
		first := true
		for {
			line, err := rd.ReadString('\n')
			if first && opened != nil {
				opened()
			}
			first = false
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.TrimSpace(d) != "" {
				last = d
			}
			if err != nil {
				if err != io.EOF {
					return a, fmt.Errorf("stream: %w", err)
				}
				break
			}
		}
	} else {
		if opened != nil {
			opened()
		}
		body, err := io.ReadAll(res.Body)
		if err != nil {
			return a, err
		}
		last = string(body)
	}
	a.Raw = last
	if strings.TrimSpace(last) != "" {
		if err := json.Unmarshal([]byte(last), &a); err != nil {
			return a, fmt.Errorf("answer %q: %w", last, err)
		}
	}
	return a, nil
}

func (c *legacyHTTP) initialize(ctx context.Context, name string) error {
	a, err := c.do(ctx, 0, "initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": name, "version": "1"}}, nil)
	if err != nil {
		return err
	}
	if a.Err != nil || c.sid == "" {
		return fmt.Errorf("initialize: HTTP %d %+v", a.Status, a.Err)
	}
	_, err = c.do(ctx, nil, "notifications/initialized", nil, nil)
	return err
}

// createTask starts a slow_task as a task and returns its id.
func (c *legacyHTTP) createTask(ctx context.Context, id any, ms int) (string, rpcAnswer, error) {
	a, err := c.do(ctx, id, "tools/call", map[string]any{"name": "slow_task", "arguments": map[string]any{"ms": ms, "text": "slow"}, "task": map[string]any{"ttl": 3600000}}, nil)
	if err != nil || a.Err != nil || a.Status != http.StatusOK {
		return "", a, err
	}
	var r struct {
		Task struct {
			TaskID string `json:"taskId"`
		} `json:"task"`
	}
	_ = json.Unmarshal(a.Result, &r)
	return r.Task.TaskID, a, nil
}

// pollUntil polls cond under ctx (external state, no sleeps as sync).
func pollUntil(ctx context.Context, t *testing.T, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-ctx.Done():
			t.Fatalf("%s: not within the deadline", what)
		case <-tick.C:
		}
	}
}

// The listener's timeouts: a dripped body is cut at --read-timeout and its
// connection released, an idle keep-alive connection is closed after
// --idle-timeout, and a blocked tasks/result wait lasting several times
// both is not cut (no ReadTimeout/WriteTimeout on the server).
func TestListenerTimeouts(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := router.New(router.Config{Upstream: startDemoUpstream(t), UpstreamEra: "modern", DataDir: t.TempDir(), Logger: newLogger(io.Discard, "error")})
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 400 * time.Millisecond
	hs, err := serveHTTP(s, "127.0.0.1:0", "", listenOptions{ReadTimeout: timeout, IdleTimeout: timeout, ShutdownTimeout: 10 * time.Second})
	if err != nil {
		_ = s.Close()
		t.Fatal(err)
	}
	defer func() {
		if err := hs.stop(); err != nil {
			t.Errorf("stop: %v", err)
		}
	}()
	host := strings.TrimPrefix(strings.TrimSuffix(hs.url, "/mcp"), "http://")
	openConns := func() int { n, _ := hs.conns.counts(); return n }

	t.Run("dripped body", func(t *testing.T) {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second)) // the test's bound, far above the timeout
		if _, err := fmt.Fprintf(conn, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100000\r\n\r\n{", host); err != nil {
			t.Fatal(err)
		}
		// Drip a byte every 20 ms (the attack), until the bridge cuts it.
		dripped := make(chan struct{})
		go func() {
			defer close(dripped)
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for range tick.C {
				if _, err := conn.Write([]byte(" ")); err != nil {
					return
				}
				if ctx.Err() != nil {
					return
				}
			}
		}()
		// The bridge closes the connection (a reset, as the client's bytes
		// are left unread): the read ends well before the test's bound.
		if _, err := io.ReadAll(conn); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatalf("the dripped body's connection was not closed: %v", err)
			}
		}
		pollUntil(ctx, t, "the dripped connection released", func() bool { return openConns() == 0 })
		conn.Close()
		<-dripped
	})

	t.Run("idle keep-alive", func(t *testing.T) {
		conn, err := net.Dial("tcp", host)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		if _, err := fmt.Fprintf(conn, "GET /healthz HTTP/1.1\r\nHost: %s\r\n\r\n", host); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(conn)
		res, err := http.ReadResponse(rd, nil)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || res.Close {
			t.Fatalf("/healthz: %d close=%v", res.StatusCode, res.Close)
		}
		// Nothing more is sent: the bridge closes the idle connection.
		if b, err := io.ReadAll(rd); err != nil || len(b) != 0 {
			t.Fatalf("idle keep-alive connection: read %q, %v; want it closed by the bridge", b, err)
		}
		pollUntil(ctx, t, "the idle connection released", func() bool { return openConns() == 0 })
	})

	t.Run("long wait not cut", func(t *testing.T) {
		c := &legacyHTTP{url: hs.url}
		if err := c.initialize(ctx, "timeouts"); err != nil {
			t.Fatal(err)
		}
		id, a, err := c.createTask(ctx, 1, int(8*timeout/time.Millisecond))
		if err != nil || id == "" {
			t.Fatalf("create: %v %+v", err, a)
		}
		start := time.Now()
		a, err = c.do(ctx, 2, "tasks/result", map[string]any{"taskId": id}, nil)
		if err != nil || a.Err != nil || !strings.Contains(string(a.Result), "slow") {
			t.Fatalf("a tasks/result wait of %v with --read-timeout and --idle-timeout %v: %v %+v %s", time.Since(start), timeout, err, a.Err, a.Result)
		}
	})
}
