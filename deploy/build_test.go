package deploy_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// The module root, relative to this package.
const root = ".."

// The -X values the tests link in (Dockerfile build arguments).
var buildArgs = map[string]string{
	"VERSION":    "v9.8.7-packaging-test",
	"REVISION":   "0123456789abcdef0123456789abcdef01234567",
	"DIRTY":      "true",
	"BUILD_TIME": "2026-12-01T12:00:00Z",
}

var (
	buildOnce sync.Once
	buildDir  string
	buildErr  error
)

func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		_ = os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// bridgeBinary builds ./cmd/bridge with the Dockerfile's own go build
// command line (its environment assignments, flags and -ldflags, with the
// build arguments above), once per test run, into a directory every user may
// read and enter (the binary is also run as uid 65532).
func bridgeBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		var env, args []string
		if env, args, buildErr = dockerfileBuild(filepath.Join(root, "Dockerfile"), buildArgs); buildErr != nil {
			return
		}
		if buildDir, buildErr = os.MkdirTemp("", "tasksbridge-deploy-"); buildErr != nil {
			return
		}
		if buildErr = os.Chmod(buildDir, 0o755); buildErr != nil {
			return
		}
		for i, a := range args {
			if a == "-o" && i+1 < len(args) {
				args[i+1] = filepath.Join(buildDir, "bridge")
			}
		}
		cmd := exec.Command("go", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return filepath.Join(buildDir, "bridge")
}

// instructions returns a Dockerfile's instructions, continuation lines
// joined and comments dropped.
func instructions(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	var cur strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(l, "#") || (l == "" && cur.Len() == 0) {
			continue
		}
		if strings.HasSuffix(l, "\\") {
			cur.WriteString(strings.TrimSuffix(l, "\\"))
			cur.WriteByte(' ')
			continue
		}
		cur.WriteString(l)
		out = append(out, strings.TrimSpace(cur.String()))
		cur.Reset()
	}
	return out, sc.Err()
}

// dockerfileBuild returns the environment assignments and go arguments of
// the Dockerfile's `RUN ... go build` instruction, with ${ARG}s expanded.
func dockerfileBuild(path string, vars map[string]string) (env, goArgs []string, err error) {
	ins, err := instructions(path)
	if err != nil {
		return nil, nil, err
	}
	for _, in := range ins {
		if !strings.HasPrefix(in, "RUN ") || !strings.Contains(in, " go build ") {
			continue
		}
		words, err := shellWords(strings.TrimPrefix(in, "RUN "), vars)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %v", path, err)
		}
		for i, w := range words {
			if w == "go" {
				if i+1 >= len(words) || words[i+1] != "build" {
					break
				}
				return words[:i], words[i:][1:], nil
			}
			if !regexp.MustCompile(`^[A-Z_][A-Z0-9_]*=`).MatchString(w) {
				return nil, nil, fmt.Errorf("%s: the go build instruction has %q before go build: only VAR=value assignments are understood", path, w)
			}
		}
	}
	return nil, nil, fmt.Errorf("%s: no RUN instruction with go build", path)
}

var shellVar = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}|\$([A-Za-z_][A-Za-z0-9_]*)`)

// shellWords splits s as sh does for the simple words of a Dockerfile RUN
// line: blanks separate words, '…' and "…" group, $VAR and ${VAR} expand
// (not inside '…'). Anything else of the shell grammar is refused.
func shellWords(s string, vars map[string]string) ([]string, error) {
	expand := func(p string) (string, error) {
		var bad error
		out := shellVar.ReplaceAllStringFunc(p, func(m string) string {
			name := shellVar.FindStringSubmatch(m)
			n := name[1] + name[2]
			v, ok := vars[n]
			if !ok {
				bad = fmt.Errorf("unknown variable %s", n)
			}
			return v
		})
		return out, bad
	}
	var words []string
	var cur strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\'' || c == '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return nil, fmt.Errorf("unterminated %c", c)
			}
			part := s[i+1 : i+1+j]
			if c == '"' {
				var err error
				if part, err = expand(part); err != nil {
					return nil, err
				}
			}
			cur.WriteString(part)
			inWord = true
			i += j + 1
		case strings.IndexByte(";&|<>`\\(){}", c) >= 0:
			return nil, fmt.Errorf("shell syntax %q is not understood", c)
		default:
			j := i
			for j < len(s) && strings.IndexByte(" \t'\";&|<>`\\()", s[j]) < 0 {
				if s[j] == '$' && j+1 < len(s) && s[j+1] == '{' {
					k := strings.IndexByte(s[j:], '}')
					if k < 0 {
						return nil, fmt.Errorf("unterminated ${")
					}
					j += k + 1
					continue
				}
				j++
			}
			part, err := expand(s[i:j])
			if err != nil {
				return nil, err
			}
			cur.WriteString(part)
			inWord = true
			i = j - 1
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

func TestShellWords(t *testing.T) {
	got, err := shellWords(`CGO_ENABLED=0 go build -ldflags "-s -X a.V=${V}" -o '/o $V' x${V}y`, map[string]string{"V": "1 2"})
	want := []string{"CGO_ENABLED=0", "go", "build", "-ldflags", "-s -X a.V=1 2", "-o", "/o $V", "x1 2y"}
	if err != nil || strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("shellWords = %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{`go build && rm -rf /`, `go build "x`, `go build ${NOPE}`} {
		if _, err := shellWords(bad, nil); err == nil {
			t.Errorf("shellWords(%q) accepted it", bad)
		}
	}
}
