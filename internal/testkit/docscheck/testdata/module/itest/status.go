//go:build integration

// Package itest is integration-test code behind a build tag; migrate-check
// sees it only with -tags integration (MCP003 here).
package itest

// Notification is a JSON-RPC notification.
type Notification struct {
	JSONRPC string `json:"jsonrpc"`
	Method  string `json:"method"`
}

// StatusChanged is the unsolicited status push of 2025-11-25.
var StatusChanged = Notification{JSONRPC: "2.0", Method: "notifications/tasks/status"}
