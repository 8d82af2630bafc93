// Command bridge translates MCP tasks between the 2025-11-25 experimental
// tasks and the 2026-07-28 io.modelcontextprotocol/tasks extension.
package main

import (
	"fmt"
	"os"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "version" || os.Args[1] == "--version") {
		fmt.Println("bridge", version.Version)
		return
	}
	fmt.Fprintln(os.Stderr, "bridge", version.Version, "- not yet implemented")
	os.Exit(2)
}
