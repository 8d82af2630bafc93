package main

import (
	"fmt"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// `bridge store verify` checks the data directory's files against their
// checksums. It only reads files, so it also runs next to a bridge that has
// the store open. Exit 0: clean; 1: damaged; 2: no store or not readable.

func init() {
	register(&cli.Command{
		Name:  "store",
		Usage: "check the bridge's data directory",
		Subcommands: []*cli.Command{
			{
				Name:  "verify",
				Usage: "check every file of the store against its checksums (exit 0 clean, 1 damaged, 2 cannot check)",
				Description: "Reads the store's manifest and every table file it lists and checks each block\n" +
					"against the checksum written with it, and every entry of every value log (*.vlog,\n" +
					"where values of 1 MiB or more live) against its own checksum: the same check\n" +
					"`bridge serve` makes before it opens the store. It opens nothing for writing, so it\n" +
					"may run while the bridge runs. For what to do with a damaged store, see\n" +
					"docs/MIGRATION.md (troubleshooting).",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "data-dir", Value: defaultDataDir, EnvVars: []string{"TASKSBRIDGE_DATA_DIR"},
						Usage: "the bridge's data directory"},
					&cli.BoolFlag{Name: "json", Usage: "print JSON instead of text"},
				},
				Action: runStoreVerify,
			},
		},
	})
}

func runStoreVerify(c *cli.Context) error {
	rep, err := sessionmap.Verify(c.String("data-dir"))
	if err != nil {
		return cli.Exit(fmt.Sprintf("store verify: %v", err), 2)
	}
	w := c.App.Writer
	if c.Bool("json") {
		if err := printJSON(w, rep); err != nil {
			return err
		}
	} else if len(rep.Damaged) == 0 {
		fmt.Fprintf(w, "store in %s: %d table files and %d value logs checked, no damage found\n", rep.Dir, rep.Tables, rep.ValueLogs)
	} else {
		fmt.Fprintf(w, "store in %s is DAMAGED (%d of the %d table files and %d value logs checked are bad):\n",
			rep.Dir, len(rep.Damaged), rep.Tables, rep.ValueLogs)
		for _, d := range rep.Damaged {
			fmt.Fprintf(w, "  %s %s\n", d.File, d.Problem)
		}
		fmt.Fprintln(w, "The bridge refuses to start from this store, and `bridge tasks|sessions list` refuse to read it.\n"+
			"To recover, see docs/MIGRATION.md (troubleshooting): restore the directory from a backup,\n"+
			"or move it aside and start with an empty one.")
	}
	if len(rep.Damaged) > 0 {
		// The report is on stdout already; the exit code is the gate.
		return cli.Exit("store verify: the store is damaged", 1)
	}
	return nil
}
