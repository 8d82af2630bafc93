package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/urfave/cli/v2"
	"gopkg.in/yaml.v3"

	"github.com/tasksbridge/tasksbridge/era"
	legacyface "github.com/tasksbridge/tasksbridge/face/legacy"
	"github.com/tasksbridge/tasksbridge/internal/edge"
	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// The config file of `bridge serve` (--config, TASKSBRIDGE_CONFIG) is YAML
// whose keys are the long flag names: `upstream: URL`, `max-sessions: 100`,
// `allowed-origin: [a, b]`, durations as Go durations (`30s`). A flag on the
// command line beats its environment variable, which beats the file, which
// beats the default. File values go through the flag's own parser, so a
// value the flag refuses is refused in the file too, with the file's name,
// the line and the key; so is a key no flag has (with the nearest flag name).
// Secrets follow their flags' rules: passwords are read from the files the
// *-file keys name, never printed; a password inside --store's URL is
// redacted whenever the value is shown.

// configMetaKey is where loadConfigFile keeps its configState in
// cli.App.Metadata, for the command's action.
const configMetaKey = "tasksbridge.config"

var configFlag = &cli.StringFlag{Name: "config", EnvVars: []string{"TASKSBRIDGE_CONFIG"},
	Usage: "read settings from the YAML file `PATH` (keys are the long flag names, e.g. `max-sessions: 100`); " +
		"flags and environment variables beat it; SIGHUP re-reads it (docs/MIGRATION.md, Configuration file)"}

// liveKeys are the keys SIGHUP applies to a running bridge; every other key
// needs a restart (reload.go). TLS certificate files are re-read on SIGHUP
// by the reload hooks whatever the file says.
var liveKeys = map[string]bool{
	"log-level": true, "max-sessions": true, "max-sessions-per-principal": true, "max-tasks-per-principal": true, "max-waiters-per-principal": true,
	"max-body-bytes": true, "allowed-host": true, "allowed-origin": true, "trusted-proxy": true,
}

// referenceDefaults replace defaults that depend on the machine in the
// generated reference (docs/MIGRATION.md), so that it is the same everywhere.
var referenceDefaults = map[string]string{
	"max-sessions":               fmt.Sprintf("%d per CPU", legacyface.DefaultMaxSessionsPerCPU),
	"max-sessions-per-principal": fmt.Sprintf("a tenth of `max-sessions`, at least %d", legacyface.DefaultSessionShareFloor),
}

// Sources of a setting, in increasing precedence.
const (
	srcDefault = "default"
	srcFile    = "file"
	srcEnv     = "env"
	srcFlag    = "flag"
)

// origin says where a setting's value comes from.
type origin struct {
	src  string // srcDefault, srcFile, srcEnv or srcFlag
	env  string // the variable, for srcEnv
	line int    // for srcFile
}

// configState is what loadConfigFile learnt: the file, and where each key's
// value comes from.
type configState struct {
	path    string
	flags   []cli.Flag
	origins map[string]origin
}

// configError is a refused config file setting: "FILE:LINE: KEY: REASON".
type configError struct {
	path   string
	line   int
	key    string
	reason string
}

func (e *configError) Error() string {
	if e.key == "" {
		return fmt.Sprintf("%s:%d: %s", e.path, e.line, e.reason)
	}
	return fmt.Sprintf("%s:%d: %s: %s", e.path, e.line, e.key, e.reason)
}

// fileSetting is one key of a config file.
type fileSetting struct {
	key    string
	line   int
	values []string // one for a scalar; a list's items
}

