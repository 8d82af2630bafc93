package driver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/packages"
)

// A load failure must never make findings vanish silently: a package that
// cannot be loaded or type-checked is reported as an error (exit 1, SARIF
// executionSuccessful:false) with the go command's own explanation, and the
// packages that import it are still analysed.
//
// go/packages reports a dependency that could not be resolved only as the
// type checker's "could not import X (invalid package name: "")" in the
// importer: the go command's reason (a proxy's 403, a go.sum mismatch, a
// replacement directory that does not exist) is in go list's DepsErrors,
// which go/packages does not expose. rootCauses asks go list for them, only
// when something failed.

// brokenPackages returns the packages (roots and the module-local
// dependencies linked into their import graph) that have errors of their
// own, as opposed to packages that are ill-typed only because an import is.
func brokenPackages(pkgs []*packages.Package) []*packages.Package {
	var out []*packages.Package
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if len(p.Errors) > 0 {
			out = append(out, p)
		}
	})
	return out
}

// analyseDespiteErrors lets the checker run the analyzers on every package
// that has syntax and (possibly partial) type information. The checker skips
// a package marked IllTyped, and go/packages marks every importer of a
// broken package IllTyped too, so one unavailable dependency would otherwise
// silence a whole module. Findings of packages with errors of their own are
// withheld unless -keep-going (see collect); they are still analysed so that
// their importers receive their facts.
func analyseDespiteErrors(pkgs []*packages.Package) {
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if p.IllTyped && p.Types != nil && p.TypesInfo != nil && p.Fset != nil {
			p.IllTyped = false
		}
	})
}

// listError is one entry of go list's Error or DepsErrors.
type listError struct {
	ImportStack []string
	Pos         string
	Err         string
}

type listPackage struct {
	ImportPath string
	Error      *listError
	DepsErrors []*listError
}

// goList runs the go command like go/packages does (same directory, build
// tags and environment) and returns its stdout and stderr.
func goList(dir, tags string, args ...string) (stdout, stderr []byte, err error) {
	all := []string{"list", "-e"}
	if tags != "" {
		all = append(all, "-tags="+tags)
	}
	all = append(all, args...)
	cmd := exec.Command("go", all...)
	cmd.Dir = dir
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	return out.Bytes(), errb.Bytes(), err
}

// rootCauses returns, per package import path, the errors go list reports
// for it and its dependencies (positions as go list prints them, relative
// to dir).
func rootCauses(dir, tags string, tests bool, paths []string) map[string][]*listError {
	if len(paths) == 0 {
		return nil
	}
	args := []string{"-json=ImportPath,Error,DepsErrors"}
	if tests {
		args = append(args, "-test")
	}
	out, _, _ := goList(dir, tags, append(args, paths...)...)
	causes := map[string][]*listError{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p listPackage
		if err := dec.Decode(&p); err != nil {
			break // io.EOF, or output cut short: use what was decoded
		}
		path := basePath(p.ImportPath)
		if p.Error != nil {
			causes[path] = append(causes[path], p.Error)
		}
		causes[path] = append(causes[path], p.DepsErrors...)
	}
	return causes
}

// basePath strips go list's test-variant decorations ("p [p.test]",
// "p.test", "p_test").
func basePath(id string) string {
	id, _, _ = strings.Cut(id, " ")
	return strings.TrimSuffix(strings.TrimSuffix(id, ".test"), "_test")
}

var couldNotImport = regexp.MustCompile(`^could not import (\S+) \(`)

// explainImport rewrites the type checker's "could not import X (…)" into
// the go command's reason for X failing, found in causes by position. It
// returns the message unchanged when go list has no reason at that position.
func explainImport(msg, relPos string, causes []*listError) string {
	m := couldNotImport.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	for _, c := range causes {
		if c.Pos == relPos && c.Err != "" {
			return fmt.Sprintf("could not import %s: %s", m[1], strings.TrimSpace(c.Err))
		}
	}
	return msg
}

// noPackages explains why go/packages returned nothing for the patterns:
// when the go command itself failed (for example a go.sum checksum mismatch
// or a go.mod that cannot be read) the reason is on go list's stderr, which
// go/packages discards.
func noPackages(dir, tags string, patterns []string, loadErr error) string {
	_, stderr, err := goList(dir, tags, append([]string{"-f={{.ImportPath}}"}, patterns...)...)
	if msg := strings.TrimSpace(string(stderr)); msg != "" && (err != nil || loadErr != nil) {
		return msg
	}
	if loadErr != nil {
		return loadErr.Error()
	}
	return strings.Join(patterns, " ") + " matched no packages"
}

// LoadError is a package that could not be loaded or type-checked, or a
// whole run whose packages could not be listed.
type LoadError struct {
	Package string // import path; "" when the go command failed for all patterns
	Pos     string // file:line:col relative to the working directory, or ""
	Msg     string // the go command's or type checker's words
}

func (e LoadError) String() string {
	s := e.Msg
	if e.Pos != "" {
		s = e.Pos + ": " + s
	}
	if e.Package != "" {
		s += " (package " + e.Package + ")"
	}
	return s
}

// packageErrors lists load, parse and type errors once each, with paths
// relative to dir and unresolved imports explained in the go command's
// words. The compiler output that go list -export adds for a package that
// does not type-check repeats its type errors and is dropped.
func packageErrors(broken []*packages.Package, dir string, causes map[string][]*listError) []LoadError {
	var out []LoadError
	seen := map[string]bool{}
	for _, p := range broken {
		path := basePath(p.PkgPath)
		var errs []LoadError
		add := func(e LoadError) {
			k := e.Pos + "\x00" + e.Msg
			if !seen[k] {
				seen[k] = true
				errs = append(errs, e)
			}
		}
		typed := slices.ContainsFunc(p.Errors, func(e packages.Error) bool {
			return e.Kind == packages.TypeError || e.Kind == packages.ParseError
		})
		unresolved, explained := false, false
		for _, e := range p.Errors {
			if typed && e.Kind == packages.ListError && strings.HasPrefix(e.Msg, "# ") {
				continue
			}
			le := LoadError{Package: path, Msg: e.Msg}
			if e.Pos != "" && e.Pos != "-" {
				le.Pos = relPath(dir, e.Pos)
			}
			if couldNotImport.MatchString(e.Msg) {
				unresolved = true
				le.Msg = explainImport(e.Msg, le.Pos, causes[path])
				explained = explained || le.Msg != e.Msg
			}
			add(le)
		}
		// An import that failed without a position match (a test-only
		// import, an error on an indirect dependency): list go's reasons.
		if unresolved && !explained {
			for _, c := range causes[path] {
				if c.Err != "" {
					add(LoadError{Package: path, Pos: c.Pos, Msg: strings.TrimSpace(c.Err)})
				}
			}
		}
		// Like the compiler, show at most maxErrors per package: after an
		// import fails, every use of it repeats as "undefined: …".
		if len(errs) > maxErrors {
			more := len(errs) - maxErrors
			errs = append(errs[:maxErrors], LoadError{Package: path, Msg: fmt.Sprintf("%d more errors", more)})
		}
		out = append(out, errs...)
	}
	return out
}

// maxErrors is the number of errors shown per package (go build shows 10).
const maxErrors = 10

// errorStrings renders load errors for text output and tests.
func errorStrings(errs []LoadError) []string {
	out := make([]string, len(errs))
	for i, e := range errs {
		out[i] = e.String()
	}
	return out
}
