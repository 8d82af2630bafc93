package main

// Method names shared by the commands and the watcher.
const (
	methodGet    = "tasks/get"
	methodCancel = "tasks/cancel"
	statusPush   = "notifications/tasks/status" // want MCP003
)
