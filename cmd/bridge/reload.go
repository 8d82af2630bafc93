package main

import (
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"sync"
	"syscall"

	"github.com/urfave/cli/v2"

	"github.com/tasksbridge/tasksbridge/router"
)

// SIGHUP makes bridge serve re-read its --config file, as operators expect
// of a proxy: the live keys (liveKeys: the log level, the limits, the Host,
// Origin and trusted-proxy policies) change at once and each change is
// logged at INFO; a changed key that needs a restart is logged at WARN and
// keeps its running value; a file that does not parse or holds a bad value
// is logged at ERROR with FILE:LINE and nothing changes. Flags and
// environment variables still beat the file. The reload hooks (the TLS
// certificate holders) run on every SIGHUP, with or without a file. The
// process never ends on SIGHUP.

// catchSIGHUP starts receiving SIGHUP (whose default action ends the
// process) on a channel; reloader.start serves it. stop ends that.
func catchSIGHUP() (ch chan os.Signal, stop func()) {
	ch = make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	return ch, func() { signal.Stop(ch) }
}

// reloader applies the config file to a running bridge on SIGHUP.
type reloader struct {
	c     *cli.Context
	st    *configState
	hup   <-chan os.Signal
	level *slog.LevelVar
	log   *slog.Logger
	apply func(router.Live) error

	mu sync.Mutex
	// onReload are run on every SIGHUP after the file is applied (the TLS
	// listener's certificate reload); their errors are logged.
	onReload []func() error
	// running are the values in force: the live keys as last applied, the
	// others as started.
	running map[string][]string
}

func newReloader(c *cli.Context, hup <-chan os.Signal, level *slog.LevelVar, log *slog.Logger, apply func(router.Live) error) *reloader {
	st, _ := c.App.Metadata[configMetaKey].(*configState)
	if st == nil { // run without the Before hook (tests of runServe alone)
		st = &configState{origins: map[string]origin{}}
	}
	r := &reloader{c: c, st: st, hup: hup, level: level, log: log, apply: apply, running: map[string][]string{}}
	for name, f := range keyFlags(st.flags) {
		r.running[name] = valuesOf(c, f)
	}
	return r
}

// addHook adds a function run on every SIGHUP (e.g. a certificate
// holder's Reload).
func (r *reloader) addHook(f func() error) {
	r.mu.Lock()
	r.onReload = append(r.onReload, f)
	r.mu.Unlock()
}

// start serves SIGHUP until the returned stop is called.
func (r *reloader) start() (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-r.hup:
				r.reload()
			case <-done:
				return
			}
		}
	}()
	return func() {
		close(done)
		wg.Wait()
	}
}

// reload is one SIGHUP.
func (r *reloader) reload() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.st.path == "" {
		r.log.Info("SIGHUP: no config file to re-read (start with --config PATH for that); reloading TLS certificates only")
		r.runHooks()
		return
	}
	next, err := r.evaluate()
	if err != nil {
		r.log.Error("SIGHUP: the config file is refused; the running configuration is kept", "err", err.Error())
		r.runHooks() // certificate files are no part of the file's settings
		return
	}
	type change struct {
		key      string
		old, new []string
	}
	var live []change
	for _, f := range r.st.flags {
		name := f.Names()[0]
		old, ok := r.running[name]
		if !ok {
			continue
		}
		nv := valuesOf(next, f)
		if sameValues(old, nv) {
			continue
		}
		if !liveKeys[name] {
			r.log.Warn("changed in the config file but needs a restart: "+name, "key", name, "running", showValues(name, old), "file", showValues(name, nv))
			continue
		}
		live = append(live, change{name, old, nv})
	}
	if len(live) > 0 {
		if err := r.apply(liveOf(next)); err != nil {
			r.log.Error("SIGHUP: the changed settings are refused; the running configuration is kept", "err", err.Error())
			r.runHooks()
			return
		}
		// The more verbose of the old and new levels is in force while the
		// changes are logged, so that a change of the level itself is seen.
		var level slog.Level
		_ = level.UnmarshalText([]byte(next.String("log-level"))) // checked by evaluate
		if level < r.level.Level() {
			r.level.Set(level)
		}
		for _, ch := range live {
			r.running[ch.key] = ch.new
			r.log.Info(fmt.Sprintf("SIGHUP: %s changed: %s → %s", ch.key, showValues(ch.key, ch.old), showValues(ch.key, ch.new)), "key", ch.key)
		}
		r.level.Set(level)
	}
	r.runHooks()
	r.log.Info("SIGHUP: config file re-read", "path", r.st.path, "changed", len(live))
}

func (r *reloader) runHooks() {
	for _, h := range r.onReload {
		if err := h(); err != nil {
			r.log.Error("SIGHUP: a reload failed; the previous one stays in use", "err", err.Error())
		}
	}
}

// evaluate reads the file again and applies the precedence of loadConfigFile
// to a scratch context: values from flags and the environment as they were
// given at start, the file's for the other keys, defaults for the rest.
func (r *reloader) evaluate() (*cli.Context, error) {
	kf := keyFlags(r.st.flags)
	settings, err := readConfigFile(r.st.path, kf)
	if err != nil {
		return nil, err
	}
	given := map[string][]string{}
	for name, o := range r.st.origins {
		if o.src == srcFlag || o.src == srcEnv {
			given[name] = valuesOf(r.c, kf[name])
		}
	}
	sc, err := scratchContext(r.st.flags, false, given)
	if err != nil {
		return nil, err
	}
	for _, s := range settings {
		if _, ok := given[s.key]; ok {
			continue
		}
		if err := setValues(sc, kf[s.key], s.values); err != nil {
			return nil, &configError{path: r.st.path, line: s.line, key: s.key, reason: err.Error()}
		}
		if err := checkKey(sc, s.key); err != nil {
			return nil, &configError{path: r.st.path, line: s.line, key: s.key, reason: err.Error()}
		}
	}
	// The checks that tie keys together (e.g. --principal header:NAME needs
	// a trusted proxy; jwt needs a fixed audience or Host list).
	if _, err := readPrincipalFlags(sc); err != nil {
		return nil, fmt.Errorf("%s: %w", r.st.path, err)
	}
	return sc, nil
}

// liveOf is the server.Live of a configuration.
func liveOf(c valueReader) router.Live {
	return router.Live{
		AllowedHosts:            c.StringSlice("allowed-host"),
		AllowedOrigins:          c.StringSlice("allowed-origin"),
		TrustedProxies:          c.StringSlice("trusted-proxy"),
		MaxBodyBytes:            c.Int64("max-body-bytes"),
		MaxSessions:             c.Int("max-sessions"),
		MaxSessionsPerPrincipal: c.Int("max-sessions-per-principal"),
		MaxTasksPerPrincipal:    c.Int("max-tasks-per-principal"),
		MaxWaitersPerPrincipal:  c.Int("max-waiters-per-principal"),
	}
}

// showValues is a value for a log line, secrets redacted.
func showValues(key string, vs []string) string {
	vs = redacted(key, vs)
	switch len(vs) {
	case 0:
		return "(none)"
	case 1:
		if vs[0] == "" {
			return `""`
		}
		return vs[0]
	}
	return "[" + strings.Join(vs, ", ") + "]"
}
