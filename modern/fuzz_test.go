package modern

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/tasksbridge/tasksbridge/rpc"
)

// Fuzz targets for every decoder and for the header codec. Properties:
//   - no panic;
//   - a decode error is a *rpc.Error with code -32700, -32600, -32602 or -32020;
//   - an encode error (a leniently decoded value the schema forbids) is a
//     *rpc.Error with code -32603;
//   - encoding is stable: encode(decode(encode(x))) == encode(x).

var decodeCodes = map[int64]bool{rpc.CodeParseError: true, rpc.CodeInvalidRequest: true, rpc.CodeInvalidParams: true, rpc.CodeHeaderMismatch: true}

func checkCode(t *testing.T, err error, allowed map[int64]bool) {
	t.Helper()
	var e *rpc.Error
	if !errors.As(err, &e) {
		t.Fatalf("error is %T, not *rpc.Error: %v", err, err)
	}
	if !allowed[e.Code] {
		t.Fatalf("error code %d not allowed: %v", e.Code, e.Message)
	}
	if e.Message == "" {
		t.Fatal("empty error message")
	}
}

var encodeCodes = map[int64]bool{rpc.CodeInternalError: true}

// fuzzRoundTrip runs the decode/encode properties for one decoder. redecode
// reads what enc writes (the decoder itself unless the shapes differ).
func fuzzRoundTrip[T any](f *testing.F, seeds []string, dec func([]byte) (T, error), enc func(T) ([]byte, error), redecode func([]byte) (T, error)) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Add([]byte(``))
	f.Add([]byte(`null`))
	f.Add([]byte(`{"a":`))
	f.Add([]byte(`[{}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := dec(data)
		if err != nil {
			checkCode(t, err, decodeCodes)
			return
		}
		b, err := enc(v)
		if err != nil {
			checkCode(t, err, encodeCodes)
			return
		}
		if !json.Valid(b) {
			t.Fatalf("encoded invalid JSON: %s", b)
		}
		v2, err := redecode(b)
		if err != nil {
			t.Fatalf("own encoding does not decode: %v\n%s", err, b)
		}
		b2, err := enc(v2)
		if err != nil {
			t.Fatalf("re-encode failed: %v", err)
		}
		if !bytes.Equal(b, b2) {
			t.Fatalf("unstable encoding:\n%s\n%s", b, b2)
		}
	})
}

func marshalOf[T any](v T) ([]byte, error) { return Marshal(v) }

var (
	seedTask      = `{"taskId":"786512e2","status":"working","statusMessage":"s","createdAt":"` + t0 + `","lastUpdatedAt":"` + t1 + `","ttlMs":60000,"pollIntervalMs":5000}`
	seedInputReq  = `{"taskId":"a","status":"input_required","createdAt":"x","lastUpdatedAt":"y","ttlMs":null,"inputRequests":{"name":{"method":"elicitation/create","params":{"mode":"form","message":"m","requestedSchema":{"type":"object","properties":{}}}},"r":{"method":"roots/list"}}}`
	seedCompleted = `{"taskId":"a","status":"completed","createdAt":"x","lastUpdatedAt":"y","ttlMs":1,"result":{"content":[{"type":"text","text":"Hello"}],"isError":true}}`
	seedFailed    = `{"taskId":"a","status":"failed","createdAt":"x","lastUpdatedAt":"y","ttlMs":1,"error":{"code":-32603,"message":"boom","data":{"x":[1,2]}}}`
	seedMeta      = `{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"b","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}},"extensions":{"io.modelcontextprotocol/tasks":{}}},"io.modelcontextprotocol/logLevel":"info","progressToken":1,"traceparent":"t"}`
)

func FuzzDecodeRequest(f *testing.F) {
	fuzzRoundTrip(f, []string{
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"a"}}`,
		`{"jsonrpc":"2.0","method":"notifications/tasks","params":` + seedTask + `}`,
		`{"jsonrpc":"2.0","id":null,"method":"x"}`,
	}, DecodeRequest, func(r *jsonrpcRequest) ([]byte, error) {
		var params any
		if r.Params != nil {
			params = r.Params
		}
		return EncodeRequest(r.ID, r.Method, params)
	}, DecodeRequest)
}

func FuzzDecodeResponse(f *testing.F) {
	fuzzRoundTrip(f, []string{
		`{"jsonrpc":"2.0","id":"b-1","result":{"resultType":"task","taskId":"U"}}`,
		`{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m","data":{"requiredCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}`,
	}, DecodeResponse, func(r *jsonrpcResponse) ([]byte, error) {
		if r.Error != nil {
			return EncodeError(r.ID, rpc.As(r.Error))
		}
		return EncodeResult(r.ID, r.Result)
	}, DecodeResponse)
}

func FuzzDecodeRequestMeta(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"name":"x","_meta":` + seedMeta + `}`, `{"_meta":{"progressToken":"p"}}`},
		DecodeRequestMeta, marshalOf[RequestMeta], DecodeRequestMetaObject)
}

