// Command migrate-check finds uses of the removed MCP 2025-11-25 experimental
// task APIs in Go code and explains or applies the rewrite.
package main

import (
	"fmt"
	"os"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

func main() {
	if len(os.Args) > 1 && (os.Args[1] == "version" || os.Args[1] == "-version" || os.Args[1] == "--version") {
		fmt.Println("migrate-check", version.Version)
		return
	}
	fmt.Fprintln(os.Stderr, "migrate-check", version.Version, "- not yet implemented")
	os.Exit(1)
}
