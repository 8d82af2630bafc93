package rpc

import (
	"errors"
	"fmt"
	"testing"
)

func TestCodeOfAndAs(t *testing.T) {
	e := Errorf(CodeInvalidParams, "Task not found: %s", "x")
	wrapped := fmt.Errorf("tasks/get: %w", e)
	if got := CodeOf(wrapped); got != CodeInvalidParams {
		t.Errorf("CodeOf(wrapped) = %d, want %d", got, CodeInvalidParams)
	}
	if got := As(wrapped); got != e {
		t.Errorf("As(wrapped) = %v, want the wrapped *Error", got)
	}
	plain := errors.New("disk full")
	if got := CodeOf(plain); got != CodeInternalError {
		t.Errorf("CodeOf(plain) = %d, want %d", got, CodeInternalError)
	}
	if got := As(plain); got.Code != CodeInternalError || got.Message != "disk full" {
		t.Errorf("As(plain) = %+v", got)
	}
	if As(nil) != nil {
		t.Error("As(nil) != nil")
	}
}

func TestWithData(t *testing.T) {
	e := WithData(CodeMissingRequiredClientCapability, "Missing required client capability",
		map[string]any{"requiredCapabilities": map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}})
	if string(e.Data) != `{"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}` {
		t.Errorf("data = %s", e.Data)
	}
	// Unencodable data is dropped rather than producing invalid JSON.
	if e := WithData(CodeInternalError, "x", func() {}); e.Data != nil {
		t.Errorf("unencodable data kept: %s", e.Data)
	}
}