func FuzzStampRequestMeta(f *testing.F) {
	meta := NewRequestMeta(TasksCapabilities(), &Implementation{Name: "bridge", Version: "1"})
	for _, s := range []string{`{"name":"x","arguments":{"a":"<&>"}}`, `{"_meta":{"progressToken":3}}`, `{"_meta":5}`, `null`, `[]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := StampRequestMeta(data, meta)
		if err != nil {
			checkCode(t, err, map[int64]bool{rpc.CodeParseError: true, rpc.CodeInvalidParams: true, rpc.CodeInternalError: true})
			return
		}
		m, err := DecodeRequestMeta(p)
		if err != nil || m.Validate() != nil || !m.TasksDeclared() {
			t.Fatalf("stamped params lack a valid _meta: %v\n%s", err, p)
		}
	})
}

func FuzzDecodeClientCapabilities(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"elicitation":{"form":{},"url":{}},"roots":{},"sampling":{"tools":{}},"experimental":{"x":{}},"extensions":{"io.modelcontextprotocol/tasks":{}},"tasks":{}}`},
		DecodeClientCapabilities, marshalOf[ClientCapabilities], DecodeClientCapabilities)
}

func FuzzDecodeServerCapabilities(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"tools":{"listChanged":true},"prompts":{},"resources":{"subscribe":true},"logging":{},"completions":{},"extensions":{"io.modelcontextprotocol/tasks":{}},"x":1}`},
		DecodeServerCapabilities, marshalOf[ServerCapabilities], DecodeServerCapabilities)
}

func FuzzDecodeImplementation(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"name":"S","version":"1","title":"T","icons":[]}`}, DecodeImplementation, marshalOf[Implementation], DecodeImplementation)
}

func FuzzDecodeDiscoverResult(f *testing.F) {
	fuzzRoundTrip(f, []string{
		`{"resultType":"complete","supportedVersions":["2026-07-28"],"capabilities":{"tools":{},"extensions":{"io.modelcontextprotocol/tasks":{}}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1"},"k":1},"instructions":"i","ttlMs":3600000,"cacheScope":"public"}`,
		`{"supportedVersions":["2026-07-28"],"serverInfo":{"name":"Old","version":"0"},"ttlMs":0,"cacheScope":"private"}`,
	}, DecodeDiscoverResult, marshalOf[DiscoverResult], DecodeDiscoverResult)
}

func FuzzClassifyResult(f *testing.F) {
	for _, s := range []string{`{}`, `{"resultType":"task"}`, `{"resultType":"input_required"}`, `{"resultType":7}`, `x`} {
		f.Add([]byte(s), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, tasks bool) {
		rt, err := ClassifyResult(data, tasks)
		if err != nil {
			checkCode(t, err, decodeCodes)
			return
		}
		if rt != ResultComplete && rt != ResultInputRequired && (rt != ResultTask || !tasks) {
			t.Fatalf("ClassifyResult returned %q (tasks=%v)", rt, tasks)
		}
		for _, m := range []string{MethodToolsCall, MethodToolsList} {
			if _, err := ClassifyResultFor(m, data, tasks); err != nil {
				checkCode(t, err, decodeCodes)
			}
		}
	})
}

func FuzzDecodeTask(f *testing.F) {
	fuzzRoundTrip(f, []string{seedTask}, DecodeTask, marshalOf[Task], DecodeTask)
}

