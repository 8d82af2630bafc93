// Package driver is migrate-check's standalone analysis driver: it loads
// packages with go/packages, runs the migratecheck analyzers through
// golang.org/x/tools/go/analysis/checker, applies the configuration
// (.migrate-check.yaml/.json plus flags, resolved by package settings), and
// prints text, x/tools JSON or SARIF, applies opt-in fixes, and computes the
// exit code (0 clean, 3 findings, 1 error). The go vet -vettool path
// (unitchecker) lives in cmd/migrate-check and shares only the configuration
// code (package settings).
package driver

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/checker"
	"golang.org/x/tools/go/packages"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/sarif"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Exit codes (vet / x/tools convention).
const (
	ExitClean    = 0
	ExitError    = 1
	ExitFindings = 3
)

// Formats.
const (
	FormatText  = "text"
	FormatJSON  = "json"
	FormatSARIF = "sarif"
)

// Options is one standalone run.
type Options struct {
	Patterns []string // default ./...
	Dir      string   // working directory; "" = current
	Format   string   // text (default), json, sarif
	Fix      bool     // apply opt-in fixes
	Diff     bool     // with Fix: print a unified diff instead of writing
	Tags     string   // build tags, comma-separated (added to go list -tags)
	Context  int      // text: lines of source context (-c); <0 none
	// ConfigPath is an explicit config file; "" discovers one from Dir up to
	// the module root; "none" disables configuration files.
	ConfigPath  string
	Overrides   settings.Overrides
	SrcRoot     string // SARIF %SRCROOT%; "" = git root above Dir, else module root, else Dir
	ShowIgnored bool   // text: also print suppressed findings
	// AllDeps type-checks every dependency from source so that facts
	// (re-export wrappers, passes/reexport) flow from other modules too. By
	// default only packages of the analysed module are loaded from source and
	// the rest come from export data, like go vet (much faster).
	AllDeps bool
	// KeepGoing also reports the findings of packages that did not load or
	// type-check, from their partial syntax and type information. Either
	// way such packages are errors (exit 1) and their importers are
	// analysed.
	KeepGoing bool
	Version   string
	InfoURI   string
	Stdout    io.Writer
	Stderr    io.Writer
}

// Finding is one deduplicated diagnostic with its effective severity.
type Finding struct {
	Rule       string
	Severity   rules.Severity
	Message    string // without the analyzer's severity marker
	Pos, End   token.Position
	Related    []analysis.RelatedInformation
	Fixes      []analysis.SuggestedFix
	Suppressed bool
	fset       *token.FileSet
	pkg        string // import path of the package that reported it
	// fixWithheld: the analyzer offered a fix that withholdFix removed.
	fixWithheld bool
	// testVariant: reported by the package's test variant (p [p.test]).
	testVariant bool
	// variant is the ID of the package variant whose report this is
	// (the first one, when several variants report it identically).
	variant string
}

// Result is what a run found.
type Result struct {
	Findings []Finding // sorted by position; includes suppressed ones
	Errors   []string  // package load and analysis errors
	Packages int       // distinct packages scanned (test variants counted once)
	// Broken lists the import paths of packages that did not load or
	// type-check (sorted). Their findings are in Findings only with
	// KeepGoing.
	Broken   []string
	Elapsed  time.Duration
	graph    *checker.Graph
	roots    []*packages.Package
	resolved *settings.Resolved
	// brokenIDs are the package variants (IDs) with errors of their own:
	// a test variant that does not type-check withholds only its own
	// findings, not those of the package's non-test variant.
	brokenIDs map[string]bool
	// testsOnly lists the paths of Broken whose non-test variant loaded.
	testsOnly map[string]bool
	// loadErrs are the errors of Errors that belong to a package (or, with
	// an empty Package, to the whole pattern list).
	loadErrs  []LoadError
	keepGoing bool
	patterns  []string
}

