// Package transcript runs conversation transcripts written as txtar files
// (golang.org/x/tools/txtar): messages in, messages expected out. It is the
// shared conformance harness of tasksbridge: translate uses it for the pure
// mappings, and the faces reuse it for end-to-end transcripts.
//
// A transcript file looks like this:
//
//	# What the scenario proves, in prose (lines starting with '#').
//	func: CreateTaskResultToLegacy
//	ids: L-12 L-17 M-21
//	schema modern.in: ext CreateTaskResult
//	schema legacy.out: legacy CreateTaskResult
//	-- modern.in --
//	{"resultType":"task", ...}
//	-- legacy.out --
//	{"task":{...}}
//
// The header holds prose lines ('#') and directives ("key: value" or
// "key selector: value"). Each section holds zero or more JSON values (a JSON
// stream) or, for sections a handler reads as text, free text. Sections whose
// name ends in ".out" are expected outputs: a Suite feeds the file to the
// handler named by "func", compares what the handler emitted with the ".out"
// sections (JSON-equal, with a diff on mismatch), and validates every emitted
// message against the schema definition its "schema" directive names.
package transcript

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/tools/txtar"
)

// OutSuffix marks a section as an expected output.
const OutSuffix = ".out"

// Directive is one "key[ selector]: value" line of a transcript header.
type Directive struct {
	Key      string // e.g. "schema"
	Selector string // e.g. "legacy.out" or "legacy.out[1]"; empty for plain directives
	Value    string
	Line     int // 1-based line in the file
}

// Section is one txtar file of the archive.
type Section struct {
	Name string
	Data []byte
}

// File is a parsed transcript.
type File struct {
	Name       string // base name of the file, or the name given to Parse
	Prose      string // the '#' lines of the header, without the '#'
	Directives []Directive
	Sections   []Section
}

// ParseFile reads and parses the transcript at path.
func ParseFile(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return Parse(filepath.Base(path), data)
}

// Parse parses transcript text. name is used in messages only.
func Parse(name string, data []byte) (*File, error) {
	ar := txtar.Parse(data)
	f := &File{Name: name}
	var prose []string
	for i, line := range strings.Split(string(ar.Comment), "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "":
			continue
		case strings.HasPrefix(trimmed, "#"):
			prose = append(prose, strings.TrimSpace(strings.TrimPrefix(trimmed, "#")))
			continue
		}
		d, err := parseDirective(trimmed)
		if err != nil {
			return nil, fmt.Errorf("transcript %s:%d: %w", name, i+1, err)
		}
		d.Line = i + 1
		f.Directives = append(f.Directives, d)
	}
	f.Prose = strings.Join(prose, "\n")
	seen := map[string]bool{}
	for _, s := range ar.Files {
		if seen[s.Name] {
			return nil, fmt.Errorf("transcript %s: section %q appears twice", name, s.Name)
		}
		seen[s.Name] = true
		f.Sections = append(f.Sections, Section{Name: s.Name, Data: s.Data})
	}
	return f, nil
}

func parseDirective(line string) (Directive, error) {
	head, value, ok := strings.Cut(line, ":")
	if !ok {
		return Directive{}, fmt.Errorf("header line %q is neither prose ('#') nor a directive ('key: value')", line)
	}
	fields := strings.Fields(head)
	var d Directive
	switch len(fields) {
	case 1:
		d.Key = fields[0]
	case 2:
		d.Key, d.Selector = fields[0], fields[1]
	default:
		return Directive{}, fmt.Errorf("directive %q: want \"key: value\" or \"key selector: value\"", line)
	}
	for _, r := range d.Key {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return Directive{}, fmt.Errorf("directive key %q: only a-z, 0-9 and '-' allowed", d.Key)
		}
	}
	d.Value = strings.TrimSpace(value)
	return d, nil
}

