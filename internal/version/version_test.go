package version

import (
	"runtime/debug"
	"strings"
	"testing"
)

func vcs(rev, modified, at string) *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "github.com/tasksbridge/tasksbridge", Version: "(devel)"},
		Settings: []debug.BuildSetting{
			{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev},
			{Key: "vcs.modified", Value: modified}, {Key: "vcs.time", Value: at},
		},
	}
}

func TestResolveFromBuildInfo(t *testing.T) {
	got := resolve(vcs("3aaa426abcdef", "true", "2026-12-01T23:11:29Z"), true, linked{version: Dev})
	want := BuildInfo{Version: Dev, Revision: "3aaa426abcdef", Dirty: true, BuildTime: "2026-12-01T23:11:29Z", GoVersion: "go1.26.8"}
	if got != want {
		t.Fatalf("resolve = %+v, want %+v", got, want)
	}
}

func TestResolveModuleVersion(t *testing.T) {
	for v, want := range map[string]string{
		"v1.2.3":       "v1.2.3",
		"v1.2.3+dirty": "v1.2.3",
		"(devel)":      Dev,
		"":             Dev,
		// Pseudo-versions say no more than the revision does.
		"v0.0.0-20261201231129-3aaa426abcde":       Dev,
		"v0.0.0-20261201231129-3aaa426abcde+dirty": Dev,
		"v1.2.4-0.20261201231129-3aaa426abcde":     Dev,
	} {
		bi := vcs("r", "false", "")
		bi.Main.Version = v
		if got := resolve(bi, true, linked{version: Dev}).Version; got != want {
			t.Errorf("module version %q: Version = %q, want %q", v, got, want)
		}
	}
}

func TestLinkTimeOverridesWin(t *testing.T) {
	bi := vcs("fromvcs", "true", "2026-01-01T00:00:00Z")
	bi.Main.Version = "v9.9.9"
	got := resolve(bi, true, linked{"v1.2.3", "0123abcd", "false", "2026-12-01T12:00:00Z"})
	want := BuildInfo{Version: "v1.2.3", Revision: "0123abcd", Dirty: false, BuildTime: "2026-12-01T12:00:00Z", GoVersion: "go1.26.8"}
	if got != want {
		t.Fatalf("resolve = %+v, want %+v", got, want)
	}
	// Empty -X values (a build script passing every -X with unset args) are unset.
	if got := resolve(bi, true, linked{}); got.Version != "v9.9.9" || got.Revision != "fromvcs" || !got.Dirty {
		t.Fatalf("empty -X values overrode build info: %+v", got)
	}
}

func TestResolveWithoutBuildInfo(t *testing.T) {
	got := resolve(nil, false, linked{version: Dev})
	if got.Version != Dev || got.Revision != "" || got.GoVersion == "" {
		t.Fatalf("resolve without build info = %+v", got)
	}
	if s := got.String(); !strings.Contains(s, "revision unknown") {
		t.Fatalf("String() = %q, want the unknown revision said", s)
	}
}

func TestString(t *testing.T) {
	b := BuildInfo{Version: "v1.2.3", Revision: "0123abcd", Dirty: true, BuildTime: "2026-12-01T12:00:00Z", GoVersion: "go1.26.8"}
	if got, want := b.String(), "v1.2.3 (revision 0123abcd, dirty, built 2026-12-01T12:00:00Z, go1.26.8)"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	b.Dirty, b.BuildTime = false, ""
	if got, want := b.String(), "v1.2.3 (revision 0123abcd, go1.26.8)"; got != want {
		t.Fatalf("String() = %q, want %q", got, want)
	}
	if Version != Info().Version {
		t.Fatalf("Version %q is not the resolved %q", Version, Info().Version)
	}
}
