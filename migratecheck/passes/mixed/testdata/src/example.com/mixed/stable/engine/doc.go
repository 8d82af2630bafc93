// Package engine serves 2025-11-25 task methods from several files while
// package advert advertises the extension. The MCP014 finding must sit at
// the first legacy use by file name and line (a.go, although its use is
// further down its file than the others'), whatever order the loader parsed
// the files in: an audit reports the same position on every run.
package engine

import "example.com/mixed/stable/advert"

var _ = advert.Capabilities
