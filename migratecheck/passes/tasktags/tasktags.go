package tasktags

import (
	"go/ast"
	gotoken "go/token"
	"go/types"
	"reflect"
	"strings"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/passes/inspect"
	"golang.org/x/tools/go/ast/inspector"

	"github.com/tasksbridge/tasksbridge/migratecheck/internal/astq"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/finding"
	"github.com/tasksbridge/tasksbridge/migratecheck/internal/modscan"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/libapi"
	"github.com/tasksbridge/tasksbridge/migratecheck/passes/rawmethods"
)

// Analyzer implements R2; see the package doc.
var Analyzer = &analysis.Analyzer{
	Name:       "tasktags",
	Doc:        "find legacy ttl/pollInterval json tags in task-shaped structs",
	URL:        "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md",
	Requires:   []*analysis.Analyzer{inspect.Analyzer, rawmethods.Analyzer, libapi.Analyzer},
	Run:        run,
	ResultType: reflect.TypeFor[*finding.Result](),
}

var renames = map[string]struct{ rule, newName, what string }{
	"ttl":          {"MCP006", "ttlMs", `the extension's wire field is "ttlMs" (integer milliseconds, nullable, required)`},
	"pollInterval": {"MCP007", "pollIntervalMs", `the extension's wire field is "pollIntervalMs"`},
}

func run(pass *analysis.Pass) (any, error) {
	res := &finding.Result{}
	info := pass.TypesInfo
	ins := pass.ResultOf[inspect.Analyzer].(*inspector.Inspector)
	raw := pass.ResultOf[rawmethods.Analyzer].(*rawmethods.Result)
	serves := raw.ServesLegacy()
	if serves == "" && raw.ServerSide() {
		serves = "the package still emits 2025-11-25 notifications"
	}

	elsewhere := modscan.NewGuard()

	// Struct types used as the type of a field tagged json:"task".
	taskFieldTypes := map[*types.Struct]bool{}
	for cur := range ins.Root().Preorder((*ast.StructType)(nil)) {
		for _, f := range cur.Node().(*ast.StructType).Fields.List {
			if astq.FieldJSONName(f) == "task" {
				if st := astq.StructOf(info.TypeOf(f.Type)); st != nil {
					taskFieldTypes[st] = true
				}
			}
		}
	}

	for cur := range ins.Root().Preorder((*ast.StructType)(nil)) {
		stx := cur.Node().(*ast.StructType)
		st, ok := info.TypeOf(stx).(*types.Struct)
		if !ok {
			continue
		}
		keys := astq.JSONKeys(st)
		name := astq.StructName(cur)
		if taskFieldTypes[st] && taskParamKeys(keys) {
			// The per-request hint {ttl}, also with the pollInterval some
			// clients send beside it: any legacy member is the removed hint.
			for _, f := range stx.Fields.List {
				if jn := astq.FieldJSONName(f); jn == "ttl" || jn == "pollInterval" {
					res.Add(finding.Finding{Pos: f.Tag.Pos(), End: f.Tag.End(), Rule: "MCP005", Side: finding.SideClient, Key: "R2/task-param",
						Message: `json tag "` + jn + `" in ` + name + `, the type of a field tagged json:"task", is the removed per-request params.task {ttl}: servers must ignore it; the server decides per request and the client only declares the extension`})
				}
			}
			continue
		}
		if !astq.TaskShaped(keys) {
			continue
		}
		noFix, dbTag := "", ""
		for _, f := range stx.Fields.List {
			for _, k := range astq.TagKeys(astq.FieldTag(f)) {
				if k != "json" {
					noFix = "the struct also has " + k + " tags (a storage record must keep its column names)"
				}
				if storageTags[k] {
					dbTag = k
				}
			}
		}
		// A database record named like a task is not a wire type unless
		// something sends it: this package speaks JSON-RPC task methods, or
		// another package of the module still sends it to 2025-11-25
		// peers. A pure storage record is silent.
		if dbTag != "" && len(raw.Hits) == 0 && serves == "" && elsewhere.Why(pass, cur) == "" {
			continue
		}
		if noFix == "" {
			noFix = serves
		}
		for _, f := range stx.Fields.List {
			jname := astq.FieldJSONName(f)
			r, ok := renames[jname]
			if !ok || keys[r.newName] {
				continue // not legacy, or a deliberate dual-emit struct
			}
			if jname == "ttl" && dynamoTTL(f) {
				continue // DynamoDB's TTL attribute (epoch seconds) of a storage record, not the wire field
			}
			if jname == "pollInterval" && dynamoRecord(stx) && dynamoAttr(f) == jname {
				continue // an attribute of a DynamoDB storage record, named like the legacy field but not on the wire
			}
			msg := `json tag "` + jname + `" in task-shaped struct ` + name + ` is the legacy Task field: ` + r.what
			fd := finding.Finding{Pos: f.Tag.Pos(), End: f.Tag.End(), Rule: r.rule, Key: "R2"}
			if tn, ok := cur.Parent().Node().(*ast.TypeSpec); ok && tn.Type == stx {
				fd.Subject = pass.Pkg.Path() + "." + tn.Name.Name
			}
			if noFix == "" {
				noFix = elsewhere.Why(pass, cur)
			}
			if noFix == "" {
				if fix := tagFix(f.Tag, jname, r.newName); fix != nil {
					fd.Fix, fd.FixKind = fix, finding.FixTags
					msg += "; the opt-in fix (-fix-tags) renames it"
				}
			} else {
				msg += "; not renamed automatically: " + noFix
			}
			fd.Message = msg
			res.Add(fd)
		}
	}
	return res, nil
}

