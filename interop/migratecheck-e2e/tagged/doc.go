// Package tagged is empty without the integration tag.
package tagged
