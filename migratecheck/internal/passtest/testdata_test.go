package passtest

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestStripWants(t *testing.T) {
	in := "package p\n\nvar a = 1 // want `x`\nvar b = 2 // keep\nvar c = 3\t\t// want \"y\"\n"
	want := "package p\n\nvar a = 1\nvar b = 2 // keep\nvar c = 3\n"
	if got := string(stripWants([]byte(in))); got != want {
		t.Errorf("stripWants:\n%s\nwant:\n%s", got, want)
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		if err := write(filepath.Join(root, filepath.FromSlash(name)), []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
}

// TestClosure pins that only the checked packages and what they import are
// taken: a sibling package of the same stub module is not (passes that read
// a package's surroundings would see it).
func TestClosure(t *testing.T) {
	shared, own := t.TempDir(), t.TempDir()
	writeTree(t, shared, map[string]string{
		"github.com/lib/core/core.go":     "package core\n\nimport \"example.com/std/context\"\n",
		"github.com/lib/server/server.go": "package server\n\nimport \"github.com/lib/core\"\n",
		"example.com/std/context/c.go":    "package context\n",
	})
	writeTree(t, own, map[string]string{
		"example.com/use/use.go": "package use\n\nimport (\n\t\"fmt\"\n\t\"github.com/lib/core\"\n)\n",
	})
	got := strings.Join(closure(t, []string{"example.com/use"}, own, shared), " ")
	if want := "example.com/use github.com/lib/core example.com/std/context"; got != want {
		t.Errorf("closure = %q, want %q", got, want)
	}
}

// fatalTB records the first Fatalf and ends the goroutine like testing does.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
	runtime.Goexit()
}
func (f *fatalTB) Fatal(args ...any) { f.Fatalf("%s", fmt.Sprint(args...)) }

func runFatal(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

// TestApplyStubWants pins that an entry replaces its stub line and that an
// entry whose code no longer matches the stub fails, naming the entry.
func TestApplyStubWants(t *testing.T) {
	src := t.TempDir()
	stub := "package core\n\ntype T struct {\n\tTTL int `json:\"ttl\"`\n}\n"
	writeTree(t, src, map[string]string{"github.com/lib/core/core.go": stub})
	wants := filepath.Join(t.TempDir(), StubWants)
	entry := "github.com/lib/core/core.go:4:\tTTL int `json:\"ttl\"` // want `legacy`\n"
	if err := os.WriteFile(wants, []byte("# comment\n\n"+entry), 0o644); err != nil {
		t.Fatal(err)
	}
	applyStubWants(t, wants, src)
	got, err := os.ReadFile(filepath.Join(src, "github.com/lib/core/core.go"))
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Replace(stub, "\tTTL int `json:\"ttl\"`\n", "\tTTL int `json:\"ttl\"` // want `legacy`\n", 1); string(got) != want {
		t.Errorf("applied stub:\n%s\nwant:\n%s", got, want)
	}

	if err := os.WriteFile(wants, []byte("github.com/lib/core/core.go:3:\tTTL int `json:\"ttl\"` // want `legacy`\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb := &fatalTB{TB: t}
	runFatal(func() { applyStubWants(tb, wants, src) })
	if !strings.Contains(tb.msg, "core.go:3 reads") || !strings.Contains(tb.msg, "update the entry") {
		t.Errorf("moved stub line: got %q, want a failure naming the entry", tb.msg)
	}

	if err := os.WriteFile(wants, []byte("no line number here\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb = &fatalTB{TB: t}
	runFatal(func() { readStubWants(tb, wants) })
	if !strings.Contains(tb.msg, "want FILE:LINE:TEXT") {
		t.Errorf("malformed entry: got %q", tb.msg)
	}
}
