package legacyface

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
	"github.com/tasksbridge/tasksbridge/translate"
	modernup "github.com/tasksbridge/tasksbridge/upstream/modern"
)

// M-11: a 2026-07-28 client mirrors every tool
// argument whose inputSchema property carries "x-mcp-header": "Name" into an
// Mcp-Param-Name HTTP header, and hides tools whose annotations are invalid.
// Legacy clients know nothing of this, so the face does it for them: it
// remembers the annotations of the upstream's tools (paramCache) and stamps
// the headers on every upstream tools/call.

// paramHeaderPrefix starts every mirrored argument header.
const paramHeaderPrefix = "Mcp-Param-"

// maxParamFillPages bounds the tools/list pages one cache fill reads.
const maxParamFillPages = 50

// paramBinding mirrors the argument at path (property names, outermost
// first) into the header Mcp-Param-{header}.
type paramBinding struct {
	path   []string
	header string
}

// paramCache holds the x-mcp-header bindings of the one upstream's tools, by
// tool name. The zero value is ready to use. Tool lists may in principle vary
// by principal; annotations of a tool name are assumed not to.
type paramCache struct {
	mu       sync.Mutex
	tools    map[string][]paramBinding // valid tools only; nil slice = no annotations
	complete bool                      // tools holds every upstream tool (a full listing was read)

	fill sync.Mutex // one upstream re-listing at a time
}

// remember records one listed tool's bindings.
func (c *paramCache) remember(name string, b []paramBinding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.tools == nil {
		c.tools = map[string][]paramBinding{}
	}
	c.tools[name] = b
}

// forget drops a tool (listed as invalid, so it must get no headers).
func (c *paramCache) forget(name string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.tools, name)
}

// lookup returns a tool's bindings; known is false when the tool was never
// listed, and complete whether a full listing says it does not exist.
func (c *paramCache) lookup(name string) (b []paramBinding, known, complete bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	b, known = c.tools[name]
	return b, known, c.complete
}

// replace installs the result of a full listing.
func (c *paramCache) replace(tools map[string][]paramBinding) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.tools = tools
	c.complete = true
}

// filterToolsList is the tools/list hook (M-11): it remembers the bindings
// of every tool of an upstream ListToolsResult and returns the result without
// the tools whose x-mcp-header annotations are invalid, logging a warning for
// each. When the request (reqParams) had no cursor, a result without
// nextCursor is the whole list. A result it cannot read is returned unchanged
// for the translation to report.
func (b *Bridge) filterToolsList(reqParams, raw json.RawMessage) json.RawMessage {
	var req struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(reqParams, &req)
	fullListing := req.Cursor == nil
	var res map[string]json.RawMessage
	if json.Unmarshal(raw, &res) != nil {
		return raw
	}
	var tools []json.RawMessage
	if json.Unmarshal(res["tools"], &tools) != nil {
		return raw
	}
	kept := tools[:0:0]
	found := map[string][]paramBinding{}
	for _, t := range tools {
		name, bindings, err := toolBindings(t)
		if err != nil {
			b.log.Warn("face: excluding an upstream tool with an invalid x-mcp-header from tools/list (M-11)", "tool", name, "error", err)
			b.params.forget(name)
			continue
		}
		found[name] = bindings
		b.params.remember(name, bindings)
		kept = append(kept, t)
	}
	if _, more := res["nextCursor"]; fullListing && !more {
		b.params.replace(found)
	}
	if len(kept) == len(tools) {
		return raw
	}
	enc, err := json.Marshal(kept)
	if err != nil {
		return raw
	}
	res["tools"] = enc
	if out, err := json.Marshal(res); err == nil {
		return out
	}
	return raw
}

// toolBindings reads one Tool object: its name and the bindings of its
// inputSchema, or why its annotations are invalid.
func toolBindings(tool json.RawMessage) (string, []paramBinding, error) {
	var t struct {
		Name        string          `json:"name"`
		InputSchema json.RawMessage `json:"inputSchema"`
	}
	if err := json.Unmarshal(tool, &t); err != nil {
		return "", nil, fmt.Errorf("tool is not an object: %w", err)
	}
	var out []paramBinding
	seen := map[string]string{}
	if err := collectBindings(t.InputSchema, nil, seen, &out); err != nil {
		return t.Name, nil, err
	}
	return t.Name, out, nil
}

