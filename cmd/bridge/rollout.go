package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/ops/rollout"
)

func init() {
	register(&cli.Command{
		Name:  "rollout",
		Usage: "report which clients still use legacy tasks, and whether the bridge can be removed",
		UsageText: "bridge rollout --metrics-url http://BRIDGE/metrics [--metrics-url http://BRIDGE2/metrics ...] [--json]\n" +
			"bridge rollout --prometheus http://PROMETHEUS:9090 [--window 7d] [--json]",
		Description: "Reads the bridge's rollout metrics (docs/METRICS.md): the /metrics of each replica, summed\n" +
			"(counts since each started; repeat --metrics-url or separate the URLs with commas, one per replica),\n" +
			"or a Prometheus server's HTTP API for every scraped replica over --window. Prints a\n" +
			"table per client and a verdict line.\n\n" +
			"Exit codes: 0 no legacy traffic (the bridge can be removed); 4 legacy traffic remains;\n" +
			"1 error (unreachable URL, not a tasksbridge source, bad flags).",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "metrics-url", Usage: "a bridge replica's /metrics URL; repeat it (or separate with commas) for every replica, and the counts are summed",
				EnvVars: []string{"TASKSBRIDGE_METRICS_URL"}},
			&cli.StringFlag{Name: "prometheus", Usage: "Prometheus base URL (its HTTP API is under /api/v1)",
				EnvVars: []string{"TASKSBRIDGE_PROMETHEUS_URL"}},
			&cli.StringFlag{Name: "window", Value: "7d", Usage: "with --prometheus: the range to look back over (Prometheus duration)"},
			&cli.BoolFlag{Name: "json", Usage: "print the report as JSON"},
			&cli.DurationFlag{Name: "timeout", Value: 30 * time.Second, Usage: "HTTP timeout for each request"},
		},
		Action: runRollout,
	})
}

func runRollout(c *cli.Context) error {
	var metricsURLs []string
	for _, u := range c.StringSlice("metrics-url") {
		if u = strings.TrimSpace(u); u != "" {
			metricsURLs = append(metricsURLs, u)
		}
	}
	promURL := c.String("prometheus")
	switch {
	case c.NArg() > 0:
		return fmt.Errorf("rollout: unexpected argument %q", c.Args().First())
	case (len(metricsURLs) == 0) == (promURL == ""):
		// Plain errors: main prints them and exits 1 (a cli.ExitCoder would
		// make urfave/cli call os.Exit inside Run).
		return errors.New("rollout: give exactly one of --metrics-url URL or --prometheus URL")
	case len(metricsURLs) > 0 && c.IsSet("window"):
		return errors.New("rollout: --window applies to --prometheus only (a /metrics page counts since the bridge started)")
	}

	ctx, cancel := context.WithCancel(c.Context)
	defer cancel()
	hc := &http.Client{Timeout: c.Duration("timeout")}
	var (
		d   rollout.Data
		err error
	)
	if len(metricsURLs) > 0 {
		d, err = rollout.FetchAllMetrics(ctx, hc, metricsURLs)
	} else {
		d, err = rollout.QueryPrometheus(ctx, hc, promURL, c.String("window"))
	}
	if err != nil {
		return fmt.Errorf("rollout: %w", err)
	}

	r := rollout.Decide(d)
	if c.Bool("json") {
		err = rollout.WriteJSON(c.App.Writer, r)
	} else {
		err = rollout.WriteText(c.App.Writer, r)
	}
	if err != nil {
		return fmt.Errorf("rollout: %w", err)
	}
	if code := r.Verdict.ExitCode(); code != 0 {
		// The verdict is on stdout already; the exit code is the gate.
		return cli.Exit("rollout: legacy traffic remains", code)
	}
	return nil
}
