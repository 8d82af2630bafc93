package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/version"
)

// runCLI runs the bridge CLI in-process and returns its stdout and error.
func runBridgeCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	app := newApp()
	var out bytes.Buffer
	app.Writer, app.ErrWriter = &out, io.Discard
	app.ExitErrHandler = func(*cli.Context, error) {} // return the exit code, do not exit
	err := app.Run(append([]string{"bridge"}, args...))
	return out.String(), err
}

func cliExitCode(err error) int {
	var ec cli.ExitCoder
	if errors.As(err, &ec) {
		return ec.ExitCode()
	}
	if err != nil {
		return 1
	}
	return 0
}

// `bridge help` and `bridge help serve` print the same help as --help does,
// and --help keeps working on the app and on commands.
func TestHelpCommand(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"help"}, []string{"COMMANDS:", "serve", "completion", "version", "--version"}},
		{[]string{"--help"}, []string{"COMMANDS:", "serve", "completion"}},
		{[]string{"help", "serve"}, []string{"bridge serve", "--upstream", "TASKSBRIDGE_LISTEN"}},
		{[]string{"serve", "--help"}, []string{"bridge serve", "--upstream", "TASKSBRIDGE_LISTEN"}},
		{[]string{"help", "store"}, []string{"verify"}},
		{[]string{"help", "completion"}, []string{"bash|zsh|fish"}},
		{[]string{"help", "--help"}, []string{"COMMANDS:", "help, h"}}, // urfave/cli shows the app help here
		{[]string{"help", "store", "verify"}, []string{"bridge store verify", "--data-dir"}},
	} {
		out, err := runBridgeCLI(t, tc.args...)
		if err != nil {
			t.Errorf("bridge %v: %v", tc.args, err)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("bridge %v lacks %q:\n%s", tc.args, w, out)
			}
		}
	}
	help, _ := runBridgeCLI(t, "help", "serve")
	flagHelp, _ := runBridgeCLI(t, "serve", "--help")
	if help != flagHelp {
		t.Errorf("bridge help serve and bridge serve --help differ:\n%s\n---\n%s", help, flagHelp)
	}
	if _, err := runBridgeCLI(t, "help", "nosuch"); cliExitCode(err) != 3 || !strings.Contains(err.Error(), "nosuch") {
		t.Errorf("bridge help nosuch: %v (exit %d), want exit 3 naming the topic", err, cliExitCode(err))
	}
}

// --max-sessions shows one default, not the flag's Value and the Usage's.
func TestServeHelpOneMaxSessionsDefault(t *testing.T) {
	out, _ := runBridgeCLI(t, "serve", "--help")
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "--max-sessions") {
			if n := strings.Count(l, "default:"); n != 1 {
				t.Fatalf("--max-sessions help has %d defaults: %s", n, l)
			}
			return
		}
	}
	t.Fatalf("no --max-sessions in serve help:\n%s", out)
}

func TestVersionOutputs(t *testing.T) {
	bi := version.Info()
	out, err := runBridgeCLI(t, "--version")
	if err != nil || !strings.Contains(out, version.String()) || !strings.Contains(out, "revision ") || !strings.Contains(out, bi.GoVersion) {
		t.Errorf("bridge --version = %q, %v; want it to contain %q", out, err, version.String())
	}
	out, err = runBridgeCLI(t, "version")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"bridge " + bi.Version + "\n", "revision: ", "dirty: ", "built: ", "go: " + bi.GoVersion} {
		if !strings.Contains(out, w) {
			t.Errorf("bridge version lacks %q:\n%s", w, out)
		}
	}
	out, err = runBridgeCLI(t, "version", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var got version.BuildInfo
	if err := json.Unmarshal([]byte(out), &got); err != nil || got != bi {
		t.Errorf("bridge version --json = %s (%v), want %+v", out, err, bi)
	}
}

