// Package version holds the build identity printed by both binaries, logged
// at startup and exported as the tasksbridge_build_info metric.
//
// Every field comes from the Go toolchain's build information
// (runtime/debug.ReadBuildInfo: the main module's version and the vcs.revision,
// vcs.modified and vcs.time settings that `go build` stamps in a git checkout).
// A release build, or one whose source tree has no .git (a container build
// context), sets them at link time instead:
//
//	go build -ldflags "\
//	  -X github.com/tasksbridge/tasksbridge/internal/version.Version=v1.2.3 \
//	  -X github.com/tasksbridge/tasksbridge/internal/version.Revision=0123abcd... \
//	  -X github.com/tasksbridge/tasksbridge/internal/version.Dirty=false \
//	  -X github.com/tasksbridge/tasksbridge/internal/version.BuildTime=2026-12-01T12:00:00Z" ./cmd/bridge
//
// An -X value that is empty counts as unset, so a build script may always pass
// all four.
package version

import (
	"fmt"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
)

// Dev is the version of a build that has no release version.
const Dev = "v0.1.0-dev"

// Link-time overrides (-ldflags -X, see the package comment). After package
// initialisation Version holds the resolved version, so code that only needs
// the version string may read it directly.
var (
	Version   = Dev
	Revision  = ""
	Dirty     = "" // "true" or "false"
	BuildTime = "" // RFC 3339
)

// BuildInfo is the identity of the running binary.
type BuildInfo struct {
	Version   string `json:"version"`             // release version, else Dev
	Revision  string `json:"revision,omitempty"`  // VCS commit; empty when unknown
	Dirty     bool   `json:"dirty"`               // built from a tree with uncommitted changes
	BuildTime string `json:"buildTime,omitempty"` // the commit's time (vcs.time) unless set at link time; RFC 3339
	GoVersion string `json:"goVersion"`           // the toolchain that built it
}

var (
	once sync.Once
	info BuildInfo
)

func init() { Version = Info().Version }

// Info returns the running binary's build identity.
func Info() BuildInfo {
	once.Do(func() {
		bi, ok := debug.ReadBuildInfo()
		info = resolve(bi, ok, linked{Version, Revision, Dirty, BuildTime})
	})
	return info
}

// linked holds the -X values.
type linked struct{ version, revision, dirty, buildTime string }

// pseudo matches a Go module pseudo-version (v0.0.0-20261201231129-3aaa426abcde):
// the toolchain derives one from the commit, which says no more than the
// revision and reads like a release, so it is not shown as the version.
var pseudo = regexp.MustCompile(`-(0\.)?[0-9]{14}-[0-9a-f]{12}(\+dirty)?$`)

func resolve(bi *debug.BuildInfo, ok bool, l linked) BuildInfo {
	out := BuildInfo{Version: Dev, GoVersion: runtime.Version()}
	if ok && bi != nil {
		if bi.GoVersion != "" {
			out.GoVersion = bi.GoVersion
		}
		if v := bi.Main.Version; v != "" && v != "(devel)" && !pseudo.MatchString(v) {
			out.Version = strings.TrimSuffix(v, "+dirty")
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				out.Revision = s.Value
			case "vcs.modified":
				out.Dirty = s.Value == "true"
			case "vcs.time":
				out.BuildTime = s.Value
			}
		}
	}
	if l.version != "" && l.version != Dev {
		out.Version = l.version
	}
	if l.revision != "" {
		out.Revision = l.revision
	}
	if l.dirty != "" {
		out.Dirty = l.dirty == "true"
	}
	if l.buildTime != "" {
		out.BuildTime = l.buildTime
	}
	return out
}

// String is the one-line form printed by `bridge --version`:
// "v1.2.3 (revision 0123abcd…, dirty, built 2026-12-01T12:00:00Z, go1.26.8)".
func String() string { return Info().String() }

// String formats b as [String] does.
func (b BuildInfo) String() string {
	rev := b.Revision
	if rev == "" {
		rev = "unknown"
	}
	parts := []string{"revision " + rev}
	if b.Dirty {
		parts = append(parts, "dirty")
	}
	if b.BuildTime != "" {
		parts = append(parts, "built "+b.BuildTime)
	}
	parts = append(parts, b.GoVersion)
	return fmt.Sprintf("%s (%s)", b.Version, strings.Join(parts, ", "))
}
