// Package astq holds the small syntactic and type queries shared by
// migrate-check's analyzers: string constants, JSON struct tags and keys, the
// "task-shaped" test, method-name positions and the compliance exemption for
// code that rejects legacy methods.
package astq

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"iter"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/tools/go/ast/edge"
	"golang.org/x/tools/go/ast/inspector"
)

// StringValue returns the constant string value of e, if e is a constant
// expression of string kind (a literal, a named constant from any package, a
// conversion of either, or a constant concatenation).
func StringValue(info *types.Info, e ast.Expr) (string, bool) {
	tv, ok := info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.String {
		return "", false
	}
	return constant.StringVal(tv.Value), true
}

// Unwrap strips parentheses and type conversions such as string(x) or
// mcp.MCPMethod(x).
func Unwrap(info *types.Info, e ast.Expr) ast.Expr {
	for {
		switch x := e.(type) {
		case *ast.ParenExpr:
			e = x.X
		case *ast.CallExpr:
			if len(x.Args) == 1 && info.Types[x.Fun].IsType() {
				e = x.Args[0]
				continue
			}
			return e
		default:
			return e
		}
	}
}

// StringLits yields every string literal under ins's root with its
// unquoted value (literals that do not unquote are passed over).
func StringLits(ins *inspector.Inspector) iter.Seq2[inspector.Cursor, string] {
	return func(yield func(inspector.Cursor, string) bool) {
		for cur := range ins.Root().Preorder((*ast.BasicLit)(nil)) {
			lit := cur.Node().(*ast.BasicLit)
			if lit.Kind != token.STRING {
				continue
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				continue
			}
			if !yield(cur, v) {
				return
			}
		}
	}
}

// Outermost climbs from the expression at cur through the parentheses and
// type conversions around it (Unwrap the other way) and returns the
// outermost: the expression as its context uses it.
func Outermost(info *types.Info, cur inspector.Cursor) inspector.Cursor {
	for {
		p := cur.Parent()
		switch n := p.Node().(type) {
		case *ast.CallExpr:
			if len(n.Args) == 1 && info.Types[n.Fun].IsType() {
				cur = p
				continue
			}
		case *ast.ParenExpr:
			cur = p
			continue
		}
		return cur
	}
}

// MapLiteralKey reports whether the expression at cur is the key of an
// element of a map composite literal.
func MapLiteralKey(info *types.Info, cur inspector.Cursor) bool {
	if k, _ := cur.ParentEdge(); k != edge.KeyValueExpr_Key {
		return false
	}
	lit, ok := cur.Parent().Parent().Node().(*ast.CompositeLit)
	return ok && IsMap(info, lit)
}

// IsMap reports whether e's type is a map type (through names and aliases).
func IsMap(info *types.Info, e ast.Expr) bool {
	_, ok := Under(info.TypeOf(e)).(*types.Map)
	return ok
}

// NameOf returns the identifier name of an ident or the selector name of a
// selector expression, else "".
func NameOf(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return x.Sel.Name
	}
	return ""
}

// ObjectOf resolves an ident or selector to the object it uses.
func ObjectOf(info *types.Info, e ast.Expr) types.Object {
	switch x := e.(type) {
	case *ast.Ident:
		return info.Uses[x]
	case *ast.SelectorExpr:
		return info.Uses[x.Sel]
	}
	return nil
}

// IsMethodExpr reports whether e (after Unwrap) is an ident or selector named
// "method" in any case, e.g. method, req.Method, msg.METHOD.
func IsMethodExpr(info *types.Info, e ast.Expr) bool {
	return strings.EqualFold(NameOf(Unwrap(info, e)), "method")
}

// JSONName parses the json key of a struct tag. ok is false when the tag has
// no json key; name may be "" (use the field name) or "-" (skipped).
func JSONName(tag string) (name string, ok bool) {
	v, ok := reflect.StructTag(tag).Lookup("json")
	if !ok {
		return "", false
	}
	name, _, _ = strings.Cut(v, ",")
	return name, true
}

