package deploy_test

import (
	"bufio"
	"bytes"
	"context"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The uid and gid of the image's user (Dockerfile USER, the pod's runAsUser).
const imageUID = 65532

// (c) The binary built as the Dockerfile builds it is static: no program
// interpreter (PT_INTERP) and no shared libraries (DT_NEEDED), so it runs on
// distroless/static or scratch, which have no dynamic loader or libc.
func TestBinaryIsStatic(t *testing.T) {
	f, err := elf.Open(bridgeBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary has a PT_INTERP program header: it needs a dynamic loader")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) != 0 {
		t.Errorf("the binary needs shared libraries %v", libs)
	}
}

// The -X names of the Dockerfile (documented in internal/version) reach the
// binary: bridge version --json reports exactly the build arguments.
func TestBinaryVersionFromBuildArgs(t *testing.T) {
	out, err := exec.Command(bridgeBinary(t), "version", "--json").Output()
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Version, Revision, BuildTime, GoVersion string
		Dirty                                   bool
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Version != buildArgs["VERSION"] || got.Revision != buildArgs["REVISION"] || !got.Dirty ||
		got.BuildTime != buildArgs["BUILD_TIME"] || !strings.HasPrefix(got.GoVersion, "go") {
		t.Errorf("bridge version --json = %s, want the build arguments %v", out, buildArgs)
	}
	line, err := exec.Command(bridgeBinary(t), "--version").Output()
	if err != nil || !strings.Contains(string(line), buildArgs["VERSION"]+" (revision "+buildArgs["REVISION"]+", dirty, built "+buildArgs["BUILD_TIME"]) {
		t.Errorf("bridge --version = %q, %v", line, err)
	}
}

// started is a child process whose stdout lines are read.
type started struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *lockedBuffer
	done   chan error
}

func start(t *testing.T, cmd *exec.Cmd) *started {
	t.Helper()
	s := &started{cmd: cmd, lines: make(chan string, 64), stderr: &lockedBuffer{}, done: make(chan error, 1)}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = s.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
		s.done <- cmd.Wait()
	}()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
		}
	})
	return s
}

// lockedBuffer is a child's stderr, read by the test while exec writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// await returns the value after prefix on the first stdout line with it.
func (s *started) await(ctx context.Context, t *testing.T, prefix string) string {
	t.Helper()
	for {
		select {
		case l, ok := <-s.lines:
			if !ok {
				err := <-s.done
				t.Fatalf("%s ended (%v) before printing %q; stderr:\n%s", s.cmd.Path, err, prefix, s.stderr)
			}
			if strings.HasPrefix(l, prefix) {
				return strings.TrimPrefix(l, prefix)
			}
		case <-ctx.Done():
			t.Fatalf("no %q line from %s", prefix, s.cmd.Path)
		}
	}
}

// (c) The Dockerfile-built binary serves a real upstream from an empty
// working directory with an empty environment, as the image's non-root uid
// (when the test runs as root), writing only to its --data-dir; SIGTERM
// stops it with status 0.
func TestBinaryServesFromEmptyEnvironment(t *testing.T) {
	bin := bridgeBinary(t)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	up := start(t, exec.Command(bin, "demo", "--upstream-only", "--listen", "127.0.0.1:0"))
	upURL := up.await(ctx, t, "upstream: ")

	work := mkdir(t, 0o755) // the working directory: empty, and must stay so
	data := mkdir(t, 0o700)
	cmd := exec.Command(bin, "serve", "--upstream", upURL, "--listen", "127.0.0.1:0", "--data-dir", data)
	cmd.Dir = work
	cmd.Env = []string{}
	asUID := os.Geteuid() == 0
	if asUID {
		if err := os.Chown(data, imageUID, imageUID); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: imageUID, Gid: imageUID}}
	} else {
		t.Logf("not running as root: the bridge runs as uid %d, not as the image's %d", os.Geteuid(), imageUID)
	}
	br := start(t, cmd)
	url := br.await(ctx, t, "bridge: ")

	client := mcp.NewClient(&mcp.Implementation{Name: "deploy-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("initialize through the bridge: %v\nstderr:\n%s", err, br.stderr)
	}
	// The upstream is this binary too, so whichever serverInfo is relayed
	// carries the linked-in version.
	if si := cs.InitializeResult().ServerInfo; si == nil || si.Version != buildArgs["VERSION"] {
		t.Errorf("serverInfo %+v, want version %s", si, buildArgs["VERSION"])
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "from an empty environment"}})
	if err != nil {
		t.Fatalf("tools/call echo: %v", err)
	}
	if tc, ok := r.Content[0].(*mcp.TextContent); !ok || tc.Text != "from an empty environment" {
		t.Errorf("echo answered %+v", r.Content)
	}
	_ = cs.Close()

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-br.done:
		if err != nil {
			t.Fatalf("after SIGTERM the bridge exited with %v; stderr:\n%s", err, br.stderr)
		}
	case <-ctx.Done():
		t.Fatal("the bridge did not stop after SIGTERM")
	}
	_ = up.cmd.Process.Signal(syscall.SIGTERM)
	<-up.done

	if entries, _ := os.ReadDir(work); len(entries) != 0 {
		t.Errorf("the bridge wrote into its working directory: %v", entries)
	}
	if entries, _ := os.ReadDir(data); len(entries) == 0 {
		t.Error("the bridge wrote nothing into --data-dir")
	}
	if asUID {
		var foreign []string
		_ = filepath.Walk(data, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.Sys().(*syscall.Stat_t).Uid != imageUID {
				foreign = append(foreign, p)
			}
			return nil
		})
		if len(foreign) != 0 {
			t.Errorf("files in --data-dir not owned by uid %d: %v", imageUID, foreign)
		}
	}
	// The startup log line names the build (one small hunk in serve.go).
	logs := br.stderr.String()
	if !regexp.MustCompile(`serving MCP clients.*version=` + regexp.QuoteMeta(buildArgs["VERSION"]) + ` revision=` + buildArgs["REVISION"]).MatchString(logs) {
		t.Errorf("the startup log line lacks version and revision:\n%s", logs)
	}
}

// mkdir makes a directory under the system temporary directory with perm
// (t.TempDir's are 0700 to root, which uid 65532 could not enter).
func mkdir(t *testing.T, perm os.FileMode) string {
	t.Helper()
	d, err := os.MkdirTemp("", "tasksbridge-deploy-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(d) })
	if err := os.Chmod(d, perm); err != nil {
		t.Fatal(err)
	}
	return d
}

// k8s.io and sigs.k8s.io stay in this test package: neither binary links them.
func TestNoKubernetesInBinaries(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "../cmd/bridge", "../cmd/migrate-check").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	deps := strings.Fields(string(out))
	if !slices.Contains(deps, "github.com/urfave/cli/v2") {
		t.Fatalf("go list -deps output does not look like the bridge's: %.300s", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "k8s.io/") || strings.HasPrefix(d, "sigs.k8s.io/") {
			t.Errorf("the binaries import %s", d)
		}
	}
}
