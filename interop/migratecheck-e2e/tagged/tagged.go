//go:build integration

// Package tagged holds legacy task calls behind a build tag: they are found
// only with -tags=integration (or GOFLAGS=-tags=integration under go vet).
package tagged

import "github.com/mark3labs/mcp-go/mcp"

// Method is the removed tasks/result method.
var Method = mcp.MethodTasksResult
