package docscheck

import (
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// Documents are the user documentation whose commands must run.
var Documents = []string{"README.md", "docs/MIGRATION.md"}

func TestParseConventions(t *testing.T) {
	doc := "# Guide\n\nRun `bridge serve --upstream URL` or `migrate-check -explain MCP001`.\n\n" +
		"```sh\n" +
		"# a comment line is not a command\n" +
		"migrate-check ./...      # exit 3: findings\n" +
		"curl -fsS http://127.0.0.1:8080/healthz\n" +
		"bridge serve --upstream http://127.0.0.1:8081/mcp \\\n  --data-dir ./d   # Ctrl-C stops it\n" +
		"bridge demo --upstream-only\n" +
		"go run ./cmd/bridge demo\n" +
		"bridge tasks list --status working\n" +
		"make test\n" +
		"echo 'a # not a comment' \"b # neither\"\n" +
		"```\n\n" +
		"<!-- docs-check: exits 1 0 -->\n" +
		"```bash\n" +
		"go vet -vettool=$(which migrate-check) ./...\n" +
		"bridge --help\n" +
		"```\n\n" +
		"<!-- docs-check: skip (a GitHub Actions workflow) -->\n" +
		"```yaml\n" +
		"- run: migrate-check -format sarif ./... > out.sarif\n" +
		"```\n\n" +
		"```json\n{\"command\": \"bridge\"}\n```\n"
	blocks, inline, err := Parse("doc.md", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(blocks) != 4 {
		t.Fatalf("got %d blocks, want 4", len(blocks))
	}
	type want struct {
		line  int
		text  string
		exit  int
		kind  Kind
		role  string
		cmnt  string
		block int
	}
	wants := []want{
		{7, "migrate-check ./...", 3, Shell, "", "exit 3: findings", 0},
		{8, "curl -fsS http://127.0.0.1:8080/healthz", 0, Shell, "", "", 0},
		{9, "bridge serve --upstream http://127.0.0.1:8081/mcp    --data-dir ./d", 0, Server, RoleBridge, "Ctrl-C stops it", 0},
		{11, "bridge demo --upstream-only", 0, Server, RoleUpstream, "", 0},
		{12, "go run ./cmd/bridge demo", 0, Server, RoleProbe, "", 0},
		{13, "bridge tasks list --status working", 0, Admin, "", "", 0},
		{14, "make test", 0, Repo, "", "", 0},
		{15, "echo 'a # not a comment' \"b # neither\"", 0, Shell, "", "", 0},
		{20, "go vet -vettool=$(which migrate-check) ./...", 1, Shell, "", "", 1},
		{21, "bridge --help", 0, Shell, "", "", 1},
	}
	var got []want
	for bi, b := range blocks[:2] {
		if !b.Runnable || b.Skip != "" {
			t.Errorf("block %d: runnable %v skip %q, want runnable", bi, b.Runnable, b.Skip)
		}
		for _, c := range b.Commands {
			got = append(got, want{c.Line, c.Text, c.Want, c.Kind, c.Role, c.Comment, bi})
		}
	}
	if !reflect.DeepEqual(got, wants) {
		t.Errorf("commands:\n got %+v\nwant %+v", got, wants)
	}
	if e := blocks[0].Commands[1].Expect; e != nil {
		t.Errorf("Expect without quotes in the comment: %q", e)
	}
	if c, err := newCommand("doc.md", 1, `curl -sS x   # status "cancelled", message "Task was cancelled"`); err != nil ||
		!reflect.DeepEqual(c.Expect, []string{"cancelled", "Task was cancelled"}) {
		t.Errorf("Expect = %q, %v", c.Expect, err)
	}
	if b := blocks[2]; b.Runnable || b.Skip != "a GitHub Actions workflow" || len(b.Mentions) != 1 {
		t.Errorf("skipped yaml block: %+v", b)
	}
	if b := blocks[3]; b.Runnable || b.Skip != "" || len(b.Mentions) != 0 {
		t.Errorf("json block without a command: %+v", b)
	}
	if len(inline) != 2 || inline[0].Text != "bridge serve --upstream URL" || inline[1].Text != "migrate-check -explain MCP001" {
		t.Errorf("inline mentions: %+v", inline)
	}
}

func TestParseRejects(t *testing.T) {
	for name, doc := range map[string]string{
		"unskipped command in text block": "```text\nbridge rollout --metrics-url URL\n```\n",
		"unskipped yaml run step":         "```yaml\n- run: migrate-check ./...\n```\n",
		"skip without reason":             "<!-- docs-check: skip () -->\n```sh\nbridge --help\n```\n",
		"unknown directive":               "<!-- docs-check: maybe -->\n```sh\nbridge --help\n```\n",
		"directive not before a fence":    "<!-- docs-check: skip (x) -->\ntext\n```sh\nbridge --help\n```\n",
		"exits count mismatch":            "<!-- docs-check: exits 0 0 -->\n```sh\nbridge --help\n```\n",
		"exits disagree with comment":     "<!-- docs-check: exits 0 -->\n```sh\nmigrate-check ./... # exit 3\n```\n",
		"server with nonzero exit":        "```sh\nbridge serve --upstream http://x # exit 1\n```\n",
		"unclosed fence":                  "```sh\nbridge --help\n",
		"unterminated quote":              "```sh\necho 'oops\n```\n",
		"dangling continuation":           "```sh\nbridge --help \\\n```\n",
		"malformed directive":             "<!-- docs-check skip (x) -->\n```sh\nbridge --help\n```\n",
	} {
		t.Run(name, func(t *testing.T) {
			if _, _, err := Parse("doc.md", []byte(doc)); err == nil {
				t.Errorf("Parse accepted:\n%s", doc)
			}
		})
	}
}

func TestClassify(t *testing.T) {
	for text, want := range map[string][2]string{
		"bridge serve --upstream http://127.0.0.1:8081/mcp":           {"server", RoleBridge},
		"TASKSBRIDGE_UPSTREAM=http://127.0.0.1:8081/mcp bridge serve": {"server", RoleBridge},
		"bridge serve --stdio --upstream-command \"srv --stdio\"":     {"shell", ""},
		"bridge serve --help":                                        {"shell", ""},
		"bridge demo":                                                {"server", RoleProbe},
		"go run ./cmd/bridge demo":                                   {"server", RoleProbe},
		"go run ./cmd/bridge/ demo --upstream-only":                  {"server", RoleUpstream},
		"go run ./cmd/bridge --help":                                 {"repo", ""},
		"go run ./cmd/migrate-check -list-rules":                     {"repo", ""},
		"bridge sessions list":                                       {"admin", ""},
		"bridge tasks show \"$TASK\"":                                {"admin", ""},
		"bridge tasks --help":                                        {"shell", ""},
		"bridge rollout --metrics-url http://127.0.0.1:8080/metrics": {"shell", ""},
		"make docs-check":                                            {"repo", ""},
		"go install ./cmd/...":                                       {"repo", ""},
		"curl -fsS http://127.0.0.1:8080/readyz":                     {"shell", ""},
	} {
		k, r := Classify(text)
		if k.String() != want[0] || r != want[1] {
			t.Errorf("Classify(%q) = %v, %q; want %s, %q", text, k, r, want[0], want[1])
		}
	}
}

func TestParseTool(t *testing.T) {
	for text, want := range map[string]Tool{
		"bridge tasks list --status working --json | head":          {Name: "bridge", Args: []string{"tasks", "list", "--status", "working", "--json"}, Flags: []string{"--status", "--json"}},
		"migrate-check -rules all,-MCP011 -fail-on=error ./... > x": {Name: "migrate-check", Args: []string{"-rules", "all,-MCP011", "-fail-on=error", "./..."}, Flags: []string{"-rules", "-fail-on"}},
		"go run ./cmd/bridge demo --listen 127.0.0.1:9000 # hi":     {Name: "bridge", Args: []string{"demo", "--listen", "127.0.0.1:9000"}, Flags: []string{"--listen"}},
		"bridge serve --upstream-command \"srv --stdio\"":           {Name: "bridge", Args: []string{"serve", "--upstream-command", "srv --stdio"}, Flags: []string{"--upstream-command"}},
	} {
		got, ok := ParseTool(text)
		if !ok || !reflect.DeepEqual(got, want) {
			t.Errorf("ParseTool(%q) = %+v, %v; want %+v", text, got, ok, want)
		}
	}
	if _, ok := ParseTool("curl -fsS http://x"); ok {
		t.Error("ParseTool accepted curl")
	}
	if got := (Tool{Args: []string{"tasks", "show", "ID", "--json"}}).Subcommands(); !reflect.DeepEqual(got, []string{"tasks", "show", "ID"}) {
		t.Errorf("Subcommands = %q", got)
	}
}

func TestHelpParsing(t *testing.T) {
	help := "COMMANDS:\n   list     list live tasks\n   show     show one task\n   help, h  Shows help\n\nOPTIONS:\n" +
		"   --data-dir value  the dir [$TASKSBRIDGE_DATA_DIR]\n   --json            JSON (default: false)\n   --help, -h  show help\n"
	if got := HelpCommands(help); !reflect.DeepEqual(got, []string{"list", "show", "help"}) {
		t.Errorf("HelpCommands = %q", got)
	}
	for flag, want := range map[string]bool{"--data-dir": true, "--json": true, "-h": true, "--data": false, "--status": false} {
		if got := HelpHasFlag(help, flag); got != want {
			t.Errorf("HelpHasFlag(%q) = %v, want %v", flag, got, want)
		}
	}
	mc := "Flags:\n  -fail-on severity\n    \texit 3 when\n  -fix-tags\n    \topt in\n"
	if !HelpHasFlag(mc, "-fail-on") || !HelpHasFlag(mc, "-fix-tags") || HelpHasFlag(mc, "-fix") {
		t.Error("HelpHasFlag on Go flag package help")
	}
}

func TestSubstituteAndListen(t *testing.T) {
	p := Placeholders{Bridge: "127.0.0.1:40001", Upstream: "127.0.0.1:40002"}
	if got := p.Substitute("curl http://127.0.0.1:8080/mcp http://localhost:8081/mcp"); got != "curl http://127.0.0.1:40001/mcp http://127.0.0.1:40002/mcp" {
		t.Errorf("Substitute = %q", got)
	}
	for in, want := range map[string]string{
		"bridge serve --upstream u --listen 127.0.0.1:8080 --data-dir d": "bridge serve --upstream u --listen 127.0.0.1:0 --data-dir d",
		"bridge serve --listen=0.0.0.0:8080":                             "bridge serve --listen 127.0.0.1:0",
		"go run ./cmd/bridge demo":                                       "go run ./cmd/bridge demo --listen 127.0.0.1:0",
	} {
		if got := WithListen(in, "127.0.0.1:0"); got != want {
			t.Errorf("WithListen(%q) = %q, want %q", in, got, want)
		}
	}
}

// parseDocs parses the user documents.
func parseDocs(t *testing.T, root string) (map[string][]Block, []Mention) {
	t.Helper()
	all := map[string][]Block{}
	var mentions []Mention
	for _, d := range Documents {
		src, err := os.ReadFile(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		blocks, inline, err := Parse(d, src)
		if err != nil {
			t.Fatal(err)
		}
		all[d] = blocks
		mentions = append(mentions, inline...)
		for _, b := range blocks {
			mentions = append(mentions, b.Mentions...)
		}
	}
	return all, mentions
}

// TestDocsStructure checks what the documents must contain and
// that their blocks follow the conventions; it needs no binaries.
func TestDocsStructure(t *testing.T) {
	root := moduleRoot(t)
	all, _ := parseDocs(t, root)
	for _, d := range Documents {
		n := 0
		for _, b := range all[d] {
			n += len(b.Commands)
			if b.Skip != "" {
				t.Logf("%s:%d: skipped (%s)", d, b.Line, b.Skip)
			}
		}
		if n < 5 {
			t.Errorf("%s: only %d runnable commands", d, n)
		}
	}
	checkLinks(t, root)
	guide, err := os.ReadFile(filepath.Join(root, "docs", "MIGRATION.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The seven parts of the guide, in order.
	parts := []string{
		`(?m)^## 1\. What changed and why`,
		`(?m)^## 2\. Phase 1: audit`,
		`(?m)^## 3\. Phase 2: `,
		`(?m)^## 4\. Phase 3: `,
		`(?m)^## 5\. Per-SDK notes`,
		`(?m)^## 6\. Bridge policies`,
		`(?m)^## 7\. FAQ and troubleshooting`,
	}
	last := -1
	for _, p := range parts {
		loc := regexp.MustCompile(p).FindIndex(guide)
		if loc == nil {
			t.Errorf("MIGRATION.md: no heading matching %s", p)
			continue
		}
		if loc[0] < last {
			t.Errorf("MIGRATION.md: heading %s out of order", p)
		}
		last = loc[0]
	}
	for _, must := range []string{"-32021", "Mcp-Name", "isError", "ttlMs", "pollIntervalMs", "tasks/list", "input_required",
		"2026-06-30", "client.experimental.tasks", "v0.44.0", "AddExtension", "SARIF", "bridge rollout", "/readyz"} {
		if !strings.Contains(string(guide), must) {
			t.Errorf("MIGRATION.md does not mention %q", must)
		}
	}
	// -32003 is the draft number of -32021 (M-45): the guide
	// may name it only to say it is wrong.
	for _, l := range strings.Split(string(guide), "\n") {
		if strings.Contains(l, "-32003") && !regexp.MustCompile(`(?i)draft|never|not `).MatchString(l) {
			t.Errorf("MIGRATION.md presents -32003 as a real code: %q", l)
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, must := range []string{"make test", "go run ./cmd/bridge demo", "docs/MIGRATION.md", "docs/CONFORMANCE.md",
		"docs/PERFORMANCE.md", "docs/METRICS.md", "docs/rules", "## migrate-check"} {
		if !strings.Contains(string(readme), must) {
			t.Errorf("README.md does not mention %q", must)
		}
	}
}

// TestDocsCommands runs every command of the documents (make docs-check).
// It builds both binaries, starts bridges and takes about half a minute, so
// plain `go test ./...` skips it; `make test` runs it through docs-check.
func TestDocsCommands(t *testing.T) {
	if os.Getenv("TASKSBRIDGE_DOCS_CHECK") == "" {
		t.Skip("run by `make docs-check` (TASKSBRIDGE_DOCS_CHECK=1): builds the binaries and runs every documented command")
	}
	if _, err := exec.LookPath("bash"); err != nil {
		t.Fatal("docs-check needs bash")
	}
	root := moduleRoot(t)
	all, mentions := parseDocs(t, root)
	bin := buildBinaries(t, root)

	t.Run("flags", func(t *testing.T) { checkFlags(t, bin, mentions) })
	for _, d := range Documents {
		t.Run(filepath.Base(d), func(t *testing.T) {
			work := filepath.Join(t.TempDir(), "orders-agent")
			copyFixture(t, work)
			h := newHarness(t, root, bin, work)
			sh, err := startShell(work, h.env)
			if err != nil {
				t.Fatal(err)
			}
			defer sh.close()
			skipped := 0
			for _, b := range all[d] {
				if b.Skip != "" {
					skipped++
					t.Logf("%s:%d: skipped: %s", d, b.Line, b.Skip)
					continue
				}
				for _, c := range b.Commands {
					h.runCommand(sh, c)
				}
			}
			h.finish()
			t.Logf("%s: ran %d shell, %d repo, %d server and %d admin commands; %d blocks skipped",
				d, h.stats[Shell], h.stats[Repo], h.stats[Server], h.stats[Admin], skipped)
		})
	}
}

// checkFlags verifies that every bridge and migrate-check command the
// documents mention (run or not, inline or fenced) names a real subcommand
// and real flags: the guide must not invent what the binaries lack.
func checkFlags(t *testing.T, bin string, mentions []Mention) {
	helps := map[string]string{}
	help := func(tool string, path []string) string {
		key := tool + " " + strings.Join(path, " ")
		if h, ok := helps[key]; ok {
			return h
		}
		var cmd *exec.Cmd
		if tool == "bridge" {
			cmd = exec.Command(filepath.Join(bin, "bridge"), append(append([]string{}, path...), "--help")...)
		} else {
			cmd = exec.Command(filepath.Join(bin, "migrate-check"), "-help")
		}
		out, _ := cmd.CombinedOutput() // -help exits 0 or 2 depending on the flag package
		helps[key] = string(out)
		return helps[key]
	}
	checked := 0
	for _, m := range mentions {
		tool, ok := ParseTool(m.Text)
		if !ok {
			continue
		}
		var path []string
		if tool.Name == "bridge" {
			for _, w := range tool.Subcommands() {
				if !contains(HelpCommands(help("bridge", path)), w) {
					break
				}
				path = append(path, w)
			}
			if sub := tool.Subcommands(); len(path) == 0 && len(sub) > 0 {
				t.Errorf("%s:%d: %q: bridge has no subcommand %q", m.File, m.Line, m.Text, sub[0])
				continue
			}
		}
		h := help(tool.Name, path)
		for _, f := range tool.Flags {
			if f == "-h" || f == "-help" || f == "--help" {
				continue // every command has help
			}
			if !HelpHasFlag(h, f) {
				t.Errorf("%s:%d: %q: %s %s has no flag %s", m.File, m.Line, m.Text, tool.Name, strings.Join(path, " "), f)
			}
			checked++
		}
	}
	t.Logf("%d mentions, %d flags checked against --help", len(mentions), checked)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// checkLinks verifies that the documents' relative links name files that
// exist and anchors that their headings produce.
func checkLinks(t *testing.T, root string) {
	t.Helper()
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		anchors[path] = Anchors(src)
		return anchors[path]
	}
	for _, d := range Documents {
		src, err := os.ReadFile(filepath.Join(root, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range Links(src) {
			if strings.Contains(l.Target, "://") || strings.HasPrefix(l.Target, "mailto:") {
				continue
			}
			file, frag, _ := strings.Cut(l.Target, "#")
			path := filepath.Join(root, d)
			if file != "" {
				path = filepath.Join(root, filepath.Dir(d), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s:%d: link %q: %v", d, l.Line, l.Target, err)
				continue
			}
			if frag != "" && strings.HasSuffix(path, ".md") && !anchorsOf(path)[frag] {
				t.Errorf("%s:%d: link %q: no heading with anchor #%s", d, l.Line, l.Target, frag)
			}
		}
	}
}

func TestSlugAndLinks(t *testing.T) {
	for h, want := range map[string]string{
		"TypeScript SDK v1 (1.24–1.32)":                 "typescript-sdk-v1-124132",
		"-32021 Missing required client capability":     "-32021-missing-required-client-capability",
		"What tasks/list shows, and to whom":            "what-taskslist-shows-and-to-whom",
		"Configuration: .migrate-check.yaml":            "configuration-migrate-checkyaml",
		"4. Phase 3: watch the rollout, then remove it": "4-phase-3-watch-the-rollout-then-remove-it",
	} {
		if got := Slug(h); got != want {
			t.Errorf("Slug(%q) = %q, want %q", h, got, want)
		}
	}
	doc := []byte("# A `b` c\n\nSee [x](#a-b-c) and [y](other.md#z).\n```sh\necho '[no](link.md)'\n# not a heading\n```\n")
	if a := Anchors(doc); !a["a-b-c"] || len(a) != 1 {
		t.Errorf("Anchors = %v", a)
	}
	if l := Links(doc); len(l) != 2 || l[0].Target != "#a-b-c" || l[1].Target != "other.md#z" || l[1].Line != 3 {
		t.Errorf("Links = %+v", l)
	}
}
