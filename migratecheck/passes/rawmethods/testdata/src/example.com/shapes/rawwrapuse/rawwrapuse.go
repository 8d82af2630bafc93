// Package rawwrapuse calls the wrapper of another package: the call site is
// reported (through a fact), pointing at the wrapper.
package rawwrapuse // want `^note: the package still talks to 2025-11-25 peers \(it calls`

import "example.com/shapes/rawwrap"

func fetch(c *rawwrap.Client) error {
	return rawwrap.Results(c, "t2") // want `^MCP001: calls rawwrap\.Results, which sends "tasks/result" as a JSON-RPC`
}
