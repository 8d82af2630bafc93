package migratecheck

import (
	"cmp"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/capabilities"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/era"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/libapi"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Analyzer is the root analyzer: it runs every sub-analyzer and is the only
// one that reports. Its flags configure all of them (see the package doc).
var Analyzer = &analysis.Analyzer{
	Name:       analyzerName,
	Doc:        doc,
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   subAnalyzers,
	Run:        run,
	ResultType: reflectTypeOfReport,
}

func init() { settings.RegisterFlags(&Analyzer.Flags) }

// Analyzers returns the analyzers a driver should run: only the root
// "migratecheck" analyzer (the sub-analyzers it requires run implicitly and
// report nothing themselves).
func Analyzers() []*analysis.Analyzer { return []*analysis.Analyzer{Analyzer} }

// Configure applies s by setting the root analyzer's flag values, exactly as
// -migratecheck.<flag>=... on a command line would (so go vet -vettool mode
// and custom drivers behave the same). It is not safe to call while analyses
// are running.
func Configure(s settings.Settings) error {
	if err := s.Validate(); err != nil {
		return err
	}
	c := settings.SnapshotOf(s)
	set := []struct{ name, value string }{
		{settings.FlagLibraries, settings.EncodeLibraries(c.Libraries)},
		{settings.FlagMethodCallFuncs, strings.Join(c.MethodCallFuncs, ",")},
		{settings.FlagTarget, c.Target},
		{settings.FlagRules, settings.EncodeRules(c.Enabled)},
		{settings.FlagFixTags, fmt.Sprint(c.FixTags)},
		{settings.FlagFixLiterals, fmt.Sprint(c.FixLiterals)},
	}
	for _, f := range set {
		if err := Analyzer.Flags.Set(f.name, f.value); err != nil {
			return fmt.Errorf("migratecheck: set -%s.%s: %w", Analyzer.Name, f.name, err)
		}
	}
	return nil
}

// Report is the root analyzer's Result: every finding it considered, in
// position order, including suppressed ones.
type Report struct {
	Findings []Reported
	// Engine lists the catalogue IDs (e.g. "mcpgo:server.WithTaskHooks") of
	// library identifiers that were matched only as evidence of a 2025-11-25
	// task engine (they have no rule of their own; MCP014 uses them).
	Engine []string
	// LegacyTypes lists task-shaped struct types of other packages
	// ("example.com/wire.Task") that this package uses while it still
	// serves or talks to 2025-11-25 peers. A fix whose FixSubject is listed
	// by any package of a run must not be applied: the type still serves
	// 2025-11-25 there (the declaring package cannot see its importers).
	LegacyTypes []string
}

// Reported is one finding as the root analyzer decided it.
type Reported struct {
	Diagnostic analysis.Diagnostic // as reported (Message includes any severity marker)
	Severity   rules.Severity      // effective severity (see SeverityOf)
	Key        string              // what matched: "mcpgo:mcp.MethodTasksResult", "R1", …
	Suppressed bool                // silenced by a directive (not reported)
	// FixSubject is the qualified name of the type the finding's fix edits
	// (attached or not opted into; see Report.LegacyTypes), or "".
	FixSubject string
}

// Severity markers appended to a diagnostic message whose severity differs
// from its rule's default (for example a server-side MCP004 finding in dual
// mode, or an unused directive).
var markers = map[rules.Severity]string{rules.Error: " [error]", rules.Warning: " [warning]", rules.Info: " [info]"}

// SeverityOf returns the effective severity of a diagnostic produced by
// Analyzer: the marker at the end of its message if present, otherwise the
// default severity of the rule named by its Category (warning if unknown).
// Drivers apply per-rule severity overrides from their configuration on top.
func SeverityOf(d analysis.Diagnostic) rules.Severity {
	for sev, m := range markers {
		if strings.HasSuffix(d.Message, m) {
			return sev
		}
	}
	if r, ok := rules.Lookup(d.Category); ok {
		return r.Severity
	}
	return rules.Warning
}

func run(pass *analysis.Pass) (any, error) {
	cfg := settings.Current()
	var all []finding.Finding
	for _, a := range subAnalyzers {
		if r, ok := pass.ResultOf[a].(finding.Source); ok && r != nil {
			all = append(all, r.All()...)
		}
	}
	// By file name and line, not token.Pos (whose order across files follows
	// the loader's concurrent parsing): drivers that print diagnostics in
	// report order (go vet -vettool) then print them in the same order on
	// every run.
	slices.SortStableFunc(all, func(a, b finding.Finding) int {
		pa, pb := pass.Fset.Position(a.Pos), pass.Fset.Position(b.Pos)
		return cmp.Or(cmp.Compare(pa.Filename, pb.Filename), cmp.Compare(a.Pos, b.Pos), cmp.Compare(a.Rule, b.Rule), cmp.Compare(a.Message, b.Message))
	})
	all = slices.CompactFunc(all, func(a, b finding.Finding) bool {
		return a.Pos == b.Pos && a.Rule == b.Rule && a.Message == b.Message
	})

	noFix := map[*token.File]bool{} // generated or vendored files: never fixed
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.Pos())
		if tf != nil && (ast.IsGenerated(f) || isVendored(tf.Name())) {
			noFix[tf] = true
		}
	}
	dirs := parseDirectives(pass, cfg)
	eras := pass.ResultOf[era.Analyzer].(*era.Result)
	dualStack := eras.Implements && len(pass.ResultOf[capabilities.Analyzer].(*capabilities.Result).Adverts) > 0
	// bothEras says why the code at pos already serves both eras (its
	// legacy finding is then a note, and it gets no fix), or "".
	bothEras := func(pos token.Pos) string {
		switch {
		case eras.Branches(pos):
			return "this code branches on the negotiated protocol version, so it already serves both eras: keep it on the 2025-11-25 path only"
		case dualStack:
			// Not "its 2025-11-25 path": in an extension engine such code
			// is as often the conversion from 2025-11-25 shapes as a
			// path that serves them.
			return "this package also advertises and implements the extension (a dual stack), so this code serves or converts 2025-11-25 traffic: keep it only while 2025-11-25 sessions are served"
		}
		return ""
	}

	rep := &Report{}
	for _, f := range all {
		if !cfg.RuleEnabled(f.Rule) {
			continue
		}
		rule, ok := rules.Lookup(f.Rule)
		if !ok {
			return nil, fmt.Errorf("migratecheck: finding with unknown rule %q at %s", f.Rule, pass.Fset.Position(f.Pos))
		}
		level := f.Level
		if cfg.Dual() && f.Side == finding.SideServer && (f.Rule == "MCP004" || f.Rule == "MCP005") {
			level = rules.Info
		}
		msg := f.Message
		both := ""
		if f.Rule != "MCP014" {
			both = bothEras(f.Pos)
		}
		if both != "" {
			level = rules.Info
			msg += "; " + both
		}
		if level == "" {
			level = rule.Severity
		}
		if level != rule.Severity {
			msg += markers[level]
		}
		d := analysis.Diagnostic{Pos: f.Pos, End: f.End, Category: f.Rule, Message: msg, URL: rule.HelpURI, Related: f.Related}
		if f.Fix != nil && both == "" && fixOptedIn(cfg, f.FixKind) && !noFix[pass.Fset.File(f.Pos)] {
			d.SuggestedFixes = []analysis.SuggestedFix{*f.Fix}
		}
		suppressed := dirs.suppress(pass.Fset, f.Pos, f.Rule)
		r := Reported{Diagnostic: d, Severity: level, Key: f.Key, Suppressed: suppressed}
		// The subject is set whenever the message promises a fix, opted
		// into or not, so a driver that withholds the fix also corrects
		// the promise in every output.
		if f.Fix != nil && both == "" {
			r.FixSubject = f.Subject
		}
		rep.Findings = append(rep.Findings, r)
		if !suppressed {
			pass.Report(d)
		}
	}
	if lr, ok := pass.ResultOf[libapi.Analyzer].(*libapi.Result); ok {
		for _, u := range lr.Engine {
			if u.Entry.Rule == "" {
				rep.Engine = append(rep.Engine, u.Entry.ID())
			}
		}
	}
	if raw, ok := pass.ResultOf[rawmethods.Analyzer].(*rawmethods.Result); ok && raw.ServesLegacy() != "" {
		rep.LegacyTypes = legacyTypes(pass)
	}
	for _, d := range dirs.problems(cfg) {
		rep.Findings = append(rep.Findings, Reported{Diagnostic: d, Severity: SeverityOf(d), Key: "directive"})
		pass.Report(d)
	}
	return rep, nil
}

