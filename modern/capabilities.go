package modern

import (
	"encoding/json"
)

// Object is a JSON object kept raw per key: capability leaves, settings
// objects and _meta. A nil Object encodes as {} so that a present capability
// leaf is never written as null; use a nil *Object (or omit the map entry) for
// "absent".
type Object map[string]json.RawMessage

// MarshalJSON encodes o; nil becomes {}.
func (o Object) MarshalJSON() ([]byte, error) {
	if o == nil {
		return []byte("{}"), nil
	}
	w := newWriter()
	w.extra(o)
	return w.bytes()
}

// Clone returns a shallow copy of o (the raw values are shared, never mutated).
func (o Object) Clone() Object {
	if o == nil {
		return nil
	}
	c := make(Object, len(o))
	for k, v := range o {
		c[k] = v
	}
	return c
}

// Implementation is the {name, version, ...} of clientInfo and serverInfo.
// Fields other than name and version are kept raw in Extra.
type Implementation struct {
	Name    string
	Version string
	Title   string
	Extra   map[string]json.RawMessage
}

// DecodeImplementation decodes an Implementation leniently (name and version may
// be missing; they are self-reported and for display only, M-16).
func DecodeImplementation(data []byte) (Implementation, error) {
	r, err := topReader("implementation", data)
	if err != nil {
		return Implementation{}, err
	}
	return readImplementation(r)
}

func readImplementation(r *reader) (Implementation, error) {
	var im Implementation
	var err error
	if im.Name, _, err = r.str("name"); err != nil {
		return im, err
	}
	if im.Version, _, err = r.str("version"); err != nil {
		return im, err
	}
	if im.Title, _, err = r.str("title"); err != nil {
		return im, err
	}
	im.Extra = r.rest("name", "version", "title")
	return im, nil
}

// MarshalJSON encodes the Implementation; name and version are required.
func (im Implementation) MarshalJSON() ([]byte, error) {
	if im.Name == "" || im.Version == "" {
		return nil, encodeErr("Implementation: name and version are required (got name %q, version %q)", im.Name, im.Version)
	}
	w := newWriter()
	w.field("name", im.Name)
	w.field("version", im.Version)
	if im.Title != "" {
		w.field("title", im.Title)
	}
	w.extra(im.Extra)
	return w.bytes()
}

// UnmarshalJSON decodes leniently (see DecodeImplementation).
func (im *Implementation) UnmarshalJSON(data []byte) error {
	return decodeInto(im, DecodeImplementation, data)
}

// ClientCapabilities is the per-request client capability object
// (_meta["io.modelcontextprotocol/clientCapabilities"]). Unknown keys are kept
// in Extra so a proxy can forward them.
type ClientCapabilities struct {
	Experimental map[string]Object
	// Roots and Sampling are deprecated in 2026-07-28 (SEP-2577) but still work.
	Roots       *Object
	Sampling    *Object // {context?, tools?}
	Elicitation *Object // {form?, url?}
	// Extensions maps an extension ID to its settings ({} = supported).
	Extensions map[string]Object
	Extra      map[string]json.RawMessage
}

var clientCapKeys = []string{"experimental", "roots", "sampling", "elicitation", "extensions"}

// TasksCapabilities returns client capabilities declaring only the tasks
// extension: {"extensions":{"io.modelcontextprotocol/tasks":{}}}.
func TasksCapabilities() ClientCapabilities {
	return ClientCapabilities{Extensions: map[string]Object{TasksExtensionID: {}}}
}

// HasExtension reports whether the extension id is declared.
func (c ClientCapabilities) HasExtension(id string) bool {
	_, ok := c.Extensions[id]
	return ok
}

// HasTasksExtension reports whether io.modelcontextprotocol/tasks is declared
// (M-20, M-50). A legacy top-level "tasks" capability does not count (M-66).
func (c ClientCapabilities) HasTasksExtension() bool { return c.HasExtension(TasksExtensionID) }

// AddExtension declares extension id with settings (nil settings encode as {}).
func (c *ClientCapabilities) AddExtension(id string, settings Object) {
	if c.Extensions == nil {
		c.Extensions = map[string]Object{}
	}
	c.Extensions[id] = settings
}

// SupportsElicitationForm reports form-mode elicitation support. An empty
// elicitation object counts as form support, as in 2025-11-25.
func (c ClientCapabilities) SupportsElicitationForm() bool {
	if c.Elicitation == nil {
		return false
	}
	e := *c.Elicitation
	_, form := e["form"]
	_, url := e["url"]
	return form || !url
}

// SupportsElicitationURL reports URL-mode elicitation support.
func (c ClientCapabilities) SupportsElicitationURL() bool {
	if c.Elicitation == nil {
		return false
	}
	_, ok := (*c.Elicitation)["url"]
	return ok
}

// SupportsSampling reports sampling support (deprecated capability).
func (c ClientCapabilities) SupportsSampling() bool { return c.Sampling != nil }

// SupportsRoots reports roots support (deprecated capability).
func (c ClientCapabilities) SupportsRoots() bool { return c.Roots != nil }