// collectBindings walks "properties" (nested objects included) of one
// schema. The validity rules of the 2026-07-28 Streamable HTTP transport: the
// annotation is a non-empty string of HTTP token characters, on a property of
// type string, integer or boolean, and unique (case-insensitively) across
// the whole inputSchema. Schemas that are not objects (true/false) carry no
// annotations.
func collectBindings(schema json.RawMessage, prefix []string, seen map[string]string, out *[]paramBinding) error {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	for name, prop := range s.Properties {
		path := append(append([]string(nil), prefix...), name)
		where := strings.Join(path, ".")
		var p map[string]json.RawMessage
		if json.Unmarshal(prop, &p) != nil {
			continue
		}
		if ann, ok := p["x-mcp-header"]; ok {
			var header string
			if json.Unmarshal(ann, &header) != nil || header == "" {
				return fmt.Errorf("property %q: x-mcp-header must be a non-empty string, got %s", where, ann)
			}
			if !isToken(header) {
				return fmt.Errorf("property %q: x-mcp-header %q is not a valid HTTP header name", where, header)
			}
			var typ string
			_ = json.Unmarshal(p["type"], &typ)
			if typ != "string" && typ != "integer" && typ != "boolean" {
				return fmt.Errorf("property %q: x-mcp-header needs type string, integer or boolean, got %s", where, p["type"])
			}
			key := strings.ToLower(header)
			if other, dup := seen[key]; dup {
				return fmt.Errorf("property %q: x-mcp-header %q duplicates the one on %q", where, header, other)
			}
			seen[key] = where
			*out = append(*out, paramBinding{path: path, header: header})
		}
		if err := collectBindings(prop, path, seen, out); err != nil {
			return err
		}
	}
	return nil
}

// isToken reports whether s is an RFC 9110 token (1*tchar), the syntax of a
// header field name.
func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// callToolUpstream is the tools/call hook (M-11): callUpstream with the
// Mcp-Param-* headers of the call's arguments, for plain and task-augmented
// calls alike. The headers go on this call only (opts is a copy; the
// caller's opts, later used for tasks/get and tasks/cancel, keep none). When
// the upstream answers -32020 the tool's annotations may have changed: the
// face re-lists the tools and retries once (M-11 SHOULD) if the headers
// differ; a -32020 is answered before the tool runs, so the retry cannot run
// it twice.
func (s *session) callToolUpstream(ctx context.Context, params json.RawMessage, opts modernup.CallOptions) (translate.CallKind, json.RawMessage, error) {
	base := opts.Header
	h := s.paramHeaders(ctx, params, opts, false)
	opts.Header = mergeHeader(base, h)
	kind, raw, err := s.callUpstream(ctx, legacy.MethodToolsCall, params, opts)
	if err == nil || rpc.CodeOf(err) != rpc.CodeHeaderMismatch || !s.b.sendsHeaders() || ctx.Err() != nil {
		return kind, raw, err
	}
	h2 := s.paramHeaders(ctx, params, opts, true)
	if equalHeader(h, h2) {
		return kind, raw, err
	}
	opts.Header = mergeHeader(base, h2)
	return s.callUpstream(ctx, legacy.MethodToolsCall, params, opts)
}

// sendsHeaders reports whether the upstream is reached over HTTP (stdio has
// no headers, so the face needs no annotations there).
func (b *Bridge) sendsHeaders() bool { return !b.up.Shared }

