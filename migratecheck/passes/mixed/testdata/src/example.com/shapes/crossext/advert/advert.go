// Package advert builds the server's extension advertisement for the
// module; it has no task engine itself.
package advert

// Extensions is what the server declares in server/discover.
func Extensions() map[string]any {
	return map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}
}