// DecodeClientCapabilities decodes leniently, keeping unknown keys.
func DecodeClientCapabilities(data []byte) (ClientCapabilities, error) {
	r, err := topReader("clientCapabilities", data)
	if err != nil {
		return ClientCapabilities{}, err
	}
	return readClientCaps(r)
}

func readClientCaps(r *reader) (ClientCapabilities, error) {
	var c ClientCapabilities
	var err error
	if c.Experimental, err = r.objectMap("experimental"); err != nil {
		return c, err
	}
	if c.Roots, err = r.objPtr("roots"); err != nil {
		return c, err
	}
	if c.Sampling, err = r.objPtr("sampling"); err != nil {
		return c, err
	}
	if c.Elicitation, err = r.objPtr("elicitation"); err != nil {
		return c, err
	}
	if c.Extensions, err = r.objectMap("extensions"); err != nil {
		return c, err
	}
	c.Extra = r.rest(clientCapKeys...)
	return c, nil
}

// MarshalJSON encodes the capabilities; present leaves are written as objects.
func (c ClientCapabilities) MarshalJSON() ([]byte, error) {
	w := newWriter()
	if c.Experimental != nil {
		w.field("experimental", c.Experimental)
	}
	if c.Roots != nil {
		w.field("roots", *c.Roots)
	}
	if c.Sampling != nil {
		w.field("sampling", *c.Sampling)
	}
	if c.Elicitation != nil {
		w.field("elicitation", *c.Elicitation)
	}
	if c.Extensions != nil {
		w.field("extensions", c.Extensions)
	}
	w.extra(c.Extra)
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (c *ClientCapabilities) UnmarshalJSON(data []byte) error {
	return decodeInto(c, DecodeClientCapabilities, data)
}

// ServerCapabilities is the capabilities object of DiscoverResult. Unknown
// keys are kept in Extra. A legacy "tasks" key, if a peer sends one, lands in
// Extra and means nothing under 2026-07-28 (M-66).
type ServerCapabilities struct {
	Completions  *Object
	Experimental map[string]Object
	Logging      *Object
	Prompts      *Object // {listChanged?}
	Resources    *Object // {listChanged?, subscribe?}
	Tools        *Object // {listChanged?}
	Extensions   map[string]Object
	Extra        map[string]json.RawMessage
}

var serverCapKeys = []string{"completions", "experimental", "logging", "prompts", "resources", "tools", "extensions"}

// HasExtension reports whether the server advertises extension id.
func (c ServerCapabilities) HasExtension(id string) bool {
	_, ok := c.Extensions[id]
	return ok
}

// HasTasksExtension reports whether the server advertises the tasks extension (M-49).
func (c ServerCapabilities) HasTasksExtension() bool { return c.HasExtension(TasksExtensionID) }

// AddExtension advertises extension id with settings (nil encodes as {}).
func (c *ServerCapabilities) AddExtension(id string, settings Object) {
	if c.Extensions == nil {
		c.Extensions = map[string]Object{}
	}
	c.Extensions[id] = settings
}

// DecodeServerCapabilities decodes leniently, keeping unknown keys.
func DecodeServerCapabilities(data []byte) (ServerCapabilities, error) {
	r, err := topReader("capabilities", data)
	if err != nil {
		return ServerCapabilities{}, err
	}
	return readServerCaps(r)
}

func readServerCaps(r *reader) (ServerCapabilities, error) {
	var c ServerCapabilities
	var err error
	if c.Completions, err = r.objPtr("completions"); err != nil {
		return c, err
	}
	if c.Experimental, err = r.objectMap("experimental"); err != nil {
		return c, err
	}
	if c.Logging, err = r.objPtr("logging"); err != nil {
		return c, err
	}
	if c.Prompts, err = r.objPtr("prompts"); err != nil {
		return c, err
	}
	if c.Resources, err = r.objPtr("resources"); err != nil {
		return c, err
	}
	if c.Tools, err = r.objPtr("tools"); err != nil {
		return c, err
	}
	if c.Extensions, err = r.objectMap("extensions"); err != nil {
		return c, err
	}
	c.Extra = r.rest(serverCapKeys...)
	return c, nil
}

// MarshalJSON encodes the capabilities.
func (c ServerCapabilities) MarshalJSON() ([]byte, error) {
	w := newWriter()
	if c.Completions != nil {
		w.field("completions", *c.Completions)
	}
	if c.Experimental != nil {
		w.field("experimental", c.Experimental)
	}
	if c.Logging != nil {
		w.field("logging", *c.Logging)
	}
	if c.Prompts != nil {
		w.field("prompts", *c.Prompts)
	}
	if c.Resources != nil {
		w.field("resources", *c.Resources)
	}
	if c.Tools != nil {
		w.field("tools", *c.Tools)
	}
	if c.Extensions != nil {
		w.field("extensions", c.Extensions)
	}
	w.extra(c.Extra)
	return w.bytes()
}

// UnmarshalJSON decodes leniently.
func (c *ServerCapabilities) UnmarshalJSON(data []byte) error {
	return decodeInto(c, DecodeServerCapabilities, data)
}
