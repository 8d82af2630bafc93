package docscheck

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeouts of the end-to-end run. Generous: the machine may be busy, and
// go run compiles.
const (
	commandTimeout = 2 * time.Minute
	startTimeout   = 2 * time.Minute
	stopTimeout    = 30 * time.Second
)

// moduleRoot finds the tasksbridge module root above the test's directory.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.Contains(string(b), "module github.com/tasksbridge/tasksbridge\n") {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("module root (go.mod of github.com/tasksbridge/tasksbridge) not found")
		}
		dir = parent
	}
}

// cleanEnv is the environment of every command: the test's own, without
// TASKSBRIDGE_* settings (they would change flag defaults), with the built
// binaries first on PATH and GOBIN pointing at them, so a documented
// `go install ./cmd/...` replaces them with the same build instead of
// writing into the user's own bin directory.
func cleanEnv(bin string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "TASKSBRIDGE_") || strings.HasPrefix(kv, "PATH=") || strings.HasPrefix(kv, "GOBIN=") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GOBIN="+bin)
}

// buildBinaries builds bridge and migrate-check from this checkout.
func buildBinaries(t *testing.T, root string) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "bin")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin+string(os.PathSeparator), "./cmd/bridge", "./cmd/migrate-check")
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/bridge ./cmd/migrate-check: %v\n%s", err, out)
	}
	return bin
}

// copyFixture copies testdata/module (a small Go module with legacy task
// code) to dst, the directory the documents' commands run in.
func copyFixture(t *testing.T, dst string) {
	t.Helper()
	src := filepath.Join("testdata", "module")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatalf("copy fixture: %v", err)
	}
}

// lockedBuffer collects a process's output for failure messages.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) add(s string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.b.WriteString(s)
	l.b.WriteByte('\n')
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// process is a background server (bridge serve or bridge demo) in its own
// process group, so that SIGINT reaches it through go run or bash too.
type process struct {
	text  string
	cmd   *exec.Cmd
	out   lockedBuffer
	lines chan string // stdout and stderr lines; closed at EOF
	done  chan struct{}
	code  int // exit status once done (-1: killed by a signal)
}

func startProcess(text, dir string, env []string) (*process, error) {
	p := &process{text: text, lines: make(chan string, 256), done: make(chan struct{})}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	p.cmd = exec.Command("bash", "--noprofile", "--norc", "-c", text)
	p.cmd.Dir, p.cmd.Env = dir, env
	p.cmd.Stdout, p.cmd.Stderr = pw, pw
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := p.cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("start %q: %w", text, err)
	}
	pw.Close()
	go func() {
		defer close(p.lines)
		r := bufio.NewReader(pr)
		for {
			l, err := r.ReadString('\n')
			if l != "" {
				l = strings.TrimRight(l, "\r\n")
				p.out.add(l)
				select {
				case p.lines <- l:
				default: // nobody is waiting for more lines
				}
			}
			if err != nil {
				pr.Close()
				return
			}
		}
	}()
	go func() {
		err := p.cmd.Wait()
		p.code = p.cmd.ProcessState.ExitCode()
		if err != nil && p.code == 0 {
			p.code = -1
		}
		close(p.done)
	}()
	return p, nil
}

// waitFor reads output lines until each prefix has started one, and returns
// the rest of those lines by prefix.
func (p *process) waitFor(timeout time.Duration, prefixes ...string) (map[string]string, error) {
	got := map[string]string{}
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for len(got) < len(prefixes) {
		select {
		case l, ok := <-p.lines:
			if !ok {
				<-p.done
				return nil, fmt.Errorf("%q exited with status %d before printing %q:\n%s", p.text, p.code, prefixes, p.out.String())
			}
			for _, pre := range prefixes {
				if rest, ok := strings.CutPrefix(l, pre); ok {
					got[pre] = strings.TrimSpace(rest)
				}
			}
		case <-deadline.C:
			return nil, fmt.Errorf("%q did not print %q within %v:\n%s", p.text, prefixes, timeout, p.out.String())
		}
	}
	return got, nil
}

// interrupt stops the process like Ctrl-C and returns its exit status.
func (p *process) interrupt() (int, error) {
	select {
	case <-p.done:
		return p.code, nil
	default:
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
	select {
	case <-p.done:
		return p.code, nil
	case <-time.After(stopTimeout):
		p.kill()
		return -1, fmt.Errorf("%q did not stop within %v of SIGINT:\n%s", p.text, stopTimeout, p.out.String())
	}
}

func (p *process) kill() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	<-p.done
}

// shell is one bash per document: commands run in order and share
// variables, like a reader's terminal.
type shell struct {
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	done   chan struct{}
	marker string
}

