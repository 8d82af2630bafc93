package driver

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
)

// Edit replaces the bytes [Start, End) of a file with New.
type Edit struct {
	Start, End int
	New        string
}

// FileFix is one suggested fix's edits, grouped by file. A fix is applied as
// a whole or not at all (analysis.SuggestedFix semantics).
type FileFix struct {
	Rule    string
	Message string
	Edits   map[string][]Edit // by absolute filename
}

// FixResult reports what applying a set of fixes would do.
type FixResult struct {
	// Changed maps each filename to its new, gofmt-formatted content.
	Changed map[string][]byte
	// Original holds the content the edits were computed against.
	Original map[string][]byte
	// Applied and Skipped count whole fixes; Skipped lists why.
	Applied int
	Skipped []string
}

// PlanFixes merges fixes in order: a fix whose edits overlap an edit already
// accepted (and are not identical to it, as happens when the same file is
// analysed in a package and its test variant) is dropped whole, like
// conflicting sibling commits. Files that are generated, under vendor/, or
// outside the writable roots are never touched. Each changed file is passed
// through go/format so the result is gofmt-clean.
func PlanFixes(fixes []FileFix, readFile func(string) ([]byte, error), writable func(string) bool) (*FixResult, error) {
	res := &FixResult{Changed: map[string][]byte{}, Original: map[string][]byte{}}
	accepted := map[string][]Edit{}
	refused := map[string]string{} // filename -> reason, cached
	for _, fix := range fixes {
		ok := true
		var why string
		files := sortedKeys(fix.Edits)
		for _, name := range files {
			if r, done := refused[name]; done {
				ok, why = false, r
				break
			}
			if _, seen := res.Original[name]; !seen {
				if r := protectedReason(name, writable); r != "" {
					refused[name] = r
					ok, why = false, r
					break
				}
				src, err := readFile(name)
				if err != nil {
					return nil, fmt.Errorf("read %s for fixing: %w", name, err)
				}
				if isGenerated(name, src) {
					refused[name] = name + " is a generated file"
					ok, why = false, refused[name]
					break
				}
				res.Original[name] = src
			}
			for _, e := range fix.Edits[name] {
				if e.Start < 0 || e.End < e.Start || e.End > len(res.Original[name]) {
					return nil, fmt.Errorf("fix %q: edit [%d,%d) out of range in %s", fix.Message, e.Start, e.End, name)
				}
				if conflicts(accepted[name], e) {
					ok, why = false, fmt.Sprintf("%s: conflicts with an earlier fix", name)
					break
				}
			}
			if !ok {
				break
			}
		}
		if !ok {
			res.Skipped = append(res.Skipped, fmt.Sprintf("%s fix %q skipped: %s", fix.Rule, fix.Message, why))
			continue
		}
		for _, name := range files {
			for _, e := range fix.Edits[name] {
				if !slices.Contains(accepted[name], e) {
					accepted[name] = append(accepted[name], e)
				}
			}
		}
		res.Applied++
	}
	for name, edits := range accepted {
		out, err := ApplyEdits(res.Original[name], edits)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if !bytes.Equal(out, res.Original[name]) {
			res.Changed[name] = out
		}
	}
	return res, nil
}

// ApplyEdits applies non-overlapping edits to src and gofmt-formats the result.
// Identical duplicate edits are applied once; insertions at the same offset
// keep their given order.
func ApplyEdits(src []byte, edits []Edit) ([]byte, error) {
	es := slices.Clone(edits)
	slices.SortStableFunc(es, func(a, b Edit) int {
		if a.Start != b.Start {
			return a.Start - b.Start
		}
		return a.End - b.End
	})
	es = slices.Compact(es)
	var out bytes.Buffer
	last := 0
	for i, e := range es {
		if e.Start < last || e.End > len(src) || e.End < e.Start {
			return nil, fmt.Errorf("edit %d [%d,%d) overlaps an earlier edit or is out of range", i, e.Start, e.End)
		}
		out.Write(src[last:e.Start])
		out.WriteString(e.New)
		last = e.End
	}
	out.Write(src[last:])
	formatted, err := format.Source(out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("fixed source does not parse: %w", err)
	}
	return formatted, nil
}

// conflicts reports whether e overlaps any accepted edit without being identical.
func conflicts(accepted []Edit, e Edit) bool {
	for _, a := range accepted {
		if a == e {
			continue
		}
		// Two insertions at the same point are ambiguous; treat as a conflict.
		if a.Start == a.End && e.Start == e.End && a.Start == e.Start {
			return true
		}
		if e.Start < a.End && a.Start < e.End {
			return true
		}
	}
	return false
}

// protectedReason explains why a file must not be modified, or returns "".
func protectedReason(name string, writable func(string) bool) string {
	slash := filepath.ToSlash(name)
	if strings.Contains(slash, "/vendor/") || strings.HasPrefix(slash, "vendor/") {
		return name + " is under vendor/"
	}
	if !strings.HasSuffix(name, ".go") {
		return name + " is not a Go source file"
	}
	if writable != nil && !writable(name) {
		return name + " is outside the module being checked"
	}
	return ""
}

// isGenerated reports whether src carries the standard "Code generated … DO
// NOT EDIT." header (ast.IsGenerated).
func isGenerated(name string, src []byte) bool {
	f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return false
	}
	return ast.IsGenerated(f)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
