package passtest

import (
	"bufio"
	"bytes"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// SharedSrc is the GOPATH-style tree, relative to a pass's directory
// (migratecheck/passes/NAME, the working directory of its test), that holds
// the one copy of the library stubs (github.com/...) and shared helpers
// (example.com/std/..., the false-positive traps) used by the umbrella tests.
const SharedSrc = "../../testdata/src"

// StubWants is the file, in a pass's testdata directory, that lists the
// expectations the pass's test adds to lines of the shared stubs.
const StubWants = "stubwants.txt"

// Testdata builds the analysistest tree of the calling pass's test for the
// packages pkgs it checks, and returns its root (pass it to analysistest.Run
// in place of analysistest.TestData()). The tree is a t.TempDir() holding:
//
//   - from the shared tree SharedSrc, the packages pkgs import, directly or
//     not, and pkgs themselves, with their "// want" comments removed: those
//     are the umbrella tests' expectations of the root analyzer, not a
//     pass's. Removing a trailing comment moves no code, so positions are
//     unchanged. Its .golden files are left out for the same reason;
//   - the lines listed in testdata/stubwants.txt, put in place in the stub
//     files they name (see readStubWants), so a pass checks what it finds
//     in a library stub without a copy of the stub;
//   - the pass's own testdata/src (its example.com test packages and its
//     .golden files), copied byte for byte over the rest.
//
// Only the import closure is copied because some passes read the files
// around a package (modscan's fix guard looks for other packages of the
// same module that still speak 2025-11-25): an unrelated sibling stub
// package would change what they find.
func Testdata(t testing.TB, pkgs ...string) string {
	t.Helper()
	dst := t.TempDir()
	shared, err := filepath.Abs(SharedSrc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(shared); err != nil {
		t.Fatalf("passtest: the shared stubs are not at %s (run the test from its pass directory): %v", shared, err)
	}
	own, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	ownSrc := filepath.Join(own, "src")
	src := filepath.Join(dst, "src")
	for _, pkg := range closure(t, pkgs, ownSrc, shared) {
		dir := filepath.Join(shared, filepath.FromSlash(pkg))
		entries, err := os.ReadDir(dir)
		if os.IsNotExist(err) {
			continue // the pass's own package
		}
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if e.IsDir() || strings.HasSuffix(e.Name(), ".golden") {
				continue
			}
			data, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasSuffix(e.Name(), ".go") {
				data = stripWants(data)
			}
			if err := write(filepath.Join(src, filepath.FromSlash(pkg), e.Name()), data); err != nil {
				t.Fatal(err)
			}
		}
	}
	applyStubWants(t, filepath.Join(own, StubWants), src)
	err = filepath.WalkDir(ownSrc, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(ownSrc, path)
		return write(filepath.Join(src, rel), data)
	})
	if err != nil {
		t.Fatalf("passtest: copying the pass's testdata: %v", err)
	}
	return dst
}

// closure returns pkgs and the packages they import, directly or not, that
// exist under one of the roots (standard library imports have none), in
// the order found.
func closure(t testing.TB, pkgs []string, roots ...string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	work := slices.Clone(pkgs)
	for len(work) > 0 {
		pkg := work[0]
		work = work[1:]
		if seen[pkg] {
			continue
		}
		seen[pkg] = true
		found := false
		for _, root := range roots {
			dir := filepath.Join(root, filepath.FromSlash(pkg))
			entries, err := os.ReadDir(dir)
			if err != nil {
				continue
			}
			found = true
			for _, e := range entries {
				if e.IsDir() || !strings.HasSuffix(e.Name(), ".go") {
					continue
				}
				f, err := parser.ParseFile(token.NewFileSet(), filepath.Join(dir, e.Name()), nil, parser.ImportsOnly)
				if err != nil {
					t.Fatalf("passtest: %v", err)
				}
				for _, imp := range f.Imports {
					p, _ := strconv.Unquote(imp.Path.Value)
					work = append(work, p)
				}
			}
		}
		if found {
			out = append(out, pkg)
		}
	}
	return out
}

func write(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// stripWants removes each line's trailing "// want" comment and the blanks
// before it. The stubs never hold "// want" inside a string.
func stripWants(data []byte) []byte {
	lines := bytes.Split(data, []byte("\n"))
	for i, l := range lines {
		lines[i] = stripWant(l)
	}
	return bytes.Join(lines, []byte("\n"))
}

func stripWant(l []byte) []byte {
	if i := bytes.Index(l, []byte("// want ")); i >= 0 {
		return bytes.TrimRight(l[:i], " \t")
	}
	return l
}

// stubWant is one entry of stubwants.txt: line Line of the stub file File
// (slash-separated, relative to src) reads Text in the pass's test.
type stubWant struct {
	File string
	Line int
	Text string
}

// readStubWants parses stubwants.txt. Blank lines and lines starting with
// "#" are comments; every other line is "FILE:LINE:TEXT", TEXT being the
// whole stub line (indentation included) with the pass's "// want" comment.
func readStubWants(t testing.TB, path string) []stubWant {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []stubWant
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.TrimSpace(l) == "" || strings.HasPrefix(l, "#") {
			continue
		}
		file, rest, ok1 := strings.Cut(l, ":")
		num, text, ok2 := strings.Cut(rest, ":")
		line, err := strconv.Atoi(num)
		if !ok1 || !ok2 || err != nil || line < 1 {
			t.Fatalf("%s:%d: want FILE:LINE:TEXT, got %q", path, n, l)
		}
		out = append(out, stubWant{File: file, Line: line, Text: text})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// applyStubWants puts each entry's line in place. The entry's code (its
// text without the want comment) must match the stub's line, so an edit of
// a shared stub that moves or changes the line fails here, naming the
// entry, instead of as a puzzling unmatched expectation.
func applyStubWants(t testing.TB, path, src string) {
	t.Helper()
	byFile := map[string][]stubWant{}
	var files []string
	for _, w := range readStubWants(t, path) {
		if _, ok := byFile[w.File]; !ok {
			files = append(files, w.File)
		}
		byFile[w.File] = append(byFile[w.File], w)
	}
	for _, file := range files {
		p := filepath.Join(src, filepath.FromSlash(file))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatalf("%s: %s is not a shared stub: %v", path, file, err)
		}
		lines := bytes.Split(data, []byte("\n"))
		for _, w := range byFile[file] {
			if w.Line > len(lines) {
				t.Fatalf("%s: %s has no line %d", path, file, w.Line)
			}
			got := strings.Join(strings.Fields(string(lines[w.Line-1])), " ")
			want := strings.Join(strings.Fields(string(stripWant([]byte(w.Text)))), " ")
			if got != want {
				t.Fatalf("%s: %s:%d reads %q, not %q: the shared stub changed, update the entry", path, file, w.Line, got, want)
			}
			lines[w.Line-1] = []byte(w.Text)
		}
		if err := write(p, bytes.Join(lines, []byte("\n"))); err != nil {
			t.Fatal(err)
		}
	}
}
