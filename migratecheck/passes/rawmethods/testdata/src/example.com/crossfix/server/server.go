// Package server still serves tasks/result with the wire package's Task.
package server // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

import "example.com/crossfix/wire"

func dispatch(method string) any {
	switch method {
	case "tasks/result": // want `^MCP001: "tasks/result" is used as a JSON-RPC method name \(in a method`
		return wire.Task{}
	}
	return nil
}
