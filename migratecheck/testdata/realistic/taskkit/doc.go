// Package taskkit collects helpers for mcp-go servers that run tools as
// tasks: request accessors, a task router over a pluggable store, and the
// capability declaration for both protocol revisions.
package taskkit
