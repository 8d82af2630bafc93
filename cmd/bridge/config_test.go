package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/internal/testkit/syncbuf"
	"github.com/tasksbridge/tasksbridge/router"
)

// bridgeBinary is the bridge built once for this package's child-process
// tests (sigterm_test.go): signals and environment variables need a
// process of their own.
func bridgeBinary(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	return buildBridgeOnce(ctx, t)
}

// runBinary runs the built bridge with env added to a clean environment
// (no TASKSBRIDGE_ variables of the test's own).
func runBinary(t *testing.T, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	cmd := exec.Command(bridgeBinary(t), args...)
	cmd.Env = append(cleanEnv(), env...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), code
}

func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TASKSBRIDGE_") {
			env = append(env, kv)
		}
	}
	return env
}

func writeConfig(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
}

// printed returns the value and comment of key in `config print` output.
func printed(t *testing.T, out, key string) (value, comment string) {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if rest, ok := strings.CutPrefix(l, key+":"); ok {
			v, c, _ := strings.Cut(rest, "#")
			return strings.TrimSpace(v), strings.TrimSpace(c)
		}
	}
	t.Fatalf("no %s in:\n%s", key, out)
	return "", ""
}

// A flag beats its environment variable, which beats the config file, which
// beats the default; config print names each value's source.
func TestConfigPrecedence(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yaml")
	writeConfig(t, cfg, "upstream: http://127.0.0.1:9000/mcp\nmax-sessions: 100\nmax-tasks-per-principal: 10\nmax-waiters-per-principal: 20\nallowed-origin: [https://a.example, https://b.example]\n")
	out, errOut, code := runBinary(t, []string{"TASKSBRIDGE_MAX_TASKS_PER_PRINCIPAL=11", "TASKSBRIDGE_MAX_SESSIONS=101", "TASKSBRIDGE_CONFIG=" + cfg},
		"config", "print", "--max-sessions", "102")
	if code != 0 {
		t.Fatalf("config print: exit %d: %s", code, errOut)
	}
	for _, tc := range []struct{ key, value, comment string }{
		{"max-sessions", "102", "from --max-sessions"},
		{"max-tasks-per-principal", "11", "from TASKSBRIDGE_MAX_TASKS_PER_PRINCIPAL"},
		{"max-waiters-per-principal", "20", "from " + cfg + ":4"},
		{"upstream", "http://127.0.0.1:9000/mcp", "from " + cfg + ":1"},
		{"listen", "127.0.0.1:8080", "default"},
	} {
		if v, c := printed(t, out, tc.key); v != tc.value || c != tc.comment {
			t.Errorf("%s: %q # %q, want %q # %q", tc.key, v, c, tc.value, tc.comment)
		}
	}
	if !strings.Contains(out, "allowed-origin: # from "+cfg+":5\n  - https://a.example\n  - https://b.example\n") {
		t.Errorf("allowed-origin:\n%s", out)
	}
}

// Unknown keys and bad values are refused with the file, the line and the
// key; the nearest key is suggested for a typo. serve refuses the same file
// before it listens.
func TestConfigFileErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yaml")
	for _, tc := range []struct{ text, want string }{
		{"upstream: http://127.0.0.1:9000/mcp\nmax_sesions: 3\n", cfg + `:2: max_sesions: unknown key (did you mean "max-sessions"?)`},
		{"upstream: http://127.0.0.1:9000/mcp\n\nmax-sessions: lots\n", cfg + `:3: max-sessions: "lots" is not a whole number`},
		{"upstream: http://127.0.0.1:9000/mcp\nkeepalive: soon\n", cfg + `:2: keepalive: "soon" is not a duration`},
		{"upstream: http://127.0.0.1:9000/mcp\nlog-level: loud\n", cfg + `:2: log-level: "loud": want debug, info, warn or error`},
		{"upstream: http://127.0.0.1:9000/mcp\nallowed-origin:\n  - https://ok.example\n  - \"*\"\n", cfg + `:3: allowed-origin: --allowed-origin does not take "*"`},
		{"upstream: http://127.0.0.1:9000/mcp\nlisten: [a, b]\n", cfg + `:2: listen: takes one value, not a list`},
		{"upstream: http://127.0.0.1:9000/mcp\nupstream: http://x\n", cfg + `:2: upstream: set twice (first on line 1)`},
		{"upstream: [\n", cfg + `:1: not valid YAML`},
		{"- a\n", cfg + `:1: want a mapping of settings`},
		{"upstream: http://127.0.0.1:9000/mcp\nzzz: 1\n", cfg + `:2: zzz: unknown key (` + "`bridge config reference`" + ` lists the keys)`},
	} {
		writeConfig(t, cfg, tc.text)
		_, err := runBridgeCLI(t, "config", "check", "--config", cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) || cliExitCode(err) == 0 {
			t.Errorf("config check of %q: %v, want %q", tc.text, err, tc.want)
		}
		_, err = runBridgeCLI(t, "serve", "--config", cfg, "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("serve with %q: %v, want %q", tc.text, err, tc.want)
		}
	}
}

