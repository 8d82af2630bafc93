package rollout

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strconv"
	"text/tabwriter"
	"time"
)

// WriteText prints the report as a table and the verdict line:
//
//	source: http://127.0.0.1:8080/metrics (since the bridge started, 1 replica)
//
//	CLIENT       VERSION  ERA     REQUESTS  LEGACY SHARE  LAST SEEN
//	claude-code  1.2.0    legacy  5         80%           2026-05-28T20:27:40Z
//
//	1 client still uses legacy tasks (67% of task traffic)
func WriteText(w io.Writer, r Report) error {
	replicas := "replicas"
	if r.Replicas == 1 {
		replicas = "replica"
	}
	window := r.Window
	if window != SinceStart {
		window = "window " + window
	}
	fmt.Fprintf(w, "source: %s (%s, %d %s)\n\n", r.Source, window, r.Replicas, replicas)
	if len(r.Clients) == 0 {
		fmt.Fprintln(w, "no clients seen")
	} else {
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "CLIENT\tVERSION\tERA\tREQUESTS\tLEGACY SHARE\tLAST SEEN")
		for _, c := range r.Clients {
			version, lastSeen, share := c.Version, "-", "-"
			if version == "" {
				version = "-"
			}
			if !c.LastSeen.IsZero() {
				lastSeen = c.LastSeen.UTC().Format(time.RFC3339)
			}
			if c.Era == "legacy" || c.LegacyCalls > 0 {
				share = percent(c.LegacyShare)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", c.Client, version, c.Era, count(c.Requests), share, lastSeen)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("write table: %w", err)
		}
	}
	_, err := fmt.Fprintf(w, "\n%s\n", r.Verdict.Line)
	return err
}

// WriteJSON prints the report as one indented JSON object.
func WriteJSON(w io.Writer, r Report) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write JSON: %w", err)
	}
	return nil
}

// count prints a counter (Prometheus increase() extrapolates, so a count
// over a window may be fractional) as a whole number.
func count(v float64) string { return strconv.FormatFloat(math.Round(v), 'f', -1, 64) }