// registerConfig gives serve --config (read in its Before hook, before any
// flag value is used) and adds `bridge config`, whose subcommands take the
// same flags as serve.
func registerConfig(serve *cli.Command) {
	serve.Flags = append(serve.Flags, configFlag)
	flags := serve.Flags
	before := func(c *cli.Context) error { return loadConfigFile(c, flags, true) }
	serve.Before = before
	register(&cli.Command{
		Name:  "config",
		Usage: "check or print the configuration of bridge serve (flags, environment and --config file)",
		Description: "bridge serve reads its settings from flags, environment variables and a YAML config file\n" +
			"(--config PATH or TASKSBRIDGE_CONFIG), in that order of precedence. These commands take the same\n" +
			"flags as bridge serve.",
		Subcommands: []*cli.Command{
			{
				Name:      "check",
				Usage:     "check the configuration bridge serve would run with: exit 0 when valid, 1 with FILE:LINE: KEY: REASON",
				UsageText: "bridge config check [--config PATH] [serve flags]",
				Flags:     flags,
				// Values are checked in the action, all of them, not just
				// up to the first refused.
				Before: func(c *cli.Context) error { return loadConfigFile(c, flags, false) },
				Action: func(c *cli.Context) error { return runConfigCheck(c, flags) },
			},
			{
				Name:      "print",
				Usage:     "print the effective configuration (flags > environment > file > defaults) as YAML that --config accepts, each value's source as a comment, secrets redacted",
				UsageText: "bridge config print [--config PATH] [serve flags]",
				Flags:     flags,
				Before:    before,
				Action: func(c *cli.Context) error {
					return printConfig(c.App.Writer, c, c.App.Metadata[configMetaKey].(*configState))
				},
			},
			{
				Name:      "reference",
				Usage:     "print the table of every config file key (docs/MIGRATION.md has it)",
				UsageText: "bridge config reference",
				Action: func(c *cli.Context) error {
					_, err := io.WriteString(c.App.Writer, configReference(flags))
					return err
				},
			},
		},
	})
}

// keyFlags are the flags a config file may name, by name (not --config,
// not --help).
func keyFlags(flags []cli.Flag) map[string]cli.Flag {
	m := map[string]cli.Flag{}
	for _, f := range flags {
		name := f.Names()[0]
		if name == configFlag.Name || name == "help" {
			continue
		}
		m[name] = f
	}
	return m
}

func envVarsOf(f cli.Flag) []string {
	if ef, ok := f.(interface{ GetEnvVars() []string }); ok {
		return ef.GetEnvVars()
	}
	return nil
}

// clearStaleSet forgets HasBeenSet of flags whose environment variable is
// not set: urfave/cli keeps it in the (shared) flag from an earlier run in
// the same process, where c.IsSet would then mistake it for a flag given
// now.
func clearStaleSet(f cli.Flag) {
	for _, ev := range envVarsOf(f) {
		if _, ok := os.LookupEnv(ev); ok {
			return
		}
	}
	switch f := f.(type) {
	case *cli.StringFlag:
		f.HasBeenSet = false
	case *cli.StringSliceFlag:
		f.HasBeenSet = false
	case *cli.IntFlag:
		f.HasBeenSet = false
	case *cli.Int64Flag:
		f.HasBeenSet = false
	case *cli.BoolFlag:
		f.HasBeenSet = false
	case *cli.DurationFlag:
		f.HasBeenSet = false
	case *cli.PathFlag:
		f.HasBeenSet = false
	case *cli.UintFlag:
		f.HasBeenSet = false
	case *cli.Float64Flag:
		f.HasBeenSet = false
	}
}

// originOf is where a flag's value comes from before the file is read.
func originOf(c *cli.Context, f cli.Flag) origin {
	name := f.Names()[0]
	if !c.IsSet(name) {
		return origin{src: srcDefault}
	}
	for _, ev := range envVarsOf(f) {
		if _, ok := os.LookupEnv(ev); !ok {
			continue
		}
		// Set from the environment; a command-line flag given as well wins,
		// which shows as a different value.
		if sc, err := scratchContext([]cli.Flag{f}, true, nil); err == nil && sameValues(valuesOf(sc, f), valuesOf(c, f)) {
			return origin{src: srcEnv, env: ev}
		}
		return origin{src: srcFlag}
	}
	return origin{src: srcFlag}
}

