// Command migrate-check finds uses of the removed MCP 2025-11-25 experimental
// task APIs in Go code and explains or applies the rewrite.
//
// It runs standalone (a go/packages + analysis/checker driver with config
// files, SARIF and opt-in fixes) or as a vet tool: invoked by the go command
// with a single *.cfg argument (go vet -vettool, go fix -fixtool) it speaks
// the unitchecker protocol.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/tasksbridge/tasksbridge/internal/version"
	"github.com/tasksbridge/tasksbridge/migratecheck/driver"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

const infoURI = "https://github.com/tasksbridge/tasksbridge/blob/main/docs/rules/README.md"

func main() {
	args := os.Args[1:]
	if isVetInvocation(args) {
		vetMain() // does not return
	}
	os.Exit(run(args, os.Stdout, os.Stderr))
}

// isVetInvocation reports whether the go command is driving us: it first asks
// for -flags and -V=full, then passes one *.cfg file per package.
func isVetInvocation(args []string) bool {
	if len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg") {
		return true
	}
	for _, a := range args {
		a = strings.TrimPrefix(a, "-")
		if a == "-flags" || a == "flags" || a == "V" || strings.HasPrefix(a, "V=") || strings.HasPrefix(a, "-V=") {
			return true
		}
	}
	return false
}

// optBool is a boolean flag that remembers whether it was given.
type optBool struct{ v *bool }

func (b *optBool) String() string {
	if b == nil || b.v == nil {
		return ""
	}
	return strconv.FormatBool(*b.v)
}

func (b *optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.v = &v
	return nil
}

func (b *optBool) IsBoolFlag() bool { return true }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 1 && args[0] == "version" {
		fmt.Fprintln(stdout, "migrate-check", version.Version)
		return 0
	}
	fs := flag.NewFlagSet("migrate-check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var (
		o                   driver.Options
		jsonOut             bool
		fixTags, fixLits    optBool
		tests               optBool
		listRules, showVers bool
		explain             string
	)
	fs.StringVar(&o.Format, "format", driver.FormatText, "output `format`: text (stderr, vet style), json (x/tools JSON tree on stdout) or sarif (SARIF 2.1.0 on stdout)")
	fs.BoolVar(&jsonOut, "json", false, "same as -format json")
	fs.StringVar(&o.Overrides.FailOn, "fail-on", "", "exit 3 when a finding has at least this `severity` (error, warning, info); default: any finding for text, never for json/sarif")
	fs.StringVar(&o.Overrides.Rules, "rules", "", "rule `selection`, e.g. all,-MCP011 or MCP001,MCP002 (-ID/+ID alone modify the config file's selection)")
	fs.StringVar(&o.Overrides.Severity, "severity", "", "per-rule severity `overrides`, e.g. MCP003=warning,MCP011=info")
	fs.StringVar(&o.Overrides.Target, "target", "", "dual (still serve 2025-11-25 peers; default) or extension-only")
	fs.StringVar(&o.ConfigPath, "config", "", "config `file` (default: .migrate-check.yaml/.yml/.json found from the current directory up to the module root; \"none\" disables)")
	fs.BoolVar(&o.Fix, "fix", false, "apply the opt-in fixes enabled with -fix-tags/-fix-literals (or config fix:) to the files")
	fs.BoolVar(&o.Diff, "diff", false, "print the fixes as a unified diff on stdout instead of writing files (implies -fix)")
	fs.Var(&fixTags, "fix-tags", "opt into the MCP006/MCP007 json tag renames (ttl→ttlMs, pollInterval→pollIntervalMs)")
	fs.Var(&fixLits, "fix-literals", "opt into the MCP003 literal rename \"notifications/tasks/status\"→\"notifications/tasks\"")
	fs.StringVar(&o.Tags, "tags", "", "comma-separated build `tags` to load packages with (GOFLAGS=-tags=… works too)")
	fs.Var(&tests, "test", "also analyse _test.go files (default true)")
	fs.IntVar(&o.Context, "c", -1, "print `N` lines of source context around each finding")
	fs.StringVar(&o.SrcRoot, "srcroot", "", "SARIF: `dir` that URIs are relative to (default: the git repository root, else the module root)")
	fs.BoolVar(&o.AllDeps, "all-deps", false, "type-check dependencies outside the analysed module from source too, so re-export wrapper facts flow from other modules (slower; go vet -vettool always does this)")
	fs.BoolVar(&o.KeepGoing, "keep-going", false, "also report findings in packages that did not load or type-check, as far as their partial type information allows (the run still exits 1)")
	fs.BoolVar(&o.ShowIgnored, "show-ignored", false, "text: also print findings silenced by suppression directives")
	fs.BoolVar(&listRules, "list-rules", false, "list the rules with severity, fix policy and whether they are enabled, then exit")
	fs.StringVar(&explain, "explain", "", "explain `RULE` (what changed, before/after code, spec section), then exit")
	fs.BoolVar(&showVers, "version", false, "print the version and exit")
	fs.Usage = func() { usage(fs) }

	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return driver.ExitError
	}
	o.Overrides.FixTags, o.Overrides.FixLiterals, o.Overrides.Tests = fixTags.v, fixLits.v, tests.v
	if jsonOut {
		o.Format = driver.FormatJSON
	}
	o.Patterns = fs.Args()
	o.Stdout, o.Stderr = stdout, stderr
	o.Version, o.InfoURI = version.Version, infoURI

	switch {
	case showVers:
		fmt.Fprintln(stdout, "migrate-check", version.Version)
		return 0
	case explain != "":
		if err := driver.Explain(stdout, explain); err != nil {
			fmt.Fprintf(stderr, "migrate-check: %v\n", err)
			return driver.ExitError
		}
		return 0
	case listRules:
		cfg, err := settings.LoadConfigFor(".", o.ConfigPath)
		if err == nil {
			var r *settings.Resolved
			if r, err = settings.Resolve(cfg, o.Overrides); err == nil {
				err = driver.ListRules(stdout, r)
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "migrate-check: %v\n", err)
			return driver.ExitError
		}
		return 0
	}
	return driver.Run(o)
}

