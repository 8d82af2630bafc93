package main

import (
	"strings"
	"testing"
)

// TestFixGuardModuleWide: a module's core package declares a task type and
// shows no 2025-11-25 evidence of its own; its engine package (another
// package) still dispatches "tasks/result" and sends that type. The
// ttl→ttlMs / pollInterval→pollIntervalMs rename would break the engine's
// 2025-11-25 peers, so no mode may offer it, and no message may promise it:
// the standalone run over ./... and over ./core/ alone, go vet -vettool and
// go fix -fixtool. A second module without the engine gets the fix in every
// mode (the guard is not a blanket refusal).
func TestFixGuardModuleWide(t *testing.T) {
	core := "package core\n\n" +
		"// Task is the wire task.\ntype Task struct {\n\tTaskID       string `json:\"taskId\"`\n\tStatus       string `json:\"status\"`\n" +
		"\tTTL          *int64 `json:\"ttl\"`\n\tPollInterval int64  `json:\"pollInterval,omitempty\"`\n}\n\n" +
		"// NewTask starts a task.\nfunc NewTask(id string) *Task { return &Task{TaskID: id, Status: \"working\"} }\n"
	engine := "package engine\n\nimport \"example.com/eng/core\"\n\n" +
		"// Serve answers one request of a 2025-11-25 session.\nfunc Serve(method, id string) any {\n\tswitch method {\n" +
		"\tcase \"tasks/result\":\n\t\treturn core.NewTask(id)\n\t}\n\treturn nil\n}\n"
	withEngine := writeModule(t, map[string]string{"go.mod": "module example.com/eng\n\ngo 1.26.0\n", "core/core.go": core, "engine/engine.go": engine})
	alone := writeModule(t, map[string]string{"go.mod": "module example.com/eng\n\ngo 1.26.0\n", "core/core.go": core})

	const refused = "not renamed automatically: package example.com/eng/engine of this module still sends Task to 2025-11-25 peers"
	modes := []struct {
		name string
		cmd  string
		args []string
	}{
		{"standalone ./...", binary, []string{"-fix-tags", "-diff", "./..."}},
		{"standalone ./core/", binary, []string{"-fix-tags", "-diff", "./core/"}},
		{"go fix -fixtool", "go", []string{"fix", "-fixtool=" + binary, "-fix-tags", "-diff", "./..."}},
		{"go vet -vettool", "go", []string{"vet", "-vettool=" + binary, "-fix-tags", "-json", "./..."}},
	}
	offered := func(out string) bool {
		return strings.Contains(out, `json:"ttlMs"`) || strings.Contains(out, `"suggested_fixes"`)
	}
	for _, m := range modes {
		r := runIn(t, withEngine, m.cmd, m.args...)
		out := r.stdout + r.stderr
		if offered(out) {
			t.Errorf("%s: the rename was offered although the engine still serves 2025-11-25:\n%s", m.name, out)
		}
		if strings.Contains(out, "the opt-in fix (-fix-tags) renames it") {
			t.Errorf("%s: a message promises a fix the run does not apply:\n%s", m.name, out)
		}
		if m.name == "go vet -vettool" && !strings.Contains(out, "still sends Task to 2025-11-25 peers") {
			t.Errorf("%s: the refusal is not explained:\n%s", m.name, out)
		}
		// Without the engine the same command offers the rename.
		if r := runIn(t, alone, m.cmd, m.args...); !offered(r.stdout + r.stderr) {
			t.Errorf("%s without the engine: the rename is missing:\n%s%s", m.name, r.stdout, r.stderr)
		}
	}
	// The text run names the package and says why.
	r := runIn(t, withEngine, binary, "./core/")
	if !strings.Contains(r.stderr, refused) || !strings.Contains(r.stderr, `(it still uses the removed method "tasks/result")`) {
		t.Errorf("text run over ./core/: want %q:\n%s", refused, r.stderr)
	}
}
