package mixed

import (
	"cmp"
	"fmt"
	"go/token"
	"reflect"
	"slices"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/libs"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/capabilities"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/era"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/libapi"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/nestedresult"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// Analyzer implements R8; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "mixed",
	Doc:        "find extension advertisements next to a legacy task engine",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{capabilities.Analyzer, libapi.Analyzer, rawmethods.Analyzer, nestedresult.Analyzer, era.Analyzer},
	Run:        run,
	FactTypes:  []analysis.Fact{new(Fact)},
	ResultType: reflect.TypeFor[*finding.Result](),
}

// Fact summarises a package for MCP014 across the packages of a module: it
// advertises the extension, runs a 2025-11-25 task engine (Engine says
// how), or implements the extension.
type Fact struct {
	Module     string // module path of the package ("" if unknown)
	Adverts    bool
	Engine     string
	Implements bool
}

// AFact implements analysis.Fact.
func (*Fact) AFact() {}

func (f *Fact) String() string {
	return fmt.Sprintf("tasks: adverts=%v engine=%q implements=%v", f.Adverts, f.Engine, f.Implements)
}

const maxRelated = 5

type evidence struct {
	pos  token.Pos
	what string
}

func run(pass *analysis.Pass) (any, error) {
	res := &finding.Result{}
	caps := pass.ResultOf[capabilities.Analyzer].(*capabilities.Result)
	lib := pass.ResultOf[libapi.Analyzer].(*libapi.Result)
	eras := pass.ResultOf[era.Analyzer].(*era.Result)
	var ev []evidence
	for _, u := range lib.Engine {
		ev = append(ev, evidence{u.Pos, u.Name + " (legacy task engine)"})
	}
	for _, h := range pass.ResultOf[rawmethods.Analyzer].(*rawmethods.Result).Hits {
		if h.Side == finding.SideServer && !h.Delegated {
			ev = append(ev, evidence{h.Pos, `"` + h.Method + `" served or emitted here`})
		}
	}
	for _, f := range pass.ResultOf[nestedresult.Analyzer].(*finding.Result).Findings {
		ev = append(ev, evidence{f.Pos, "nested CreateTaskResult {task: …}"})
	}
	for _, f := range caps.Findings {
		if f.Rule == "MCP004" && f.Side != finding.SideClient {
			ev = append(ev, evidence{f.Pos, "legacy capabilities.tasks declared here"})
		}
	}
	for _, f := range lib.Findings {
		if f.Rule == "MCP004" && f.Side == finding.SideServer {
			ev = append(ev, evidence{f.Pos, "legacy capabilities.tasks declared here"})
		}
	}
	// By file name and line, not token.Pos: the loader parses a package's
	// files concurrently, so the order of their Pos ranges varies from run
	// to run, and an audit must report the same position every time.
	slices.SortFunc(ev, func(a, b evidence) int { return comparePos(pass.Fset, a.pos, b.pos) })

	module := ""
	if pass.Module != nil {
		module = pass.Module.Path
	}
	self := &Fact{Module: module, Adverts: len(caps.Adverts) > 0, Implements: eras.Implements || lib.Features.Modern}
	if len(ev) > 0 {
		self.Engine = ev[0].what
	}
	if self.Adverts || self.Engine != "" || self.Implements {
		pass.ExportPackageFact(self)
	}

	// The same facts of the other packages of the module this one imports.
	var advertisedBy, engineIn string
	var engineWhat string
	implements := self.Implements
	cfg := settings.Current()
	ownFamily, _, _ := libs.Match(cfg, pass.Pkg.Path())
	// AllPackageFacts comes from a map: sort it by package path so that the
	// package named in the message is the same in every run.
	pfs := pass.AllPackageFacts()
	slices.SortFunc(pfs, func(a, b analysis.PackageFact) int { return cmp.Compare(a.Package.Path(), b.Package.Path()) })
	for _, pf := range pfs {
		f, ok := pf.Fact.(*Fact)
		if !ok || pf.Package == pass.Pkg || !sameModule(cfg, module, ownFamily, f.Module, pf.Package.Path()) {
			continue
		}
		implements = implements || f.Implements
		if f.Adverts && advertisedBy == "" {
			advertisedBy = pf.Package.Path()
		}
		if f.Engine != "" && engineIn == "" {
			engineIn, engineWhat = pf.Package.Path(), f.Engine
		}
	}
	if implements {
		return res, nil // a dual stack, which SEP-2663's compatibility table allows
	}
	var related []analysis.RelatedInformation
	for i, e := range ev {
		if i == maxRelated {
			break
		}
		related = append(related, analysis.RelatedInformation{Pos: e.pos, Message: e.what})
	}
	const expect = `: peers will expect resultType "task", ttlMs, tasks/update and tasks/get with inlined results; advertise the extension only from an engine that implements it`
	switch {
	case self.Adverts && len(ev) > 0:
		for _, a := range caps.Adverts {
			res.Add(finding.Finding{Pos: a.Pos, End: a.End, Rule: "MCP014", Key: "R8", Related: related,
				Message: `this package advertises "` + capabilities.ExtensionID + `" but its task engine is the 2025-11-25 one (` + ev[0].what + `)` + expect})
		}
	case self.Adverts && engineIn != "":
		for _, a := range caps.Adverts {
			res.Add(finding.Finding{Pos: a.Pos, End: a.End, Rule: "MCP014", Key: "R8/module",
				Message: `this package advertises "` + capabilities.ExtensionID + `" but the task engine in package ` + engineIn +
					` is the 2025-11-25 one (` + engineWhat + `)` + expect})
		}
	case len(ev) > 0 && advertisedBy != "":
		res.Add(finding.Finding{Pos: ev[0].pos, End: ev[0].pos, Rule: "MCP014", Key: "R8/module", Related: related,
			Message: `package ` + advertisedBy + ` advertises "` + capabilities.ExtensionID + `" for this module, but the task engine here is the 2025-11-25 one (` +
				ev[0].what + `)` + expect})
	}
	return res, nil
}

// sameModule decides whether a dependency's facts speak for the module being
// analysed. With module paths on both sides they must be equal. Without
// them (GOPATH-style loading), a catalogued library's packages are another
// module unless this package belongs to the same library: importing mcp-go
// does not mean running its task engine.
func sameModule(cfg *settings.Snapshot, module, ownFamily, depModule, depPath string) bool {
	if module != "" && depModule != "" {
		return module == depModule
	}
	if libs.IsModern(cfg, depPath) {
		return false
	}
	fam, _, lib := libs.Match(cfg, depPath)
	return !lib || fam == ownFamily
}

// comparePos orders positions by file name, line and column.
func comparePos(fset *token.FileSet, a, b token.Pos) int {
	pa, pb := fset.Position(a), fset.Position(b)
	return cmp.Or(cmp.Compare(pa.Filename, pb.Filename), cmp.Compare(pa.Line, pb.Line), cmp.Compare(pa.Column, pb.Column))
}
