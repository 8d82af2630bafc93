package main

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/tasksbridge/tasksbridge/migratecheck"
	"github.com/tasksbridge/tasksbridge/migratecheck/driver"
	"github.com/tasksbridge/tasksbridge/migratecheck/settings"
)

// vetMain runs the unitchecker protocol for go vet -vettool / go fix -fixtool.
// The go command runs the tool in each package's directory, so the config
// file is discovered from there exactly as in standalone mode. The analyzer
// flags it sets act as defaults; -migratecheck.* flags (and their short
// aliases below) on the go vet command line override them.
func vetMain() {
	log.SetFlags(0)
	log.SetPrefix("migrate-check: ")
	cfg, err := settings.LoadConfigFor(".", "")
	if err != nil {
		log.Fatal(err)
	}
	r, err := settings.Resolve(cfg, settings.Overrides{})
	if err != nil {
		log.Fatal(err)
	}
	if err := migratecheck.Configure(r.Settings); err != nil {
		log.Fatal(err)
	}
	// Short aliases so "go vet -vettool=… -rules=all,-MCP011" works like the
	// standalone flags; they share the analyzer's flag values.
	for _, name := range []string{"rules", "target", "fix-tags", "fix-literals", "libraries", "method-call-funcs"} {
		if f := migratecheck.Analyzer.Flags.Lookup(name); f != nil {
			flag.Var(f.Value, name, f.Usage+" (alias of -migratecheck."+name+")")
		}
	}
	// Our own -V: go vet caches clean results keyed by this output, so it
	// must change when the configuration file does.
	// Only the content counts: the path differs between checkouts, and a
	// path-keyed ID would defeat the cache for identical configurations.
	var raw []byte
	if cfg != nil {
		raw = cfg.Raw
	}
	flag.Var(versionFlag{config: raw}, "V", "print version and exit")
	unitchecker.Main(driver.VetAnalyzers(r)...)
}

type versionFlag struct{ config []byte }

func (versionFlag) IsBoolFlag() bool { return true }
func (versionFlag) Get() any         { return nil }
func (versionFlag) String() string   { return "" }

// Set prints "<prog> version devel … buildID=<hash>", the format the go
// command parses from -V=full, hashing the executable and the config file.
func (v versionFlag) Set(s string) error {
	if s != "full" && s != "true" {
		return fmt.Errorf("unsupported flag value: -V=%s (use -V=full)", s)
	}
	prog, err := os.Executable()
	if err != nil {
		return err
	}
	f, err := os.Open(prog)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	h.Write(v.config)
	fmt.Printf("%s version devel migrate-check buildID=%02x\n", prog, h.Sum(nil))
	os.Exit(0)
	return nil
}
