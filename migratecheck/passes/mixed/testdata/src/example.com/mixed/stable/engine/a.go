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
	case "tasks/list": // want `^MCP014: package example\.com/mixed/stable/advert advertises`
		return nil
	}
	return nil
}