// TagKeys lists the keys of a struct tag in order (`json:"a" db:"b"` → json, db).
func TagKeys(tag string) []string {
	var keys []string
	for tag != "" {
		tag = strings.TrimLeft(tag, " \t\r\n")
		i := 0
		for i < len(tag) && tag[i] > ' ' && tag[i] != ':' && tag[i] != '"' && tag[i] != 0x7f {
			i++
		}
		if i == 0 || i+1 >= len(tag) || tag[i] != ':' || tag[i+1] != '"' {
			break
		}
		keys = append(keys, tag[:i])
		tag = tag[i+1:]
		// skip the quoted value
		j := 1
		for j < len(tag) && tag[j] != '"' {
			if tag[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(tag) {
			break
		}
		tag = tag[j+1:]
	}
	return keys
}

// FieldTag returns the unquoted tag of a struct field, or "".
func FieldTag(f *ast.Field) string {
	if f.Tag == nil {
		return ""
	}
	s, err := strconv.Unquote(f.Tag.Value)
	if err != nil {
		return ""
	}
	return s
}

// JSONKeys returns the JSON object keys of a struct type as encoding/json
// would emit them, including keys promoted from untagged embedded structs.
func JSONKeys(st *types.Struct) map[string]bool {
	keys := map[string]bool{}
	jsonKeys(st, keys, 0)
	return keys
}

func jsonKeys(st *types.Struct, keys map[string]bool, depth int) {
	if depth > 4 {
		return
	}
	for i := 0; i < st.NumFields(); i++ {
		f := st.Field(i)
		name, tagged := JSONName(st.Tag(i))
		if name == "-" {
			continue
		}
		if f.Embedded() && name == "" {
			t := f.Type()
			if p, ok := types.Unalias(t).(*types.Pointer); ok {
				t = p.Elem()
			}
			if inner, ok := types.Unalias(t).Underlying().(*types.Struct); ok {
				jsonKeys(inner, keys, depth+1)
				continue
			}
		}
		if !f.Exported() && !tagged {
			continue
		}
		if name == "" {
			name = f.Name()
		}
		keys[name] = true
	}
}

// TaskShaped reports whether a set of JSON keys looks like an MCP Task
// (rules catalogue R2): taskId and status, plus one of createdAt,
// lastUpdatedAt, statusMessage or ttl.
func TaskShaped(keys map[string]bool) bool {
	return keys["taskId"] && keys["status"] &&
		(keys["createdAt"] || keys["lastUpdatedAt"] || keys["statusMessage"] || keys["ttl"])
}

// StructOf returns the struct underlying t (through pointers, aliases and
// named types), or nil.
func StructOf(t types.Type) *types.Struct {
	t = types.Unalias(t)
	if p, ok := t.(*types.Pointer); ok {
		t = types.Unalias(p.Elem())
	}
	st, _ := Under(t).(*types.Struct)
	return st
}

// MapKeys returns the constant string keys of a map composite literal, each
// with its KeyValueExpr.
func MapKeys(info *types.Info, lit *ast.CompositeLit) map[string]*ast.KeyValueExpr {
	if _, ok := Under(info.TypeOf(lit)).(*types.Map); !ok {
		return nil
	}
	out := map[string]*ast.KeyValueExpr{}
	for _, elt := range lit.Elts {
		if kv, ok := elt.(*ast.KeyValueExpr); ok {
			if k, ok := StringValue(info, kv.Key); ok {
				out[k] = kv
			}
		}
	}
	return out
}

// MapLit returns e as a map composite literal (through parens and &), or nil.
func MapLit(info *types.Info, e ast.Expr) *ast.CompositeLit {
	e = ast.Unparen(e)
	if u, ok := e.(*ast.UnaryExpr); ok && u.Op == token.AND {
		e = ast.Unparen(u.X)
	}
	lit, ok := e.(*ast.CompositeLit)
	if !ok {
		return nil
	}
	if _, ok := Under(info.TypeOf(lit)).(*types.Map); !ok {
		return nil
	}
	return lit
}

// Rejects reports whether stmts reject a request as "method not found": they
// mention -32601 (as a constant value), an identifier containing
// MethodNotFound / METHOD_NOT_FOUND, http.StatusNotFound, or a string
// literal containing "method not found". This is the
// rules catalogue's compliance exemption: code that refuses the legacy
// methods is what the new spec requires.
func Rejects(info *types.Info, stmts []ast.Stmt) bool {
	found := false
	for _, s := range stmts {
		ast.Inspect(s, func(n ast.Node) bool {
			if found {
				return false
			}
			switch x := n.(type) {
			case ast.Expr:
				if tv, ok := info.Types[x]; ok && tv.Value != nil && tv.Value.Kind() == constant.Int {
					if v, exact := constant.Int64Val(tv.Value); exact && v == -32601 {
						found = true
						return false
					}
				}
				if lit, ok := x.(*ast.BasicLit); ok && lit.Kind == token.STRING &&
					strings.Contains(strings.ToLower(lit.Value), "method not found") {
					found = true
					return false
				}
				if id, ok := x.(*ast.Ident); ok {
					n := strings.ToLower(strings.ReplaceAll(id.Name, "_", ""))
					if strings.Contains(n, "methodnotfound") {
						found = true
					} else if id.Name == "StatusNotFound" {
						found = true
					}
				}
			}
			return true
		})
	}
	return found
}

// maxRejectStmts bounds the branch bodies that count as "only rejects": a
// long body that merely mentions METHOD_NOT_FOUND on some error path is
// serving the method, not refusing it.
const maxRejectStmts = 3

// InRejectingBranch reports whether the node at cur is part of a case list
// whose clause body rejects the method, or of an if condition whose body
// rejects it (the compliance exemption).
func InRejectingBranch(info *types.Info, cur inspector.Cursor) bool {
	return inBranch(cur, func(body []ast.Stmt) bool { return len(body) <= maxRejectStmts && Rejects(info, body) },
		func(c inspector.Cursor) bool { return guardThenRejects(info, c) })
}

// InDroppingBranch reports whether the node at cur is part of a case list or
// an if condition whose body drops the message (see Drops): a client that
// accepts the legacy notifications/tasks/status and ignores it is compliant.
func InDroppingBranch(info *types.Info, cur inspector.Cursor) bool {
	return inBranch(cur, Drops, func(inspector.Cursor) bool { return false })
}

// Drops reports whether stmts do nothing with a message: they are empty, or
// at most three statements among a return of zero values only (nil, "", 0,
// false: nothing to forward), break, continue, calls of a logger (a callee
// whose name contains "log", "debug" or "trace", any case), and counting a
// metric (x++, or a counter call such as dropped.Add(1) or Inc() whose
// arguments are constants).
func Drops(stmts []ast.Stmt) bool {
	if len(stmts) > 3 {
		return false
	}
	for _, s := range stmts {
		switch x := s.(type) {
		case *ast.EmptyStmt, *ast.BranchStmt:
		case *ast.IncDecStmt:
			if x.Tok != token.INC {
				return false
			}
		case *ast.ReturnStmt:
			for _, r := range x.Results {
				if !zeroLiteral(r) {
					return false
				}
			}
		case *ast.ExprStmt:
			call, ok := x.X.(*ast.CallExpr)
			if !ok {
				return false
			}
			name := strings.ToLower(calleeText(call.Fun))
			if !strings.Contains(name, "log") && !strings.Contains(name, "debug") && !strings.Contains(name, "trace") && !countsMetric(call) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// zeroLiteral: nil, false, "" or 0 written literally.
func zeroLiteral(e ast.Expr) bool {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		return x.Name == "nil" || x.Name == "false"
	case *ast.BasicLit:
		return x.Value == `""` || x.Value == "``" || x.Value == "0"
	}
	return false
}

// counterMethods are the method names of metrics counters (expvar, atomic,
// Prometheus, OpenTelemetry).
var counterMethods = []string{"Add", "Inc", "Incr", "Increment"}

// countsMetric: a counter call (dropped.Add(1), metric.Inc()) whose
// arguments are literals, so the message itself goes nowhere.
func countsMetric(call *ast.CallExpr) bool {
	sel, ok := ast.Unparen(call.Fun).(*ast.SelectorExpr)
	if !ok || !slices.Contains(counterMethods, sel.Sel.Name) {
		return false
	}
	for _, a := range call.Args {
		if _, ok := ast.Unparen(a).(*ast.BasicLit); !ok {
			return false
		}
	}
	return true
}

// calleeText renders a callee as dotted names ("s.logger.Debug").
func calleeText(e ast.Expr) string {
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return calleeText(x.X) + "." + x.Sel.Name
	}
	return ""
}

// inBranch reports whether the node at cur is part of a case list whose
// clause body satisfies body, or of an if condition whose body does (or,
// failing that, whose if statement satisfies guard).
func inBranch(cur inspector.Cursor, body func([]ast.Stmt) bool, guard func(inspector.Cursor) bool) bool {
	child := cur
	for c := cur.Parent(); c.Valid(); child, c = c, c.Parent() {
		switch n := c.Node().(type) {
		case *ast.CaseClause:
			for _, e := range n.List {
				if e == child.Node() {
					return body(n.Body)
				}
			}
			return false
		case *ast.IfStmt:
			if n.Cond != child.Node() {
				return false
			}
			if body(n.Body.List) {
				return true
			}
			// The inverted guard: if m != A && m != B { return }; …reject….
			return guard(c)
		case ast.Stmt, ast.Decl, *ast.FuncLit, *ast.File:
			return false
		}
	}
	return false
}

// StructName returns the declared name of the struct type at cur (the
// TypeSpec it defines), or "anonymous struct".
func StructName(cur inspector.Cursor) string {
	if ts, ok := cur.Parent().Node().(*ast.TypeSpec); ok && ts.Type == cur.Node() {
		return ts.Name.Name
	}
	return "anonymous struct"
}

// FieldJSONName returns the JSON name a struct field is encoded under ("" if
// it has no json tag name or is skipped).
func FieldJSONName(f *ast.Field) string {
	name, ok := JSONName(FieldTag(f))
	if !ok || name == "-" {
		return ""
	}
	return name
}

// IsStringKind reports whether t's underlying type is a string.
func IsStringKind(t types.Type) bool {
	b, ok := Under(t).(*types.Basic)
	return ok && b.Info()&types.IsString != 0
}

// FieldPos returns the position range to report for a struct field: its tag
// if it has one (the legacy part, and on the field's last line), else the
// whole field.
func FieldPos(f *ast.Field) (token.Pos, token.Pos) {
	if f.Tag != nil {
		return f.Tag.Pos(), f.Tag.End()
	}
	return f.Pos(), f.End()
}

// guardThenRejects reports whether the if statement at cur returns from its
// body and is followed, up to the end of its block, by at most
// maxRejectStmts statements that reject the method.
func guardThenRejects(info *types.Info, cur inspector.Cursor) bool {
	ifs := cur.Node().(*ast.IfStmt)
	if ifs.Else != nil || len(ifs.Body.List) == 0 {
		return false
	}
	if _, ok := ifs.Body.List[len(ifs.Body.List)-1].(*ast.ReturnStmt); !ok {
		return false
	}
	block, ok := cur.Parent().Node().(*ast.BlockStmt)
	if !ok {
		return false
	}
	for i, st := range block.List {
		if st == ifs {
			rest := block.List[i+1:]
			return len(rest) > 0 && len(rest) <= maxRejectStmts && Rejects(info, rest)
		}
	}
	return false
}

// VarMapKeys returns the constant string keys a local map variable receives
// in the function enclosing cur: from a map literal it is defined or
// assigned with, and from index assignments v["k"] = …. Values of literal
// keys are their KeyValueExpr; keys set by index assignment map to a
// synthetic KeyValueExpr holding the assigned value.
func VarMapKeys(info *types.Info, cur inspector.Cursor, obj types.Object) map[string]*ast.KeyValueExpr {
	v, ok := obj.(*types.Var)
	if !ok || v.IsField() || v.Pkg() == nil || v.Parent() == v.Pkg().Scope() {
		return nil
	}
	var body ast.Node
	for c := range cur.Enclosing((*ast.FuncDecl)(nil), (*ast.FuncLit)(nil)) {
		body = c.Node()
		break
	}
	if body == nil {
		return nil
	}
	out := map[string]*ast.KeyValueExpr{}
	addLit := func(e ast.Expr) {
		if lit := MapLit(info, e); lit != nil {
			for k, kv := range MapKeys(info, lit) {
				out[k] = kv
			}
		}
	}
	is := func(e ast.Expr) bool {
		id, ok := ast.Unparen(e).(*ast.Ident)
		return ok && (info.Defs[id] == obj || info.Uses[id] == obj)
	}
	ast.Inspect(body, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for i, l := range s.Lhs {
				if len(s.Lhs) != len(s.Rhs) {
					break
				}
				if is(l) {
					addLit(s.Rhs[i])
				} else if ix, ok := ast.Unparen(l).(*ast.IndexExpr); ok && is(ix.X) {
					if k, ok := StringValue(info, ix.Index); ok {
						out[k] = &ast.KeyValueExpr{Key: ix.Index, Colon: ix.Index.End(), Value: s.Rhs[i]}
					}
				}
			}
		case *ast.ValueSpec:
			for i, id := range s.Names {
				if info.Defs[id] == obj && i < len(s.Values) {
					addLit(s.Values[i])
				}
			}
		}
		return true
	})
	return out
}

// storageKeys are struct tag keys of storage encoders: a struct with any of
// them on a field is a storage record, not a wire message.
var storageKeys = map[string]bool{"db": true, "bson": true, "dynamodbav": true, "dynamo": true, "gorm": true,
	"datastore": true, "firestore": true, "bigquery": true, "sql": true, "pg": true, "bun": true, "redis": true}

// StorageRecord reports whether a struct type has a storage encoder tag
// (dynamodbav, db, bson, gorm, …) on any field.
func StorageRecord(st *ast.StructType) bool {
	for _, f := range st.Fields.List {
		if StorageField(f) {
			return true
		}
	}
	return false
}

// StorageField reports whether a field carries a storage encoder tag.
func StorageField(f *ast.Field) bool {
	for _, k := range TagKeys(FieldTag(f)) {
		if storageKeys[k] {
			return true
		}
	}
	return false
}

// Under returns t's underlying type through aliases, or nil when t is nil:
// a package with type errors leaves expressions without a type, and every
// pass must tolerate that (a panic would hide the whole module's findings).
func Under(t types.Type) types.Type {
	t = types.Unalias(t)
	if t == nil {
		return nil
	}
	return t.Underlying()
}

// storageWords name packages whose job is to persist data.
var storageWords = []string{"store", "storage", "persist", "repo", "repository", "dao", "db", "database", "kv",
	"cache", "mongo", "dynamo", "redis", "sql", "badger", "bolt", "archive"}

// storageImports are the import path prefixes of database clients.
var storageImports = []string{"database/sql", "go.mongodb.org/mongo-driver", "github.com/aws/aws-sdk-go-v2/service/dynamodb",
	"github.com/aws/aws-sdk-go/service/dynamodb", "github.com/redis/go-redis", "github.com/go-redis/redis",
	"github.com/dgraph-io/badger", "go.etcd.io/bbolt", "gorm.io/gorm", "github.com/jackc/pgx", "github.com/jmoiron/sqlx",
	"cloud.google.com/go/firestore", "cloud.google.com/go/datastore", "github.com/gomodule/redigo"}

// StoragePackage reports whether pkg is a storage layer by its name (the
// package name or last import path element, such as "store", "taskdb" or
// "redis") or by the database client it imports. Callers combine it with
// the absence of JSON-RPC evidence: a store that also dispatches methods is
// a wire package like any other.
func StoragePackage(pkg *types.Package) bool {
	path := strings.TrimSuffix(pkg.Path(), "_test")
	names := []string{strings.ToLower(strings.TrimSuffix(pkg.Name(), "_test")), strings.ToLower(path[strings.LastIndex(path, "/")+1:])}
	for _, n := range names {
		for _, w := range storageWords {
			if n == w || strings.HasPrefix(n, w) || strings.HasSuffix(n, w) {
				return true
			}
		}
	}
	for _, imp := range pkg.Imports() {
		for _, p := range storageImports {
			if imp.Path() == p || strings.HasPrefix(imp.Path(), p+"/") {
				return true
			}
		}
	}
	return false
}

// AssertsNotFound reports whether stmts compare a value with
// METHOD_NOT_FOUND (-32601 or an identifier naming it, with == or !=, or
// errors.Is): an assertion helper of a test, as opposed to a fake server
// that answers -32601 for methods it does not know.
func AssertsNotFound(info *types.Info, stmts []ast.Stmt) bool {
	notFound := func(e ast.Expr) bool {
		e = ast.Unparen(e)
		if tv, ok := info.Types[e]; ok && tv.Value != nil && tv.Value.Kind() == constant.Int {
			if v, exact := constant.Int64Val(tv.Value); exact && v == -32601 {
				return true
			}
		}
		n := strings.ToLower(strings.ReplaceAll(NameOf(e), "_", ""))
		return strings.Contains(n, "methodnotfound")
	}
	found := false
	for _, s := range stmts {
		ast.Inspect(s, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.BinaryExpr:
				if (x.Op == token.EQL || x.Op == token.NEQ) && (notFound(x.X) || notFound(x.Y)) {
					found = true
				}
			case *ast.CallExpr:
				if NameOf(x.Fun) == "Is" && len(x.Args) == 2 && notFound(x.Args[1]) {
					found = true
				}
			}
			return !found
		})
	}
	return found
}
