package migratecheck

import (
	"fmt"
	"go/ast"
	"go/token"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"golang.org/x/tools/go/analysis"

	"github.com/tasksbridge/tasksbridge/migratecheck/rules"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

var reflectTypeOfReport = reflect.TypeFor[*Report]()

// Suppression directives are evaluated inside the analysis (not by a driver)
// so that they work identically under multichecker, go vet -vettool,
// go fix -fixtool and golangci-lint:
//
//	//migrate-check:ignore MCP001[,MCP002] reason     same line or the line below
//	//migrate-check:file-ignore MCP006 reason          whole file
//	//lint:ignore MCP001 reason, //lint:file-ignore …  staticcheck spelling (only MCP IDs are ours)
//	//nolint, //nolint:migratecheck, //nolint:all       golangci-lint spelling; no reason required
//
// Text after " //" inside a directive is ignored (golangci-lint puts the
// nolint explanation there), so "//migrate-check:ignore MCP001 // note" has
// no reason.
type directive struct {
	pos      token.Pos
	end      token.Pos
	file     *token.File
	line     int
	fileWide bool
	ids      []string // nil = every rule (nolint)
	text     string
	nolint   bool
	valid    bool // well-formed; only valid directives suppress
	used     bool
}

type directives struct {
	list      []*directive
	malformed []analysis.Diagnostic
}

var ruleIDRe = regexp.MustCompile(`^MCP\d{3}$`)

func parseDirectives(pass *analysis.Pass, cfg *settings.Snapshot) *directives {
	ds := &directives{}
	dirRule := rules.Directive()
	bad := func(c *ast.Comment, format string, args ...any) {
		ds.malformed = append(ds.malformed, analysis.Diagnostic{
			Pos: c.Pos(), End: c.End(), Category: rules.DirectiveID, URL: dirRule.HelpURI,
			Message: fmt.Sprintf(format, args...),
		})
	}
	for _, f := range pass.Files {
		tf := pass.Fset.File(f.Pos())
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				if !strings.HasPrefix(c.Text, "//") {
					continue
				}
				text := strings.TrimPrefix(c.Text, "//")
				body, _, _ := strings.Cut(text, " //")
				body = strings.TrimSpace(body)
				d := &directive{pos: c.Pos(), end: c.End(), file: tf, line: tf.Line(c.Pos()), text: body}
				var kind string
				switch {
				case strings.HasPrefix(body, "nolint"):
					rest := strings.TrimPrefix(body, "nolint")
					if rest != "" && !strings.HasPrefix(rest, ":") && !strings.HasPrefix(rest, " ") {
						continue // e.g. "nolintlint"
					}
					if list, ok := strings.CutPrefix(rest, ":"); ok {
						first, _, _ := strings.Cut(strings.TrimSpace(list), " ")
						names := strings.Split(first, ",")
						if !slices.Contains(names, analyzerName) && !slices.Contains(names, "all") {
							continue
						}
					}
					d.nolint, d.valid = true, true
					ds.list = append(ds.list, d)
					continue
				case strings.HasPrefix(body, "migrate-check:ignore "), body == "migrate-check:ignore":
					kind = "migrate-check:ignore"
				case strings.HasPrefix(body, "migrate-check:file-ignore "), body == "migrate-check:file-ignore":
					kind, d.fileWide = "migrate-check:file-ignore", true
				case strings.HasPrefix(body, "lint:ignore "):
					kind = "lint:ignore"
				case strings.HasPrefix(body, "lint:file-ignore "):
					kind, d.fileWide = "lint:file-ignore", true
				case strings.HasPrefix(body, "migrate-check:"):
					bad(c, "unknown directive %q; want //migrate-check:ignore RULES reason or //migrate-check:file-ignore RULES reason", body)
					continue
				default:
					continue
				}
				fields := strings.Fields(body)
				lint := strings.HasPrefix(kind, "lint:")
				if len(fields) < 2 {
					bad(c, "malformed directive: //%s needs a rule list and a reason, e.g. //%s MCP001 why this is fine", kind, kind)
					continue
				}
				ok := true
				for _, id := range strings.Split(fields[1], ",") {
					uid := strings.ToUpper(strings.TrimSpace(id))
					if lint && !strings.HasPrefix(uid, "MCP") {
						continue // a staticcheck check such as SA1019: not ours
					}
					if _, known := rules.Lookup(uid); !known || uid == rules.DirectiveID || !ruleIDRe.MatchString(uid) {
						bad(c, "directive names unknown rule %q; rules are MCP001…MCP015 (MCP000 cannot be suppressed)", id)
						ok = false
						continue
					}
					d.ids = append(d.ids, uid)
				}
				if lint && len(d.ids) == 0 && ok {
					continue // staticcheck-only directive
				}
				if len(fields) < 3 {
					bad(c, "malformed directive: //%s %s is missing the required reason", kind, fields[1])
					continue
				}
				d.valid = ok && len(d.ids) > 0
				if d.valid {
					ds.list = append(ds.list, d)
				}
			}
		}
	}
	return ds
}

// suppress reports whether a finding of rule id at pos is covered by a valid
// directive, marking every covering directive used.
func (ds *directives) suppress(fset *token.FileSet, pos token.Pos, id string) bool {
	tf := fset.File(pos)
	if tf == nil {
		return false
	}
	line := tf.Line(pos)
	hit := false
	for _, d := range ds.list {
		if d.file != tf || (!d.fileWide && line != d.line && line != d.line+1) {
			continue
		}
		if d.ids != nil && !slices.Contains(d.ids, id) {
			continue
		}
		d.used = true
		hit = true
	}
	return hit
}

// problems returns malformed-directive diagnostics and, for well-formed
// migrate-check and lint directives that suppressed nothing, an "unused"
// diagnostic at warning level. Directives whose rules are all disabled are
// not reported as unused: they could not have matched.
func (ds *directives) problems(cfg *settings.Snapshot) []analysis.Diagnostic {
	out := slices.Clone(ds.malformed)
	for _, d := range ds.list {
		if d.used || d.nolint {
			continue
		}
		anyEnabled := false
		for _, id := range d.ids {
			anyEnabled = anyEnabled || cfg.RuleEnabled(id)
		}
		if !anyEnabled {
			continue
		}
		out = append(out, analysis.Diagnostic{
			Pos: d.pos, End: d.end, Category: rules.DirectiveID, URL: rules.Directive().HelpURI,
			Message: fmt.Sprintf("this directive matched nothing; remove it? (//%s)", d.text) + markers[rules.Warning],
		})
	}
	slices.SortFunc(out, func(a, b analysis.Diagnostic) int { return int(a.Pos - b.Pos) })
	return out
}