func startShell(dir string, env []string) (*shell, error) {
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("pipe: %w", err)
	}
	s := &shell{lines: make(chan string, 1024), done: make(chan struct{}),
		marker: fmt.Sprintf("__docscheck_status_%d__", time.Now().UnixNano())}
	s.cmd = exec.Command("bash", "--noprofile", "--norc")
	s.cmd.Dir, s.cmd.Env = dir, env
	s.cmd.Stdout, s.cmd.Stderr = pw, pw
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if s.in, err = s.cmd.StdinPipe(); err != nil {
		return nil, fmt.Errorf("stdin: %w", err)
	}
	if err := s.cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("start bash: %w", err)
	}
	pw.Close()
	go func() {
		defer close(s.lines)
		r := bufio.NewReader(pr)
		for {
			l, err := r.ReadString('\n')
			if l != "" {
				s.lines <- strings.TrimRight(l, "\r\n")
			}
			if err != nil {
				pr.Close()
				return
			}
		}
	}()
	go func() {
		_ = s.cmd.Wait()
		close(s.done)
	}()
	return s, nil
}

// run runs one command (stdin from /dev/null, so it cannot eat the next
// commands) and returns its exit status and output.
func (s *shell) run(text string, timeout time.Duration) (int, string, error) {
	if _, err := fmt.Fprintf(s.in, "{ %s\n} </dev/null\nprintf '\\n%s %%s\\n' \"$?\"\n", text, s.marker); err != nil {
		return 0, "", fmt.Errorf("write to bash: %w", err)
	}
	var out strings.Builder
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				return 0, out.String(), errors.New("bash exited")
			}
			if rest, ok := strings.CutPrefix(l, s.marker+" "); ok {
				var code int
				if _, err := fmt.Sscan(rest, &code); err != nil {
					return 0, out.String(), fmt.Errorf("bad status line %q", l)
				}
				return code, strings.TrimSuffix(out.String(), "\n"), nil
			}
			out.WriteString(l)
			out.WriteByte('\n')
		case <-deadline.C:
			return 0, out.String(), fmt.Errorf("no exit within %v", timeout)
		}
	}
}

func (s *shell) close() {
	_ = s.in.Close()
	select {
	case <-s.done:
	case <-time.After(stopTimeout):
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
		<-s.done
	}
}

// harness runs one document's commands against real processes: the
// embedded modern server (role upstream, 127.0.0.1:8081 in the documents)
// and the bridge (role bridge, 127.0.0.1:8080).
type harness struct {
	t          *testing.T
	root, work string
	env        []string
	ph         Placeholders
	roles      map[string]*process
	bridgeCmd  string // the command the bridge role was last started with
	bridgeDown bool   // stopped for an admin command
	all        []*process
	stats      map[Kind]int
}

func newHarness(t *testing.T, root, bin, work string) *harness {
	h := &harness{t: t, root: root, work: work, env: cleanEnv(bin), roles: map[string]*process{}, stats: map[Kind]int{}}
	t.Cleanup(func() {
		for _, p := range h.all {
			select {
			case <-p.done:
			default:
				p.kill()
			}
		}
	})
	// Baseline: both roles on ephemeral loopback ports. Documented server
	// commands later take over these addresses.
	up := h.start("bridge demo --upstream-only --listen 127.0.0.1:0", work, RoleUpstream)
	h.ph.Upstream = up
	h.bridgeCmd = "bridge serve --upstream http://" + up + "/mcp --listen 127.0.0.1:0 --data-dir ./tasksbridge-data"
	h.ph.Bridge = h.start(h.bridgeCmd, work, RoleBridge)
	h.bridgeCmd = WithListen(h.bridgeCmd, h.ph.Bridge)
	return h
}

// start starts a server for role and returns the host:port it serves on.
func (h *harness) start(text, dir, role string) string {
	h.t.Helper()
	p, err := startProcess(text, dir, h.env)
	if err != nil {
		h.t.Fatal(err)
	}
	h.all = append(h.all, p)
	prefix := "bridge: "
	if role == RoleUpstream {
		prefix = "upstream: "
	}
	got, err := p.waitFor(startTimeout, prefix)
	if err != nil {
		h.t.Fatal(err)
	}
	u, err := url.Parse(got[prefix])
	if err != nil || u.Host == "" {
		h.t.Fatalf("%q printed %q%q, not a URL", text, prefix, got[prefix])
	}
	if role != RoleUpstream {
		h.ready(text, u)
	}
	if role != RoleProbe {
		h.roles[role] = p
	}
	return u.Host
}