// storageTags are the struct tag keys of database encoders.
var storageTags = map[string]bool{
	"db": true, "bson": true, "dynamodbav": true, "dynamo": true, "gorm": true, "sql": true, "pg": true, "bun": true,
	"theorydb": true, "firestore": true, "datastore": true, "redis": true, "spanner": true, "cql": true, "ch": true, "badgerhold": true,
}

// taskParamKeys: the JSON keys of the per-request task hint: only ttl and
// pollInterval, at least one of them.
func taskParamKeys(keys map[string]bool) bool {
	n := 0
	for k := range keys {
		if k != "ttl" && k != "pollInterval" {
			return false
		}
		n++
	}
	return n > 0
}

// tagFix inserts the suffix after the json name inside the tag literal.
func tagFix(tag *ast.BasicLit, oldName, newName string) *analysis.SuggestedFix {
	for _, prefix := range []string{`json:"`, `json:\"`} {
		i := strings.Index(tag.Value, prefix+oldName)
		if i < 0 {
			continue
		}
		end := i + len(prefix) + len(oldName)
		if rest := tag.Value[end:]; !strings.HasPrefix(rest, ",") && !strings.HasPrefix(rest, `"`) && !strings.HasPrefix(rest, `\"`) {
			continue
		}
		pos := tag.Pos() + gotoken.Pos(end)
		return &analysis.SuggestedFix{
			Message:   `Rename json tag "` + oldName + `" to "` + newName + `"`,
			TextEdits: []analysis.TextEdit{{Pos: pos, End: pos, NewText: []byte(strings.TrimPrefix(newName, oldName))}},
		}
	}
	return nil
}

// dynamoTTL reports whether a field is a DynamoDB TTL attribute: it carries
// a dynamodbav or dynamo tag naming the attribute "ttl".
func dynamoTTL(f *ast.Field) bool {
	return strings.EqualFold(dynamoAttr(f), "ttl")
}

// dynamoAttr returns the attribute name of a field's dynamodbav or dynamo
// tag, or "".
func dynamoAttr(f *ast.Field) string {
	tag := reflect.StructTag(astq.FieldTag(f))
	for _, k := range []string{"dynamodbav", "dynamo"} {
		if v, ok := tag.Lookup(k); ok {
			name, _, _ := strings.Cut(v, ",")
			return name
		}
	}
	return ""
}

// dynamoRecord reports whether a struct is a DynamoDB storage record: every
// field has a dynamodbav or dynamo tag (its json tags, if any, mirror them).
func dynamoRecord(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if dynamoAttr(f) == "" {
			return false
		}
	}
	return len(st.Fields.List) > 0
}
