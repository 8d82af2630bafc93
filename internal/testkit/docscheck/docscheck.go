// Package docscheck keeps the user documentation from rotting: it extracts
// the commands of README.md and docs/MIGRATION.md so that a test
// (docs_test.go, run by `make docs-check`) can run every one of them against
// a real bridge and compare its exit status with what the document says.
//
// # Conventions in the documents
//
//   - A fenced block tagged sh, bash or shell is runnable. Each logical line
//     (a trailing backslash continues it; blank lines and lines that are only
//     a comment are ignored) is one command. The commands of one document run
//     in order in one bash, so shell variables and functions carry over from
//     one block to the next, as they do for a reader who pastes them into one
//     terminal.
//   - A trailing comment containing "exit N" states the command's exit
//     status ("# exit 3: findings"); without one it must be 0. Each
//     double-quoted string in the comment must appear in the command's
//     output (# "completed"), so comments that say what a command shows are
//     checked too; for a server command, what it printed while starting.
//     <!-- docs-check: exits 3 0 0 --> on the line before a fence gives the
//     statuses of all its commands instead, for text that must not change.
//   - <!-- docs-check: skip (reason) --> on the line before a fence skips the
//     block. The reason is required; "not implemented yet: issue N" marks a
//     command of a feature that does not exist yet.
//   - A block of any other language that contains a command (bridge,
//     migrate-check, curl, go run ./cmd/..., go vet/fix/install) must be
//     skipped explicitly, so that no command goes unchecked by accident.
//
// # How the test runs commands
//
// Command kinds (Classify): bridge serve and bridge demo are servers, started
// in the background and stopped with SIGINT (Ctrl-C), which must end them
// with status 0; bridge sessions and bridge tasks read the data directory,
// which only one process may hold, so the test stops the running bridge
// first (and starts it again, on the same address and data directory, before
// the next command that is not one of them); go run ./cmd/..., go install
// ./cmd/... and make run from the module root; everything else runs in a scratch copy of the fixture
// module testdata/module, a small Go module with legacy task code.
//
// Placeholders: the documents use the default addresses, and the test
// substitutes the real ones (Substitute):
//
//	127.0.0.1:8080, localhost:8080  the bridge (bridge serve, legacy face)
//	127.0.0.1:8081, localhost:8081  the embedded modern server (bridge demo --upstream-only)
//
// A server command's --listen is replaced by the address of its role (the
// bridge's for bridge serve, the upstream's for bridge demo --upstream-only,
// an ephemeral port for a full bridge demo).
package docscheck

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// Kind says how a command is run.
type Kind int

// Command kinds.
const (
	// Shell commands run in the document's bash, in the fixture copy.
	Shell Kind = iota
	// Repo commands (go run ./cmd/..., make) run from the module root.
	Repo
	// Server commands (bridge serve, bridge demo) run in the background.
	Server
	// Admin commands (bridge sessions, bridge tasks) need the bridge stopped.
	Admin
)

