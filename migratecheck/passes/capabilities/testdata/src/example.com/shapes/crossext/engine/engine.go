// Package engine is a legacy task dispatcher; it advertises nothing.
package engine

// Dispatch serves the legacy blocking result method.
func Dispatch(method string) any {
	switch method {
	case "tasks/result":
		return struct{}{}
	}
	return nil
}