// TestCompletionHelperProcess is not a test: the completion scripts run it
// as `bridge` (see fakeBridge) to ask for candidates.
func TestCompletionHelperProcess(t *testing.T) {
	if os.Getenv("TASKSBRIDGE_COMPLETION_HELPER") != "1" {
		t.Skip("helper process for TestCompletionBash")
	}
	args := os.Args
	for i, a := range args {
		if a == "--" {
			args = args[i+1:]
			break
		}
	}
	// urfave/cli reads os.Args itself to tell flag completion from command
	// completion, so it must look like the real binary's.
	os.Args = append([]string{"bridge"}, args...)
	app := newApp()
	if err := app.Run(os.Args); err != nil {
		os.Exit(1)
	}
	os.Exit(0)
}

// fakeBridge puts a `bridge` on a fresh PATH that runs this CLI.
func fakeBridge(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	script := "#!/bin/sh\nexec '" + exe + "' -test.run='^TestCompletionHelperProcess$' -- \"$@\"\n"
	if err := os.WriteFile(filepath.Join(dir, "bridge"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("TASKSBRIDGE_COMPLETION_HELPER", "1")
	return dir
}

// The bash script completes subcommands and flags by asking the binary.
func TestCompletionBash(t *testing.T) {
	script, err := runBridgeCLI(t, "completion", "bash")
	if err != nil || !strings.Contains(script, "complete ") || !strings.Contains(script, "--generate-bash-completion") {
		t.Fatalf("bridge completion bash = %q, %v", script, err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash is not installed: the script's behaviour is not exercised")
	}
	dir := fakeBridge(t)
	scriptPath := filepath.Join(t.TempDir(), "bridge.bash")
	if err := os.WriteFile(scriptPath, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	complete := func(words ...string) []string {
		t.Helper()
		var q []string
		for _, w := range words {
			q = append(q, "'"+w+"'")
		}
		prog := "source '" + scriptPath + "'\nCOMP_WORDS=(" + strings.Join(q, " ") + ")\nCOMP_CWORD=" +
			strconv.Itoa(len(words)-1) + "\n_bridge_complete\nprintf '%s\\n' \"${COMPREPLY[@]}\"\n"
		cmd := exec.Command(bash, "--norc", "--noprofile", "-c", prog)
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("bash completion of %v: %v\n%s", words, err, out)
		}
		return strings.Fields(string(out))
	}
	if got := complete("bridge", "se"); !sameSet(got, "serve", "sessions") {
		t.Errorf("bridge se<TAB> = %q, want serve and sessions", got)
	}
	if got := complete("bridge", "serve", "--data-"); !sameSet(got, "--data-dir") {
		t.Errorf("bridge serve --data-<TAB> = %q, want --data-dir", got)
	}
	if got := complete("bridge", "store", ""); !slices.Contains(got, "verify") {
		t.Errorf("bridge store <TAB> = %q, want verify among them", got)
	}
}

func TestCompletionZshAndFish(t *testing.T) {
	zsh, err := runBridgeCLI(t, "completion", "zsh")
	if err != nil || !strings.HasPrefix(zsh, "#compdef bridge\n") || !strings.Contains(zsh, "--generate-bash-completion") {
		t.Errorf("bridge completion zsh = %q, %v", zsh, err)
	}
	fish, err := runBridgeCLI(t, "completion", "fish")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"complete -c bridge", "-a 'serve'", "-l upstream", "-l data-dir", "-a 'completion'"} {
		if !strings.Contains(fish, w) {
			t.Errorf("bridge completion fish lacks %q", w)
		}
	}
	for sh, script := range map[string]string{"zsh": zsh, "fish": fish} {
		bin, err := exec.LookPath(sh)
		if err != nil {
			t.Logf("%s is not installed: its script's syntax is not checked", sh)
			continue
		}
		f := filepath.Join(t.TempDir(), "bridge."+sh)
		if err := os.WriteFile(f, []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(bin, "-n", f).CombinedOutput(); err != nil {
			t.Errorf("%s -n: %v\n%s", sh, err, out)
		}
	}
	for _, args := range [][]string{{"completion"}, {"completion", "tcsh"}, {"completion", "bash", "zsh"}} {
		if _, err := runBridgeCLI(t, args...); cliExitCode(err) != 2 {
			t.Errorf("bridge %v: %v (exit %d), want exit 2", args, err, cliExitCode(err))
		}
	}
}

func sameSet(got []string, want ...string) bool {
	if len(got) != len(want) {
		return false
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			return false
		}
	}
	return true
}
