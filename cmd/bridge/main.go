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
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

var commands []*cli.Command

// register adds a subcommand to the bridge CLI.
func register(c *cli.Command) { commands = append(commands, c) }

func newApp() *cli.App {
	// Shallow copies: urfave/cli fills in fields of a command (HelpName, its
	// help flag) when an app runs, and an app per run (tests build many)
	// must not see what an earlier run wrote.
	cmds := make([]*cli.Command, 0, len(commands)+1)
	for _, c := range commands {
		cp := *c
		cmds = append(cmds, &cp)
	}
	sort.Slice(cmds, func(i, j int) bool { return cmds[i].Name < cmds[j].Name })
	return &cli.App{
		Name:    "bridge",
		Usage:   "translate MCP tasks between the 2025-11-25 (legacy) and 2026-07-28 (modern) eras",
		Version: version.String(),
		Description: "bridge sits between MCP clients and servers of either era. Legacy clients keep using\n" +
			"tasks/result and tasks/list against a modern server; modern clients can reach a legacy server.",
		Commands: append(cmds, helpCommand()),
		// urfave/cli's own help command is hidden: it is one global value
		// that each run attaches to itself as a subcommand, which makes the
		// command tree cyclic (and App.ToFishCompletion recurse forever)
		// once it has run in a process. helpCommand replaces it; because
		// an app with a command named help gets no --help flag of its own
		// from urfave/cli, the flag is added here.
		HideHelpCommand: true,
		Flags:           []cli.Flag{cli.HelpFlag},
		// EnableBashCompletion answers --generate-bash-completion, the
		// protocol of the scripts `bridge completion` prints.
		EnableBashCompletion: true,
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

// helpCommand is `bridge help [COMMAND [SUBCOMMAND...]]`: the same text as
// `bridge COMMAND --help`.
func helpCommand() *cli.Command {
	return &cli.Command{
		Name:            "help",
		Aliases:         []string{"h"},
		Usage:           "show the commands, or a command's help (the same as COMMAND --help)",
		ArgsUsage:       "[command [subcommand]]",
		HideHelpCommand: true, // no `bridge help help`; `bridge help --help` shows the app help
		Action: func(c *cli.Context) error {
			args := c.Args().Slice()
			if len(args) == 0 {
				return cli.ShowAppHelp(c)
			}
			cmds := c.App.Commands
			var cmd *cli.Command
			for i, name := range args {
				cmd = nil
				for _, sc := range cmds {
					if sc.HasName(name) && sc.Name != "help" {
						cmd = sc
					}
				}
				if cmd == nil {
					return cli.Exit(fmt.Sprintf("no help topic for %q: `bridge help` lists the commands", strings.Join(args[:i+1], " ")), 3)
				}
				cmds = cmd.Subcommands
			}
			// The very path of `bridge COMMAND --help`, so the two cannot differ.
			return c.App.RunContext(c.Context, append(append([]string{c.App.Name}, args...), "--help"))
		},
	}
}