func FuzzDecodeCreateTaskResult(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"resultType":"task",` + seedTask[1:], `{"resultType":"task","taskId":"a","status":"working","_meta":{"k":"v"}}`},
		DecodeCreateTaskResult, marshalOf[CreateTaskResult], DecodeCreateTaskResult)
}

func FuzzDecodeDetailedTask(f *testing.F) {
	fuzzRoundTrip(f, []string{seedTask, seedInputReq, seedCompleted, seedFailed}, DecodeDetailedTask, marshalOf[DetailedTask], DecodeDetailedTask)
}

func FuzzDecodeGetTaskResult(f *testing.F) {
	var seeds []string
	for _, s := range []string{seedTask, seedInputReq, seedCompleted, seedFailed} {
		seeds = append(seeds, `{"resultType":"complete",`+s[1:], `{"resultType":"task",`+s[1:])
	}
	fuzzRoundTrip(f, seeds, DecodeGetTaskResult, marshalOf[GetTaskResult], DecodeGetTaskResult)
}

func FuzzDecodeGetTaskParams(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"taskId":"a","_meta":` + seedMeta + `}`, `{"taskId":"a","task":{}}`}, DecodeGetTaskParams, marshalOf[GetTaskParams], DecodeGetTaskParams)
}

func FuzzDecodeCancelTaskParams(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"taskId":"a"}`}, DecodeCancelTaskParams, marshalOf[CancelTaskParams], DecodeCancelTaskParams)
}

func FuzzDecodeUpdateTaskParams(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"taskId":"a","inputResponses":{"name":{"action":"accept","content":{"name":"Luca"}}},"_meta":` + seedMeta + `}`},
		DecodeUpdateTaskParams, marshalOf[UpdateTaskParams], DecodeUpdateTaskParams)
}

func FuzzDecodeEmptyResult(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"resultType":"complete"}`, `{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"S","version":"1"}}}`},
		DecodeEmptyResult, marshalOf[EmptyResult], DecodeEmptyResult)
}

func FuzzDecodeInputRequests(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"a":{"method":"sampling/createMessage","params":{"messages":[],"maxTokens":1}},"b":{"method":"roots/list"}}`},
		DecodeInputRequests, marshalOf[InputRequests], DecodeInputRequests)
}

func FuzzDecodeInputResponses(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"a":{"action":"accept"},"b":{"roots":[]},"c":{"role":"assistant","content":{"type":"text","text":"x"},"model":"m"}}`},
		DecodeInputResponses, marshalOf[InputResponses], DecodeInputResponses)
}

func FuzzClassifyInputResponse(f *testing.F) {
	for _, s := range []string{`{"action":"accept"}`, `{"role":"user"}`, `{"roots":[]}`, `{}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := ClassifyInputResponse(data)
		if err != nil {
			checkCode(t, err, decodeCodes)
			return
		}
		if k != InputElicitation && k != InputSampling && k != InputRoots {
			t.Fatalf("kind %q without error", k)
		}
		_, _ = ElicitActionOf(data)
	})
}

func FuzzDecodeInputRequiredResult(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"resultType":"input_required","inputRequests":{"r":{"method":"roots/list"}},"requestState":"a\u003cb"}`, `{"resultType":"input_required","requestState":""}`},
		DecodeInputRequiredResult, marshalOf[InputRequiredResult], DecodeInputRequiredResult)
}

func FuzzDecodeInputResponseParams(f *testing.F) {
	for _, s := range []string{`{"name":"x","inputResponses":{"a":{"action":"decline"}},"requestState":"s","_meta":` + seedMeta + `}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := DecodeInputResponseParams(data)
		if err != nil {
			checkCode(t, err, decodeCodes)
			return
		}
		// The retry built from the same values carries them verbatim (M-18).
		out, err := RetryParams(data, p.InputResponses, p.RequestState)
		if err != nil {
			checkCode(t, err, map[int64]bool{rpc.CodeInternalError: true, rpc.CodeInvalidParams: true, rpc.CodeParseError: true})
			return
		}
		q, err := DecodeInputResponseParams(out)
		if err != nil {
			t.Fatalf("retry params do not decode: %v\n%s", err, out)
		}
		if !bytes.Equal(q.RequestState, p.RequestState) {
			t.Fatalf("requestState changed: %s -> %s", p.RequestState, q.RequestState)
		}
	})
}

func FuzzDecodeSubscriptionFilter(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"taskIds":["a"],"toolsListChanged":true}`, `{"taskIds":[]}`}, DecodeSubscriptionFilter, marshalOf[SubscriptionFilter], DecodeSubscriptionFilter)
}

func FuzzDecodeListenParams(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"notifications":{"taskIds":["t1"],"resourceSubscriptions":["file:///a"]},"_meta":` + seedMeta + `}`},
		DecodeListenParams, marshalOf[ListenParams], DecodeListenParams)
}