func (k Kind) String() string {
	switch k {
	case Shell:
		return "shell"
	case Repo:
		return "repo"
	case Server:
		return "server"
	case Admin:
		return "admin"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// Server roles.
const (
	RoleBridge   = "bridge"   // bridge serve: the legacy face at 127.0.0.1:8080
	RoleUpstream = "upstream" // bridge demo --upstream-only at 127.0.0.1:8081
	RoleProbe    = "probe"    // a full bridge demo: started, checked, stopped
)

// Command is one logical line of a runnable block.
type Command struct {
	File    string
	Line    int    // 1-based line of the command's first physical line
	Text    string // the command without its trailing comment
	Comment string // the trailing comment, without "#"
	Want    int    // expected exit status
	// Expect are the double-quoted strings of the comment; the command's
	// output must contain each (# "completed": the task is completed).
	Expect []string
	Kind   Kind
	Role   string // for Server commands
}

func (c Command) String() string { return fmt.Sprintf("%s:%d: %s", c.File, c.Line, c.Text) }

// Block is one fenced code block.
type Block struct {
	File     string
	Line     int // line of the opening fence
	Lang     string
	Skip     string // the skip reason; empty when the block runs
	Runnable bool   // sh, bash or shell and not skipped
	Commands []Command
	// Mentions are the lines that look like commands, in any block.
	Mentions []Mention
}

// Mention is a piece of text that names a bridge or migrate-check command:
// a line of a fenced block or an inline code span. Its flags must exist.
type Mention struct {
	File string
	Line int
	Text string
}

var (
	fenceRE     = regexp.MustCompile("^(\\s*)(```+|~~~+)\\s*([A-Za-z0-9_+-]*)")
	directiveRE = regexp.MustCompile(`^<!--\s*docs-check:\s*(.*?)\s*-->\s*$`)
	skipRE      = regexp.MustCompile(`^skip\s*\((.*)\)$`)
	exitsRE     = regexp.MustCompile(`^exits((?:\s+\d+)+)$`)
	exitNoteRE  = regexp.MustCompile(`\bexit (\d+)\b`)
	envAssignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)
	inlineRE    = regexp.MustCompile("`([^`\n]+)`")
	quotedRE    = regexp.MustCompile(`"([^"]+)"`)
)

// Parse reads a Markdown document and returns its fenced blocks and the
// command mentions outside them (inline code spans). It rejects malformed
// directives, an unclosed fence, a runnable block whose "exits" count does
// not match its commands, and a non-runnable block with a command in it that
// is not skipped explicitly.
func Parse(file string, src []byte) (blocks []Block, inline []Mention, err error) {
	lines := strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n")
	var pending string // directive text on the previous non-blank line
	pendingLine := 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		m := fenceRE.FindStringSubmatch(line)
		if m == nil {
			trimmed := strings.TrimSpace(line)
			if d := directiveRE.FindStringSubmatch(trimmed); d != nil {
				pending, pendingLine = d[1], i+1
				continue
			}
			if strings.Contains(trimmed, "docs-check") && strings.HasPrefix(trimmed, "<!--") {
				return nil, nil, fmt.Errorf("%s:%d: malformed docs-check directive %q", file, i+1, trimmed)
			}
			if trimmed != "" {
				if pending != "" {
					return nil, nil, fmt.Errorf("%s:%d: docs-check directive %q is not directly before a fence", file, pendingLine, pending)
				}
				for _, s := range inlineRE.FindAllStringSubmatch(line, -1) {
					if looksLikeCommand(s[1]) {
						inline = append(inline, Mention{File: file, Line: i + 1, Text: s[1]})
					}
				}
			}
			continue
		}
		indent, fence, lang := m[1], m[2], strings.ToLower(m[3])
		b := Block{File: file, Line: i + 1, Lang: lang}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			t := strings.TrimPrefix(lines[i], indent)
			if s := strings.TrimSpace(t); len(s) >= len(fence) && strings.Trim(s, fence[:1]) == "" {
				closed = true
				break
			}
			body = append(body, t)
		}
		if !closed {
			return nil, nil, fmt.Errorf("%s:%d: unclosed code fence", file, b.Line)
		}
		var exits []int
		if pending != "" {
			switch {
			case skipRE.MatchString(pending):
				b.Skip = strings.TrimSpace(skipRE.FindStringSubmatch(pending)[1])
				if b.Skip == "" {
					return nil, nil, fmt.Errorf("%s:%d: docs-check skip needs a reason: skip (why)", file, pendingLine)
				}
			case exitsRE.MatchString(pending):
				for _, f := range strings.Fields(exitsRE.FindStringSubmatch(pending)[1]) {
					n, _ := strconv.Atoi(f)
					exits = append(exits, n)
				}
			default:
				return nil, nil, fmt.Errorf("%s:%d: unknown docs-check directive %q (want skip (reason) or exits N...)", file, pendingLine, pending)
			}
			pending = ""
		}
		shell := lang == "sh" || lang == "bash" || lang == "shell"
		for j, t := range body {
			if looksLikeCommand(strings.TrimSpace(t)) || looksLikeCommand(stripRun(t)) {
				b.Mentions = append(b.Mentions, Mention{File: file, Line: b.Line + 1 + j, Text: stripRun(t)})
			}
		}
		if shell && b.Skip == "" {
			b.Runnable = true
			cmds, err := splitCommands(file, b.Line+1, body)
			if err != nil {
				return nil, nil, err
			}
			if exits != nil && len(exits) != len(cmds) {
				return nil, nil, fmt.Errorf("%s:%d: docs-check exits lists %d statuses for %d commands", file, b.Line, len(exits), len(cmds))
			}
			for k := range cmds {
				if exits != nil {
					if cmds[k].Want != 0 && cmds[k].Want != exits[k] {
						return nil, nil, fmt.Errorf("%s:%d: exit %d in the comment but %d in the exits directive", file, cmds[k].Line, cmds[k].Want, exits[k])
					}
					cmds[k].Want = exits[k]
				}
				if cmds[k].Kind == Server && cmds[k].Want != 0 {
					return nil, nil, fmt.Errorf("%s:%d: a server command must stop with exit 0 after Ctrl-C; it cannot expect %d", file, cmds[k].Line, cmds[k].Want)
				}
			}
			b.Commands = cmds
		} else if exits != nil {
			return nil, nil, fmt.Errorf("%s:%d: docs-check exits on a block that does not run", file, b.Line)
		}
		if !b.Runnable && b.Skip == "" && len(b.Mentions) > 0 {
			return nil, nil, fmt.Errorf("%s:%d: a %q block contains the command %q: tag the block sh so that it runs, or put <!-- docs-check: skip (reason) --> before it",
				file, b.Mentions[0].Line, lang, b.Mentions[0].Text)
		}
		blocks = append(blocks, b)
	}
	if pending != "" {
		return nil, nil, fmt.Errorf("%s:%d: docs-check directive %q is not followed by a fence", file, pendingLine, pending)
	}
	return blocks, inline, nil
}

