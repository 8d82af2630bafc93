package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

func init() {
	register(&cli.Command{
		Name:  "version",
		Usage: "print the bridge version",
		Action: func(c *cli.Context) error {
			fmt.Fprintln(c.App.Writer, "bridge", version.Version)
			return nil
		},
	})
}
