// Package engine is a legacy task dispatcher; it advertises nothing.
package engine

// Dispatch serves the legacy blocking result method.
func Dispatch(method string) any {
	switch method {
	case "tasks/result": // want `"tasks/result" is used as a JSON-RPC method name \(in a method switch\)`
		return struct{}{}
	}
	return nil
}
