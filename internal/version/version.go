// Package version holds the build version printed by both binaries.
package version

// Version is overridden at link time with -ldflags "-X github.com/tasksbridge/tasksbridge/internal/version.Version=v1.2.3".
var Version = "v0.1.0-dev"
