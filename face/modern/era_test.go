package modernface_test

import (
	"net/http"
	"testing"

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
		want   modernface.Era
	}{
		{"initialize is legacy", hdr(), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`, modernface.EraLegacy},
		{"initialize with a modern header is still legacy", hdr("MCP-Protocol-Version", "2026-07-28"), `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`, modernface.EraLegacy},
		{"per-request _meta is modern", hdr("MCP-Protocol-Version", "2026-07-28"), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, modernface.EraModern},
		{"_meta without header is modern (the face answers -32020)", hdr(), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`, modernface.EraModern},
		{"_meta naming an old version is modern (the face answers -32022)", hdr(), `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}`, modernface.EraModern},
		{"server/discover is modern", hdr(), `{"jsonrpc":"2.0","id":1,"method":"server/discover"}`, modernface.EraModern},
		{"modern header without _meta is modern (the face answers -32602)", hdr("MCP-Protocol-Version", "2026-07-28"), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, modernface.EraModern},
		{"a later revision's header is modern", hdr("MCP-Protocol-Version", "2027-01-01"), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, modernface.EraModern},
		{"legacy session request", hdr("Mcp-Session-Id", "s1", "MCP-Protocol-Version", "2025-11-25"), `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"taskId":"t"}}`, modernface.EraLegacy},
		{"legacy request without headers", hdr(), `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, modernface.EraLegacy},
		{"posted response is legacy", hdr("Mcp-Session-Id", "s1"), `{"jsonrpc":"2.0","id":0,"result":{"action":"accept"}}`, modernface.EraLegacy},
		{"batch is legacy", hdr(), `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, modernface.EraLegacy},
		{"garbage without header is legacy", hdr(), `{not json`, modernface.EraLegacy},
		{"garbage with a modern header is modern", hdr("MCP-Protocol-Version", "2026-07-28"), `{not json`, modernface.EraModern},
		{"GET with a session is legacy", hdr("Mcp-Session-Id", "s1"), ``, modernface.EraLegacy},
		{"GET with a modern header is modern (405)", hdr("MCP-Protocol-Version", "2026-07-28"), ``, modernface.EraModern},
		{"bare GET is legacy", hdr(), ``, modernface.EraLegacy},
		{"modern notification by header", hdr("MCP-Protocol-Version", "2026-07-28"), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, modernface.EraModern},
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
		if era := modernface.DetectClientEra(h, []byte(body)); era != modernface.EraLegacy && era != modernface.EraModern {
			t.Fatalf("era %v", era)
		}
	})
}