// Run executes the driver and returns the process exit code.
func Run(o Options) int {
	if o.Stdout == nil {
		o.Stdout = os.Stdout
	}
	if o.Stderr == nil {
		o.Stderr = os.Stderr
	}
	if o.Format == "" {
		o.Format = FormatText
	}
	switch o.Format {
	case FormatText, FormatJSON, FormatSARIF:
	default:
		fmt.Fprintf(o.Stderr, "migrate-check: -format %q: want text, json or sarif\n", o.Format)
		return ExitError
	}
	if o.Diff {
		o.Fix = true // -diff previews the fixes
	}
	res, err := Analyze(o)
	if err != nil {
		fmt.Fprintf(o.Stderr, "migrate-check: %v\n", err)
		return ExitError
	}
	for _, e := range res.Errors {
		fmt.Fprintln(o.Stderr, e)
	}
	if n := brokenNote(res); n != "" {
		fmt.Fprintln(o.Stderr, "migrate-check: "+n)
	}
	if o.Fix {
		return finishFix(o, res)
	}
	var werr error
	switch o.Format {
	case FormatText:
		werr = writeText(o, res)
	case FormatJSON:
		werr = writeJSON(o.Stdout, res)
	case FormatSARIF:
		werr = writeSARIF(o, res)
	}
	if werr != nil {
		fmt.Fprintf(o.Stderr, "migrate-check: %v\n", werr)
		return ExitError
	}
	return exitCode(o.Format, res)
}

// brokenNote says what happened to the findings of packages that did not
// load or type-check ("" when every package did).
func brokenNote(res *Result) string {
	switch n := len(res.Broken); {
	case n == 0:
		return ""
	case res.keepGoing:
		return fmt.Sprintf("%s did not load or type-check; -keep-going reports %s findings from partial type information, which may be incomplete: %s",
			plural(n, "package"), pick(n, "its", "their"), strings.Join(res.Broken, ", "))
	default:
		var names []string
		for _, p := range res.Broken {
			if res.testsOnly[p] {
				p += " (only its tests: the findings outside them are reported)"
			}
			names = append(names, p)
		}
		return fmt.Sprintf("%s did not load or type-check; %s findings are not reported (fix the errors above, or add -keep-going to report what partial type information allows): %s",
			plural(n, "package"), pick(n, "its", "their"), strings.Join(names, ", "))
	}
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

func pick(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// exitCode: errors win (the results are incomplete); otherwise 3 when a
// finding reaches the fail-on threshold. Without -fail-on, text fails on any
// finding and json/sarif never fail on findings (they are for machines that
// decide themselves, like vet -json).
func exitCode(format string, res *Result) int {
	if len(res.Errors) > 0 {
		return ExitError
	}
	threshold := res.resolved.FailOn
	if threshold == "" {
		if format != FormatText {
			return ExitClean
		}
		threshold = rules.Info
	}
	for _, f := range res.Findings {
		if !f.Suppressed && f.Severity.Rank() >= threshold.Rank() {
			return ExitFindings
		}
	}
	return ExitClean
}

// Analyze loads the configuration and packages and runs the analyzers.
func Analyze(o Options) (*Result, error) {
	start := time.Now()
	dir := o.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("working directory: %w", err)
		}
		dir = wd
	}
	cfg, err := settings.LoadConfigFor(dir, o.ConfigPath)
	if err != nil {
		return nil, err
	}
	resolved, err := settings.Resolve(cfg, o.Overrides)
	if err != nil {
		return nil, err
	}
	if err := migratecheck.Configure(resolved.Settings); err != nil {
		return nil, fmt.Errorf("configure analyzers: %w", err)
	}
	analyzers := migratecheck.Analyzers()

	patterns := o.Patterns
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	res := &Result{resolved: resolved, keepGoing: o.KeepGoing, patterns: patterns}
	pkgs, err := load(dir, patterns, o.Tags, resolved.Tests, o.AllDeps && needFacts(analyzers))
	if err != nil || len(pkgs) == 0 {
		// The go command could not list the packages at all: report its
		// own words as the error of the run, in every output format.
		res.loadErrs = []LoadError{{Msg: noPackages(dir, o.Tags, patterns, err)}}
		res.Errors = errorStrings(res.loadErrs)
		res.Elapsed = time.Since(start)
		return res, nil
	}
	res.roots = pkgs
	broken := brokenPackages(pkgs)
	res.brokenIDs, res.testsOnly = map[string]bool{}, map[string]bool{}
	if len(broken) > 0 {
		var paths []string
		plain := map[string]bool{} // paths whose non-test variant is broken
		for _, p := range broken {
			res.brokenIDs[p.ID] = true
			path := basePath(p.PkgPath)
			if !slices.Contains(paths, path) {
				paths = append(paths, path)
			}
			if p.ID == path {
				plain[path] = true
			}
		}
		slices.Sort(paths)
		for _, path := range paths {
			if !plain[path] {
				res.testsOnly[path] = true
			}
		}
		res.Broken = paths
		res.loadErrs = packageErrors(broken, dir, rootCauses(dir, o.Tags, resolved.Tests, paths))
		res.Errors = errorStrings(res.loadErrs)
		analyseDespiteErrors(pkgs)
	}

	graph, err := checker.Analyze(analyzers, pkgs, nil)
	if err != nil {
		return nil, fmt.Errorf("analyze: %w", err)
	}
	res.graph = graph
	res.Packages = countPackages(pkgs)
	res.Findings, res.Errors = collect(graph, resolved, res.Errors, withheld(res.brokenIDs, o.KeepGoing))
	res.Elapsed = time.Since(start)
	return res, nil
}