// config check exits 0 on a valid configuration and 1 with the reasons,
// each naming its source, on a bad one.
func TestConfigCheckExitCodes(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yaml")
	writeConfig(t, cfg, "upstream: http://127.0.0.1:9000/mcp\nmax-sessions: 100\n")
	if out, errOut, code := runBinary(t, nil, "config", "check", "--config", cfg); code != 0 || out != cfg+": ok\n" {
		t.Errorf("valid: exit %d %q %q", code, out, errOut)
	}
	writeConfig(t, cfg, "upstream: http://127.0.0.1:9000/mcp\nmax-sessions: lots\n")
	if _, errOut, code := runBinary(t, nil, "config", "check", "--config", cfg); code != 1 || !strings.Contains(errOut, cfg+":2: max-sessions:") {
		t.Errorf("bad value: exit %d %q", code, errOut)
	}
	writeConfig(t, cfg, "max-sessions: 5\nsession-cache: 0\n")
	_, errOut, code := runBinary(t, []string{"TASKSBRIDGE_LOG_FORMAT=xml"}, "config", "check", "--config", cfg)
	if code != 1 || !strings.Contains(errOut, cfg+":2: session-cache: 0 would reload") ||
		!strings.Contains(errOut, "TASKSBRIDGE_LOG_FORMAT: \"xml\": want text or json") || !strings.Contains(errOut, "no upstream") {
		t.Errorf("semantic checks: exit %d %q", code, errOut)
	}
	if out, _, code := runBinary(t, []string{"TASKSBRIDGE_UPSTREAM=http://127.0.0.1:9000/mcp"}, "config", "check"); code != 0 || !strings.Contains(out, "no config file") {
		t.Errorf("without a file: exit %d %q", code, out)
	}
}

// config print redacts the password in --store's URL, never reads the
// password files it names, and its output is a config file that gives the
// same configuration.
func TestConfigPrintRedactsAndRoundTrips(t *testing.T) {
	dir := t.TempDir()
	pwFile := filepath.Join(dir, "redis-password")
	writeConfig(t, pwFile, "hunter2-in-file\n")
	cfg := filepath.Join(dir, "bridge.yaml")
	writeConfig(t, cfg, "upstream: http://127.0.0.1:9000/mcp\nstore: redis://app:hunter2-in-url@127.0.0.1:6379/0\nredis-password-file: "+pwFile+"\nallowed-host: [mcp.example.com]\nlog-level: debug\nstdio: true\n")
	out, err := runBridgeCLI(t, "config", "print", "--config", cfg)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out, "hunter2") {
		t.Fatalf("a secret is printed:\n%s", out)
	}
	if v, _ := printed(t, out, "store"); v != "redis://app:xxxxx@127.0.0.1:6379/0" {
		t.Errorf("store %q", v)
	}
	printedCfg := filepath.Join(dir, "printed.yaml")
	writeConfig(t, printedCfg, out)
	if _, err := runBridgeCLI(t, "config", "check", "--config", printedCfg); err != nil {
		t.Fatalf("config check of the printed configuration: %v", err)
	}
	again, err := runBridgeCLI(t, "config", "print", "--config", printedCfg)
	if err != nil {
		t.Fatal(err)
	}
	strip := func(s string) string {
		var b strings.Builder
		for _, l := range strings.Split(s, "\n") {
			if v, _, _ := strings.Cut(l, "#"); strings.TrimSpace(v) != "" {
				b.WriteString(strings.TrimRight(v, " ") + "\n")
			}
		}
		return b.String()
	}
	if strip(out) != strip(again) {
		t.Errorf("round trip differs:\n%s\n---\n%s", strip(out), strip(again))
	}
}

