package upstream

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/internal/demo"
	"github.com/tasksbridge/tasksbridge/modern"
)

// With Stamped the caller's params go upstream byte for byte (no second
// stamp); only a progress token is still rewritten per call, and restored
// for the caller (M-01 held by the caller's stamp).
func TestStampedParamsSentAsIs(t *testing.T) {
	env := startDemo(t, demo.Options{})
	meta := env.client.requestMeta(&CallOptions{})
	params, err := modern.StampRequestMeta(tool("echo", map[string]any{"text": "x"}), meta)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.CallTool(ctxT(t), params, CallOptions{Stamped: true, OnNotify: func(string, json.RawMessage) {}}); err != nil {
		t.Fatal(err)
	}
	sent, _ := decodeReq(env.rec.byMethod(modern.MethodToolsCall)[0].Body)
	if !bytes.Equal(sent.Params, params) {
		t.Fatalf("params sent %s, want them unchanged %s", sent.Params, params)
	}

	meta.ProgressToken = json.RawMessage(`"mine"`)
	withToken, err := modern.StampRequestMeta(tool("echo", map[string]any{"text": "y"}), meta)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := env.client.CallTool(ctxT(t), withToken, CallOptions{Stamped: true, OnNotify: func(string, json.RawMessage) {}}); err != nil {
		t.Fatal(err)
	}
	sent, _ = decodeReq(env.rec.byMethod(modern.MethodToolsCall)[1].Body)
	got, err := modern.DecodeRequestMeta(sent.Params)
	if err != nil {
		t.Fatal(err)
	}
	if string(got.ProgressToken) == `"mine"` || !strings.HasPrefix(string(got.ProgressToken), `"tb-progress-`) {
		t.Fatalf("progress token sent %s, want the per-call rewrite", got.ProgressToken)
	}
}