// stripRun removes what stands before a command on a line of a non-shell
// block: a "$ " prompt or a YAML "- run: ".
func stripRun(line string) string {
	t := strings.TrimSpace(line)
	for _, p := range []string{"$ ", "- run: ", "run: ", "- run:", "run:"} {
		if strings.HasPrefix(t, p) {
			return strings.TrimSpace(strings.TrimPrefix(t, p))
		}
	}
	return t
}

// looksLikeCommand reports whether text starts with one of the commands the
// guide must not mention without running (after any VAR=value prefixes).
func looksLikeCommand(text string) bool {
	w := words(text)
	for len(w) > 0 && envAssignRE.MatchString(w[0]) {
		w = w[1:]
	}
	if len(w) == 0 {
		return false
	}
	switch w[0] {
	case "bridge", "migrate-check", "curl":
		return len(w) > 1
	case "go":
		if len(w) < 3 {
			return false
		}
		switch w[1] {
		case "run":
			return strings.HasPrefix(w[2], "./cmd/")
		case "vet", "fix":
			return strings.Contains(text, "migrate-check")
		case "install":
			return strings.Contains(text, "tasksbridge")
		}
	}
	return false
}

// splitCommands turns the lines of a runnable block into commands.
func splitCommands(file string, first int, body []string) ([]Command, error) {
	var cmds []Command
	var cur strings.Builder
	start := 0
	for j, t := range body {
		if cur.Len() == 0 {
			s := strings.TrimSpace(t)
			if s == "" || strings.HasPrefix(s, "#") {
				continue
			}
			start = first + j
		}
		if strings.HasSuffix(t, "\\") {
			cur.WriteString(strings.TrimSuffix(t, "\\"))
			cur.WriteString(" ")
			continue
		}
		cur.WriteString(t)
		c, err := newCommand(file, start, cur.String())
		if err != nil {
			return nil, err
		}
		cmds = append(cmds, c)
		cur.Reset()
	}
	if cur.Len() > 0 {
		return nil, fmt.Errorf("%s:%d: the block ends inside a continued line", file, start)
	}
	return cmds, nil
}

func newCommand(file string, line int, logical string) (Command, error) {
	text, comment, err := splitComment(logical)
	if err != nil {
		return Command{}, fmt.Errorf("%s:%d: %w", file, line, err)
	}
	c := Command{File: file, Line: line, Text: strings.TrimSpace(text), Comment: strings.TrimSpace(comment)}
	if m := exitNoteRE.FindStringSubmatch(c.Comment); m != nil {
		c.Want, _ = strconv.Atoi(m[1])
	}
	for _, m := range quotedRE.FindAllStringSubmatch(c.Comment, -1) {
		c.Expect = append(c.Expect, m[1])
	}
	c.Kind, c.Role = Classify(c.Text)
	return c, nil
}