// serveFlagsForTest are bridge serve's flags, --config included.
func serveFlagsForTest(t *testing.T) []cli.Flag {
	for _, c := range commands {
		if c.Name == "serve" {
			return c.Flags
		}
	}
	t.Fatal("no serve command")
	return nil
}

// withReloader runs fn with a reloader of a serve configuration (flags
// args), its log and what it applied.
func withReloader(t *testing.T, args []string, fn func(r *reloader, log *syncbuf.Buffer, lv *slog.LevelVar, applied *[]router.Live)) {
	t.Helper()
	flags := serveFlagsForTest(t)
	app := &cli.App{Name: "bridge", Writer: io.Discard, ErrWriter: io.Discard, Commands: []*cli.Command{{
		Name:   "x",
		Flags:  flags,
		Before: func(c *cli.Context) error { return loadConfigFile(c, flags, true) },
		Action: func(c *cli.Context) error {
			var buf syncbuf.Buffer
			lv := new(slog.LevelVar)
			log := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
			var applied []router.Live
			r := newReloader(c, nil, lv, log, func(l router.Live) error {
				if len(l.AllowedOrigins) > 0 && l.AllowedOrigins[0] == "https://refuse.example" {
					return errors.New("refused by the server")
				}
				applied = append(applied, l)
				return nil
			})
			fn(r, &buf, lv, &applied)
			return nil
		},
	}}}
	if err := app.Run(append([]string{"bridge", "x"}, args...)); err != nil {
		t.Fatal(err)
	}
}

// One SIGHUP's work: live keys applied and logged old → new, restart keys
// warned about, a broken file logged with its line and nothing applied, a
// flag still beating the file; the reload hooks run every time.
func TestReloadAppliesLiveKeys(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yaml")
	base := "upstream: http://127.0.0.1:9000/mcp\n"
	writeConfig(t, cfg, base+"allowed-origin: [https://a.example]\nmax-sessions: 10\nstore: redis://u:pw-one@127.0.0.1:6379/0\n")
	withReloader(t, []string{"--config", cfg, "--max-waiters-per-principal", "7"}, func(r *reloader, log *syncbuf.Buffer, lv *slog.LevelVar, applied *[]router.Live) {
		hooks := 0
		r.addHook(func() error { hooks++; return nil })
		r.addHook(func() error { return errors.New("certificate file unreadable") })

		writeConfig(t, cfg, base+"allowed-origin: [https://b.example]\nmax-sessions: 20\nlog-level: debug\nlisten: 127.0.0.1:9\nmax-waiters-per-principal: 99\nstore: redis://u:pw-two@127.0.0.1:6379/0\n")
		r.reload()
		out := log.String()
		if len(*applied) != 1 {
			t.Fatalf("applied %d times:\n%s", len(*applied), out)
		}
		l := (*applied)[0]
		if l.AllowedOrigins[0] != "https://b.example" || l.MaxSessions != 20 || l.MaxWaitersPerPrincipal != 7 {
			t.Errorf("applied %+v", l)
		}
		if lv.Level() != slog.LevelDebug {
			t.Errorf("level %v", lv.Level())
		}
		for _, want := range []string{
			"allowed-origin changed: https://a.example → https://b.example",
			"max-sessions changed: 10 → 20",
			"log-level changed: info → debug",
			`level=WARN msg="changed in the config file but needs a restart: listen"`,
			`level=WARN msg="changed in the config file but needs a restart: store"`,
			"certificate file unreadable",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("log lacks %q:\n%s", want, out)
			}
		}
		if strings.Contains(out, "pw-") {
			t.Errorf("a password is logged:\n%s", out)
		}
		if strings.Contains(out, "max-waiters-per-principal") {
			t.Errorf("a flag's value was taken from the file:\n%s", out)
		}
		if hooks != 1 {
			t.Errorf("hooks run %d times", hooks)
		}

		writeConfig(t, cfg, base+"allowed-origin: [https://b.example]\nmax-sessions: lots\n")
		r.reload()
		if len(*applied) != 1 || !strings.Contains(log.String(), cfg+":3: max-sessions: \\\"lots\\\" is not a whole number") || !strings.Contains(log.String(), "level=ERROR") {
			t.Errorf("broken file: applied %d:\n%s", len(*applied), log.String())
		}
		if hooks != 2 {
			t.Errorf("hooks after a broken file: %d", hooks)
		}

		writeConfig(t, cfg, base+"allowed-origin: [https://refuse.example]\n")
		r.reload()
		if len(*applied) != 1 || !strings.Contains(log.String(), "refused by the server") {
			t.Errorf("a value the server refuses: applied %d:\n%s", len(*applied), log.String())
		}
	})
}

