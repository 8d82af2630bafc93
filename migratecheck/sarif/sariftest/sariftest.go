// Package sariftest validates SARIF logs in tests: against the SARIF 2.1.0
// JSON schema (fetched once from the npm registry into a user cache directory,
// never committed) and against the fields GitHub code scanning requires.
//
// The schema file is third-party. It is taken from the npm package
// @microsoft/jest-sarif@1.0.0-beta.0 (lib/schemas/sarif-2.1.0-rtm.5.json, the
// schema json.schemastore.org serves as sarif-2.1.0), whose tarball is checked
// against its pinned registry integrity hash. Set TASKSBRIDGE_SARIF_SCHEMA to
// a local copy of the file to skip the download.
package sariftest

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha512"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// EnvSchema names a local schema file to use instead of the npm download.
const EnvSchema = "TASKSBRIDGE_SARIF_SCHEMA"

const (
	npmPackage   = "@microsoft/jest-sarif@1.0.0-beta.0"
	npmIntegrity = "sha512-A1fOhPd6Ic5iDk4F9YPw1qNB4XF+7+IviR7xl8r2F6QzQkx5cpY9LsGk2rExiFIEcBbjpVnSmwWGBukASkiQ9A=="
	tarMember    = "package/lib/schemas/sarif-2.1.0-rtm.5.json"
	schemaURL    = "https://json.schemastore.org/sarif-2.1.0-rtm.5.json"
)

var (
	once    sync.Once
	schema  *jsonschema.Schema
	loadErr error
)

// Validate checks data against the SARIF 2.1.0 schema and GitHub's
// requirements. When the schema cannot be obtained it fails the test under CI
// (CI set) and otherwise logs why and checks only the GitHub requirements.
func Validate(t testing.TB, data []byte) {
	t.Helper()
	if err := Structural(data); err != nil {
		t.Errorf("SARIF does not meet GitHub code scanning requirements: %v\n%s", err, clip(data))
	}
	sch, err := Schema()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("SARIF schema unavailable: %v", err)
		}
		t.Logf("SARIF schema unavailable, schema validation skipped: %v", err)
		return
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("SARIF is not JSON: %v", err)
	}
	if err := sch.Validate(inst); err != nil {
		t.Errorf("SARIF is not valid against the 2.1.0 schema: %v", err)
	}
}

// Schema returns the compiled SARIF 2.1.0 schema, fetching it on first use.
func Schema() (*jsonschema.Schema, error) {
	once.Do(func() {
		path, err := schemaFile()
		if err != nil {
			loadErr = err
			return
		}
		f, err := os.Open(path)
		if err != nil {
			loadErr = fmt.Errorf("open schema: %w", err)
			return
		}
		defer f.Close()
		doc, err := jsonschema.UnmarshalJSON(f)
		if err != nil {
			loadErr = fmt.Errorf("parse schema %s: %w", path, err)
			return
		}
		c := jsonschema.NewCompiler()
		if err := c.AddResource(schemaURL, doc); err != nil {
			loadErr = fmt.Errorf("add schema: %w", err)
			return
		}
		schema, loadErr = c.Compile(schemaURL)
		if loadErr != nil {
			loadErr = fmt.Errorf("compile schema: %w", loadErr)
		}
	})
	return schema, loadErr
}

// schemaFile returns the path of the cached schema, downloading it if needed.
func schemaFile() (string, error) {
	if p := os.Getenv(EnvSchema); p != "" {
		return p, nil
	}
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "tasksbridge", "sarif-schema")
	dst := filepath.Join(dir, "sarif-2.1.0-rtm.5.json")
	if _, err := os.Stat(dst); err == nil {
		return dst, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("schema cache dir: %w", err)
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		return "", fmt.Errorf("npm not found (needed once to fetch %s; or set %s): %w", npmPackage, EnvSchema, err)
	}
	tmp, err := os.MkdirTemp(dir, "pack-")
	if err != nil {
		return "", fmt.Errorf("temp dir: %w", err)
	}
	defer os.RemoveAll(tmp)
	cmd := exec.Command(npm, "pack", "--silent", "--pack-destination", tmp, npmPackage)
	cmd.Dir = tmp
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if out, err := cmd.Output(); err != nil {
		return "", fmt.Errorf("npm pack %s: %w: %s %s", npmPackage, err, out, stderr.Bytes())
	}
	matches, _ := filepath.Glob(filepath.Join(tmp, "*.tgz"))
	if len(matches) != 1 {
		return "", fmt.Errorf("npm pack %s: expected one tarball, got %v", npmPackage, matches)
	}
	tgz, err := os.ReadFile(matches[0])
	if err != nil {
		return "", fmt.Errorf("read tarball: %w", err)
	}
	sum := sha512.Sum512(tgz)
	if got := "sha512-" + base64.StdEncoding.EncodeToString(sum[:]); got != npmIntegrity {
		return "", fmt.Errorf("%s integrity mismatch: got %s", npmPackage, got)
	}
	data, err := extract(tgz, tarMember)
	if err != nil {
		return "", err
	}
	// Write-then-rename so concurrent test binaries never read a partial file.
	part := filepath.Join(tmp, "schema.json")
	if err := os.WriteFile(part, data, 0o644); err != nil {
		return "", fmt.Errorf("write schema: %w", err)
	}
	if err := os.Rename(part, dst); err != nil {
		return "", fmt.Errorf("install schema: %w", err)
	}
	return dst, nil
}

func extract(tgz []byte, member string) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(tgz))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w", err)
	}
	tr := tar.NewReader(zr)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("%s not in %s", member, npmPackage)
		}
		if err != nil {
			return nil, fmt.Errorf("untar: %w", err)
		}
		if h.Name == member {
			return io.ReadAll(io.LimitReader(tr, 8<<20))
		}
	}
}