// paramHeaders returns the Mcp-Param-* headers of one tools/call. A tool
// never listed (the legacy client may call without listing) fills the cache
// from the upstream's tools/list first; so does refresh. Values are raw: the
// upstream client applies the =?base64?…?= rule on the wire (CallOptions.Header).
func (s *session) paramHeaders(ctx context.Context, params json.RawMessage, opts modernup.CallOptions, refresh bool) http.Header {
	if !s.b.sendsHeaders() {
		return nil
	}
	// Read in place (rawjson.All): a call's arguments can be a client's
	// whole body, and decoding them into a map cost ~10× their size; only
	// the few bound members are ever looked at. As in encoding/json, the
	// last of a duplicated member wins.
	var call struct {
		Name      string
		Arguments json.RawMessage
	}
	for k, v := range rawjson.All(params) {
		switch string(rawjson.KeyBytes(k)) {
		case "name":
			call.Name = ""
			if json.Unmarshal(v, &call.Name) != nil {
				return nil
			}
		case "arguments":
			call.Arguments = v
		}
	}
	if call.Name == "" || (len(call.Arguments) > 0 && !rawjson.IsObject(call.Arguments) && !rawjson.IsNull(call.Arguments)) {
		return nil
	}
	bindings, known, complete := s.b.params.lookup(call.Name)
	if refresh || (!known && !complete) {
		if err := s.b.fillParams(ctx, opts, refresh); err != nil {
			s.b.log.Warn("face: cannot list upstream tools for their x-mcp-header annotations (M-11); calling without Mcp-Param headers", "tool", call.Name, "error", err)
		}
		bindings, _, _ = s.b.params.lookup(call.Name)
	}
	var h http.Header
	for _, b := range bindings {
		arg, ok := lookupArg(call.Arguments, b.path)
		if !ok {
			continue // absent: no header (M-11)
		}
		enc, ok := modern.ParamHeaderValue(arg) // omits null and non-scalar values
		if !ok {
			continue
		}
		v, err := modern.DecodeHeaderValue(enc)
		if err != nil {
			continue
		}
		if h == nil {
			h = http.Header{}
		}
		h.Set(paramHeaderPrefix+b.header, v)
	}
	return h
}

// fillParams reads the upstream's whole tool list into the cache, with the
// calling client's credentials. Concurrent misses share one listing: a
// caller that waited finds the cache complete unless it asks for a refresh.
func (b *Bridge) fillParams(ctx context.Context, opts modernup.CallOptions, refresh bool) error {
	b.params.fill.Lock()
	defer b.params.fill.Unlock()
	if _, _, complete := b.params.lookup(""); complete && !refresh {
		return nil
	}
	lo := modernup.CallOptions{Capabilities: opts.Capabilities, ClientInfo: opts.ClientInfo, Authorization: opts.Authorization}
	all := map[string][]paramBinding{}
	cursor := ""
	for page := 0; page < maxParamFillPages; page++ {
		params := json.RawMessage(`{}`)
		if cursor != "" {
			enc, err := json.Marshal(map[string]string{"cursor": cursor})
			if err != nil {
				return fmt.Errorf("encode cursor: %w", err)
			}
			params = enc
		}
		raw, err := b.upstreamCall(ctx, modern.MethodToolsList, params, lo)
		if err != nil {
			return fmt.Errorf("tools/list: %w", err)
		}
		var res struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor *string           `json:"nextCursor"`
		}
		if err := json.Unmarshal(raw, &res); err != nil {
			return fmt.Errorf("tools/list result: %w", err)
		}
		for _, t := range res.Tools {
			if name, bindings, err := toolBindings(t); err == nil {
				all[name] = bindings
			}
		}
		if res.NextCursor == nil || *res.NextCursor == "" {
			b.params.replace(all)
			return nil
		}
		cursor = *res.NextCursor
	}
	return errors.New("tools/list: too many pages")
}

// lookupArg follows path through nested argument objects.
func lookupArg(args json.RawMessage, path []string) (json.RawMessage, bool) {
	cur := args
	for _, p := range path {
		if !rawjson.IsObject(cur) {
			return nil, false
		}
		var next json.RawMessage
		for k, v := range rawjson.All(cur) {
			if string(rawjson.KeyBytes(k)) == p {
				next = v // the last of a duplicated name, as encoding/json
			}
		}
		if next == nil {
			return nil, false
		}
		cur = next
	}
	return cur, true
}

// mergeHeader returns a copy of base with extra's values set over it.
func mergeHeader(base, extra http.Header) http.Header {
	if len(extra) == 0 {
		return base
	}
	out := base.Clone()
	if out == nil {
		out = http.Header{}
	}
	for k, v := range extra {
		out[k] = v
	}
	return out
}

func equalHeader(a, b http.Header) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w := b[k]; len(w) != 1 || len(v) != 1 || w[0] != v[0] {
			return false
		}
	}
	return true
}