// Without --config a SIGHUP only runs the hooks and says there is no file.
func TestReloadWithoutConfigFile(t *testing.T) {
	withReloader(t, []string{"--upstream", "http://127.0.0.1:9000/mcp"}, func(r *reloader, log *syncbuf.Buffer, _ *slog.LevelVar, applied *[]router.Live) {
		hooks := 0
		r.addHook(func() error { hooks++; return nil })
		r.reload()
		if hooks != 1 || len(*applied) != 0 || !strings.Contains(log.String(), "no config file") {
			t.Errorf("hooks %d applied %d:\n%s", hooks, len(*applied), log.String())
		}
	})
}

// serveChild is a running `bridge serve` process.
type serveChild struct {
	cmd    *exec.Cmd
	url    string // the /mcp endpoint
	stderr *syncbuf.Buffer
	done   chan error
}

func startServeChild(ctx context.Context, t *testing.T, args ...string) *serveChild {
	t.Helper()
	cmd := exec.Command(bridgeBinary(t), append([]string{"serve"}, args...)...)
	cmd.Env = cleanEnv()
	sc := &serveChild{cmd: cmd, stderr: new(syncbuf.Buffer), done: make(chan error, 1)}
	cmd.Stderr, cmd.Stdout = sc.stderr, io.Discard
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		sc.done <- cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		select {
		case <-exited:
		default:
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if strings.Contains(sc.stderr.String(), "serving MCP clients") {
			break
		}
		select {
		case err := <-sc.done:
			t.Fatalf("bridge serve exited (%v):\n%s", err, sc.stderr.String())
		default:
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			t.Fatalf("bridge serve did not start:\n%s", sc.stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the child's log, not synchronising
	}
	i := strings.Index(sc.stderr.String(), "endpoint=")
	sc.url = strings.Fields(sc.stderr.String()[i+len("endpoint="):])[0]
	return sc
}

// awaitLog polls the child's log for want under a deadline.
func (sc *serveChild) awaitLog(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(sc.stderr.String(), want) {
		select {
		case err := <-sc.done:
			t.Fatalf("bridge serve exited (%v) before logging %q:\n%s", err, want, sc.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q in the log:\n%s", want, sc.stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling the child's log
	}
}

func (sc *serveChild) hup(t *testing.T) {
	t.Helper()
	if err := sc.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatalf("SIGHUP: %v", err)
	}
}

func (sc *serveChild) stop(t *testing.T) {
	t.Helper()
	_ = sc.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-sc.done:
		if err != nil {
			t.Errorf("bridge serve ended with %v:\n%s", err, sc.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("bridge serve did not stop on SIGINT")
	}
}

func originStatus(t *testing.T, url, origin string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Origin", origin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// A real bridge serve survives SIGHUP and applies the re-read file: a new
// log level (debug lines appear), a new Origin list enforced on the next
// request, a restart-only key logged as such, a broken file logged with its
// line while the running configuration keeps serving.
func TestServeSIGHUPReloadsConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bridge.yaml")
	base := "upstream: " + startDemoUpstream(t) + "\ndata-dir: " + filepath.Join(dir, "data") + "\nlisten: 127.0.0.1:0\n"
	writeConfig(t, cfg, base+"allowed-origin: [https://a.example]\n")
	sc := startServeChild(ctx, t, "--config", cfg)

	if s := originStatus(t, sc.url, "https://b.example"); s != http.StatusForbidden {
		t.Fatalf("Origin b before the reload: %d, want 403", s)
	}
	connect := func() {
		cs, err := legacyClient().Connect(ctx, &mcp.StreamableClientTransport{Endpoint: sc.url}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		cs.Close()
	}
	connect()
	if strings.Contains(sc.stderr.String(), "level=DEBUG") {
		t.Fatalf("debug lines at log level info:\n%s", sc.stderr.String())
	}

	writeConfig(t, cfg, strings.Replace(base, "listen: 127.0.0.1:0", "listen: 127.0.0.1:1", 1)+"allowed-origin: [https://b.example]\nlog-level: debug\n")
	sc.hup(t)
	sc.awaitLog(t, "config file re-read")
	sc.awaitLog(t, `level=WARN msg="changed in the config file but needs a restart: listen"`)
	sc.awaitLog(t, "allowed-origin changed: https://a.example → https://b.example")
	if s := originStatus(t, sc.url, "https://b.example"); s == http.StatusForbidden {
		t.Errorf("Origin b after the reload: 403")
	}
	if s := originStatus(t, sc.url, "https://a.example"); s != http.StatusForbidden {
		t.Errorf("Origin a after the reload: %d, want 403", s)
	}
	connect()
	sc.awaitLog(t, "level=DEBUG")

	writeConfig(t, cfg, base+"allowed-origin: [https://c.example]\nmax-sessions: lots\n")
	sc.hup(t)
	sc.awaitLog(t, "level=ERROR")
	sc.awaitLog(t, cfg+":5: max-sessions")
	if s := originStatus(t, sc.url, "https://b.example"); s == http.StatusForbidden {
		t.Errorf("Origin b after a broken file: 403; the running configuration must stay")
	}
	sc.stop(t)
}

// Without --config, SIGHUP does not end bridge serve either.
func TestServeSIGHUPWithoutConfig(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	sc := startServeChild(ctx, t, "--upstream", startDemoUpstream(t), "--listen", "127.0.0.1:0", "--data-dir", t.TempDir())
	sc.hup(t)
	sc.awaitLog(t, "no config file")
	if s := httpStatus(t, strings.TrimSuffix(sc.url, "/mcp")+"/healthz"); s != http.StatusOK {
		t.Errorf("/healthz after SIGHUP: %d", s)
	}
	sc.stop(t)
}

// selfSigned writes a self-signed certificate for 127.0.0.1 with common
// name cn to certFile and keyFile.
func selfSigned(t *testing.T, cn, certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	writeConfig(t, certFile, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})))
	writeConfig(t, keyFile, string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb})))
}

