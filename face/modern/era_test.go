package modernface_test

import (
	"net/http"
	"testing"

	"github.com/tasksbridge/tasksbridge/era"
	modernface "github.com/tasksbridge/tasksbridge/face/modern"
)

func TestDetectClientEra(t *testing.T) {
	hdr := func(kv ...string) http.Header {
		h := http.Header{}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name   string
		header http.Header
		body   string
		want   era.Era
	}{
		{"initialize is legacy", hdr(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, era.Legacy},
		{"initialize with a modern header is still legacy", hdr("MCP-Protocol-Version", "2026-07-28"), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, era.Legacy},
		{"per-request _meta is modern", hdr("MCP-Protocol-Version", "2026-07-28"), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, era.Modern},
		{"_meta without header is modern (the face answers -32020)", hdr(), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, era.Modern},
		{"_meta naming an old version is modern (the face answers -32022)", hdr(), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, era.Modern},
		{"server/discover is modern", hdr(), `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, era.Modern},
		{"modern header without _meta is modern (the face answers -32602)", hdr("MCP-Protocol-Version", "2026-07-28"), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, era.Modern},
		{"a later revision's header is modern", hdr("MCP-Protocol-Version", "2027-01-01"), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, era.Modern},
		{"legacy session request", hdr("Mcp-Session-Id", "s1", "MCP-Protocol-Version", "2025-11-25"), `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t"}}`, era.Legacy},
		{"legacy request without headers", hdr(), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, era.Legacy},
		{"posted response is legacy", hdr("Mcp-Session-Id", "s1"), `{"jsonrpc":"2.0","id":0,"result":{"action":"accept"}}`, era.Legacy},
		{"batch is legacy", hdr(), `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, era.Legacy},
		{"garbage without header is legacy", hdr(), `{not json`, era.Legacy},
		{"garbage with a modern header is modern", hdr("MCP-Protocol-Version", "2026-07-28"), `{not json`, era.Modern},
		{"GET with a session is legacy", hdr("Mcp-Session-Id", "s1"), ``, era.Legacy},
		{"GET with a modern header is modern (405)", hdr("MCP-Protocol-Version", "2026-07-28"), ``, era.Modern},
		{"bare GET is legacy", hdr(), ``, era.Legacy},
		{"modern notification by header", hdr("MCP-Protocol-Version", "2026-07-28"), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, era.Modern},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := modernface.DetectClientEra(tc.header, []byte(tc.body)); got != tc.want {
				t.Fatalf("DetectClientEra = %v, want %v", got, tc.want)
			}
		})
	}
}

// FuzzDetectClientEra: any header and body get an era, never a panic.
func FuzzDetectClientEra(f *testing.F) {
	f.Add("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`)
	f.Add("2026-07-28", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`)
	f.Add("2025-11-25", `[{"jsonrpc":"2.0"}]`)
	f.Add("2026-07-28", `{"method":null,"params":[]}`)
	f.Fuzz(func(t *testing.T, version, body string) {
		h := http.Header{}
		if version != "" {
			h.Set("MCP-Protocol-Version", version)
		}
		if got := modernface.DetectClientEra(h, []byte(body)); got != era.Legacy && got != era.Modern {
			t.Fatalf("era %v", got)
		}
	})
}
