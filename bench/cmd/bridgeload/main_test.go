package main

import (
	"bytes"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/tasksbridge/tasksbridge/bench/bridgeload"
)

// TestMain lets the test binary be the load tool's child process too: run
// re-executes os.Executable, which under go test is this binary.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == bridgeload.ChildMode {
		childMain(os.Args[2:])
		return
	}
	os.Exit(m.Run())
}

func TestParseFlags(t *testing.T) {
	c, err := parse(nil)
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	for _, p := range phaseOrder {
		if c.phases[p] != (p != "streams") {
			t.Errorf("phase %s on by default: %v (every phase but the opt-in streams)", p, c.phases[p])
		}
	}
	if c, err := parse([]string{"-phases", "streams"}); err != nil || !c.phases["streams"] || c.streamWaits != 10000 {
		t.Errorf("-phases streams: %v %v (%d waits)", c.phases, err, c.streamWaits)
	}
	if c.waiters != 10000 || c.getWaiters != 100 || c.sessions != 20000 || c.timeout <= 0 {
		t.Errorf("defaults: %d waiters, %d get waiters, %d sessions, timeout %s", c.waiters, c.getWaiters, c.sessions, c.timeout)
	}
	c, err = parse([]string{"-phases", "delay, echo"})
	if err != nil || len(c.phases) != 2 || !c.phases["delay"] || !c.phases["echo"] {
		t.Fatalf("-phases delay,echo: %v %v", c.phases, err)
	}
	for _, bad := range [][]string{
		{"-phases", "echo,bogus"},
		{"-waiters", "1000", "-waiter-tasks", "300"},
		{"-waiter-tasks", "0"},
		{"-echo-conc", "0"},
		{"-sessions", "0"},
	} {
		if _, err := parse(bad); err == nil {
			t.Errorf("parse(%s) accepted", strings.Join(bad, " "))
		}
	}
}

// TestRunSmoke runs the phases that need child processes (bridge and bare
// reverse proxy) at toy size and checks the table's structure: every figure
// they own is printed with a measurement, its goal and a verdict. Timings
// are not asserted. (delay, getrate and waiters run in-process in
// bench/bridgeload's TestScenariosSmoke.)
func TestRunSmoke(t *testing.T) {
	if testing.Short() {
		t.Skip("starts child processes")
	}
	dir := t.TempDir()
	var out bytes.Buffer
	err := run([]string{"-phases", "echo,passthrough,modernface,store,sessions",
		"-echo-conc", "2", "-echo-rounds", "1", "-echo-window", "50ms", "-lat-rounds", "2", "-lat-per", "2",
		"-sessions", "5", "-expiry-sessions", "3", "-expiry-timeout", "100ms", "-expiry-idle", "300ms",
		"-store-writers", "2", "-store-per", "3", "-waiters", "10", "-waiter-tasks", "10", "-cpuprofile", dir}, &out)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	for _, key := range []string{"1", "2", "3", "4a", "4b", "4c", "6", "7", "8", "10"} {
		re := regexp.MustCompile(`(?m)^\| ` + key + ` \| [^|]+ \| \*\*[^|]+ \| [≥≤0-9][^|]* \| (yes|\*\*no\*\*) \|$`)
		if !re.MatchString(out.String()) {
			t.Errorf("figure %s missing or malformed in:\n%s", key, out.String())
		}
	}
	for _, key := range []string{"5", "9", "11", "12", "13", "14"} { // phases not run: listed, not measured
		if !regexp.MustCompile(`(?m)^\| ` + key + ` \| [^|]+ \| not measured \(phase [a-z]+ not run\) \| [^|]+ \| — \|$`).MatchString(out.String()) {
			t.Errorf("figure %s not listed as unmeasured in:\n%s", key, out.String())
		}
	}
	for _, name := range []string{"bridge-echo", "revproxy-echo", "bridge-passthrough", "bridge-modernface", "bridge-sessions"} {
		if fi, err := os.Stat(dir + "/" + name + ".pprof"); err != nil || fi.Size() == 0 {
			t.Errorf("CPU profile %s: %v", name, err)
		}
	}
}