func FuzzDecodeAcknowledgedParams(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"notifications":{"taskIds":["t1"]},"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-7"}}`, `{"notifications":{},"_meta":{"io.modelcontextprotocol/subscriptionId":3,"x":1}}`},
		DecodeAcknowledgedParams, marshalOf[AcknowledgedParams], DecodeAcknowledgedParams)
}

func FuzzDecodeListenResult(f *testing.F) {
	fuzzRoundTrip(f, []string{`{"resultType":"complete","_meta":{"io.modelcontextprotocol/subscriptionId":"l"}}`},
		DecodeListenResult, marshalOf[ListenResult], DecodeListenResult)
}

func FuzzDecodeTaskStatusNotificationParams(f *testing.F) {
	var seeds []string
	for _, s := range []string{seedTask, seedInputReq, seedCompleted, seedFailed} {
		seeds = append(seeds, `{"_meta":{"io.modelcontextprotocol/subscriptionId":"listen-7"},`+s[1:])
	}
	fuzzRoundTrip(f, seeds, DecodeTaskStatusNotificationParams, marshalOf[TaskStatusNotificationParams], DecodeTaskStatusNotificationParams)
}

// The header codec: any string survives encode → decode, the encoded form is
// always a plain visible-ASCII field value, and decoding arbitrary input
// either succeeds or yields -32020.
func FuzzHeaderValue(f *testing.F) {
	for _, s := range []string{"us-west1", "Hello, 世界", " padded ", "line1\nline2", "=?base64?literal?=", "=?base64?=", "=?base64?***?=", "", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		enc := EncodeHeaderValue(s)
		for i := 0; i < len(enc); i++ {
			if enc[i] < 0x20 || enc[i] > 0x7e {
				t.Fatalf("encoded value %q has byte %#x", enc, enc[i])
			}
		}
		if enc != "" && (enc[0] == ' ' || enc[len(enc)-1] == ' ') {
			t.Fatalf("encoded value %q has edge whitespace", enc)
		}
		dec, err := DecodeHeaderValue(enc)
		if err != nil || dec != s {
			t.Fatalf("round trip %q -> %q -> %q, %v", s, enc, dec, err)
		}
		if _, err := DecodeHeaderValue(s); err != nil {
			checkCode(t, err, map[int64]bool{rpc.CodeHeaderMismatch: true})
		}
	})
}

// CheckHeaders never panics and answers only with decode codes or -32020;
// the headers RequestHeaders computes always pass — for a request whose body
// carries _meta.protocolVersion (M-01). Without it there is nothing to mirror
// into the required MCP-Protocol-Version header, and a missing required
// header is -32020 (testdata/fuzz/FuzzCheckHeaders keeps that input).
func FuzzCheckHeaders(f *testing.F) {
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"taskId":"T-1",`+metaJSON+`}}`), "2026-07-28", "tasks/get", "T-1")
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"é",`+metaJSON+`}}`), "2026-07-28", "tools/call", "=?base64?w6k=?=")
	f.Add([]byte(`{"jsonrpc":"2.0","method":"x"}`), "", "", "")
	f.Fuzz(func(t *testing.T, body []byte, version, method, name string) {
		h := Header{}
		h.Set(HeaderProtocolVersion, version)
		h.Set(HeaderMethod, method)
		h.Set(HeaderName, name)
		if err := CheckHeaders(h.Get, body); err != nil {
			checkCode(t, err, decodeCodes)
		}
		want, err := RequestHeaders(body)
		if err != nil {
			checkCode(t, err, decodeCodes)
			return
		}
		cerr := CheckHeaders(want.Get, body) // *rpc.Error: compare with nil as such
		if want.Get(HeaderProtocolVersion) == "" {
			if req, derr := DecodeRequest(body); derr == nil && req.IsCall() && (cerr == nil || cerr.Code != rpc.CodeHeaderMismatch) {
				t.Fatalf("call without _meta.protocolVersion: %v, want -32020 (required header missing)", cerr)
			}
			return
		}
		if cerr != nil {
			t.Fatalf("computed headers %v rejected: %v", want, cerr)
		}
	})
}

// FuzzStampPreparedMeta: the prepared stamp equals the full one on any
// params, for every meta of the equivalence table.
func FuzzStampPreparedMeta(f *testing.F) {
	metas := preparedMetas()
	prepared := make([]*PreparedMeta, len(metas))
	for i, m := range metas {
		prepared[i] = PrepareRequestMeta(m)
	}
	for i, s := range preparedParams {
		f.Add([]byte(s), uint8(i))
	}
	f.Fuzz(func(t *testing.T, data []byte, which uint8) {
		i := int(which) % len(metas)
		checkPreparedSame(t, data, metas[i], prepared[i])
	})
}