func usage(fs *flag.FlagSet) {
	w := fs.Output()
	fmt.Fprint(w, `migrate-check finds Go code that still depends on the MCP 2025-11-25 experimental
tasks API (removed or changed by the io.modelcontextprotocol/tasks extension of
MCP 2026-07-28), explains the rewrite, and applies the few safe ones on request.

Usage:
  migrate-check [flags] [packages]        (packages default to ./...)

Three ways to run it:
  1. Standalone; findings go to stderr as file:line:col: severity: MCPxxx: message,
     followed by a summary line:
       migrate-check ./...
       migrate-check -tags integration ./...
       migrate-check -fix-tags -diff ./...      preview the opt-in tag renames
       migrate-check -fix-tags -fix ./...       apply them (gofmt-clean)
  2. Inside the Go toolchain (vet tool protocol; build tags via -tags or GOFLAGS):
       go vet -vettool=$(which migrate-check) ./...
       go vet -vettool=$(which migrate-check) -rules=all,-MCP011 ./...
       go fix -fixtool=$(which migrate-check) -fix-tags -diff ./...
     go vet exits 1 on findings; .migrate-check.yaml is honoured, -format,
     -fail-on and -severity are not.
  3. In CI with GitHub code scanning (SARIF 2.1.0 on stdout):
       migrate-check -format sarif ./... > migrate-check.sarif
     then upload it with github/codeql-action/upload-sarif (see README.md).

Exit status:
  0  no findings (or none at/above -fail-on)
  3  findings
  1  error: a package failed to load or type-check, bad flag or config file;
     errors win over findings because the results are incomplete. The
     go command's reason is printed (and is a SARIF notification); packages
     that import a broken one are still analysed; -keep-going also reports
     the broken packages' findings from partial type information
  Text output fails on any finding. -json and -format sarif exit 0 even with
  findings (like go vet -json) so the report is always produced; add
  -fail-on=error|warning|info to make them exit 3 too. -fix/-diff exit 0
  unless an error occurs.

Rules and configuration:
  migrate-check -list-rules               rules, severities, fix policy
  migrate-check -explain MCP001           what changed, before/after, spec link
  .migrate-check.yaml (.yml or .json), found in the current directory or a
  parent up to the module root, sets rules, severity, libraries, target, fix,
  fail_on and tests; flags win over the file. See docs/rules/README.md.

Suppression (a reason is required; unused directives are reported as MCP000):
  //migrate-check:ignore MCP001 reason        this line or the next
  //migrate-check:file-ignore MCP006 reason   the whole file

Flags:
`)
	fs.PrintDefaults()
}
