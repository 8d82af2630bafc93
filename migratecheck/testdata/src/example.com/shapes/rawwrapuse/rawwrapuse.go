// Package rawwrapuse calls the wrapper of another package: the call site is
// reported (through a fact), pointing at the wrapper.
package rawwrapuse

import "example.com/shapes/rawwrap"

func fetch(c *rawwrap.Client) error {
	return rawwrap.Results(c, "t2") // want `calls rawwrap.Results, which sends "tasks/result" as a JSON-RPC method`
}