func fixOptedIn(cfg *settings.Snapshot, kind string) bool {
	switch kind {
	case finding.FixTags:
		return cfg.FixTags
	case finding.FixLiterals:
		return cfg.FixLiterals
	}
	return false
}

func isVendored(filename string) bool {
	return slices.Contains(strings.Split(filepath.ToSlash(filename), "/"), "vendor")
}

const analyzerName = "migratecheck"

// legacyTypes returns the task-shaped named struct types of other packages
// that carry a legacy ttl/pollInterval key and are used by this package
// (directly, or as a field type of a used struct type).
func legacyTypes(pass *analysis.Pass) []string {
	seen := map[*types.TypeName]bool{}
	var out []string
	var visit func(t types.Type, depth int)
	visit = func(t types.Type, depth int) {
		if p, ok := types.Unalias(t).(*types.Pointer); ok {
			t = p.Elem()
		}
		n, ok := types.Unalias(t).(*types.Named)
		if !ok || seen[n.Obj()] || n.Obj().Pkg() == nil || n.Obj().Pkg() == pass.Pkg {
			return
		}
		seen[n.Obj()] = true
		st, ok := n.Underlying().(*types.Struct)
		if !ok {
			return
		}
		if keys := astq.JSONKeys(st); astq.TaskShaped(keys) && (keys["ttl"] || keys["pollInterval"]) {
			out = append(out, n.Obj().Pkg().Path()+"."+n.Obj().Name())
		}
		if depth < 2 {
			for i := 0; i < st.NumFields(); i++ {
				visit(st.Field(i).Type(), depth+1)
			}
		}
	}
	for _, obj := range pass.TypesInfo.Uses {
		if tn, ok := obj.(*types.TypeName); ok {
			visit(tn.Type(), 0)
		}
	}
	slices.Sort(out)
	return out
}
