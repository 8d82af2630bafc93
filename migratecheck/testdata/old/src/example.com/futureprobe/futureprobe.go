// Package futureprobe uses a fork that defines mcp.ResultTypeTask.
package futureprobe

import "example.com/future/mcp-go/server"

var opt = server.WithTaskCapabilities(false, true, true) // want `this mcp-go provides server.WithExtensions.*this mcp-go defines mcp.ResultTypeTask: check whether it now implements the extension`
