// Package sessionmap is the bridge's durable index of the sessions and tasks
// it hands out, scoped by principal and session.
package sessionmap