// withheld returns the predicate for package variants whose findings are
// not reported: those that did not load or type-check themselves, unless
// keepGoing. It is per variant: a test file that does not type-check
// withholds the test variant's findings, not the package's.
func withheld(brokenIDs map[string]bool, keepGoing bool) func(*packages.Package) bool {
	return func(p *packages.Package) bool {
		return !keepGoing && brokenIDs[p.ID]
	}
}

// load loads the packages to analyse. Only the root packages (and packages of
// their own modules that they import) are parsed and type-checked from
// source; other dependencies come from the go command's export data, which
// it caches like vet does. Fact-producing analyzers then see a package graph
// that contains just the source packages (linkSourceImports), so facts flow
// between packages of the analysed module. allDeps loads everything from
// source instead (x/tools' LoadAllSyntax).
func load(dir string, patterns []string, tags string, tests, allDeps bool) ([]*packages.Package, error) {
	mode := packages.LoadSyntax | packages.NeedModule
	if allDeps {
		mode = packages.LoadAllSyntax | packages.NeedModule
	}
	cfg := &packages.Config{Mode: mode, Dir: dir, Tests: tests}
	if tags != "" {
		cfg.BuildFlags = []string{"-tags=" + tags}
	}
	var extra []string
	for round := 0; ; round++ {
		pkgs, err := packages.Load(cfg, append(slices.Clone(patterns), extra...)...)
		if err != nil || len(pkgs) == 0 {
			return nil, err
		}
		if allDeps {
			return pkgs, nil
		}
		missing := linkSourceImports(pkgs)
		if len(missing) == 0 || round == 2 {
			return roots(pkgs, extra), nil
		}
		extra = append(extra, missing...)
	}
}

// linkSourceImports replaces the ID-only placeholder imports that
// go/packages leaves without NeedDeps by the loaded packages, and drops the
// others (they were loaded from export data and need no analysis). It
// returns module-local import paths that were not loaded, so the caller can
// add them and keep facts flowing inside the module.
func linkSourceImports(pkgs []*packages.Package) []string {
	byID := map[string]*packages.Package{}
	for _, p := range pkgs {
		byID[p.ID] = p
	}
	var missing []string
	for _, p := range pkgs {
		for path, imp := range p.Imports {
			if src, ok := byID[imp.ID]; ok {
				p.Imports[path] = src
				continue
			}
			delete(p.Imports, path)
			if p.Module != nil && p.Module.Path != "" && !strings.Contains(imp.ID, " ") &&
				(imp.ID == p.Module.Path || strings.HasPrefix(imp.ID, p.Module.Path+"/")) &&
				!slices.Contains(missing, imp.ID) {
				missing = append(missing, imp.ID)
			}
		}
	}
	slices.Sort(missing)
	return missing
}

// roots drops the packages that were loaded only because a root imports
// them from the same module (extra): they are analysed for facts through the
// import graph but are not reported on.
func roots(pkgs []*packages.Package, extra []string) []*packages.Package {
	if len(extra) == 0 {
		return pkgs
	}
	var out []*packages.Package
	for _, p := range pkgs {
		base := strings.TrimSuffix(strings.TrimSuffix(p.PkgPath, ".test"), "_test")
		if !slices.Contains(extra, base) {
			out = append(out, p)
		}
	}
	return out
}

