// Package subs is a generic subscription filter for JSON-RPC notification
// names.
package subs

import "strings"

// Filter matches notification methods by prefix.
type Filter struct{ prefixes []string }

// NewFilter returns a filter for the prefixes.
func NewFilter(prefixes ...string) *Filter { return &Filter{prefixes: prefixes} }

// Match reports whether method matches.
func (f *Filter) Match(method string) bool {
	for _, p := range f.prefixes {
		if strings.HasPrefix(method, p) {
			return true
		}
	}
	return false
}