// Format renders f back to txtar text (used to write mutated copies).
func (f *File) Format() []byte {
	var b bytes.Buffer
	if f.Prose != "" {
		for _, l := range strings.Split(f.Prose, "\n") {
			b.WriteString("# " + l + "\n")
		}
	}
	for _, d := range f.Directives {
		if d.Selector != "" {
			fmt.Fprintf(&b, "%s %s: %s\n", d.Key, d.Selector, d.Value)
		} else {
			fmt.Fprintf(&b, "%s: %s\n", d.Key, d.Value)
		}
	}
	ar := &txtar.Archive{Comment: b.Bytes()}
	for _, s := range f.Sections {
		ar.Files = append(ar.Files, txtar.File{Name: s.Name, Data: s.Data})
	}
	return txtar.Format(ar)
}

// Clone returns a deep copy of f, so tests can mutate expectations safely.
func (f *File) Clone() *File {
	c := &File{Name: f.Name, Prose: f.Prose}
	c.Directives = append([]Directive(nil), f.Directives...)
	for _, s := range f.Sections {
		c.Sections = append(c.Sections, Section{Name: s.Name, Data: append([]byte(nil), s.Data...)})
	}
	return c
}

// Value returns the value of the first plain (selector-less) directive key,
// or "" when there is none.
func (f *File) Value(key string) string {
	v, _ := f.Lookup(key, "")
	return v
}

// Values returns the values of every plain directive key, in order.
func (f *File) Values(key string) []string {
	var out []string
	for _, d := range f.Directives {
		if d.Key == key && d.Selector == "" {
			out = append(out, d.Value)
		}
	}
	return out
}

// Lookup returns the value of directive key with the given selector.
func (f *File) Lookup(key, selector string) (string, bool) {
	for _, d := range f.Directives {
		if d.Key == key && d.Selector == selector {
			return d.Value, true
		}
	}
	return "", false
}

// IDs returns the checklist ids named by the "ids" directives (separated by
// spaces or commas).
func (f *File) IDs() []string {
	var out []string
	for _, v := range f.Values("ids") {
		out = append(out, strings.FieldsFunc(v, func(r rune) bool { return r == ' ' || r == ',' || r == '\t' })...)
	}
	return out
}

// Has reports whether section name exists.
func (f *File) Has(name string) bool {
	_, ok := f.Section(name)
	return ok
}

// Section returns the raw bytes of section name.
func (f *File) Section(name string) ([]byte, bool) {
	for _, s := range f.Sections {
		if s.Name == name {
			return s.Data, true
		}
	}
	return nil, false
}

// Text returns section name as trimmed text, or "" when absent.
func (f *File) Text(name string) string {
	b, _ := f.Section(name)
	return strings.TrimSpace(string(b))
}

// SetSection replaces (or appends) section name.
func (f *File) SetSection(name string, data []byte) {
	for i := range f.Sections {
		if f.Sections[i].Name == name {
			f.Sections[i].Data = data
			return
		}
	}
	f.Sections = append(f.Sections, Section{Name: name, Data: data})
}

// Messages decodes section name as a stream of JSON values. A missing section
// is an error; an empty one yields no messages.
func (f *File) Messages(name string) ([]json.RawMessage, error) {
	data, ok := f.Section(name)
	if !ok {
		return nil, fmt.Errorf("transcript %s: no section %q", f.Name, name)
	}
	return DecodeStream(data)
}

// Message decodes section name, which must hold exactly one JSON value.
func (f *File) Message(name string) (json.RawMessage, error) {
	msgs, err := f.Messages(name)
	if err != nil {
		return nil, err
	}
	if len(msgs) != 1 {
		return nil, fmt.Errorf("transcript %s: section %q holds %d JSON values, want 1", f.Name, name, len(msgs))
	}
	return msgs[0], nil
}

// DecodeStream splits data into its JSON values.
func DecodeStream(data []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	var out []json.RawMessage
	for {
		var m json.RawMessage
		err := dec.Decode(&m)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("transcript: JSON value %d: %w", len(out)+1, err)
		}
		out = append(out, m)
	}
}

// OutputSections returns the names of the expected-output sections, in order.
func (f *File) OutputSections() []string {
	var out []string
	for _, s := range f.Sections {
		if strings.HasSuffix(s.Name, OutSuffix) {
			out = append(out, s.Name)
		}
	}
	return out
}
