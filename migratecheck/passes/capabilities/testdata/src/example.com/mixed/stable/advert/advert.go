// Package advert advertises the tasks extension for its module; the legacy
// engine lives in package engine, which imports it (MCP014 across packages).
package advert

func Capabilities() map[string]any {
	return map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}} // want `^note: advertises the extension`
}