// splitComment separates a shell line from its trailing comment: a # at the
// start of a word outside quotes.
func splitComment(s string) (code, comment string, err error) {
	var quote byte
	prev := byte(' ')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' && quote != '\'':
			i++ // the next byte is escaped
			c = 'x'
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '\'' || c == '"':
			quote = c
		case c == '#' && (prev == ' ' || prev == '\t'):
			return s[:i], s[i+1:], nil
		}
		prev = c
	}
	if quote != 0 {
		return "", "", fmt.Errorf("unterminated %c quote", quote)
	}
	return s, "", nil
}

// words splits a command into shell words (quotes group, and are removed;
// no expansion).
func words(s string) []string {
	var out []string
	var cur strings.Builder
	in := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if in {
		out = append(out, cur.String())
	}
	return out
}

// Classify tells how a command runs and, for a server, its role.
func Classify(text string) (Kind, string) {
	w := words(text)
	for len(w) > 0 && envAssignRE.MatchString(w[0]) {
		w = w[1:]
	}
	if len(w) == 0 {
		return Shell, ""
	}
	var args []string
	switch {
	case w[0] == "bridge":
		args = w[1:]
	case len(w) >= 3 && w[0] == "go" && w[1] == "run" && strings.TrimSuffix(w[2], "/") == "./cmd/bridge":
		args = w[3:]
	case w[0] == "make" || (len(w) >= 3 && w[0] == "go" && (w[1] == "run" || w[1] == "install") && strings.HasPrefix(w[2], "./cmd/")):
		// go install ./cmd/... installs from the checkout (into the
		// test's own bin directory: GOBIN, see the harness).
		return Repo, ""
	default:
		return Shell, ""
	}
	kind := Shell
	if w[0] == "go" {
		kind = Repo
	}
	if len(args) == 0 || hasAny(args, "-h", "--help", "help") {
		return kind, ""
	}
	switch args[0] {
	case "serve":
		if hasAny(args, "--stdio") {
			return kind, ""
		}
		return Server, RoleBridge
	case "demo":
		if hasAny(args, "--stdio") {
			return kind, ""
		}
		if hasAny(args, "--upstream-only") {
			return Server, RoleUpstream
		}
		return Server, RoleProbe
	case "sessions", "tasks":
		return Admin, ""
	}
	return kind, ""
}

func hasAny(args []string, names ...string) bool {
	for _, a := range args {
		for _, n := range names {
			if a == n || strings.HasPrefix(a, n+"=") {
				return true
			}
		}
	}
	return false
}

// Placeholders maps the documented default addresses to real ones.
type Placeholders struct {
	Bridge   string // host:port of the bridge (for 127.0.0.1:8080)
	Upstream string // host:port of the upstream (for 127.0.0.1:8081)
}

// Substitute replaces the documented default addresses in text.
func (p Placeholders) Substitute(text string) string {
	r := strings.NewReplacer(
		"127.0.0.1:8080", p.Bridge, "localhost:8080", p.Bridge,
		"127.0.0.1:8081", p.Upstream, "localhost:8081", p.Upstream,
	)
	return r.Replace(text)
}

var listenRE = regexp.MustCompile(`--listen(=|\s+)\S+`)

// WithListen returns a server command that listens on addr: an explicit
// --listen is replaced, otherwise one is added.
func WithListen(text, addr string) string {
	if listenRE.MatchString(text) {
		return listenRE.ReplaceAllLiteralString(text, "--listen "+addr)
	}
	return text + " --listen " + addr
}

// Tool is the command a mention names: "bridge" (with its subcommand path)
// or "migrate-check".
type Tool struct {
	Name  string   // bridge or migrate-check
	Args  []string // the words after the tool name, up to a pipe, redirection or comment
	Flags []string // flag names as written, without values ("--listen", "-fix-tags")
}