// SIGHUP reads the listener's certificate files again (the reload hook),
// with or without a config file. Skipped while bridge serve has no
// --tls-cert.
func TestServeSIGHUPReloadsTLS(t *testing.T) {
	help, _, _ := runBinary(t, nil, "serve", "--help")
	if !strings.Contains(help, "--tls-cert") || !strings.Contains(help, "--tls-reload-interval") {
		t.Skip("bridge serve has no --tls-cert here")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	selfSigned(t, "first", certFile, keyFile)
	sc := startServeChild(ctx, t, "--upstream", startDemoUpstream(t), "--listen", "127.0.0.1:0", "--data-dir", filepath.Join(dir, "data"),
		"--tls-cert", certFile, "--tls-key", keyFile, "--tls-reload-interval", "0")
	served := func() string {
		addr := strings.TrimSuffix(strings.TrimPrefix(sc.url, "https://"), "/mcp")
		conn, err := tls.Dial("tcp", addr, &tls.Config{InsecureSkipVerify: true}) // only the served subject is looked at
		if err != nil {
			t.Fatalf("TLS handshake: %v", err)
		}
		defer conn.Close()
		return conn.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if cn := served(); cn != "first" {
		t.Fatalf("served %q before the reload", cn)
	}
	selfSigned(t, "second", certFile, keyFile)
	sc.hup(t)
	sc.awaitLog(t, "no config file")
	deadline := time.Now().Add(20 * time.Second)
	for served() != "second" {
		if time.Now().After(deadline) {
			t.Fatalf("still the first certificate after SIGHUP:\n%s", sc.stderr.String())
		}
		time.Sleep(10 * time.Millisecond) // polling what the child serves
	}
	sc.stop(t)
}
