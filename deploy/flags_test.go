package deploy_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

var (
	flagRE = regexp.MustCompile(`(?:^|[\s"'\[,])(--[a-z][a-z0-9-]*)`)
	envRE  = regexp.MustCompile(`\bTASKSBRIDGE_[A-Z0-9_]+\b`)
)

// uncommented returns a file's lines that are not comments (# ...).
func uncommented(t *testing.T, path string) []string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// named collects the bridge flags and environment variables the deployment
// files set. Kubernetes manifests, the systemd unit and its example
// environment: every uncommented line (comments may name planned flags, and
// the example's commented-out settings are checked too, since an operator
// uncomments them). The Dockerfile: its ENV, ENTRYPOINT and CMD only (COPY
// --from and go build flags are not the bridge's).
func named(t *testing.T) (flags, envs map[string][]string) {
	t.Helper()
	flags, envs = map[string][]string{}, map[string][]string{}
	add := func(file, line string, withFlags bool) {
		if withFlags {
			for _, m := range flagRE.FindAllStringSubmatch(line, -1) {
				flags[m[1]] = append(flags[m[1]], file)
			}
		}
		for _, m := range envRE.FindAllString(line, -1) {
			envs[m] = append(envs[m], file)
		}
	}
	files, _ := filepath.Glob(filepath.Join(kubeDir, "*.yaml"))
	files = append(files, filepath.Join("systemd", "tasksbridge.service"))
	for _, f := range files {
		for _, l := range uncommented(t, f) {
			add(f, l, true)
		}
	}
	env := filepath.Join("systemd", "env.example")
	b, err := os.ReadFile(env)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		if m := regexp.MustCompile(`^#?(TASKSBRIDGE_[A-Z0-9_]+)=`).FindStringSubmatch(l); m != nil {
			envs[m[1]] = append(envs[m[1]], env)
		}
	}
	df := filepath.Join(root, "Dockerfile")
	ins, err := instructions(df)
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range ins {
		switch strings.SplitN(in, " ", 2)[0] {
		case "ENV", "ENTRYPOINT", "CMD":
			add("Dockerfile", in, !strings.HasPrefix(in, "ENV "))
		}
	}
	return flags, envs
}

// (b) Every flag and environment variable the deployment files name is one
// `bridge serve --help` (the binary built from this checkout) lists.
func TestDeployNamesOnlyExistingSettings(t *testing.T) {
	out, err := exec.Command(bridgeBinary(t), "serve", "--help").Output()
	if err != nil {
		t.Fatalf("bridge serve --help: %v", err)
	}
	help := string(out)
	flags, envs := named(t)
	// The extraction itself must find what is known to be there.
	for _, want := range []string{"TASKSBRIDGE_STORE", "TASKSBRIDGE_UPSTREAM", "TASKSBRIDGE_LISTEN", "TASKSBRIDGE_DATA_DIR", "TASKSBRIDGE_SHUTDOWN_TIMEOUT"} {
		if envs[want] == nil {
			t.Errorf("no deployment file names %s: the extraction is broken", want)
		}
	}
	if flags["--data-dir"] == nil {
		t.Error("the systemd unit's --data-dir was not found: the extraction is broken")
	}
	for _, f := range sortedKeys(flags) {
		if !regexp.MustCompile(`(?m)^\s+` + regexp.QuoteMeta(f) + `[ ,]`).MatchString(help) {
			t.Errorf("%v name %s, which bridge serve does not have", flags[f], f)
		}
	}
	for _, e := range sortedKeys(envs) {
		if !strings.Contains(help, "$"+e+"]") && !strings.Contains(help, "$"+e+",") {
			t.Errorf("%v name %s, which no flag of bridge serve reads", envs[e], e)
		}
	}
}

// The check above recognises a setting that does not exist.
func TestDeployNamesCheckCatchesUnknown(t *testing.T) {
	out, err := exec.Command(bridgeBinary(t), "serve", "--help").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, bogus := range []string{"$TASKSBRIDGE_NO_SUCH_SETTING]", "  --no-such-setting "} {
		if strings.Contains(string(out), bogus) {
			t.Fatalf("bridge serve --help has %q: pick another name for this check", bogus)
		}
	}
	if m := flagRE.FindAllStringSubmatch(`ExecStart=/usr/local/bin/bridge serve --shutdown-delay 5s`, -1); len(m) != 1 || m[0][1] != "--shutdown-delay" {
		t.Fatalf("flagRE found %q", m)
	}
}

func sortedKeys(m map[string][]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// The Dockerfile's final stage is what docs/MIGRATION.md and the Kubernetes
// base rely on.
func TestDockerfile(t *testing.T) {
	ins, err := instructions(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var final []string
	for _, in := range ins {
		if strings.HasPrefix(in, "FROM ") {
			final = nil
		}
		final = append(final, in)
	}
	want := map[string]bool{
		"FROM gcr.io/distroless/static-debian12:nonroot": false,
		"USER 65532:65532":                false,
		`ENTRYPOINT ["/bridge"]`:          false,
		`CMD ["serve"]`:                   false,
		"EXPOSE 8080":                     false,
		`VOLUME ["/var/lib/tasksbridge"]`: false,
	}
	envOK := false
	for _, in := range final {
		if _, ok := want[in]; ok {
			want[in] = true
		}
		if strings.HasPrefix(in, "ENV ") && strings.Contains(in, "TASKSBRIDGE_LISTEN=0.0.0.0:8080") && strings.Contains(in, "TASKSBRIDGE_DATA_DIR=/var/lib/tasksbridge") {
			envOK = true
		}
		if strings.HasPrefix(in, "RUN ") {
			t.Errorf("the final stage runs %q: it has no shell", in)
		}
	}
	for in, ok := range want {
		if !ok {
			t.Errorf("the final stage lacks %q", in)
		}
	}
	if !envOK {
		t.Error("the final stage does not set TASKSBRIDGE_LISTEN=0.0.0.0:8080 and TASKSBRIDGE_DATA_DIR=/var/lib/tasksbridge")
	}
	env, args, err := dockerfileBuild(filepath.Join(root, "Dockerfile"), buildArgs)
	if err != nil {
		t.Fatal(err)
	}
	line := strings.Join(append(env, args...), " ")
	for _, w := range []string{"CGO_ENABLED=0", "-trimpath", "-buildvcs=false", "./cmd/bridge"} {
		if !strings.Contains(line, w) {
			t.Errorf("the go build line lacks %s: %s", w, line)
		}
	}
	// -buildvcs=false is right only because the context has no .git.
	ignore, err := os.ReadFile(filepath.Join(root, ".dockerignore"))
	if err != nil || !regexp.MustCompile(`(?m)^\.git$`).Match(ignore) {
		t.Errorf(".dockerignore does not leave out .git (%v)", err)
	}
}

// decodeJSON decodes `docker image inspect` output for the docker test.
func decodeJSON(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
}
