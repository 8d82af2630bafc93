package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

func init() {
	register(&cli.Command{
		Name:  "tasks",
		Usage: "inspect the tasks in the bridge's --data-dir or --store (read-only)",
		Subcommands: []*cli.Command{
			{
				Name:  "list",
				Usage: "list live tasks of every scope, newest first",
				Flags: append(adminFlags(),
					&cli.StringFlag{Name: "session", Usage: "only tasks created in this session"},
					&cli.StringFlag{Name: "status", Usage: "only tasks in this status (" + statusNames() + ")"},
				),
				Action: runTasksList,
			},
			{
				Name:      "show",
				Usage:     "show one task, with its cached result or error",
				ArgsUsage: "ID",
				Flags:     adminFlags(),
				Action:    runTasksShow,
			},
			orphansCommand(),
		},
	})
}

func statusNames() string {
	names := make([]string, len(sessionmap.Statuses))
	for i, s := range sessionmap.Statuses {
		names[i] = string(s)
	}
	return strings.Join(names, ", ")
}

func runTasksList(c *cli.Context) error {
	f := sessionmap.TaskFilter{Session: c.String("session"), Status: sessionmap.Status(c.String("status"))}
	if f.Status != "" && !f.Status.Valid() {
		return fmt.Errorf("--status %q: want one of %s", f.Status, statusNames())
	}
	return withAdminStore(c, func(ctx context.Context, s adminStore) error {
		all, lerr := s.AllTasks(ctx, f)
		w := c.App.Writer
		if c.Bool("json") {
			if all == nil {
				all = []sessionmap.Task{}
			}
			if err := printJSON(w, all); err != nil {
				return err
			}
			return partial(lerr)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tSTATUS\tSESSION\tPRINCIPAL\tDIRECTION\tORIGIN\tTOOL\tCREATED\tUPDATED\tTTL")
		for _, t := range all {
			status := string(t.Status)
			if t.CancelPinned {
				status += " (pinned)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, status, orNone(t.Scope.Session),
				shortPrincipal(t.Scope.Principal), t.Direction, t.Origin, orNone(t.ToolName),
				fmtTime(t.CreatedAt), fmtTime(t.LastUpdatedAt), fmtMs(t.TTLMs, "unlimited"))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		return partial(lerr)
	})
}

func fmtMs(ms *int64, none string) string {
	if ms == nil {
		return none
	}
	return (time.Duration(*ms) * time.Millisecond).String()
}

func runTasksShow(c *cli.Context) error {
	id, err := oneArg(c, "task")
	if err != nil {
		return err
	}
	return withAdminStore(c, func(ctx context.Context, s adminStore) error {
		t, err := s.LookupTask(ctx, id)
		if errors.Is(err, sessionmap.ErrNotFound) {
			return fmt.Errorf("no live task %q in %s", id, storeName(c))
		}
		if err != nil {
			return err
		}
		w := c.App.Writer
		if c.Bool("json") {
			return printJSON(w, t)
		}
		expires := "never"
		if at, ok := t.ExpiresAt(); ok {
			expires = fmtTime(at)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, kv := range [][2]string{
			{"id", t.ID}, {"status", string(t.Status)}, {"status message", orNone(t.StatusMessage)},
			{"cancel pinned", fmt.Sprint(t.CancelPinned)},
			{"principal", orNone(t.Scope.Principal)}, {"session", orNone(t.Scope.Session)},
			{"direction", string(t.Direction)}, {"origin", string(t.Origin)},
			{"upstream", orNone(t.Upstream)}, {"upstream task", orNone(t.UpstreamTaskID)},
			{"upstream session", orNone(t.UpstreamSessionID)},
			{"request", strings.TrimSpace(t.Method + " " + t.ToolName)},
			{"requested ttl", fmtMs(t.RequestedTTLMs, "none")}, {"ttl", fmtMs(t.TTLMs, "unlimited")},
			{"poll interval", fmtMs(t.PollIntervalMs, "-")},
			{"created", fmtTime(t.CreatedAt)}, {"last updated", fmtTime(t.LastUpdatedAt)},
			{"expires", expires}, {"written", fmtTime(t.WrittenAt)},
			{"answered keys", orNone(strings.Join(t.AnsweredKeys, ", "))},
		} {
			fmt.Fprintf(tw, "%s:\t%s\n", kv[0], kv[1])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(t.Result) > 0 {
			fmt.Fprintf(w, "result:\n  %s\n", strings.TrimSpace(prettyJSON(t.Result)))
		}
		if len(t.Error) > 0 {
			fmt.Fprintf(w, "error:\n  %s\n", strings.TrimSpace(prettyJSON(t.Error)))
		}
		return nil
	})
}
