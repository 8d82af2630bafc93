package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// `bridge sessions` and `bridge tasks` (tasks.go) are the operator's view of
// the durable index in --data-dir, across all scopes. They open the store
// read-only, so they work while the bridge is stopped; they never print a
// credential, only principal hashes (sessionmap package doc).

const defaultDataDir = "./tasksbridge-data"

func adminFlags() []cli.Flag {
	return append([]cli.Flag{
		&cli.StringFlag{Name: "data-dir", Value: defaultDataDir, EnvVars: []string{"TASKSBRIDGE_DATA_DIR"},
			Usage: "the bridge's data directory"},
		&cli.BoolFlag{Name: "json", Usage: "print JSON instead of a table"},
		&cli.BoolFlag{Name: "recover", Usage: "if the bridge crashed, replay its log first " +
			"(opens the store read-write; the bridge must be stopped)"},
	}, storeFlags(false)...)
}

// adminStore is what the admin commands need from a store.
type adminStore interface {
	sessionmap.Admin
	Close() error
}

func openAdminStore(c *cli.Context) (adminStore, error) {
	// Redis: read-only by construction, and a running bridge may share it.
	if rs, err := openRedisStore(c, sessionmap.ReadOnly()); err != nil {
		return nil, err
	} else if rs != nil {
		return rs, nil
	}
	dir := c.String("data-dir")
	opts := []sessionmap.Option{sessionmap.WithGCInterval(0)}
	if !c.Bool("recover") {
		opts = append(opts, sessionmap.ReadOnly())
	}
	s, err := sessionmap.OpenBadger(dir, opts...)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// withAdminStore opens the store, runs fn and closes it.
func withAdminStore(c *cli.Context, fn func(ctx context.Context, s adminStore) error) error {
	s, err := openAdminStore(c)
	if err != nil {
		return err
	}
	ferr := fn(c.Context, s)
	if cerr := s.Close(); cerr != nil && ferr == nil {
		ferr = cerr
	}
	return ferr
}

// partial reports records that could not be decoded after printing the rest.
func partial(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("some records could not be decoded (the others are shown): %w", err)
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// shortPrincipal shows enough of a principal hash to tell principals apart.
func shortPrincipal(p string) string {
	if p == "" {
		return "-"
	}
	if len(p) > 12 {
		return p[:12] + "…"
	}
	return p
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func prettyJSON(raw json.RawMessage) string {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "  ", "  "); err != nil {
		return string(raw)
	}
	return buf.String()
}

func init() {
	register(&cli.Command{
		Name:  "sessions",
		Usage: "inspect the sessions in the bridge's --data-dir or --store (read-only)",
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list live client sessions, newest first",
				Flags:  append(adminFlags(), internalFlag),
				Action: runSessionsList,
			},
			{
				Name:      "show",
				Usage:     "show one session",
				ArgsUsage: "ID",
				Flags:     append(adminFlags(), internalFlag),
				Action:    runSessionsShow,
			},
		},
	})
}

// The bridge keeps records of its own as sessions owned by
// sessionmap.BridgePrincipal (shared upstream sessions, pending input
// requests, the HMAC key of MRTR requestStates; the upstream's era, in
// stores written by older bridges). They are not
// client sessions, so the admin views leave them out unless --internal, and
// never print their payloads: one of them is a secret key.
var internalFlag = &cli.BoolFlag{Name: "internal",
	Usage: "also show the bridge's own internal records (their payloads are never shown)"}

const redactedPayload = `"not shown: an internal record of the bridge"`

func isInternal(x sessionmap.Session) bool { return x.Principal == sessionmap.BridgePrincipal }

// adminSessions keeps the sessions an admin view shows: client sessions, and
// with --internal the bridge's own records, their payloads redacted.
func adminSessions(c *cli.Context, all []sessionmap.Session) []sessionmap.Session {
	out := all[:0]
	for _, x := range all {
		if isInternal(x) {
			if !c.Bool("internal") {
				continue
			}
			x.InitializeParams = json.RawMessage(redactedPayload)
		}
		out = append(out, x)
	}
	return out
}

func runSessionsList(c *cli.Context) error {
	return withAdminStore(c, func(ctx context.Context, s adminStore) error {
		all, lerr := s.AllSessions(ctx)
		all = adminSessions(c, all)
		w := c.App.Writer
		if c.Bool("json") {
			if len(all) == 0 {
				all = []sessionmap.Session{}
			}
			if err := printJSON(w, all); err != nil {
				return err
			}
			return partial(lerr)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "ID\tPRINCIPAL\tERA\tPROTOCOL\tLOG LEVEL\tCREATED\tLAST SEEN\tEXPIRES")
		for _, x := range all {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", x.ID, shortPrincipal(x.Principal), x.Era,
				orNone(x.ProtocolVersion), orNone(x.LogLevel), fmtTime(x.CreatedAt), fmtTime(x.LastSeenAt), fmtTime(x.ExpiresAt))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		return partial(lerr)
	})
}

// oneArg returns the single ID argument. urfave/cli v2 stops reading flags
// at the first argument, so flags typed after the ID arrive as arguments.
func oneArg(c *cli.Context, what string) (string, error) {
	if c.NArg() == 1 {
		return c.Args().First(), nil
	}
	for _, a := range c.Args().Slice() {
		if strings.HasPrefix(a, "-") {
			return "", fmt.Errorf("%s: put flags before the %s ID: %s [--data-dir DIR] [--json] ID",
				c.Command.HelpName, what, c.Command.HelpName)
		}
	}
	return "", fmt.Errorf("%s: want exactly one %s ID", c.Command.HelpName, what)
}

func runSessionsShow(c *cli.Context) error {
	id, err := oneArg(c, "session")
	if err != nil {
		return err
	}
	return withAdminStore(c, func(ctx context.Context, s adminStore) error {
		x, err := s.LookupSession(ctx, id)
		if errors.Is(err, sessionmap.ErrNotFound) {
			return fmt.Errorf("no live session %q in %s", id, storeName(c))
		}
		if err != nil {
			return err
		}
		if isInternal(x) && !c.Bool("internal") {
			return fmt.Errorf("%q is an internal record of the bridge, not a client session (add --internal to show it)", id)
		}
		if isInternal(x) {
			x.InitializeParams = json.RawMessage(redactedPayload)
		}
		w := c.App.Writer
		if c.Bool("json") {
			return printJSON(w, x)
		}
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, kv := range [][2]string{
			{"id", x.ID}, {"principal", orNone(x.Principal)}, {"era", string(x.Era)},
			{"protocol version", orNone(x.ProtocolVersion)}, {"log level", orNone(x.LogLevel)},
			{"created", fmtTime(x.CreatedAt)}, {"last seen", fmtTime(x.LastSeenAt)},
			{"idle timeout", idleTimeout(x.IdleTimeoutMs)}, {"expires", fmtTime(x.ExpiresAt)},
		} {
			fmt.Fprintf(tw, "%s:\t%s\n", kv[0], kv[1])
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		if len(x.InitializeParams) > 0 {
			fmt.Fprintf(w, "initialize params:\n  %s\n", strings.TrimSpace(prettyJSON(x.InitializeParams)))
		}
		return nil
	})
}

func idleTimeout(ms int64) string {
	if ms <= 0 {
		return "none"
	}
	return (time.Duration(ms) * time.Millisecond).String()
}
