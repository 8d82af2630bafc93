package engine // want `^note: the package still serves 2025-11-25 peers \(it dispatches`

// Padding: the legacy use of this file is further down than the others'.
//
//
//
//
//
//
//
//
//
//
//
//
//
//
//
//
//
//
//

func servea(method string) any {
	switch method {
	case "tasks/list": // want `^MCP002: "tasks/list" is used as a JSON-RPC method name \(in a method`
		return nil
	}
	return nil
}
