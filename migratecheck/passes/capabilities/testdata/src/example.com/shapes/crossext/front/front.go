// Package front advertises the extension while the module's task engine
// (example.com/shapes/crossext/engine) is the legacy one.
package front

import "example.com/shapes/crossext/engine"

func discover() map[string]any {
	return map[string]any{"capabilities": map[string]any{"extensions": map[string]any{
		"io.modelcontextprotocol/tasks": map[string]any{}, // want `^note: advertises the extension`
	}}}
}

func serve(method string) any { return engine.Dispatch(method) }
