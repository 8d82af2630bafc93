package sessionmap

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Values of 1 MiB or more (Badger's value threshold) are not in the table
// files but in the value log (*.vlog), each entry with a CRC-32C of its own.
// Badger reads them only when a record is read, and on a read-write open it
// cuts the newest value log at its first bad entry without a word, as if a
// crash had torn it: a damaged value log would lose tasks silently, or
// fail later with an engine message. Verify therefore reads every entry of
// every value log against its checksum before the store is opened.
//
// A value log file is a 20-byte header (encryption key id and IV, unused
// here) and then entries:
//
//	meta(1) userMeta(1) uvarint(key length) uvarint(value length) uvarint(expiresAt) key value crc32c(4, big endian)
//
// the checksum covering everything before it. The log ends at an entry whose
// key length is 0 (Badger zeroes the bytes after its last entry) or at the
// end of the file.
//
// One kind of bad entry is not damage: the tail of the newest value log
// after a crash, an entry whose write did not finish (it runs past the end
// of the file, or its checksum was never written). No bridge acknowledged
// it: every value-log write is fsynced before its caller hears back
// (commit.go), so Badger's cut loses nothing. Anywhere else, and in any
// older file, a bad entry is damage.

const (
	vlogFileHeader = 20
	vlogMaxHeader  = 2 + 3*binary.MaxVarintLen64
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// vlogFiles returns the value log files of dir, oldest first.
func vlogFiles(dir string) ([]string, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.vlog"))
	if err != nil {
		return nil, err
	}
	fid := func(p string) uint64 {
		n, _ := strconv.ParseUint(strings.TrimSuffix(filepath.Base(p), ".vlog"), 10, 64)
		return n
	}
	slices.SortFunc(names, func(a, b string) int {
		switch fa, fb := fid(a), fid(b); {
		case fa < fb:
			return -1
		case fa > fb:
			return 1
		}
		return 0
	})
	return names, nil
}

// verifyValueLogs checks every value log of dir; it returns how many it
// checked and the damaged ones.
func verifyValueLogs(dir string) (int, []Damage) {
	files, err := vlogFiles(dir)
	if err != nil {
		return 0, []Damage{{File: "*.vlog", Problem: "cannot be listed: " + err.Error()}}
	}
	var damaged []Damage
	n := 0
	for i, path := range files {
		data, err := os.ReadFile(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // collected by a running bridge meanwhile
		}
		n++
		name := filepath.Base(path)
		if err != nil {
			damaged = append(damaged, Damage{File: name, Problem: "cannot be read: " + plainBadgerError(err)})
			continue
		}
		if problem := checkValueLog(data, i == len(files)-1); problem != "" {
			damaged = append(damaged, Damage{File: name, Problem: problem})
		}
	}
	return n, damaged
}

// checkValueLog returns what is wrong with one value log file, or "".
// newest: the file Badger appends to, whose tail a crash may have torn.
func checkValueLog(data []byte, newest bool) string {
	if len(data) < vlogFileHeader {
		if newest {
			return "" // created just before a crash; Badger writes its header again
		}
		return fmt.Sprintf("is damaged: it is %d bytes long, shorter than its own header", len(data))
	}
	off := vlogFileHeader
	for off < len(data) {
		hdr := data[off:min(len(data), off+vlogMaxHeader)]
		klen, vlen, hlen, ok := decodeVlogHeader(hdr)
		if ok && klen == 0 && vlen == 0 {
			return "" // the end of the log
		}
		end := off + hlen + klen + vlen + 4
		if !ok || klen == 0 || end > len(data) || end < off {
			if newest {
				return "" // an entry cut short by a crash: never acknowledged
			}
			return fmt.Sprintf("is damaged: the entry at byte %d is cut short or its length fields are garbled", off)
		}
		want := binary.BigEndian.Uint32(data[end-4 : end])
		if crc32.Checksum(data[off:end-4], castagnoli) != want {
			if newest && want == 0 {
				return "" // its checksum was never written: a torn, unacknowledged write
			}
			return fmt.Sprintf("is damaged: the value at byte %d does not match its checksum", off)
		}
		off = end
	}
	return ""
}

// decodeVlogHeader decodes an entry header: key and value lengths and the
// header's own length; ok is false when the bytes do not hold a header.
func decodeVlogHeader(b []byte) (klen, vlen, hlen int, ok bool) {
	if len(b) < 5 {
		return 0, 0, 0, false
	}
	i := 2
	k, n := binary.Uvarint(b[i:])
	if n <= 0 {
		return 0, 0, 0, false
	}
	i += n
	v, n := binary.Uvarint(b[i:])
	if n <= 0 {
		return 0, 0, 0, false
	}
	i += n
	if _, n = binary.Uvarint(b[i:]); n <= 0 {
		return 0, 0, 0, false
	}
	i += n
	const maxLen = 1 << 31 // Badger's lengths are uint32
	if k >= maxLen || v >= maxLen {
		return 0, 0, i, false
	}
	return int(k), int(v), i, true
}
