package mcpio

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// RawParams receives a request's params through go-sdk untouched (a custom
// method's handler, the faces' middleware), so the server's own decoders
// judge them and give precise -32602 messages. go-sdk sees no _meta.
type RawParams struct {
	mcp.ParamsBase
	JSON json.RawMessage
}

func (p *RawParams) UnmarshalJSON(b []byte) error {
	p.JSON = append(json.RawMessage(nil), b...)
	return nil
}

// Bytes is the params as they arrived (nil for no params).
func (p *RawParams) Bytes() json.RawMessage {
	if p == nil {
		return nil
	}
	return p.JSON
}

// RawParamsMeta is RawParams whose _meta go-sdk sees too (the modern face's
// requests carry their protocol version there, M-37).
type RawParamsMeta struct{ RawParams }

func (p *RawParamsMeta) UnmarshalJSON(b []byte) error {
	_ = p.RawParams.UnmarshalJSON(b)
	var m struct {
		Meta map[string]any `json:"_meta"`
	}
	_ = json.Unmarshal(b, &m)
	p.Meta = m.Meta
	return nil
}

// RawResult answers through go-sdk with JSON the server built itself. It
// must be valid JSON: go-sdk never answers otherwise.
type RawResult struct {
	mcp.ResultBase
	JSON json.RawMessage
}

func (r *RawResult) MarshalJSON() ([]byte, error) { return r.JSON, nil }
