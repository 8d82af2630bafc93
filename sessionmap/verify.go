package sessionmap

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/dgraph-io/badger/v4"
	bopts "github.com/dgraph-io/badger/v4/options"
	"github.com/dgraph-io/badger/v4/table"
	"github.com/dgraph-io/ristretto/v2/z"
)

// Damaged data is never silent. Badger's iterators stop quietly at a block
// they cannot read, so a list over a damaged table file just comes out short;
// and a read-write open cuts a damaged value log without a word. The store
// therefore checks every table file and every value log against the
// checksums written with them before it opens (OpenBadger), and refuses a
// damaged store with an error naming the file; Verify is the same check for
// `bridge store verify`.

// ErrDamaged means a file of the store does not match its checksums.
var ErrDamaged = errors.New("sessionmap: the store is damaged")

// Damage is one damaged file of a store.
type Damage struct {
	File    string `json:"file"`    // name inside the data directory
	Problem string `json:"problem"` // what is wrong, in plain words
}

// VerifyReport is the result of Verify.
type VerifyReport struct {
	Dir    string `json:"dir"`
	Tables int    `json:"tables"` // table files checked
	// ValueLogs is how many value log files were checked (verify_vlog.go).
	ValueLogs int      `json:"valueLogs"`
	Damaged   []Damage `json:"damaged"`
}

// Err is nil for a clean store, else ErrDamaged naming the damaged files.
func (r VerifyReport) Err() error {
	if len(r.Damaged) == 0 {
		return nil
	}
	parts := make([]string, len(r.Damaged))
	for i, d := range r.Damaged {
		parts[i] = d.File + " " + d.Problem
	}
	return fmt.Errorf("%w: in %s, %s. Run `bridge store verify --data-dir %s` for the list, "+
		"and see the recovery steps in docs/MIGRATION.md (troubleshooting)",
		ErrDamaged, r.Dir, strings.Join(parts, "; "), r.Dir)
}

// Verify checks the store in dir without opening it: its manifest, every
// table file the manifest lists against the checksums of each block, and
// every value log entry against its own checksum. It only
// reads files, so it may run next to a bridge that has the store open. The
// error is for a directory that holds no store or cannot be read; damage is
// reported in the VerifyReport.
func Verify(dir string) (VerifyReport, error) {
	rep := VerifyReport{Dir: dir, Damaged: []Damage{}}
	if _, err := os.Stat(filepath.Join(dir, badger.ManifestFilename)); errors.Is(err, os.ErrNotExist) {
		return rep, fmt.Errorf("sessionmap: no store in %s (is --data-dir right?): %w", dir, err)
	} else if err != nil {
		return rep, fmt.Errorf("sessionmap: verify %s: %w", dir, err)
	}
	bo := storeOptions(dir)
	m, err := replayManifest(dir, bo)
	if err != nil {
		rep.Damaged = append(rep.Damaged, Damage{File: badger.ManifestFilename,
			Problem: "(the list of table files) cannot be read: " + plainBadgerError(err)})
		return rep, nil
	}
	ids := make([]uint64, 0, len(m.Tables))
	for id := range m.Tables {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var missing []Damage
	for _, id := range ids {
		name := table.IDToFilename(id)
		rep.Tables++
		switch problem := verifyTable(filepath.Join(dir, name), m.Tables[id].Compression, bo.BlockSize); {
		case problem == problemMissing:
			missing = append(missing, Damage{File: name, Problem: problem})
		case problem != "":
			rep.Damaged = append(rep.Damaged, Damage{File: name, Problem: problem})
		}
	}
	var vdamage []Damage
	rep.ValueLogs, vdamage = verifyValueLogs(dir)
	rep.Damaged = append(rep.Damaged, vdamage...)
	if len(missing) > 0 {
		// A running bridge may have compacted the table away since the
		// manifest was read: only a table still listed is missing.
		if now, err := replayManifest(dir, bo); err == nil {
			for _, d := range missing {
				if id, ok := table.ParseFileID(d.File); ok {
					if _, listed := now.Tables[id]; !listed {
						rep.Tables--
						continue
					}
				}
				rep.Damaged = append(rep.Damaged, d)
			}
		} else {
			rep.Damaged = append(rep.Damaged, missing...)
		}
		slices.SortFunc(rep.Damaged, func(a, b Damage) int { return strings.Compare(a.File, b.File) })
	}
	return rep, nil
}

func replayManifest(dir string, bo badger.Options) (badger.Manifest, error) {
	f, err := os.Open(filepath.Join(dir, badger.ManifestFilename))
	if err != nil {
		return badger.Manifest{}, err
	}
	defer f.Close()
	m, _, err := badger.ReplayManifestFile(f, bo.ExternalMagicVersion, bo)
	return m, err
}

const problemMissing = "is missing (the manifest lists it)"

// verifyTable checks one table file and returns what is wrong with it, or "".
func verifyTable(path string, comp bopts.CompressionType, blockSize int) (problem string) {
	mf, err := z.OpenMmapFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return problemMissing
	}
	if err != nil {
		return "cannot be read: " + plainBadgerError(err)
	}
	defer func() {
		_ = mf.Close(-1)
		// Badger panics on some kinds of damage instead of returning an
		// error (e.g. a block whose length fields are garbage).
		if r := recover(); r != nil {
			problem = "is damaged: part of it cannot be decoded"
		}
	}()
	_, err = table.OpenTable(mf, table.Options{ChkMode: bopts.OnTableRead, Compression: comp, BlockSize: blockSize})
	if err != nil {
		return "is damaged: its data does not match its checksums (" + plainBadgerError(err) + ")"
	}
	return ""
}

// plainBadgerError keeps the last, most specific part of a Badger error and
// drops the directory (the caller names the file).
func plainBadgerError(err error) string {
	msg := strings.TrimSpace(err.Error())
	if i := strings.LastIndex(msg, ": "); i >= 0 && i+2 < len(msg) {
		msg = msg[i+2:]
	}
	return msg
}
