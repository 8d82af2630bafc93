package modernface

import (
	"net/http"

	"github.com/tasksbridge/tasksbridge/era"
	"github.com/tasksbridge/tasksbridge/modern"
)

// DetectClientEra decides, for one HTTP request to a dual-era endpoint,
// which face serves it: era.Client's rule on the request's
// MCP-Protocol-Version and Mcp-Session-Id headers and its body (h may be
// nil: a stdio message has no headers).
func DetectClientEra(h http.Header, body []byte) era.Era {
	return era.Client(era.Request{
		Version:   h.Get(modern.HeaderProtocolVersion),
		SessionID: h.Get("Mcp-Session-Id"),
		Body:      era.BodySignals(body),
	})
}