// ready checks /readyz of the bridge serving endpoint u (one request: the
// listener is up once the URL is printed, and readiness is decided when
// asked).
func (h *harness) ready(text string, u *url.URL) {
	h.t.Helper()
	c := &http.Client{Timeout: 30 * time.Second}
	res, err := c.Get("http://" + u.Host + "/readyz")
	if err != nil {
		h.t.Fatalf("%q: GET /readyz: %v", text, err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		h.t.Fatalf("%q: GET /readyz = %d %s", text, res.StatusCode, body)
	}
}

// stop interrupts a role's server (Ctrl-C); it must exit 0.
func (h *harness) stop(role string) {
	h.t.Helper()
	p := h.roles[role]
	if p == nil {
		return
	}
	delete(h.roles, role)
	code, err := p.interrupt()
	if err != nil {
		h.t.Fatal(err)
	}
	if code != 0 {
		h.t.Fatalf("%q exited with status %d after Ctrl-C, want 0:\n%s", p.text, code, p.out.String())
	}
}

// server runs a documented server command.
func (h *harness) server(c Command) {
	h.t.Helper()
	text := h.ph.Substitute(c.Text)
	dir := h.work
	if strings.HasPrefix(strings.TrimSpace(text), "go ") {
		dir = h.root // go run ./cmd/bridge ...
	}
	switch c.Role {
	case RoleBridge:
		h.stop(RoleBridge)
		text = WithListen(text, h.ph.Bridge)
		if got := h.start(text, dir, RoleBridge); got != h.ph.Bridge {
			h.t.Fatalf("%s: serves %s, want %s", c, got, h.ph.Bridge)
		}
		h.bridgeCmd, h.bridgeDown = text, false
		h.expectOutput(c, h.roles[RoleBridge])
	case RoleUpstream:
		h.stop(RoleUpstream)
		text = WithListen(text, h.ph.Upstream)
		if got := h.start(text, dir, RoleUpstream); got != h.ph.Upstream {
			h.t.Fatalf("%s: serves %s, want %s", c, got, h.ph.Upstream)
		}
		h.expectOutput(c, h.roles[RoleUpstream])
	default: // a full demo: start it, check it is ready, stop it
		text = WithListen(text, "127.0.0.1:0")
		h.start(text, dir, RoleProbe)
		p := h.all[len(h.all)-1]
		code, err := p.interrupt()
		if err != nil {
			h.t.Fatal(err)
		}
		if code != 0 && !goRunInterrupted(text, code, p.out.String()) {
			h.t.Fatalf("%s: exited with status %d after Ctrl-C, want 0:\n%s", c, code, p.out.String())
		}
		h.expectOutput(c, p)
	}
}

// goRunInterrupted reports the go command's own status after Ctrl-C: go run
// exits 1 when it was interrupted, even if the program it ran stopped
// cleanly; a program that failed makes it print "exit status N".
func goRunInterrupted(text string, code int, out string) bool {
	return strings.HasPrefix(strings.TrimSpace(text), "go run ") && code == 1 && !strings.Contains(out, "exit status")
}

// expectOutput checks the quoted strings of a server command's comment
// against what it printed.
func (h *harness) expectOutput(c Command, p *process) {
	h.t.Helper()
	for _, e := range c.Expect {
		if e = h.ph.Substitute(e); !strings.Contains(p.out.String(), e) {
			h.t.Errorf("%s: the output does not contain %q, as its comment says\n--- output ---\n%s", c, e, p.out.String())
		}
	}
}

// runCommand runs one documented command and checks its exit status.
func (h *harness) runCommand(sh *shell, c Command) {
	h.t.Helper()
	h.stats[c.Kind]++
	switch c.Kind {
	case Server:
		h.server(c)
		return
	case Admin:
		if !h.bridgeDown {
			h.stop(RoleBridge)
			h.bridgeDown = true
		}
	default:
		if h.bridgeDown {
			h.start(h.bridgeCmd, h.work, RoleBridge)
			h.bridgeDown = false
		}
	}
	text := h.ph.Substitute(c.Text)
	if c.Kind == Repo {
		text = "(cd '" + h.root + "' && " + text + ")"
	}
	code, out, err := sh.run(text, commandTimeout)
	if err != nil {
		_ = syscall.Kill(-sh.cmd.Process.Pid, syscall.SIGKILL)
		h.t.Fatalf("%s: %v\n%s", c, err, out)
	}
	if code != c.Want {
		h.t.Errorf("%s: exit status %d, the document says %d\n--- output ---\n%s", c, code, c.Want, out)
	}
	for _, e := range c.Expect {
		if e = h.ph.Substitute(e); !strings.Contains(out, e) {
			h.t.Errorf("%s: the output does not contain %q, as its comment says\n--- output ---\n%s", c, e, out)
		}
	}
}

// finish stops the servers still running; each must exit 0.
func (h *harness) finish() {
	h.t.Helper()
	h.stop(RoleBridge)
	h.stop(RoleUpstream)
}
