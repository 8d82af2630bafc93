// Package schemacheck validates JSON messages against the official MCP JSON
// schemas (2025-11-25, 2026-07-28 and the ext-tasks draft) in tests.
//
// The schemas are third-party files and are not part of this repository. They
// are read from $TASKSBRIDGE_SCHEMA_DIR, or else from ../shared/schema next to
// the module root. When neither exists, Load fails the test with a message that
// names the public source of each file.
package schemacheck

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema names one of the three official schema files.
type Schema string

const (
	// Legacy is MCP 2025-11-25 (schema/2025-11-25/schema.json in modelcontextprotocol/modelcontextprotocol).
	Legacy Schema = "mcp-2025-11-25.schema.json"
	// Modern is MCP 2026-07-28 (schema/2026-07-28/schema.json in the same repository).
	Modern Schema = "mcp-2026-07-28.schema.json"
	// Ext is the io.modelcontextprotocol/tasks draft (schema/draft/schema.json in modelcontextprotocol/ext-tasks).
	Ext Schema = "ext-tasks-draft.schema.json"
)

// EnvDir overrides where the schema files are read from.
const EnvDir = "TASKSBRIDGE_SCHEMA_DIR"

const sources = `the official schemas are not vendored; get them from
  mcp-2025-11-25.schema.json  https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/2025-11-25/schema.json
  mcp-2026-07-28.schema.json  https://github.com/modelcontextprotocol/modelcontextprotocol/blob/main/schema/2026-07-28/schema.json
  ext-tasks-draft.schema.json https://github.com/modelcontextprotocol/ext-tasks/blob/main/schema/draft/schema.json
and point ` + EnvDir + ` at the folder holding them (default: ../shared/schema beside the module root)`

// Validator validates instances against named $defs of the loaded schemas.
type Validator struct {
	dir string

	mu       sync.Mutex
	compiler *jsonschema.Compiler
	cache    map[string]*jsonschema.Schema
}

var (
	loadOnce sync.Once
	loaded   *Validator
	loadErr  error
)

// Dir returns the schema directory: $TASKSBRIDGE_SCHEMA_DIR, or ../shared/schema
// beside the nearest ancestor directory that holds go.mod.
func Dir() (string, error) {
	if d := os.Getenv(EnvDir); d != "" {
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("schemacheck: working directory: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			// Nested test modules (interop/...) keep walking to the main module.
			if data, err := os.ReadFile(filepath.Join(d, "go.mod")); err == nil &&
				bytes.Contains(data, []byte("module github.com/tasksbridge/tasksbridge\n")) {
				return filepath.Join(filepath.Dir(d), "shared", "schema"), nil
			}
		}
		if filepath.Dir(d) == d {
			return "", errors.New("schemacheck: no go.mod of github.com/tasksbridge/tasksbridge above " + wd)
		}
	}
}

// New loads the three schema files from dir.
func New(dir string) (*Validator, error) {
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	for _, s := range []Schema{Legacy, Modern, Ext} {
		p := filepath.Join(dir, string(s))
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("schemacheck: %w\n%s", err, sources)
		}
		doc, err := jsonschema.UnmarshalJSON(f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("schemacheck: parse %s: %w", p, err)
		}
		if err := c.AddResource(resourceURL(s), doc); err != nil {
			return nil, fmt.Errorf("schemacheck: add %s: %w", p, err)
		}
	}
	return &Validator{dir: dir, compiler: c, cache: map[string]*jsonschema.Schema{}}, nil
}

func resourceURL(s Schema) string { return "file:///tasksbridge-schemas/" + string(s) }

// Load returns the process-wide Validator, failing t (with the public sources
// named) when the schemas cannot be read.
func Load(t testing.TB) *Validator {
	t.Helper()
	loadOnce.Do(func() {
		dir, err := Dir()
		if err != nil {
			loadErr = fmt.Errorf("%w\n%s", err, sources)
			return
		}
		loaded, loadErr = New(dir)
	})
	if loadErr != nil {
		t.Fatalf("%v", loadErr)
	}
	return loaded
}

// Validate checks instance (JSON text) against schema s's definition def
// (a key of its $defs, e.g. "CreateTaskResult").
func (v *Validator) Validate(s Schema, def string, instance []byte) error {
	sch, err := v.compile(s, def)
	if err != nil {
		return err
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(instance))
	if err != nil {
		return fmt.Errorf("schemacheck: instance is not JSON: %w", err)
	}
	if err := sch.Validate(inst); err != nil {
		return fmt.Errorf("schemacheck: %s#/$defs/%s: %w", s, def, err)
	}
	return nil
}

// Check is Validate for tests: it reports a failure on t.
func (v *Validator) Check(t testing.TB, s Schema, def string, instance []byte) {
	t.Helper()
	if err := v.Validate(s, def, instance); err != nil {
		t.Errorf("%v\ninstance: %s", err, instance)
	}
}

func (v *Validator) compile(s Schema, def string) (*jsonschema.Schema, error) {
	key := string(s) + "#" + def
	v.mu.Lock()
	defer v.mu.Unlock()
	if sch, ok := v.cache[key]; ok {
		return sch, nil
	}
	sch, err := v.compiler.Compile(resourceURL(s) + "#/$defs/" + def)
	if err != nil {
		return nil, fmt.Errorf("schemacheck: compile %s#/$defs/%s: %w", s, def, err)
	}
	v.cache[key] = sch
	return sch, nil
}