// collect turns root diagnostics into sorted, deduplicated findings. A file
// analysed in several package variants (p and p [p.test]) reports once.
func collect(graph *checker.Graph, r *settings.Resolved, errs []string, withhold func(*packages.Package) bool) ([]Finding, []string) {
	type key struct {
		pos, end token.Position
		rule     string
		msg      string
	}
	seen := map[key]bool{}
	// Wire types that some package of the run still serves to 2025-11-25
	// peers: a tag fix on them would break those peers, and the declaring
	// package cannot see its importers (the fix guard; docs/rules/README.md, Fixes).
	legacy := map[string]bool{}
	for _, act := range graph.Roots {
		if rep, ok := act.Result.(*migratecheck.Report); ok && rep != nil {
			for _, t := range rep.LegacyTypes {
				legacy[t] = true
			}
		}
	}
	var out []Finding
	for _, act := range graph.Roots {
		if act.Err != nil {
			// Broken packages already reported their load errors, and the
			// analyzers' own failures there follow from them; an internal
			// error (a pass panicked) is reported whatever the input.
			var ie *migratecheck.InternalError
			if len(act.Package.Errors) == 0 || errors.As(act.Err, &ie) {
				errs = append(errs, fmt.Sprintf("%s: %s: %v", act.Package.ID, act.Analyzer.Name, act.Err))
			}
			continue
		}
		if withhold(act.Package) {
			continue
		}
		fset := act.Package.Fset
		add := func(d analysis.Diagnostic, sev rules.Severity, suppressed, fixWithheld bool) {
			f := Finding{
				fixWithheld: fixWithheld,
				Rule:        cmp.Or(d.Category, act.Analyzer.Name),
				Message:     stripMarker(d.Message),
				Pos:         fset.Position(d.Pos),
				End:         fset.Position(cmp.Or(d.End, d.Pos)),
				Related:     d.Related,
				Fixes:       d.SuggestedFixes,
				Suppressed:  suppressed,
				fset:        fset,
				pkg:         basePath(act.Package.PkgPath),
				testVariant: strings.Contains(act.Package.ID, " ["),
				variant:     act.Package.ID,
			}
			f.Severity = r.SeverityFor(f.Rule, sev)
			k := key{f.Pos, f.End, f.Rule, f.Message}
			if seen[k] {
				return
			}
			seen[k] = true
			out = append(out, f)
		}
		if rep, ok := act.Result.(*migratecheck.Report); ok && rep != nil {
			for _, rf := range rep.Findings {
				withhold := rf.FixSubject != "" && legacy[rf.FixSubject]
				if withhold {
					rf.Diagnostic = withholdFix(rf.Diagnostic)
				}
				add(rf.Diagnostic, rf.Severity, rf.Suppressed, withhold)
			}
			continue
		}
		for _, d := range act.Diagnostics {
			add(d, migratecheck.SeverityOf(d), false, false)
		}
	}
	slices.SortFunc(out, func(a, b Finding) int {
		return cmp.Or(cmp.Compare(a.Pos.Filename, b.Pos.Filename), cmp.Compare(a.Pos.Line, b.Pos.Line),
			cmp.Compare(a.Pos.Column, b.Pos.Column), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	return dropShadowed(out), errs
}

// dropShadowed keeps one finding per position and rule of a package when
// the package and its test variant both report it with different words
// (the test variant counts the uses in _test.go files too: "used 2 times"
// against "once", or "calls" against "dispatches"). The test variant's
// finding is kept: it saw every file.
func dropShadowed(fs []Finding) []Finding {
	type key struct {
		pos, end  token.Position
		rule, pkg string
	}
	hasTest := map[key]bool{}
	for _, f := range fs {
		if f.testVariant {
			hasTest[key{f.Pos, f.End, f.Rule, f.pkg}] = true
		}
	}
	return slices.DeleteFunc(fs, func(f Finding) bool {
		return !f.testVariant && hasTest[key{f.Pos, f.End, f.Rule, f.pkg}]
	})
}

// withholdFix drops the fix of a finding on a wire type that another
// package still serves to 2025-11-25 peers, and says so in the message.
func withholdFix(d analysis.Diagnostic) analysis.Diagnostic {
	d.SuggestedFixes = nil
	d.Message = strings.Replace(d.Message, "; the opt-in fix (-fix-tags) renames it",
		"; not renamed automatically: another package of this run still serves the type to 2025-11-25 peers", 1)
	return d
}

// stripMarker removes the " [info]"-style severity marker the analyzer
// appends when it adjusted a finding's severity; drivers show severity
// structurally instead.
func stripMarker(msg string) string {
	for _, s := range []rules.Severity{rules.Error, rules.Warning, rules.Info} {
		if m, ok := strings.CutSuffix(msg, " ["+string(s)+"]"); ok {
			return m
		}
	}
	return msg
}

func needFacts(as []*analysis.Analyzer) bool {
	seen := map[*analysis.Analyzer]bool{}
	var visit func([]*analysis.Analyzer) bool
	visit = func(as []*analysis.Analyzer) bool {
		for _, a := range as {
			if seen[a] {
				continue
			}
			seen[a] = true
			if len(a.FactTypes) > 0 || visit(a.Requires) {
				return true
			}
		}
		return false
	}
	return visit(as)
}

// countPackages counts distinct import paths, ignoring generated test mains.
func countPackages(pkgs []*packages.Package) int {
	set := map[string]bool{}
	for _, p := range pkgs {
		if p.Name == "main" && strings.HasSuffix(p.PkgPath, ".test") {
			continue
		}
		set[p.PkgPath] = true
	}
	return len(set)
}

// --- text ---

func writeText(o Options, res *Result) error {
	w := bufio.NewWriter(o.Stderr)
	cwd := o.Dir
	if cwd == "" {
		cwd, _ = os.Getwd()
	}
	perRule := map[string]int{}
	shown, suppressed := 0, 0
	for _, f := range res.Findings {
		if f.Suppressed {
			suppressed++
			if !o.ShowIgnored {
				continue
			}
		} else {
			shown++
			perRule[f.Rule]++
		}
		// "file:line:col: severity: RULE: message": the severity where
		// compilers put it, so editors and CI problem matchers classify
		// the line, and the rule ID right before the message.
		fmt.Fprintf(w, "%s:%d:%d: %s: %s: %s", relPath(cwd, f.Pos.Filename), f.Pos.Line, f.Pos.Column, f.Severity, f.Rule, f.Message)
		if f.Suppressed {
			fmt.Fprint(w, " (ignored)")
		}
		fmt.Fprintln(w)
		if o.Context >= 0 {
			printContext(w, f.Pos, o.Context)
		}
	}
	fmt.Fprintln(w, summary(res, perRule, shown, suppressed))
	return w.Flush()
}

func summary(res *Result, perRule map[string]int, shown, suppressed int) string {
	var b strings.Builder
	b.WriteString("migrate-check: ")
	switch shown {
	case 0:
		b.WriteString("no findings")
	case 1:
		b.WriteString("1 finding")
	default:
		fmt.Fprintf(&b, "%d findings", shown)
	}
	if shown > 0 {
		var parts []string
		for _, id := range sortedKeys(perRule) {
			parts = append(parts, fmt.Sprintf("%s×%d", id, perRule[id]))
		}
		fmt.Fprintf(&b, " (%s)", strings.Join(parts, ", "))
	}
	if suppressed > 0 {
		fmt.Fprintf(&b, ", %d suppressed", suppressed)
	}
	fmt.Fprintf(&b, " in %d package", res.Packages)
	if res.Packages != 1 {
		b.WriteString("s")
	}
	if len(res.Errors) > 0 {
		fmt.Fprintf(&b, ", %d error", len(res.Errors))
		if len(res.Errors) != 1 {
			b.WriteString("s")
		}
	}
	fmt.Fprintf(&b, " [%s]", res.Elapsed.Round(time.Millisecond))
	return b.String()
}

func relPath(cwd, name string) string {
	if cwd == "" {
		return name
	}
	if rel, err := filepath.Rel(cwd, name); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return name
}

func printContext(w io.Writer, pos token.Position, n int) {
	data, err := os.ReadFile(pos.Filename)
	if err != nil {
		return
	}
	lines := strings.Split(string(data), "\n")
	for l := max(pos.Line-n, 1); l <= min(pos.Line+n, len(lines)); l++ {
		fmt.Fprintf(w, "%d\t%s\n", l, lines[l-1])
	}
}

// --- JSON (x/tools shape) ---

type jsonTextEdit struct {
	Filename string `json:"filename"`
	Start    int    `json:"start"`
	End      int    `json:"end"`
	New      string `json:"new"`
}

type jsonSuggestedFix struct {
	Message string         `json:"message"`
	Edits   []jsonTextEdit `json:"edits"`
}

type jsonRelated struct {
	Posn    string `json:"posn"`
	End     string `json:"end"`
	Message string `json:"message"`
}

type jsonDiagnostic struct {
	Category       string             `json:"category,omitempty"`
	Posn           string             `json:"posn"`
	End            string             `json:"end"`
	Message        string             `json:"message"`
	SuggestedFixes []jsonSuggestedFix `json:"suggested_fixes,omitempty"`
	Related        []jsonRelated      `json:"related,omitempty"`
}

type jsonError struct {
	Err string `json:"error"`
}

// writeJSON prints the tree golang.org/x/tools drivers print for -json:
// {"<package ID>": {"<analyzer>": [diagnostic...] | {"error": "..."}}}.
// Suppressed findings are not included (as under go vet -json).
func writeJSON(w io.Writer, res *Result) error {
	tree := map[string]map[string]any{}
	add := func(id, name string, v any) {
		m, ok := tree[id]
		if !ok {
			m = map[string]any{}
			tree[id] = m
		}
		m[name] = v
	}
	// Load errors: per package, or for the whole run under the patterns.
	perPkg := map[string][]string{}
	for _, e := range res.loadErrs {
		perPkg[e.Package] = append(perPkg[e.Package], LoadError{Pos: e.Pos, Msg: e.Msg}.String())
	}
	if msgs, ok := perPkg[""]; ok {
		add(strings.Join(res.patterns, " "), migratecheck.Analyzer.Name, jsonError{strings.Join(msgs, "\n")})
	}
	var roots []*checker.Action
	if res.graph != nil {
		roots = res.graph.Roots
	}
	// A finding is listed once, under the variant of its package that
	// Findings kept (the first to report it, or the test variant when the
	// variants word it differently): the same findings as the text output.
	type key struct {
		variant, posn, end, category string
	}
	listed := map[key]int{}
	for _, f := range res.Findings {
		if !f.Suppressed {
			listed[key{f.variant, f.Pos.String(), f.End.String(), f.Rule}]++
		}
	}
	withhold := withheld(res.brokenIDs, res.keepGoing)
	type at struct {
		posn, rule string
	}
	noFix := map[at]bool{}
	for _, f := range res.Findings {
		if f.fixWithheld {
			noFix[at{f.Pos.String(), f.Rule}] = true
		}
	}
	for _, act := range roots {
		fset := act.Package.Fset
		if msgs := perPkg[basePath(act.Package.PkgPath)]; len(msgs) > 0 {
			// A broken package: its errors replace its findings, or, with
			// -keep-going, sit next to them under the pseudo-analyzer "load".
			name := act.Analyzer.Name
			if !withhold(act.Package) && act.Err == nil {
				name = "load"
			}
			var ie *migratecheck.InternalError
			if errors.As(act.Err, &ie) {
				msgs = append(slices.Clone(msgs), act.Err.Error())
			}
			if act.Package.ID == basePath(act.Package.PkgPath) || len(act.Package.Errors) > 0 || ie != nil {
				add(act.Package.ID, name, jsonError{strings.Join(msgs, "\n")})
			}
			if name != "load" {
				continue
			}
		}
		if act.Err != nil {
			add(act.Package.ID, act.Analyzer.Name, jsonError{act.Err.Error()})
			continue
		}
		var diags []jsonDiagnostic
		for _, d := range act.Diagnostics {
			k := key{act.Package.ID, fset.Position(d.Pos).String(), fset.Position(cmp.Or(d.End, d.Pos)).String(), cmp.Or(d.Category, act.Analyzer.Name)}
			if listed[k] == 0 {
				continue
			}
			listed[k]--
			if noFix[at{k.posn, d.Category}] {
				d = withholdFix(d)
			}
			jd := jsonDiagnostic{
				Category: d.Category,
				Posn:     fset.Position(d.Pos).String(),
				End:      fset.Position(cmp.Or(d.End, d.Pos)).String(),
				Message:  d.Message,
			}
			for _, fix := range d.SuggestedFixes {
				jf := jsonSuggestedFix{Message: fix.Message, Edits: []jsonTextEdit{}}
				for _, e := range fix.TextEdits {
					jf.Edits = append(jf.Edits, jsonTextEdit{
						Filename: fset.Position(e.Pos).Filename,
						Start:    fset.Position(e.Pos).Offset,
						End:      fset.Position(e.End).Offset,
						New:      string(e.NewText),
					})
				}
				jd.SuggestedFixes = append(jd.SuggestedFixes, jf)
			}
			for _, r := range d.Related {
				jd.Related = append(jd.Related, jsonRelated{
					Posn:    fset.Position(r.Pos).String(),
					End:     fset.Position(cmp.Or(r.End, r.Pos)).String(),
					Message: r.Message,
				})
			}
			diags = append(diags, jd)
		}
		if len(diags) > 0 {
			add(act.Package.ID, act.Analyzer.Name, diags)
		}
	}
	data, err := json.MarshalIndent(tree, "", "\t")
	if err != nil {
		return fmt.Errorf("encode JSON: %w", err)
	}
	_, err = fmt.Fprintf(w, "%s\n", data)
	return err
}

// --- SARIF ---

func writeSARIF(o Options, res *Result) error {
	root := o.SrcRoot
	if root == "" {
		root = SourceRoot(cmp.Or(o.Dir, "."))
	}
	lines := newLineCache()
	b := sarif.New("migrate-check", o.Version, o.InfoURI, root, lines.line)
	all := append(rules.All(), rules.Directive())
	for _, r := range all {
		b.AddRule(SARIFRule(r, res.resolved))
	}
	for _, f := range res.Findings {
		sf := sarif.Finding{
			RuleID:  f.Rule,
			Level:   sarif.LevelOf(string(f.Severity)),
			Message: f.Message,
			Start:   sarif.Pos{Filename: f.Pos.Filename, Line: f.Pos.Line, Column: f.Pos.Column},
			End:     sarif.Pos{Filename: f.End.Filename, Line: f.End.Line, Column: f.End.Column},
		}
		if f.Suppressed {
			sf.Suppressed = true
			sf.Justification = "suppressed by an in-source migrate-check directive"
		}
		for _, r := range f.Related {
			p, e := f.fset.Position(r.Pos), f.fset.Position(cmp.Or(r.End, r.Pos))
			sf.Related = append(sf.Related, sarif.Related{
				Start:   sarif.Pos{Filename: p.Filename, Line: p.Line, Column: p.Column},
				End:     sarif.Pos{Filename: e.Filename, Line: e.Line, Column: e.Column},
				Message: r.Message,
			})
		}
		if len(f.Fixes) > 0 {
			fix := f.Fixes[0]
			sf.FixMessage = fix.Message
			for _, e := range fix.TextEdits {
				p, q := f.fset.Position(e.Pos), f.fset.Position(e.End)
				sf.Edits = append(sf.Edits, sarif.Edit{Filename: p.Filename, Offset: p.Offset, Length: q.Offset - p.Offset, Text: string(e.NewText)})
			}
		}
		if err := b.AddFinding(sf); err != nil {
			return err
		}
	}
	for _, e := range res.Errors {
		b.AddNotification(sarif.LevelError, e)
	}
	if n := brokenNote(res); n != "" {
		b.AddNotification(sarif.LevelNote, n)
	}
	return b.Encode(o.Stdout)
}

// SARIFRule converts a catalogue rule into SARIF rule metadata, with the
// effective default level and enablement.
func SARIFRule(r rules.Rule, res *settings.Resolved) sarif.Rule {
	sev := r.Severity
	enabled := true
	if res != nil {
		if s, ok := res.Severity[r.ID]; ok {
			sev = s
		}
		if r.ID != rules.DirectiveID {
			enabled = res.Settings.RuleEnabled(r.ID)
		}
	}
	var md strings.Builder
	fmt.Fprintf(&md, "**%s** — %s\n\n%s\n", r.ID, r.Title, r.Summary)
	if r.Before != "" {
		fmt.Fprintf(&md, "\nBefore (2025-11-25):\n\n```go\n%s\n```\n", r.Before)
	}
	if r.After != "" {
		fmt.Fprintf(&md, "\nAfter (io.modelcontextprotocol/tasks):\n\n```go\n%s\n```\n", r.After)
	}
	if r.Fix == rules.FixOptIn {
		fmt.Fprintf(&md, "\nAutomatic fix: opt-in with `-%s`.\n", r.FixFlag)
	}
	fmt.Fprintf(&md, "\nSpec: %s\n", r.Spec)
	return sarif.Rule{
		ID:           r.ID,
		Name:         r.Name,
		Title:        r.Title,
		Summary:      r.Summary,
		HelpText:     r.Summary + " See " + r.HelpURI,
		HelpMarkdown: md.String(),
		HelpURI:      r.HelpURI,
		Level:        sarif.LevelOf(string(sev)),
		Enabled:      enabled,
		Tags:         []string{"mcp", "migration", "tasks"},
	}
}

// SourceRoot returns the directory SARIF URIs are relative to: the nearest
// ancestor with .git (the repository root GitHub resolves %SRCROOT% to),
// else the nearest with go.mod, else dir itself.
func SourceRoot(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	mod := ""
	for d := abs; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if mod == "" {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				mod = d
			}
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	return cmp.Or(mod, abs)
}

type lineCache map[string][][]byte

func newLineCache() lineCache { return lineCache{} }

func (c lineCache) line(name string, n int) []byte {
	lines, ok := c[name]
	if !ok {
		data, err := os.ReadFile(name)
		if err == nil {
			lines = bytes.Split(data, []byte("\n"))
		}
		c[name] = lines
	}
	if n < 1 || n > len(lines) {
		return nil
	}
	return lines[n-1]
}

// --- fixes ---

func finishFix(o Options, res *Result) int {
	writable := writableRoots(res.roots)
	enabledFix := map[string]bool{
		"fix-tags":     res.resolved.Settings.FixTags,
		"fix-literals": res.resolved.Settings.FixLiterals,
	}
	var fixes []FileFix
	without, total := 0, 0
	for _, f := range res.Findings {
		if f.Suppressed {
			continue
		}
		// Every finding the text output shows is counted, so the summary
		// adds up to the same number.
		total++
		// A package that did not type-check (reported with -keep-going)
		// gets no edits: its guards ran on partial type information.
		if slices.Contains(res.Broken, f.pkg) && !res.testsOnly[f.pkg] || res.brokenIDs[f.variant] {
			without++
			continue
		}
		rule, ok := rules.Lookup(f.Rule)
		// Policy (docs/rules/README.md, Fixes): only opt-in fixes, only when their flag is set.
		if !ok || rule.Fix != rules.FixOptIn || !enabledFix[rule.FixFlag] || len(f.Fixes) == 0 {
			without++
			continue
		}
		fix := f.Fixes[0]
		ff := FileFix{Rule: f.Rule, Message: fix.Message, Edits: map[string][]Edit{}}
		for _, e := range fix.TextEdits {
			p, q := f.fset.Position(e.Pos), f.fset.Position(e.End)
			ff.Edits[p.Filename] = append(ff.Edits[p.Filename], Edit{Start: p.Offset, End: q.Offset, New: string(e.NewText)})
		}
		fixes = append(fixes, ff)
	}
	plan, err := PlanFixes(fixes, os.ReadFile, writable)
	if err != nil {
		fmt.Fprintf(o.Stderr, "migrate-check: %v\n", err)
		return ExitError
	}
	for _, s := range plan.Skipped {
		fmt.Fprintf(o.Stderr, "migrate-check: %s\n", s)
	}
	cwd := cmp.Or(o.Dir, ".")
	if abs, err := filepath.Abs(cwd); err == nil {
		cwd = abs
	}
	code := ExitClean
	for _, name := range sortedKeys(plan.Changed) {
		if o.Diff {
			fmt.Fprint(o.Stdout, UnifiedDiff(filepath.ToSlash(relPath(cwd, name)), plan.Original[name], plan.Changed[name]))
			continue
		}
		if err := writeFilePreservingMode(name, plan.Changed[name]); err != nil {
			fmt.Fprintf(o.Stderr, "migrate-check: %v\n", err)
			code = ExitError
		}
	}
	verb := "applied"
	if o.Diff {
		verb = "would apply"
	}
	fmt.Fprintf(o.Stderr, "migrate-check: %s: %s %d fix(es) in %d file(s); %d finding(s) have no enabled automatic fix\n",
		plural(total, "finding"), verb, plan.Applied, len(plan.Changed), without)
	if len(res.Errors) > 0 {
		code = ExitError
	}
	return code
}

// writableRoots allows edits only inside the modules of the root packages
// (never the module cache or GOROOT).
func writableRoots(pkgs []*packages.Package) func(string) bool {
	var dirs []string
	for _, p := range pkgs {
		if p.Module != nil && p.Module.Dir != "" && !slices.Contains(dirs, p.Module.Dir) {
			dirs = append(dirs, p.Module.Dir)
		}
	}
	modCache := os.Getenv("GOMODCACHE")
	return func(name string) bool {
		if modCache != "" && strings.HasPrefix(name, modCache+string(filepath.Separator)) {
			return false
		}
		for _, d := range dirs {
			if strings.HasPrefix(name, d+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
}

func writeFilePreservingMode(name string, data []byte) error {
	st, err := os.Stat(name)
	if err != nil {
		return fmt.Errorf("stat %s: %w", name, err)
	}
	if err := os.WriteFile(name, data, st.Mode().Perm()); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return nil
}

// ErrNoRule is returned by Explain for an unknown rule ID.
var ErrNoRule = errors.New("unknown rule")
