package legacy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// goldenCodecs maps the schema $defs name that prefixes a testdata/golden file
// to a decode-and-re-encode of that message.
var goldenCodecs = map[string]func([]byte) (any, error){
	"CreateTaskResult":       func(b []byte) (any, error) { return DecodeCreateTaskResult(b) },
	"GetTaskResult":          func(b []byte) (any, error) { return DecodeGetTaskResult(b) },
	"GetTaskPayloadResult":   func(b []byte) (any, error) { return DecodeGetTaskPayloadResult(b) },
	"ListTasksResult":        func(b []byte) (any, error) { return DecodeListTasksResult(b) },
	"CancelTaskResult":       func(b []byte) (any, error) { return DecodeCancelTaskResult(b) },
	"TaskStatusNotification": func(b []byte) (any, error) { return DecodeTaskStatusNotification(b) },
	"GetTaskRequest":         func(b []byte) (any, error) { return DecodeGetTaskRequest(b) },
	"GetTaskPayloadRequest":  func(b []byte) (any, error) { return DecodeGetTaskPayloadRequest(b) },
	"ListTasksRequest":       func(b []byte) (any, error) { return DecodeListTasksRequest(b) },
	"CancelTaskRequest":      func(b []byte) (any, error) { return DecodeCancelTaskRequest(b) },
	// Capabilities: only "tasks" is modelled; re-encode it into the raw object.
	"ServerCapabilities": func(b []byte) (any, error) {
		c, err := ServerTasksFrom(b)
		if err != nil {
			return nil, err
		}
		return PatchServerTasks(b, c)
	},
	"ClientCapabilities": func(b []byte) (any, error) {
		c, err := ClientTasksFrom(b)
		if err != nil {
			return nil, err
		}
		return PatchClientTasks(b, c)
	},
}

// TestGoldenExamples decodes the 2025-11-25 spec's example messages (the
// section in the file name), checks them against the official schema, and
// requires the re-encoding to be the same JSON value.
func TestGoldenExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		def, _, _ := strings.Cut(filepath.Base(file), ".")
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			codec, ok := goldenCodecs[def]
			if !ok {
				t.Fatalf("no codec for %s", def)
			}
			check(t, def, in)
			v, err := codec(in)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			out, err := json.Marshal(v)
			if err != nil {
				t.Fatalf("encode: %v", err)
			}
			check(t, def, out)
			jsonEq(t, out, in)
		})
	}
}
