package settings

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// ConfigNames are the configuration file names looked for, in this order, in
// each directory from the working directory up to the module root.
var ConfigNames = []string{".migrate-check.yaml", ".migrate-check.yml", ".migrate-check.json"}

// Config is the on-disk configuration (.migrate-check.yaml or .json). Every
// key is optional; unknown keys are errors so typos do not silently disable a
// setting.
//
//	rules: [all, -MCP011]          # or "all,-MCP011"
//	severity: {MCP003: warning}    # error | warning | info
//	libraries:                     # replaces the prefix list of that family;
//	  mcpgo: [github.com/mark3labs/mcp-go, example.com/fork/mcp-go]
//	  mcpkit: []                   # an empty list disables the family
//	method_call_funcs: [Invoke]    # added to the R1 call-name list
//	target: dual                   # dual | extension-only
//	fix: {tags: true, literals: false}
//	fail_on: warning               # error | warning | info
//	tests: true                    # analyse _test.go files
type Config struct {
	Rules           RuleList            `yaml:"rules" json:"rules"`
	Severity        map[string]string   `yaml:"severity" json:"severity"`
	Libraries       map[string][]string `yaml:"libraries" json:"libraries"`
	MethodCallFuncs []string            `yaml:"method_call_funcs" json:"method_call_funcs"`
	Target          string              `yaml:"target" json:"target"`
	Fix             FixConfig           `yaml:"fix" json:"fix"`
	FailOn          string              `yaml:"fail_on" json:"fail_on"`
	Tests           *bool               `yaml:"tests" json:"tests"`

	// Path is the file the configuration was read from ("" if none).
	Path string `yaml:"-" json:"-"`
	// Raw is the file content (for cache keys in go vet mode).
	Raw []byte `yaml:"-" json:"-"`
}

// FixConfig opts rules into their automatic fixes (docs/rules/README.md,
// Fixes: opt-in per rule, never on by default).
type FixConfig struct {
	Tags     *bool `yaml:"tags" json:"tags"`
	Literals *bool `yaml:"literals" json:"literals"`
}

// RuleList is a rule selection: a YAML/JSON list of tokens or one
// comma-separated string.
type RuleList []string

// UnmarshalYAML accepts a sequence or a comma-separated scalar.
func (r *RuleList) UnmarshalYAML(n *yaml.Node) error {
	switch n.Kind {
	case yaml.ScalarNode:
		*r = splitList(n.Value)
		return nil
	case yaml.SequenceNode:
		var list []string
		if err := n.Decode(&list); err != nil {
			return err
		}
		*r = list
		return nil
	}
	return fmt.Errorf("line %d: rules must be a list or a comma-separated string", n.Line)
}

// UnmarshalJSON accepts an array or a comma-separated string.
func (r *RuleList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*r = splitList(s)
		return nil
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return errors.New("rules must be an array or a comma-separated string")
	}
	*r = list
	return nil
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// FindConfig looks for a configuration file in dir and its parents, stopping
// at the first directory that holds go.mod (the module root). It returns ""
// when there is none.
func FindConfig(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("config lookup: %w", err)
	}
	for d := abs; ; d = filepath.Dir(d) {
		for _, name := range ConfigNames {
			p := filepath.Join(d, name)
			if st, err := os.Stat(p); err == nil && !st.IsDir() {
				return p, nil
			}
		}
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return "", nil
		}
		if filepath.Dir(d) == d {
			return "", nil
		}
	}
}

// LoadConfig reads and parses a configuration file; the format follows the
// extension (.json is JSON, anything else YAML).
func LoadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read config: %w", err)
	}
	cfg, err := ParseConfig(data, strings.EqualFold(filepath.Ext(path), ".json"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	cfg.Path = path
	return cfg, nil
}

// ParseConfig parses YAML (or JSON when isJSON) strictly.
func ParseConfig(data []byte, isJSON bool) (*Config, error) {
	cfg := &Config{Raw: data}
	if isJSON {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(cfg); err != nil {
			return nil, fmt.Errorf("parse JSON config: %w", err)
		}
	} else {
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		// An empty file (io.EOF) is the empty configuration.
		if err := dec.Decode(cfg); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("parse YAML config: %w", err)
		}
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return cfg, nil
}

func (c *Config) validate() error {
	var errs []error
	for id, sev := range c.Severity {
		if !validSeverity(sev) {
			errs = append(errs, fmt.Errorf("severity.%s: %q is not error, warning or info", id, sev))
		}
	}
	if c.FailOn != "" && !validSeverity(c.FailOn) {
		errs = append(errs, fmt.Errorf("fail_on: %q is not error, warning or info", c.FailOn))
	}
	switch c.Target {
	case "", "dual", "extension-only":
	default:
		errs = append(errs, fmt.Errorf("target: %q is not dual or extension-only", c.Target))
	}
	for name, prefixes := range c.Libraries {
		for _, p := range prefixes {
			if p == "" || strings.ContainsAny(p, " \t") {
				errs = append(errs, fmt.Errorf("libraries.%s: bad import path prefix %q", name, p))
			}
		}
	}
	return errors.Join(errs...)
}

func validSeverity(s string) bool {
	switch s {
	case "error", "warning", "info":
		return true
	}
	return false
}

// LoadConfigFor returns the configuration for a run in dir: the explicit
// file, none ("none"), or the one FindConfig discovers (nil if absent).
func LoadConfigFor(dir, explicit string) (*Config, error) {
	switch explicit {
	case "none":
		return nil, nil
	case "":
		p, err := FindConfig(dir)
		if err != nil || p == "" {
			return nil, err
		}
		return LoadConfig(p)
	default:
		return LoadConfig(explicit)
	}
}