// ParseTool reads the tool, words and flags of a mention. ok is false when
// the mention does not start with bridge, migrate-check or go run ./cmd/X.
func ParseTool(text string) (t Tool, ok bool) {
	code, _, err := splitComment(text)
	if err != nil {
		code = text
	}
	w := words(code)
	for len(w) > 0 && envAssignRE.MatchString(w[0]) {
		w = w[1:]
	}
	switch {
	case len(w) > 0 && (w[0] == "bridge" || w[0] == "migrate-check"):
		t.Name, w = w[0], w[1:]
	case len(w) >= 3 && w[0] == "go" && w[1] == "run" && (strings.TrimSuffix(w[2], "/") == "./cmd/bridge" || strings.TrimSuffix(w[2], "/") == "./cmd/migrate-check"):
		t.Name, w = strings.TrimPrefix(strings.TrimSuffix(w[2], "/"), "./cmd/"), w[3:]
	default:
		return Tool{}, false
	}
	for _, a := range w {
		if a == "|" || a == "||" || a == "&&" || a == ";" || strings.HasPrefix(a, ">") || strings.HasPrefix(a, "2>") || strings.HasPrefix(a, "<") {
			break
		}
		t.Args = append(t.Args, a)
		if len(a) > 1 && a[0] == '-' && (isLetter(a[1]) || (len(a) > 2 && a[1] == '-' && isLetter(a[2]))) {
			name, _, _ := strings.Cut(a, "=")
			t.Flags = append(t.Flags, name)
		}
	}
	return t, true
}

func isLetter(b byte) bool { return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' }

// Subcommands returns the leading words of a bridge command that are not
// flags (the candidate subcommand path, e.g. [tasks list]).
func (t Tool) Subcommands() []string {
	var out []string
	for _, a := range t.Args {
		if strings.HasPrefix(a, "-") {
			break
		}
		out = append(out, a)
	}
	return out
}

// HelpHasFlag reports whether a --help text lists the flag.
func HelpHasFlag(help, flag string) bool {
	name := strings.TrimLeft(flag, "-")
	re := regexp.MustCompile(`(?m)(^|[\s,\[])-{1,2}` + regexp.QuoteMeta(name) + `($|[\s,=\]])`)
	return re.MatchString(help)
}

// HelpCommands returns the subcommand names listed in a urfave/cli help
// text's COMMANDS section.
func HelpCommands(help string) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewBufferString(help))
	in := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.TrimSpace(l) == "COMMANDS:":
			in = true
		case in && (strings.TrimSpace(l) == "" || !strings.HasPrefix(l, " ")):
			in = false
		case in:
			f := strings.Fields(l)
			if len(f) > 0 {
				out = append(out, strings.TrimSuffix(f[0], ","))
			}
		}
	}
	return out
}

// Slug is the anchor GitHub gives a Markdown heading: lower case, spaces as
// hyphens, punctuation other than hyphens and underscores dropped.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	headingRE = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
	linkRE    = regexp.MustCompile(`\]\(([^)\s]+)\)`)
)

// Anchors returns the heading anchors of a Markdown document (outside code
// fences).
func Anchors(src []byte) map[string]bool {
	out := map[string]bool{}
	for _, l := range proseLines(src) {
		if m := headingRE.FindStringSubmatch(l.text); m != nil {
			out[Slug(m[1])] = true
		}
	}
	return out
}

// Link is a Markdown link target outside code fences.
type Link struct {
	Line   int
	Target string
}

// Links returns the link targets of a Markdown document (outside code
// fences).
func Links(src []byte) []Link {
	var out []Link
	for _, l := range proseLines(src) {
		for _, m := range linkRE.FindAllStringSubmatch(l.text, -1) {
			out = append(out, Link{Line: l.n, Target: m[1]})
		}
	}
	return out
}

type numbered struct {
	n    int
	text string
}

// proseLines are the lines outside fenced code blocks, with inline code
// spans removed.
func proseLines(src []byte) []numbered {
	var out []numbered
	fence := ""
	for i, l := range strings.Split(strings.ReplaceAll(string(src), "\r\n", "\n"), "\n") {
		t := strings.TrimSpace(l)
		if m := fenceRE.FindStringSubmatch(l); m != nil && (fence == "" || strings.HasPrefix(t, fence)) {
			if fence == "" {
				fence = m[2]
			} else {
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		if strings.HasPrefix(t, "#") {
			// headings keep their code spans: GitHub drops only the backticks
			out = append(out, numbered{i + 1, strings.ReplaceAll(l, "`", "")})
			continue
		}
		out = append(out, numbered{i + 1, inlineRE.ReplaceAllString(l, "code")})
	}
	return out
}
