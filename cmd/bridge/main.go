// Command bridge translates MCP tasks between the 2025-11-25 experimental
// tasks and the 2026-07-28 io.modelcontextprotocol/tasks extension.
//
// main.go only builds the CLI; each subcommand lives in its own file and
// registers itself with register() from an init function.
package main

import (
	"fmt"
	"os"
	"sort"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

var commands []*cli.Command

// register adds a subcommand to the bridge CLI.
func register(c *cli.Command) { commands = append(commands, c) }

func newApp() *cli.App {
	cmds := append([]*cli.Command(nil), commands...)
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return &cli.App{
		Name:    "bridge",
		Usage:   "translate MCP tasks between the 2025-11-25 (legacy) and 2026-07-28 (modern) eras",
		Version: version.Version,
		Description: "bridge sits between MCP clients and servers of either era. Legacy clients keep using\n" +
			"tasks/result and tasks/list against a modern server; modern clients can reach a legacy server.",
		Commands:        cmds,
		HideHelpCommand: true,
	}
}

func main() {
	if err := newApp().Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "bridge:", err)
		if ec, ok := err.(cli.ExitCoder); ok {
			os.Exit(ec.ExitCode())
		}
		os.Exit(1)
	}
}