// Structural checks what GitHub code scanning needs beyond schema validity:
// version 2.1.0, rules with helpUri and a name different from the
// id, results that reference a declared rule with a valid level and a
// single-line message, relative %SRCROOT% URIs and 1-based regions, and an
// explicit suppressions array.
func Structural(data []byte) error {
	var log struct {
		Version string `json:"version"`
		Runs    []struct {
			Tool struct {
				Driver struct {
					Name  string `json:"name"`
					Rules []struct {
						ID      string `json:"id"`
						Name    string `json:"name"`
						HelpURI string `json:"helpUri"`
						Short   *struct {
							Text string `json:"text"`
						} `json:"shortDescription"`
						Default *struct {
							Level string `json:"level"`
						} `json:"defaultConfiguration"`
					} `json:"rules"`
				} `json:"driver"`
			} `json:"tool"`
			Results []struct {
				RuleID    string `json:"ruleId"`
				RuleIndex *int   `json:"ruleIndex"`
				Level     string `json:"level"`
				Message   struct {
					Text string `json:"text"`
				} `json:"message"`
				Locations []struct {
					Physical struct {
						Artifact struct {
							URI       string `json:"uri"`
							URIBaseID string `json:"uriBaseId"`
						} `json:"artifactLocation"`
						Region *struct {
							StartLine, StartColumn, EndLine, EndColumn int
						} `json:"region"`
					} `json:"physicalLocation"`
				} `json:"locations"`
				Suppressions *[]json.RawMessage `json:"suppressions"`
			} `json:"results"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(data, &log); err != nil {
		return fmt.Errorf("not a SARIF log: %w", err)
	}
	var errs []error
	if log.Version != "2.1.0" {
		errs = append(errs, fmt.Errorf("version %q, want 2.1.0", log.Version))
	}
	if len(log.Runs) == 0 || len(log.Runs) > 20 {
		errs = append(errs, fmt.Errorf("%d runs, want 1..20", len(log.Runs)))
	}
	for ri, run := range log.Runs {
		if run.Tool.Driver.Name == "" {
			errs = append(errs, fmt.Errorf("run %d: tool.driver.name empty", ri))
		}
		index := map[string]int{}
		for i, r := range run.Tool.Driver.Rules {
			switch {
			case r.ID == "":
				errs = append(errs, fmt.Errorf("rule %d: empty id", i))
			case r.Name == r.ID:
				errs = append(errs, fmt.Errorf("rule %s: name equals id", r.ID))
			case r.HelpURI == "":
				errs = append(errs, fmt.Errorf("rule %s: no helpUri", r.ID))
			case r.Short == nil || r.Short.Text == "":
				errs = append(errs, fmt.Errorf("rule %s: no shortDescription", r.ID))
			case r.Default == nil || !validLevel(r.Default.Level):
				errs = append(errs, fmt.Errorf("rule %s: defaultConfiguration.level missing or invalid", r.ID))
			}
			if _, dup := index[r.ID]; dup {
				errs = append(errs, fmt.Errorf("rule %s declared twice", r.ID))
			}
			index[r.ID] = i
		}
		if len(run.Results) > 25000 {
			errs = append(errs, fmt.Errorf("run %d: %d results exceed GitHub's 25,000", ri, len(run.Results)))
		}
		for i, res := range run.Results {
			at := fmt.Sprintf("result %d (%s)", i, res.RuleID)
			idx, ok := index[res.RuleID]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: ruleId not declared in rules", at))
			} else if res.RuleIndex != nil && *res.RuleIndex != idx {
				errs = append(errs, fmt.Errorf("%s: ruleIndex %d, rule is at %d", at, *res.RuleIndex, idx))
			}
			if !validLevel(res.Level) {
				errs = append(errs, fmt.Errorf("%s: level %q", at, res.Level))
			}
			if res.Message.Text == "" || strings.ContainsAny(res.Message.Text, "\r\n") {
				errs = append(errs, fmt.Errorf("%s: message must be non-empty single-line text", at))
			}
			if res.Suppressions == nil {
				errs = append(errs, fmt.Errorf("%s: suppressions array missing", at))
			}
			if len(res.Locations) == 0 {
				errs = append(errs, fmt.Errorf("%s: no locations", at))
			}
			for _, loc := range res.Locations {
				a := loc.Physical.Artifact
				u, err := url.Parse(a.URI)
				switch {
				case err != nil || a.URI == "":
					errs = append(errs, fmt.Errorf("%s: bad uri %q", at, a.URI))
				case u.IsAbs() || strings.HasPrefix(a.URI, "/"):
					errs = append(errs, fmt.Errorf("%s: uri %q is not relative to the repository root", at, a.URI))
				case a.URIBaseID != "%SRCROOT%":
					errs = append(errs, fmt.Errorf("%s: uriBaseId %q, want %%SRCROOT%%", at, a.URIBaseID))
				}
				if r := loc.Physical.Region; r == nil {
					errs = append(errs, fmt.Errorf("%s: no region", at))
				} else if r.StartLine < 1 || r.StartColumn < 1 || (r.EndLine != 0 && r.EndLine < r.StartLine) ||
					(r.EndLine == r.StartLine && r.EndColumn != 0 && r.EndColumn < r.StartColumn) {
					errs = append(errs, fmt.Errorf("%s: region %+v is not 1-based and ordered", at, *r))
				}
			}
		}
	}
	return errors.Join(errs...)
}

func validLevel(l string) bool {
	switch l {
	case "error", "warning", "note", "none":
		return true
	}
	return false
}

func clip(b []byte) []byte {
	if len(b) > 4000 {
		return append(b[:4000:4000], "…"...)
	}
	return b
}
