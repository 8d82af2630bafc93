package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

func init() {
	register(&cli.Command{
		Name:  "version",
		Usage: "print the bridge's version, VCS revision, dirty flag, build time and Go version",
		Description: "The first line is `bridge VERSION`; the others are `key: value`. --json prints one object\n" +
			"(version, revision, dirty, buildTime, goVersion). The same values are the labels of the\n" +
			"tasksbridge_build_info metric and of the `serving MCP clients` log line.",
		Flags: []cli.Flag{&cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"}},
		Action: func(c *cli.Context) error {
			bi := version.Info()
			if c.Bool("json") {
				return printJSON(c.App.Writer, bi)
			}
			rev, built := bi.Revision, bi.BuildTime
			if rev == "" {
				rev = "unknown"
			}
			if built == "" {
				built = "unknown"
			}
			fmt.Fprintf(c.App.Writer, "bridge %s\nrevision: %s\ndirty: %t\nbuilt: %s\ngo: %s\n", bi.Version, rev, bi.Dirty, built, bi.GoVersion)
			return nil
		},
	})
}
