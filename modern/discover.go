package modern

import (
	"encoding/json"
)

// DiscoverResult is the result of server/discover (M-36). Server
// identity travels in _meta["io.modelcontextprotocol/serverInfo"]; the
// top-level serverInfo field was removed after SEP finalisation (#3002) and is
// only read, as a fallback, from older servers.
type DiscoverResult struct {
	SupportedVersions []string
	Capabilities      ServerCapabilities
	Instructions      string // "" = absent
	// TTLMs and CacheScope are required (CacheableResult).
	TTLMs      int64
	CacheScope CacheScope
	// ServerInfo is _meta.serverInfo; nil = absent (SHOULD be present, M-41).
	ServerInfo *Implementation
	// Meta holds the other _meta keys.
	Meta Object
	// Extra holds unknown top-level fields.
	Extra map[string]json.RawMessage
}

var discoverKeys = []string{"resultType", "supportedVersions", "capabilities", "instructions", "ttlMs", "cacheScope", "_meta"}

// SupportsVersion reports whether v is among SupportedVersions.
func (d DiscoverResult) SupportsVersion(v string) bool { return contains(d.SupportedVersions, v) }

// DecodeDiscoverResult decodes leniently: resultType missing or "complete";
// missing ttlMs/cacheScope/supportedVersions/capabilities are tolerated.
func DecodeDiscoverResult(data []byte) (DiscoverResult, error) {
	r, err := topReader("server/discover result", data)
	if err != nil {
		return DiscoverResult{}, err
	}
	var d DiscoverResult
	if err := readResultType(r, "", ResultComplete); err != nil {
		return d, err
	}
	if d.SupportedVersions, err = r.strList("supportedVersions"); err != nil {
		return d, err
	}
	if r.has("capabilities") {
		c, err := r.child("capabilities")
		if err != nil {
			return d, err
		}
		if d.Capabilities, err = readServerCaps(c); err != nil {
			return d, err
		}
	}
	if d.Instructions, _, err = r.str("instructions"); err != nil {
		return d, err
	}
	ttl, err := r.int("ttlMs")
	if err != nil {
		return d, err
	}
	if ttl != nil {
		d.TTLMs = *ttl
	}
	cs, _, err := r.str("cacheScope")
	if err != nil {
		return d, err
	}
	d.CacheScope = CacheScope(cs)
	if d.Meta, err = r.object("_meta"); err != nil {
		return d, err
	}
	if v, ok := d.Meta[MetaKeyServerInfo]; ok {
		im, err := decodeNested(r, "_meta."+MetaKeyServerInfo, v)
		if err != nil {
			return d, err
		}
		d.ServerInfo = im
		delete(d.Meta, MetaKeyServerInfo)
		if len(d.Meta) == 0 {
			d.Meta = nil
		}
	}
	d.Extra = r.rest(discoverKeys...)
	if v, ok := d.Extra["serverInfo"]; ok && d.ServerInfo == nil {
		im, err := decodeNested(r, "serverInfo", v)
		if err != nil {
			return d, err
		}
		d.ServerInfo = im
		delete(d.Extra, "serverInfo")
		if len(d.Extra) == 0 {
			d.Extra = nil
		}
	}
	return d, nil
}

// decodeNested reads an Implementation at path inside r's message.
func decodeNested(r *reader, path string, v json.RawMessage) (*Implementation, error) {
	if isNull(v) {
		return nil, nil
	}
	c, err := newReader(r.ctx, path+".", v)
	if err != nil {
		return nil, err
	}
	im, err := readImplementation(c)
	if err != nil {
		return nil, err
	}
	return &im, nil
}

// Validate checks what the schema requires of a DiscoverResult we emit, and
// that its capabilities carry no legacy "tasks" key (a 2026-07-28 server must
// never advertise the 2025-11-25 tasks capabilities, M-66).
func (d DiscoverResult) Validate() error {
	if len(d.SupportedVersions) == 0 {
		return encodeErr("DiscoverResult: supportedVersions must list at least one version (M-36)")
	}
	if d.TTLMs < 0 {
		return encodeErr("DiscoverResult: ttlMs must be >= 0, got %d", d.TTLMs)
	}
	if !d.CacheScope.Valid() {
		return encodeErr("DiscoverResult: cacheScope must be \"public\" or \"private\", got %q", string(d.CacheScope))
	}
	if _, ok := d.Capabilities.Extra["tasks"]; ok {
		return encodeErr("DiscoverResult: capabilities must not advertise the legacy \"tasks\" capability under %s; advertise extensions[%q] instead (M-66)", ProtocolVersion, TasksExtensionID)
	}
	return nil
}

// MarshalJSON encodes the result strictly, with resultType "complete".
func (d DiscoverResult) MarshalJSON() ([]byte, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	w := newWriter()
	w.field("resultType", ResultComplete)
	w.field("supportedVersions", d.SupportedVersions)
	w.field("capabilities", d.Capabilities)
	if d.Instructions != "" {
		w.field("instructions", d.Instructions)
	}
	w.field("ttlMs", d.TTLMs)
	w.field("cacheScope", d.CacheScope)
	if d.ServerInfo != nil || d.Meta != nil {
		meta := d.Meta.Clone()
		if d.ServerInfo != nil {
			var err error
			if meta, err = WithServerInfo(meta, *d.ServerInfo); err != nil {
				return nil, err
			}
		}
		w.field("_meta", meta)
	}
	w.extra(d.Extra)
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (d *DiscoverResult) UnmarshalJSON(data []byte) error {
	return decodeInto(d, DecodeDiscoverResult, data)
}
