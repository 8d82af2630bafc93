package engine

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
	case "tasks/list": // want `"tasks/list" is used as a JSON-RPC method name` `package example.com/mixed/stable/advert advertises "io.modelcontextprotocol/tasks" for this module, but the task engine here is the 2025-11-25 one`
		return nil
	}
	return nil
}
