// Package e2e is a fixture module for the migrate-check end-to-end test
// (cmd/migrate-check). It depends on the real github.com/mark3labs/mcp-go
// v1.2.1, which still ships the legacy 2025-11-25 tasks API, and is a separate
// module so that dependency never reaches the tasksbridge go.mod.
//
//   - clean:  mcp-go code with no legacy task use (exit 0)
//   - legacy: server and client code on the legacy tasks API (exit 3)
//   - broken: a type error (exit 1)
//   - tagged: legacy use behind //go:build integration (found only with -tags)
//   - rawfix: a hand-written task struct whose json tags -fix-tags renames
//   - wrap, usewrap: legacy API re-exported by one package and used by another (facts)
//   - suppressed: suppression directives, one of them unused
package e2e
