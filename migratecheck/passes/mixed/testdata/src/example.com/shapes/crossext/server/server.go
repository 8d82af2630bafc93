// Package server enables the legacy capability while the extension is
// advertised by a helper package of the same module (MCP014 across
// packages).
package server

import "example.com/shapes/crossext/advert"

func capabilities() map[string]any {
	return map[string]any{
		"extensions": advert.Extensions(),
		"tasks":      map[string]any{"list": map[string]any{}, "cancel": map[string]any{}}, // want `^MCP014: package example\.com/shapes/crossext/advert advertises`
	}
}
