package migratecheck_test

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"
)

// stdRewrites undoes the testdata stand-ins for the standard library when a
// stub is copied into a real module (go vet loads export data, so the real
// standard library is cheap there).
var stdRewrites = strings.NewReplacer(
	`"example.com/std/context"`, `"context"`,
	`"example.com/std/errors"`, `"errors"`,
	`"example.com/std/time"`, `"time"`,
	`"example.com/std/json"`, `"encoding/json"`,
	`"example.com/std/fmt"`, `"fmt"`,
)

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestVetTool runs the analyzers under go vet -vettool (unitchecker), where
// every package is analyzed in its own process: wrapper facts must cross
// package boundaries, suppression directives must work without a custom
// driver, and -migratecheck.* flags must be accepted by go vet.
func TestVetTool(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a vet tool and runs go vet")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	tmp := t.TempDir()
	tool := filepath.Join(tmp, "vettool")
	build := exec.Command(goBin, "build", "-o", tool, "github.com/tasksbridge/tasksbridge/migratecheck/internal/vettool")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build vettool: %v\n%s", err, out)
	}

	mod := filepath.Join(tmp, "mod")
	writeFile(t, filepath.Join(mod, "go.mod"), "module example.com/vt\n\ngo 1.26\n\nrequire github.com/mark3labs/mcp-go v0.0.0\n\nreplace github.com/mark3labs/mcp-go => ./mcpgo\n")
	writeFile(t, filepath.Join(mod, "mcpgo", "go.mod"), "module github.com/mark3labs/mcp-go\n\ngo 1.26\n")
	copyTree(t, filepath.Join(analysistest.TestData(), "src", "github.com", "mark3labs", "mcp-go"), filepath.Join(mod, "mcpgo"), stdRewrites.Replace)
	writeFile(t, filepath.Join(mod, "wrapper", "wrapper.go"), `package wrapper

import "github.com/mark3labs/mcp-go/mcp"

const TaskSupportRequired = mcp.TaskSupportRequired //migrate-check:ignore MCP009 the wrapper itself is reviewed
`)
	writeFile(t, filepath.Join(mod, "app", "app.go"), `package app

import (
	"example.com/vt/wrapper"
	"github.com/mark3labs/mcp-go/mcp"
)

func use(method string) {
	_ = wrapper.TaskSupportRequired
	_ = mcp.MethodTasksResult //migrate-check:ignore MCP001 kept for 2025-11-25 peers
	//migrate-check:ignore MCP006 nothing to suppress here
	_ = mcp.NewTask("x")
	//migrate-check:ignore MCP012
	switch method {
	case "tasks/list":
	}
}
`)
	vet := func(flags ...string) (string, error) {
		args := append([]string{"vet", "-vettool=" + tool}, flags...)
		cmd := exec.Command(goBin, append(args, "./...")...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off")
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		return out.String(), err
	}

	out, err := vet()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("go vet with findings: err %v (want exit 1)\n%s", err, out)
	}
	for _, want := range []string{
		"app/app.go:9:14: wrapper.TaskSupportRequired (which re-exports mcp-go mcp.TaskSupportRequired) declares the removed tool execution.taskSupport",
		"app/app.go:11:2: this directive matched nothing; remove it?",
		"app/app.go:13:2: malformed directive: //migrate-check:ignore MCP012 is missing the required reason",
		`app/app.go:15:7: "tasks/list" is used as a JSON-RPC method name (in a method switch)`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("go vet output lacks %q:\n%s", want, out)
		}
	}
	for _, banned := range []string{"mcp.MethodTasksResult", "wrapper/wrapper.go"} {
		if strings.Contains(out, banned) {
			t.Errorf("suppressed finding %q reported under go vet:\n%s", banned, out)
		}
	}

	out, _ = vet("-migratecheck.rules=all,-MCP002")
	if strings.Contains(out, `"tasks/list"`) || !strings.Contains(out, "wrapper.TaskSupportRequired") {
		t.Errorf("-migratecheck.rules=all,-MCP002 not applied under go vet:\n%s", out)
	}
}