func sameValues(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// loadConfigFile is the Before hook of serve and config: it records where
// each setting comes from and sets the values of the --config file for the
// keys no flag or environment variable set. With check, a value the flag's
// parser takes is also checked as bridge serve would (checkKey).
func loadConfigFile(c *cli.Context, flags []cli.Flag, check bool) error {
	if c.App.Metadata == nil {
		c.App.Metadata = map[string]any{}
	}
	st := &configState{path: c.String(configFlag.Name), flags: flags, origins: map[string]origin{}}
	c.App.Metadata[configMetaKey] = st
	kf := keyFlags(flags)
	for name, f := range kf {
		clearStaleSet(f)
		st.origins[name] = originOf(c, f)
	}
	if st.path == "" {
		return nil
	}
	settings, err := readConfigFile(st.path, kf)
	if err != nil {
		return err
	}
	for _, s := range settings {
		if st.origins[s.key].src != srcDefault {
			continue // flags and the environment beat the file
		}
		if err := setValues(c, kf[s.key], s.values); err != nil {
			return &configError{path: st.path, line: s.line, key: s.key, reason: err.Error()}
		}
		st.origins[s.key] = origin{src: srcFile, line: s.line}
		if !check {
			continue
		}
		if err := checkKey(c, s.key); err != nil {
			return &configError{path: st.path, line: s.line, key: s.key, reason: err.Error()}
		}
	}
	return nil
}

// valueSetter is *cli.Context or *flag.FlagSet.
type valueSetter interface {
	Set(name, value string) error
}

// setValues sets a flag's values through its own parser and turns the
// parser's terse errors into words.
func setValues(c valueSetter, f cli.Flag, values []string) error {
	name := f.Names()[0]
	for _, v := range values {
		if err := c.Set(name, v); err != nil {
			switch f.(type) {
			case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
				return fmt.Errorf("%q is not a whole number", v)
			case *cli.BoolFlag:
				return fmt.Errorf("%q is not true or false", v)
			case *cli.DurationFlag:
				return fmt.Errorf("%q is not a duration (e.g. 30s, 5m, 24h)", v)
			}
			return fmt.Errorf("%q: %v", v, err)
		}
	}
	return nil
}

// readConfigFile reads and decodes a config file: a YAML mapping of known
// keys to a scalar, or for a list flag a scalar or a list of scalars.
func readConfigFile(path string, kf map[string]cli.Flag) ([]fileSetting, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("--config: %w", err)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, yamlError(path, err)
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil // empty file: nothing set
	}
	root := doc.Content[0]
	if root.Kind != yaml.MappingNode {
		return nil, &configError{path: path, line: root.Line, reason: "want a mapping of settings (key: value), e.g. \"upstream: http://127.0.0.1:9000/mcp\""}
	}
	var out []fileSetting
	seen := map[string]int{}
	for i := 0; i+1 < len(root.Content); i += 2 {
		k, v := root.Content[i], root.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			return nil, &configError{path: path, line: k.Line, reason: "a key must be a flag name"}
		}
		key := k.Value
		f, ok := kf[key]
		if !ok {
			reason := "unknown key"
			if key == configFlag.Name {
				reason = "a config file cannot name another one"
			} else if s := nearestKey(key, kf); s != "" {
				reason += fmt.Sprintf(" (did you mean %q?)", s)
			} else {
				reason += " (`bridge config reference` lists the keys)"
			}
			return nil, &configError{path: path, line: k.Line, key: key, reason: reason}
		}
		if prev, dup := seen[key]; dup {
			return nil, &configError{path: path, line: k.Line, key: key, reason: fmt.Sprintf("set twice (first on line %d)", prev)}
		}
		seen[key] = k.Line
		_, isList := f.(*cli.StringSliceFlag)
		s := fileSetting{key: key, line: v.Line}
		switch v.Kind {
		case yaml.ScalarNode:
			if v.Tag == "!!null" {
				return nil, &configError{path: path, line: v.Line, key: key, reason: "no value (give one, or remove the key for the default)"}
			}
			s.values = []string{v.Value}
		case yaml.SequenceNode:
			if !isList {
				return nil, &configError{path: path, line: v.Line, key: key, reason: "takes one value, not a list"}
			}
			for _, it := range v.Content {
				if it.Kind != yaml.ScalarNode || it.Tag == "!!null" {
					return nil, &configError{path: path, line: it.Line, key: key, reason: "a list item must be a single value"}
				}
				s.values = append(s.values, it.Value)
			}
		default:
			return nil, &configError{path: path, line: v.Line, key: key, reason: "want a single value" + map[bool]string{true: " or a list of values", false: ""}[isList]}
		}
		out = append(out, s)
	}
	return out, nil
}

