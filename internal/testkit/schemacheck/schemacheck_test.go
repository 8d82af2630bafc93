package schemacheck

import (
	"strings"
	"testing"
)

func TestValidateAcceptsAndRejects(t *testing.T) {
	v := Load(t)
	good := []byte(`{"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttl":null}}`)
	if err := v.Validate(Legacy, "CreateTaskResult", good); err != nil {
		t.Fatalf("valid legacy CreateTaskResult rejected: %v", err)
	}
	// ttl is required (nullable) in every legacy Task.
	bad := []byte(`{"task":{"taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z"}}`)
	if err := v.Validate(Legacy, "CreateTaskResult", bad); err == nil {
		t.Fatal("legacy CreateTaskResult without ttl accepted")
	}
	flat := []byte(`{"resultType":"task","taskId":"t1","status":"working","createdAt":"2025-11-25T10:30:00Z","lastUpdatedAt":"2025-11-25T10:30:00Z","ttlMs":60000}`)
	if err := v.Validate(Ext, "CreateTaskResult", flat); err != nil {
		t.Fatalf("valid modern CreateTaskResult rejected: %v", err)
	}
	if err := v.Validate(Ext, "CreateTaskResult", good); err == nil {
		t.Fatal("nested legacy shape accepted as modern CreateTaskResult")
	}
}

func TestMissingDirNamesSources(t *testing.T) {
	_, err := New(t.TempDir())
	if err == nil {
		t.Fatal("New on an empty directory succeeded")
	}
	for _, want := range []string{"github.com/modelcontextprotocol/modelcontextprotocol", "github.com/modelcontextprotocol/ext-tasks", EnvDir} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %q", err, want)
		}
	}
}
