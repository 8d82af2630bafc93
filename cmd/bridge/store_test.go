package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/sessionmap"
)

// runBridgeCode runs the CLI in-process and returns its stdout, stderr and
// the exit code main would use (ExitErrHandler is replaced so that a
// cli.Exit does not end the test binary). ctx bounds commands that serve.
func runBridgeCode(ctx context.Context, t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	app := newApp()
	var out, errOut bytes.Buffer
	app.Writer, app.ErrWriter = &out, &errOut
	app.ExitErrHandler = func(*cli.Context, error) {}
	err := app.RunContext(ctx, append([]string{"bridge"}, args...))
	if err != nil {
		code = 1
		var ec cli.ExitCoder
		if errors.As(err, &ec) {
			code = ec.ExitCode()
		}
		errOut.WriteString(err.Error())
	}
	return out.String(), errOut.String(), code
}

// damageTable writes 64 zero bytes into the middle of the store's first
// table file and returns its name.
func damageTable(t *testing.T, dir string) string {
	t.Helper()
	ssts, err := filepath.Glob(filepath.Join(dir, "*.sst"))
	if err != nil || len(ssts) == 0 {
		t.Fatalf("no table file in %s: %v", dir, err)
	}
	f, err := os.OpenFile(ssts[0], os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 64), st.Size()/2); err != nil {
		t.Fatal(err)
	}
	return filepath.Base(ssts[0])
}

// A damaged store is never silent: `store verify` exits 1 naming the file,
// `tasks list`, `sessions list` and `serve` refuse it with an error naming the
// file (before, the list showed what it could still read with exit 0 and serve
// started without a word).
func TestDamagedStoreRefused(t *testing.T) {
	dir, _ := writeAdminStore(t)
	ctx := context.Background()

	out, _, code := runBridgeCode(ctx, t, "store", "verify", "--data-dir", dir)
	if code != 0 || !strings.Contains(out, "no damage found") {
		t.Fatalf("store verify (clean) = exit %d\n%s", code, out)
	}
	name := damageTable(t, dir)

	out, _, code = runBridgeCode(ctx, t, "store", "verify", "--data-dir", dir)
	if code != 1 || !strings.Contains(out, name+" is damaged") || !strings.Contains(out, "MIGRATION.md") {
		t.Fatalf("store verify (damaged) = exit %d, want 1 naming %s\n%s", code, name, out)
	}
	out, _, code = runBridgeCode(ctx, t, "store", "verify", "--json", "--data-dir", dir)
	var rep sessionmap.VerifyReport
	if code != 1 || json.Unmarshal([]byte(out), &rep) != nil || len(rep.Damaged) != 1 || rep.Damaged[0].File != name {
		t.Fatalf("store verify --json (damaged) = exit %d\n%s", code, out)
	}

	for _, args := range [][]string{{"tasks", "list"}, {"sessions", "list"}, {"tasks", "list", "--recover"}} {
		out, errOut, code := runBridgeCode(ctx, t, append(args, "--data-dir", dir)...)
		if code == 0 || !strings.Contains(errOut, name) || !strings.Contains(errOut, "damaged") {
			t.Fatalf("%v on a damaged store = exit %d, stdout:\n%s\nstderr:\n%s", args, code, out, errOut)
		}
	}

	// serve must refuse before it listens; on the code before this check it
	// served until the context ended.
	sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	_, errOut, code := runBridgeCode(sctx, t, "serve", "--upstream", "http://127.0.0.1:1/mcp", "--upstream-era", "legacy",
		"--listen", "127.0.0.1:0", "--data-dir", dir, "--log-level", "error")
	if sctx.Err() != nil || code == 0 || !strings.Contains(errOut, name) {
		t.Fatalf("serve on a damaged store = exit %d (context %v)\n%s", code, sctx.Err(), errOut)
	}
}

// verify says plainly when there is nothing to check.
func TestStoreVerifyNoStore(t *testing.T) {
	_, errOut, code := runBridgeCode(context.Background(), t, "store", "verify", "--data-dir", filepath.Join(t.TempDir(), "none"))
	if code != 2 || !strings.Contains(errOut, "no store") {
		t.Fatalf("store verify on a missing dir = exit %d\n%s", code, errOut)
	}
}