// yamlError gives a YAML syntax error the file's name.
func yamlError(path string, err error) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ": "); ok {
			if line, err := strconv.Atoi(n); err == nil {
				return &configError{path: path, line: line, reason: "not valid YAML: " + tail}
			}
		}
	}
	return fmt.Errorf("%s: not valid YAML: %s", path, msg)
}

// nearestKey suggests the known key closest to a mistyped one.
func nearestKey(key string, kf map[string]cli.Flag) string {
	norm := strings.ToLower(strings.ReplaceAll(key, "_", "-"))
	best, bestD := "", 0
	for k := range kf {
		d := editDistance(norm, k)
		if best == "" || d < bestD || (d == bestD && k < best) {
			best, bestD = k, d
		}
	}
	if bestD <= max(2, len(norm)/3) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// valueReader is a *cli.Context: the live one or a scratch one.
type valueReader interface {
	String(string) string
	StringSlice(string) []string
	Int(string) int
	Int64(string) int64
	Uint(string) uint
	Bool(string) bool
	Duration(string) time.Duration
	Float64(string) float64
	Path(string) string
	Value(string) any
}

// valuesOf is a flag's value as the strings its parser accepts: one for a
// scalar, the items of a list.
func valuesOf(c valueReader, f cli.Flag) []string {
	name := f.Names()[0]
	switch f.(type) {
	case *cli.StringFlag:
		return []string{c.String(name)}
	case *cli.StringSliceFlag:
		return append([]string{}, c.StringSlice(name)...)
	case *cli.IntFlag:
		return []string{strconv.Itoa(c.Int(name))}
	case *cli.Int64Flag:
		return []string{strconv.FormatInt(c.Int64(name), 10)}
	case *cli.UintFlag:
		return []string{strconv.FormatUint(uint64(c.Uint(name)), 10)}
	case *cli.BoolFlag:
		return []string{strconv.FormatBool(c.Bool(name))}
	case *cli.DurationFlag:
		return []string{c.Duration(name).String()}
	case *cli.Float64Flag:
		return []string{strconv.FormatFloat(c.Float64(name), 'g', -1, 64)}
	case *cli.PathFlag:
		return []string{c.Path(name)}
	}
	return []string{fmt.Sprint(c.Value(name))}
}

// scratchContext applies copies of flags to a fresh flag set (reading the
// environment only when withEnv) and sets values; it parses exactly as the
// command line does, without touching the command's own context.
func scratchContext(flags []cli.Flag, withEnv bool, values map[string][]string) (*cli.Context, error) {
	fs := flag.NewFlagSet("bridge", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	for _, f := range flags {
		if err := envlessCopy(f, withEnv).Apply(fs); err != nil {
			return nil, err
		}
	}
	for name, vs := range values {
		var f cli.Flag
		for _, g := range flags {
			if g.Names()[0] == name {
				f = g
			}
		}
		if f == nil {
			continue
		}
		if err := setValues(fs, f, vs); err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
	}
	return cli.NewContext(nil, fs, nil), nil
}

// envlessCopy is a copy of f that ignores the environment (unless withEnv)
// and leaves f itself alone.
func envlessCopy(f cli.Flag, withEnv bool) cli.Flag {
	switch f := f.(type) {
	case *cli.StringFlag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		return &cp
	case *cli.StringSliceFlag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		cp.Destination = nil
		return &cp
	case *cli.IntFlag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		return &cp
	case *cli.Int64Flag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		return &cp
	case *cli.BoolFlag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		return &cp
	case *cli.DurationFlag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		return &cp
	case *cli.PathFlag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		return &cp
	case *cli.UintFlag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		return &cp
	case *cli.Float64Flag:
		cp := *f
		if !withEnv {
			cp.EnvVars = nil
		}
		return &cp
	}
	return f
}

// checkKey applies the checks bridge serve makes of one setting's value, so
// that a file's bad value is refused with its line (the flag parsers only
// check the type).
func checkKey(c valueReader, key string) error {
	switch key {
	case "log-level":
		var l slog.Level
		if err := l.UnmarshalText([]byte(c.String(key))); err != nil {
			return fmt.Errorf("%q: want debug, info, warn or error", c.String(key))
		}
	case "log-format":
		if v := c.String(key); v != "text" && v != "json" {
			return fmt.Errorf("%q: want text or json", v)
		}
	case "upstream-era":
		if _, err := era.ParseMode(c.String(key)); err != nil {
			return err
		}
	case "allowed-host":
		if _, err := edge.ParseHosts(c.StringSlice(key)); err != nil {
			return err
		}
	case "allowed-origin":
		if _, err := edge.ParseOrigins(c.StringSlice(key)); err != nil {
			return err
		}
	case "trusted-proxy":
		if _, err := edge.ParseTrustedProxies(c.StringSlice(key)); err != nil {
			return err
		}
	case "max-tasks-per-principal", "max-waiters-per-principal":
		if c.Int(key) == 0 {
			return errors.New("0 would refuse every request; use -1 for no bound")
		}
	case "session-cache":
		if c.Int(key) == 0 {
			return errors.New("0 would reload every session from the store on every request; use 1 or more, or -1 to keep every idle session whole")
		}
	case "store":
		if u := c.String(key); u != "" && !sessionmap.IsRedisURL(u) {
			return errors.New("want redis://[USER:PASSWORD@]HOST:PORT/DB, redis+sentinel://HOST:PORT,HOST:PORT/MASTER/DB " +
				"or redis+cluster://HOST:PORT,HOST:PORT (rediss… for TLS) (the value given is not shown: it may hold a password)")
		}
	case "public-url":
		if p := c.String(key); p != "" {
			u, err := url.Parse(p)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
				return fmt.Errorf("%q: give the endpoint's absolute http(s) URL, e.g. https://mcp.example.com/mcp", p)
			}
		}
	}
	return nil
}

// where names a setting's source in an error: FILE:LINE: KEY, --KEY or the
// environment variable.
func (st *configState) where(key string) string {
	o := st.origins[key]
	switch o.src {
	case srcFile:
		return fmt.Sprintf("%s:%d: %s", st.path, o.line, key)
	case srcEnv:
		return o.env
	}
	return "--" + key
}

// runConfigCheck is `bridge config check`: every check bridge serve makes
// before it listens, without opening the store or contacting anyone.
func runConfigCheck(c *cli.Context, flags []cli.Flag) error {
	st := c.App.Metadata[configMetaKey].(*configState)
	var problems []string
	kf := keyFlags(flags)
	names := make([]string, 0, len(kf))
	for n := range kf {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if err := checkKey(c, n); err != nil {
			problems = append(problems, st.where(n)+": "+err.Error())
		}
	}
	up, cmd := c.String("upstream"), c.String("upstream-command")
	switch {
	case up == "" && cmd == "":
		problems = append(problems, "no upstream: set upstream (a URL) or upstream-command")
	case up != "" && cmd != "":
		problems = append(problems, "set only one of upstream ("+st.where("upstream")+") and upstream-command ("+st.where("upstream-command")+")")
	}
	if _, err := readPrincipalFlags(c); err != nil {
		problems = append(problems, st.where("principal")+": "+err.Error())
	}
	if _, err := credentialKey(c); err != nil {
		problems = append(problems, err.Error())
	}
	if len(problems) > 0 {
		return cli.Exit(strings.Join(problems, "\n"), 1)
	}
	name := st.path
	if name == "" {
		name = "flags and environment (no config file)"
	}
	fmt.Fprintf(c.App.Writer, "%s: ok\n", name)
	return nil
}

// redacted hides the secrets a setting's value may hold.
func redacted(key string, vs []string) []string {
	if key != "store" {
		return vs
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		if v != "" {
			v = sessionmap.RedactURL(v)
		}
		out[i] = v
	}
	return out
}

// printConfig writes the effective configuration as YAML --config accepts,
// each value's source as a comment, secrets redacted.
func printConfig(w io.Writer, c valueReader, st *configState) error {
	kf := keyFlags(st.flags)
	root := &yaml.Node{Kind: yaml.MappingNode}
	root.HeadComment = "The effective configuration of bridge serve (flags > environment > config file > defaults).\n" +
		"Secrets are redacted: a password in store's URL shows as xxxxx; password files are named, never read."
	for _, f := range st.flags {
		name := f.Names()[0]
		if _, ok := kf[name]; !ok {
			continue
		}
		vs := redacted(name, valuesOf(c, f))
		k := &yaml.Node{Kind: yaml.ScalarNode, Value: name}
		var v *yaml.Node
		if _, isList := f.(*cli.StringSliceFlag); isList {
			v = &yaml.Node{Kind: yaml.SequenceNode}
			if len(vs) == 0 {
				v.Style = yaml.FlowStyle
			}
			for _, s := range vs {
				v.Content = append(v.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s})
			}
		} else {
			tag := "!!str"
			switch f.(type) {
			case *cli.IntFlag, *cli.Int64Flag, *cli.UintFlag:
				tag = "!!int"
			case *cli.BoolFlag:
				tag = "!!bool"
			}
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: vs[0]}
		}
		var comment string
		switch o := st.origins[name]; o.src {
		case srcFile:
			comment = fmt.Sprintf("from %s:%d", st.path, o.line)
		case srcEnv:
			comment = "from " + o.env
		case srcFlag:
			comment = "from --" + name
		default:
			comment = "default"
		}
		if v.Kind == yaml.SequenceNode && len(v.Content) > 0 {
			k.LineComment = comment // after "key:", before the items
		} else {
			v.LineComment = comment
		}
		root.Content = append(root.Content, k, v)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(root); err != nil {
		return err
	}
	_ = enc.Close()
	_, err := w.Write(buf.Bytes())
	return err
}

