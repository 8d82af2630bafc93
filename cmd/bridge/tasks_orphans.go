package main

import (
	"context"
	"errors"
	"fmt"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// `bridge tasks orphans` reads the create intents the legacy face writes
// before a task-creating tools/call goes upstream (sessionmap.Intent). An
// intent whose task record exists was delivered (the record settles it);
// one without a record, older than --older-than, is a task the upstream may
// be running for nobody (the bridge lost the upstream's answer: a reset, a
// 5xx, a kill, a stop past --shutdown-timeout). Intents that carry an
// upstream task id are tasks the upstream created but no client got; the
// bridge cancelled them and says whether the upstream took the cancel.

const orphansDescription = `Lists the tasks an upstream may be running that no client will ever follow:

  candidate      the bridge sent a task-creating tools/call upstream and never got
                 the answer (a reset or 5xx after the upstream created the task, the
                 bridge killed, a stop past --shutdown-timeout); the upstream task id
                 is unknown, so the bridge could not cancel it: look for a task of
                 that tool, started at that time, on the upstream, and cancel it there
  cancelled      the upstream answered with its task id but the bridge could not hand
                 the task to a client (its record could not be written); the bridge
                 cancelled it upstream, nothing is left running
  cancel-failed  as cancelled, but the upstream did not take the cancel: the task may
                 still run there (its upstream id is shown)

Records are kept for 7 days. Read-only, like 'bridge tasks list'.

Exit codes: 0 nothing may be left running upstream (cancelled entries may be listed);
1 at least one candidate or cancel-failed entry is listed; 2 the store could not be
read, or a flag is wrong.`

func orphansCommand() *cli.Command {
	return &cli.Command{
		Name:        "orphans",
		Usage:       "list tasks left running upstream that no client got (lost answers, undelivered creates)",
		Description: orphansDescription,
		Flags: append(adminFlags(),
			&cli.DurationFlag{Name: "older-than", Value: 5 * time.Minute,
				Usage: "only list unanswered creates sent at least this long ago (a younger one may still be under way)"},
		),
		Action: runTasksOrphans,
	}
}

// orphan is one line of the report (its JSON form too).
type orphan struct {
	Kind           string    `json:"kind"`
	ID             string    `json:"id"`
	Principal      string    `json:"principal,omitempty"`
	Session        string    `json:"session,omitempty"`
	Tool           string    `json:"tool,omitempty"`
	RequestID      string    `json:"requestId,omitempty"`
	Upstream       string    `json:"upstream,omitempty"`
	UpstreamTaskID string    `json:"upstreamTaskId,omitempty"`
	CreatedAt      time.Time `json:"createdAt"`
}

const orphanCandidate = "candidate"

func runTasksOrphans(c *cli.Context) error {
	olderThan := c.Duration("older-than")
	if olderThan < 0 {
		return cli.Exit(fmt.Sprintf("--older-than %s: want a duration of zero or more, like 5m", olderThan), 2)
	}
	var found []orphan
	err := withAdminStore(c, func(ctx context.Context, s adminStore) error {
		is, ok := s.(sessionmap.IntentStore)
		if !ok {
			return fmt.Errorf("the store in %s keeps no create intents", storeName(c))
		}
		all, lerr := is.AllIntents(ctx)
		if all == nil && lerr != nil {
			return lerr
		}
		now := time.Now()
		for _, in := range all {
			o := orphan{ID: in.ID, Principal: in.Scope.Principal, Session: in.Scope.Session, Tool: in.ToolName,
				RequestID: in.RequestID, Upstream: in.Upstream, UpstreamTaskID: in.UpstreamTaskID, CreatedAt: in.CreatedAt}
			switch {
			case in.Outcome != "":
				o.Kind = in.Outcome
			case now.Sub(in.CreatedAt) < olderThan:
				continue // may still be under way
			default:
				// The task record settles the intent (the record of a
				// settled intent goes with the bridge's next intent write,
				// or when it stops).
				_, err := s.LookupTask(ctx, in.ID)
				if err == nil {
					continue
				}
				if !errors.Is(err, sessionmap.ErrNotFound) {
					return err
				}
				o.Kind = orphanCandidate
			}
			found = append(found, o)
		}
		w := c.App.Writer
		if c.Bool("json") {
			if found == nil {
				found = []orphan{}
			}
			if err := printJSON(w, found); err != nil {
				return err
			}
			return partial(lerr)
		}
		if len(found) == 0 {
			fmt.Fprintf(w, "no orphaned upstream tasks in %s (unanswered creates older than %s, undelivered tasks)\n", storeName(c), olderThan)
			return partial(lerr)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tCREATED\tPRINCIPAL\tSESSION\tTOOL\tREQUEST\tUPSTREAM TASK\tUPSTREAM")
		for _, o := range found {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.Kind, fmtTime(o.CreatedAt), shortPrincipal(o.Principal),
				orNone(o.Session), orNone(o.Tool), orNone(o.RequestID), orNone(o.UpstreamTaskID), orNone(o.Upstream))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		return partial(lerr)
	})
	if err != nil {
		return cli.Exit(fmt.Sprintf("tasks orphans: %v", err), 2)
	}
	for _, o := range found {
		if o.Kind != sessionmap.IntentCancelled {
			// The list is on stdout already; the exit code is the gate.
			return cli.Exit("tasks orphans: tasks may be left running upstream", 1)
		}
	}
	return nil
}
