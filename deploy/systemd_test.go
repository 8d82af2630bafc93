package deploy_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const unitPath = "systemd/tasksbridge.service"

// unitSettings returns the unit's Key=Value lines (last one wins, as in
// systemd for most keys) and every value of each key.
func unitSettings(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, l := range uncommented(t, unitPath) {
		if k, v, ok := strings.Cut(l, "="); ok {
			out[k] = append(out[k], v)
		}
	}
	return out
}

// The hardening the unit promises (docs/MIGRATION.md, Packaging).
func TestSystemdUnitSettings(t *testing.T) {
	s := unitSettings(t)
	for k, want := range map[string]string{
		"DynamicUser":             "yes",
		"StateDirectory":          "tasksbridge",
		"ProtectSystem":           "strict",
		"ProtectHome":             "yes",
		"NoNewPrivileges":         "yes",
		"PrivateTmp":              "yes",
		"RestrictAddressFamilies": "AF_INET AF_INET6 AF_UNIX",
		"SystemCallFilter":        "@system-service",
		"EnvironmentFile":         "-/etc/tasksbridge/env",
		"ExecStart":               "/usr/local/bin/bridge serve --data-dir ${STATE_DIRECTORY}",
		"KillSignal":              "SIGTERM",
		"CapabilityBoundingSet":   "",
	} {
		if v := s[k]; len(v) != 1 || v[0] != want {
			t.Errorf("%s=%q, want %q", k, v, want)
		}
	}
	stop, err := time.ParseDuration(strings.Join(s["TimeoutStopSec"], ""))
	if err != nil {
		t.Fatalf("TimeoutStopSec: %v", err)
	}
	// The shutdown delay and timeout the example environment sets (the
	// flags' defaults are the same 5 s and 10 s).
	delay, timeout := 5*time.Second, 10*time.Second
	b, err := os.ReadFile(filepath.Join("systemd", "env.example"))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		for name, d := range map[string]*time.Duration{"TASKSBRIDGE_SHUTDOWN_TIMEOUT=": &timeout, "TASKSBRIDGE_SHUTDOWN_DELAY=": &delay} {
			if v, ok := strings.CutPrefix(l, name); ok {
				if *d, err = time.ParseDuration(v); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if stop < delay+timeout+5*time.Second {
		t.Errorf("TimeoutStopSec %v does not cover the %v shutdown delay plus the %v shutdown timeout plus 5 s to exit", stop, delay, timeout)
	}
}

// verifiable copies the unit with ExecStart's binary replaced by bin
// (systemd-analyze verify checks that it exists and is executable).
func verifiable(t *testing.T, bin string, edit func(string) string) string {
	t.Helper()
	b, err := os.ReadFile(unitPath)
	if err != nil {
		t.Fatal(err)
	}
	unit := strings.Replace(string(b), "ExecStart=/usr/local/bin/bridge ", "ExecStart="+bin+" ", 1)
	if unit == string(b) {
		t.Fatal("the unit's ExecStart does not start with /usr/local/bin/bridge")
	}
	p := filepath.Join(t.TempDir(), "tasksbridge.service")
	if err := os.WriteFile(p, []byte(edit(unit)), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// systemd-analyze verify accepts the unit without a warning (it reports
// unknown keys on stderr but exits 0, so stderr must be empty too), and
// systemd-analyze security rates its exposure 2.0 or lower ("OK").
func TestSystemdAnalyze(t *testing.T) {
	sa, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("systemd-analyze is not installed (Debian: apt-get install systemd): the unit is not verified")
	}
	bin := bridgeBinary(t)
	verify := func(p string) (string, error) {
		out, err := exec.Command(sa, "verify", "--man=no", p).CombinedOutput()
		return strings.TrimSpace(string(out)), err
	}
	if out, err := verify(verifiable(t, bin, func(s string) string { return s })); err != nil || out != "" {
		t.Errorf("systemd-analyze verify: %v\n%s", err, out)
	}
	// The same check notices a mistyped key.
	typo := verifiable(t, bin, func(s string) string { return strings.Replace(s, "ProtectHome=", "ProtectHomes=", 1) })
	if out, err := verify(typo); err == nil && out == "" {
		t.Error("systemd-analyze verify said nothing about ProtectHomes=")
	}
	out, err := exec.Command(sa, "security", "--offline=yes", "--threshold=20", verifiable(t, bin, func(s string) string { return s })).CombinedOutput()
	if err != nil {
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		t.Errorf("systemd-analyze security --threshold=20: %v: %s", err, lines[len(lines)-1])
	}
}