// configReference is the Markdown table of every config file key, made
// from the flag definitions (docs/MIGRATION.md holds it; docs-check
// compares the two).
func configReference(flags []cli.Flag) string {
	var b strings.Builder
	b.WriteString("| Key | Environment variable | Default | On SIGHUP | Meaning |\n")
	b.WriteString("|---|---|---|---|---|\n")
	kf := keyFlags(flags)
	for _, f := range flags {
		name := f.Names()[0]
		if _, ok := kf[name]; !ok {
			continue
		}
		def := referenceDefaults[name]
		if def == "" {
			def = referenceDefault(f)
		}
		reload := "restart"
		if liveKeys[name] {
			reload = "live"
		}
		usage := ""
		if df, ok := f.(cli.DocGenerationFlag); ok {
			usage = df.GetUsage()
		}
		var envs []string
		for _, e := range envVarsOf(f) {
			envs = append(envs, "`"+e+"`")
		}
		if def == "" {
			def = "–"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s |\n", name, cell(strings.Join(envs, ", ")), cell(def), reload, cell(usage))
	}
	return b.String()
}

// referenceDefault is a flag's default as a config file would spell it.
func referenceDefault(f cli.Flag) string {
	sc, err := scratchContext([]cli.Flag{f}, false, nil)
	if err != nil {
		return ""
	}
	vs := valuesOf(sc, f)
	switch {
	case len(vs) == 0:
		return ""
	case len(vs) == 1 && vs[0] == "":
		return ""
	}
	return "`" + strings.Join(vs, ", ") + "`"
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}
