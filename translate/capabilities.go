package translate

import (
	"encoding/json"

	"github.com/tasksbridge/tasksbridge/legacy"
	"github.com/tasksbridge/tasksbridge/modern"
	"github.com/tasksbridge/tasksbridge/rpc"
)

// InitializeOptions tunes the legacy InitializeResult the bridge answers with.
type InitializeOptions struct {
	// ListTasks declares tasks.list. Set it only when the bridge can identify
	// requestors (an auth principal, or a session scope it documents): a
	// receiver that cannot SHOULD NOT declare it (L-04).
	ListTasks bool
	// ServerInfo is used when the upstream's discover result carries no
	// _meta serverInfo (the legacy InitializeResult requires one).
	ServerInfo *modern.Implementation
}

// InitializeResultFromDiscover builds the legacy InitializeResult the bridge
// sends a legacy client from the upstream's server/discover result
// (L-01..L-04): protocolVersion 2025-11-25; the upstream's
// capabilities (tools, prompts, resources, logging, completions,
// experimental and unknown keys) without the 2026-only "extensions"; plus the
// legacy tasks capability the bridge emulates — cancel and
// requests.tools.call (always {} leaves), and list only with
// opts.ListTasks — whenever the upstream offers tools (the bridge accepts
// task-augmented tools/call even when the upstream never creates tasks: it
// then synthesizes them). serverInfo and instructions come from the upstream;
// serverInfo is display data only (M-16).
//
// Implements L-01, L-02, L-03, L-04, M-16.
func InitializeResultFromDiscover(discover []byte, opts InitializeOptions) (json.RawMessage, error) {
	d, err := modern.DecodeDiscoverResult(discover)
	if err != nil {
		return nil, upstreamErr("server/discover result", err)
	}
	capsRaw, err := json.Marshal(d.Capabilities)
	if err != nil {
		return nil, upstreamErr("capabilities", err)
	}
	caps, err := decodeObject(capsRaw, "capabilities", false)
	if err != nil {
		return nil, upstreamErr("capabilities", err)
	}
	// "extensions" is 2026-only; a stray legacy "tasks" key means nothing
	// upstream (M-66): the bridge decides below.
	caps.Del("extensions", "tasks")
	if d.Capabilities.Tools != nil {
		if err := caps.Set("tasks", legacy.ServerTasksCapability{List: opts.ListTasks, Cancel: true, ToolsCall: true}); err != nil {
			return nil, err
		}
	}
	info := d.ServerInfo
	if info == nil || info.Name == "" || info.Version == "" {
		info = opts.ServerInfo
	}
	if info == nil || info.Name == "" || info.Version == "" {
		return nil, internalErr("upstream server/discover has no serverInfo and the bridge has none configured")
	}
	var out object
	if err := out.Set("protocolVersion", legacy.ProtocolVersion); err != nil {
		return nil, err
	}
	out.Put("capabilities", caps.Bytes())
	if err := out.Set("serverInfo", info); err != nil {
		return nil, err
	}
	if d.Instructions != "" {
		if err := out.Set("instructions", d.Instructions); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// DiscoverOptions tunes the DiscoverResult the modern face builds.
type DiscoverOptions struct {
	// TTLMs is how long a client may cache the result (CacheableResult).
	TTLMs int64
	// CacheScope defaults to "private": the result is built from one
	// principal's upstream session.
	CacheScope modern.CacheScope
}

// DiscoverResultFromInitialize builds the modern server/discover result from
// a legacy upstream's InitializeResult: supportedVersions [2026-07-28]; the
// capabilities without the legacy "tasks" key (never advertised under 2026,
// M-66) and with extensions["io.modelcontextprotocol/tasks"] = {} when the
// upstream declared tasks.requests.tools.call (M-49); instructions; the
// upstream's serverInfo under _meta (M-36, M-41); the required ttlMs and
// cacheScope. resultType "complete" is written by the encoder.
//
// Implements M-36, M-41, M-49, M-66.
func DiscoverResultFromInitialize(initResult []byte, opts DiscoverOptions) (modern.DiscoverResult, error) {
	o, err := decodeObject(initResult, "InitializeResult", false)
	if err != nil {
		return modern.DiscoverResult{}, upstreamErr("InitializeResult", err)
	}
	capsRaw, ok := o.Get("capabilities")
	if !ok {
		return modern.DiscoverResult{}, internalErr("upstream InitializeResult has no capabilities")
	}
	caps, err := modern.DecodeServerCapabilities(capsRaw)
	if err != nil {
		return modern.DiscoverResult{}, upstreamErr("capabilities", err)
	}
	tasks, err := legacy.ServerTasksFrom(capsRaw)
	if err != nil {
		return modern.DiscoverResult{}, upstreamErr("capabilities.tasks", err)
	}
	delete(caps.Extra, "tasks")
	if len(caps.Extra) == 0 {
		caps.Extra = nil
	}
	caps.Extensions = nil // a legacy server has none; only the bridge's own goes in
	if tasks != nil && tasks.ToolsCall {
		caps.AddExtension(modern.TasksExtensionID, nil)
	}
	d := modern.DiscoverResult{
		SupportedVersions: []string{modern.ProtocolVersion},
		Capabilities:      caps,
		TTLMs:             max(opts.TTLMs, 0),
		CacheScope:        opts.CacheScope,
	}
	if d.CacheScope == "" {
		d.CacheScope = modern.CachePrivate
	}
	if d.Instructions, err = str(o, "instructions", "InitializeResult.instructions"); err != nil {
		return modern.DiscoverResult{}, upstreamErr("InitializeResult", err)
	}
	if si, ok := o.Get("serverInfo"); ok {
		im, err := modern.DecodeImplementation(si)
		if err != nil {
			return modern.DiscoverResult{}, upstreamErr("serverInfo", err)
		}
		if im.Name != "" && im.Version != "" {
			d.ServerInfo = &im
		}
	}
	if err := d.Validate(); err != nil {
		return modern.DiscoverResult{}, upstreamErr("server/discover result", err)
	}
	return d, nil
}

// UpstreamRequestMeta builds the per-request _meta the bridge stamps (with
// modern.StampRequestMeta) on every request it sends a modern upstream for a
// legacy client (M-01, M-02, M-20): protocolVersion 2026-07-28; the
// client capabilities the legacy client declared at initialize —
// elicitation (form/url as declared), sampling, roots (without the removed
// listChanged) and experimental — so the upstream only asks for input the
// client can give (M-48 on its side, L-82 on ours); always
// extensions["io.modelcontextprotocol/tasks"] = {} (M-20); never the legacy
// "tasks" capability, which is irrelevant upstream (L-11, M-66); clientInfo
// from the client (or fallback when the client's is incomplete, M-02); and
// logLevel as last set by logging/setLevel ("" = none, so the upstream sends no
// notifications/message, M-46).
//
// Implements M-01, M-02, M-20, M-46 (by omission), L-11.
func UpstreamRequestMeta(initParams []byte, logLevel string, fallback *modern.Implementation) (modern.RequestMeta, error) {
	p, err := decodeObject(initParams, "initialize params", false)
	if err != nil {
		return modern.RequestMeta{}, err
	}
	caps := modern.ClientCapabilities{}
	if c, ok, err := sub(p, "capabilities", "initialize params.capabilities"); err != nil {
		return modern.RequestMeta{}, err
	} else if ok {
		for _, k := range []string{"elicitation", "sampling", "roots"} {
			leaf, present, err := sub(c, k, "capabilities."+k)
			if err != nil {
				return modern.RequestMeta{}, err
			}
			if !present {
				continue
			}
			obj := modern.Object(leaf.Map())
			if k == "roots" {
				obj = modern.Object{} // notifications/roots/list_changed is gone in 2026
			}
			switch k {
			case "elicitation":
				caps.Elicitation = &obj
			case "sampling":
				caps.Sampling = &obj
			case "roots":
				caps.Roots = &obj
			}
		}
		if exp, ok, err := sub(c, "experimental", "capabilities.experimental"); err != nil {
			return modern.RequestMeta{}, err
		} else if ok {
			caps.Experimental = map[string]modern.Object{}
			for _, k := range exp.Keys() {
				v, _ := exp.Get(k)
				leaf, err := decodeObject(v, "capabilities.experimental."+k, false)
				if err != nil {
					return modern.RequestMeta{}, err
				}
				caps.Experimental[k] = modern.Object(leaf.Map())
			}
		}
	}
	caps.AddExtension(modern.TasksExtensionID, nil)
	meta := modern.NewRequestMeta(caps, nil)
	if ci, ok := p.Get("clientInfo"); ok {
		im, err := modern.DecodeImplementation(ci)
		if err != nil {
			return modern.RequestMeta{}, rpc.Errorf(rpc.CodeInvalidParams, "initialize params.clientInfo: %s", rpc.As(err).Message)
		}
		if im.Name != "" && im.Version != "" {
			meta.ClientInfo = &im
		}
	}
	if meta.ClientInfo == nil && fallback != nil {
		meta.ClientInfo = fallback
	}
	if logLevel != "" {
		if !modern.LoggingLevel(logLevel).Valid() {
			return modern.RequestMeta{}, rpc.Errorf(rpc.CodeInvalidParams, "log level %q is not one of the eight RFC 5424 levels", logLevel)
		}
		meta.LogLevel = modern.LoggingLevel(logLevel)
	}
	if err := meta.Validate(); err != nil {
		return modern.RequestMeta{}, err
	}
	return meta, nil
}

// LegacyInitializeParams builds the initialize params the modern face sends
// to open a legacy upstream session for a modern client: protocolVersion
// 2025-11-25, the client's elicitation/sampling/roots/experimental
// capabilities from its per-request _meta, never "extensions" (under
// 2025-11-25 the extension does not enable tasks, M-66) and never a client
// "tasks" capability (the bridge hosts no client-side tasks), and clientInfo
// (the client's, or fallback).
//
// Implements M-66.
func LegacyInitializeParams(meta modern.RequestMeta, fallback modern.Implementation) (json.RawMessage, error) {
	var caps object
	c := meta.ClientCapabilities
	if c != nil {
		if c.Elicitation != nil {
			if err := caps.Set("elicitation", *c.Elicitation); err != nil {
				return nil, err
			}
		}
		if c.Sampling != nil {
			if err := caps.Set("sampling", *c.Sampling); err != nil {
				return nil, err
			}
		}
		if c.Roots != nil {
			if err := caps.Set("roots", *c.Roots); err != nil {
				return nil, err
			}
		}
		if len(c.Experimental) > 0 {
			if err := caps.Set("experimental", c.Experimental); err != nil {
				return nil, err
			}
		}
	}
	info := fallback
	if meta.ClientInfo != nil && meta.ClientInfo.Name != "" && meta.ClientInfo.Version != "" {
		info = *meta.ClientInfo
	}
	var out object
	if err := out.Set("protocolVersion", legacy.ProtocolVersion); err != nil {
		return nil, err
	}
	out.Put("capabilities", caps.Bytes())
	if err := out.Set("clientInfo", info); err != nil {
		return nil, internalErr("clientInfo: %s", rpc.As(err).Message)
	}
	return out.Bytes(), nil
}
