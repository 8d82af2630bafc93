// Package sarif encodes migrate-check findings as a SARIF 2.1.0 log that GitHub
// code scanning accepts: one rule per check with help text and
// helpUri, results with a relative artifact URI under %SRCROOT%, 1-based
// regions, and an explicit (possibly empty) suppressions array.
//
// The model is a small hand-written subset of the OASIS schema; it has no
// dependency so the driver and the golangci plugin can share it.
package sarif

import (
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// Version is the SARIF version written into every log.
const Version = "2.1.0"

// SchemaURI is the $schema GitHub's documentation uses for 2.1.0 logs.
const SchemaURI = "https://json.schemastore.org/sarif-2.1.0.json"

// SrcRoot is the uriBaseId that GitHub resolves against the repository root.
const SrcRoot = "%SRCROOT%"

// Level values of results and default rule configurations.
const (
	LevelError   = "error"
	LevelWarning = "warning"
	LevelNote    = "note"
	LevelNone    = "none"
)

// Log is the top-level sarifLog object.
type Log struct {
	Schema  string `json:"$schema"`
	Version string `json:"version"`
	Runs    []*Run `json:"runs"`
}

// Run is one invocation of one tool.
type Run struct {
	Tool               Tool                        `json:"tool"`
	Invocations        []Invocation                `json:"invocations,omitempty"`
	OriginalURIBaseIDs map[string]ArtifactLocation `json:"originalUriBaseIds,omitempty"`
	// ColumnKind is stated explicitly because Go reports byte columns; the
	// builder converts them to UTF-16 code units (the SARIF default).
	ColumnKind string    `json:"columnKind"`
	Results    []*Result `json:"results"`
}

// Tool wraps the driver component.
type Tool struct {
	Driver ToolComponent `json:"driver"`
}

// ToolComponent describes the analysis tool and its rules.
type ToolComponent struct {
	Name           string                `json:"name"`
	Version        string                `json:"version,omitempty"`
	InformationURI string                `json:"informationUri,omitempty"`
	Rules          []ReportingDescriptor `json:"rules"`
}

// ReportingDescriptor is one rule's metadata.
type ReportingDescriptor struct {
	ID string `json:"id"`
	// Name must differ from ID (GitHub shows it as the rule title).
	Name                 string                  `json:"name,omitempty"`
	ShortDescription     *Message                `json:"shortDescription,omitempty"`
	FullDescription      *Message                `json:"fullDescription,omitempty"`
	Help                 *MultiformatMessage     `json:"help,omitempty"`
	HelpURI              string                  `json:"helpUri,omitempty"`
	DefaultConfiguration *ReportingConfiguration `json:"defaultConfiguration,omitempty"`
	Properties           *RuleProperties         `json:"properties,omitempty"`
}

// ReportingConfiguration carries the rule's default level.
type ReportingConfiguration struct {
	Enabled bool   `json:"enabled"`
	Level   string `json:"level"`
}

// RuleProperties are the property-bag entries GitHub reads for rules.
type RuleProperties struct {
	Tags      []string `json:"tags,omitempty"`
	Precision string   `json:"precision,omitempty"`
	// ProblemSeverity is GitHub's "problem.severity" (error|warning|recommendation).
	ProblemSeverity string `json:"problem.severity,omitempty"`
}

// Message is a plain-text message.
type Message struct {
	Text string `json:"text"`
}

// MultiformatMessage has text and optional markdown renderings.
type MultiformatMessage struct {
	Text     string `json:"text"`
	Markdown string `json:"markdown,omitempty"`
}

// Invocation records whether the run succeeded and any tool errors.
type Invocation struct {
	ExecutionSuccessful        bool           `json:"executionSuccessful"`
	ToolExecutionNotifications []Notification `json:"toolExecutionNotifications,omitempty"`
}

// Notification is a tool-level message such as a package load error.
type Notification struct {
	Level   string  `json:"level"`
	Message Message `json:"message"`
}

// Result is one finding.
type Result struct {
	RuleID           string     `json:"ruleId"`
	RuleIndex        int        `json:"ruleIndex"`
	Level            string     `json:"level"`
	Message          Message    `json:"message"`
	Locations        []Location `json:"locations"`
	RelatedLocations []Location `json:"relatedLocations,omitempty"`
	Fixes            []Fix      `json:"fixes,omitempty"`
	// Suppressions is always present: empty means "not suppressed", which
	// GitHub distinguishes from "suppression state unknown".
	Suppressions []Suppression `json:"suppressions"`
}

// Location is a physical location with an optional message (related locations).
type Location struct {
	ID               int              `json:"id,omitempty"`
	PhysicalLocation PhysicalLocation `json:"physicalLocation"`
	Message          *Message         `json:"message,omitempty"`
}

// PhysicalLocation names a file and a region in it.
type PhysicalLocation struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Region           *Region          `json:"region,omitempty"`
}

// ArtifactLocation is a URI, relative to URIBaseID when that is set.
type ArtifactLocation struct {
	URI       string `json:"uri"`
	URIBaseID string `json:"uriBaseId,omitempty"`
}

// Region is a 1-based text region, or a byte range for fix replacements.
type Region struct {
	StartLine   int  `json:"startLine,omitempty"`
	StartColumn int  `json:"startColumn,omitempty"`
	EndLine     int  `json:"endLine,omitempty"`
	EndColumn   int  `json:"endColumn,omitempty"`
	ByteOffset  *int `json:"byteOffset,omitempty"`
	ByteLength  *int `json:"byteLength,omitempty"`
}

// Fix is a proposed change (GitHub ignores it; editors may apply it).
type Fix struct {
	Description     Message          `json:"description"`
	ArtifactChanges []ArtifactChange `json:"artifactChanges"`
}

// ArtifactChange is the set of replacements in one file.
type ArtifactChange struct {
	ArtifactLocation ArtifactLocation `json:"artifactLocation"`
	Replacements     []Replacement    `json:"replacements"`
}

// Replacement replaces a byte range with new text.
type Replacement struct {
	DeletedRegion   Region           `json:"deletedRegion"`
	InsertedContent *ArtifactContent `json:"insertedContent,omitempty"`
}

// ArtifactContent is inserted text.
type ArtifactContent struct {
	Text string `json:"text"`
}

// Suppression marks a result that an in-source directive silenced.
type Suppression struct {
	Kind          string `json:"kind"` // "inSource" or "external"
	Justification string `json:"justification,omitempty"`
}

// Rule is the input describing one check.
type Rule struct {
	ID, Name, Title, Summary string
	HelpText, HelpMarkdown   string
	HelpURI                  string
	Level                    string // default level: error|warning|note
	Enabled                  bool
	Tags                     []string
}

// Pos is a file position as Go reports it: 1-based line and byte column.
type Pos struct {
	Filename     string
	Line, Column int // Column is a 1-based byte column
}

// Edit replaces the bytes [Offset, Offset+Length) of Filename with Text.
type Edit struct {
	Filename       string
	Offset, Length int
	Text           string
}

// Related is a secondary location with a message.
type Related struct {
	Start, End Pos
	Message    string
}

// Finding is the input describing one result.
type Finding struct {
	RuleID     string
	Level      string
	Message    string
	Start, End Pos
	Related    []Related
	FixMessage string
	Edits      []Edit
	// Suppressed, when non-empty, is the justification of an in-source directive.
	Suppressed    bool
	Justification string
}

// Builder assembles one run. Use New, then AddRule and AddFinding, then Encode.
type Builder struct {
	root      string // absolute source root (repository or module root)
	readLine  func(filename string, line int) []byte
	log       *Log
	ruleIndex map[string]int
}

// New returns a builder for a run of tool name/version rooted at srcRoot.
// readLine returns the text of a 1-based line of a file (nil if unknown); it
// converts Go's byte columns into UTF-16 columns. It may be nil.
func New(name, version, infoURI, srcRoot string, readLine func(string, int) []byte) *Builder {
	run := &Run{
		Tool:       Tool{Driver: ToolComponent{Name: name, Version: version, InformationURI: infoURI, Rules: []ReportingDescriptor{}}},
		ColumnKind: "utf16CodeUnits",
		Results:    []*Result{},
	}
	if srcRoot != "" {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(srcRoot)}
		s := u.String()
		if !strings.HasSuffix(s, "/") {
			s += "/" // SARIF §3.14.14: a base URI must end with a slash
		}
		run.OriginalURIBaseIDs = map[string]ArtifactLocation{SrcRoot: {URI: s}}
	}
	return &Builder{
		root:      srcRoot,
		readLine:  readLine,
		log:       &Log{Schema: SchemaURI, Version: Version, Runs: []*Run{run}},
		ruleIndex: map[string]int{},
	}
}

// AddRule registers a rule descriptor. Rules must be added before findings
// that reference them.
func (b *Builder) AddRule(r Rule) {
	if _, dup := b.ruleIndex[r.ID]; dup {
		return
	}
	d := ReportingDescriptor{
		ID:      r.ID,
		Name:    r.Name,
		HelpURI: r.HelpURI,
		DefaultConfiguration: &ReportingConfiguration{
			Enabled: r.Enabled,
			Level:   cmpOr(r.Level, LevelWarning),
		},
		Properties: &RuleProperties{
			Tags:            r.Tags,
			Precision:       "high",
			ProblemSeverity: problemSeverity(cmpOr(r.Level, LevelWarning)),
		},
	}
	if d.Name == r.ID {
		d.Name = "" // GitHub code scanning: never name a rule by its id
	}
	if r.Title != "" {
		d.ShortDescription = &Message{Text: Flatten(r.Title)}
	}
	if r.Summary != "" {
		d.FullDescription = &Message{Text: Flatten(r.Summary)}
	}
	if r.HelpText != "" || r.HelpMarkdown != "" {
		d.Help = &MultiformatMessage{Text: cmpOr(r.HelpText, r.Summary, r.Title), Markdown: r.HelpMarkdown}
	}
	run := b.log.Runs[0]
	b.ruleIndex[r.ID] = len(run.Tool.Driver.Rules)
	run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, d)
}

// AddFinding appends a result. The rule must have been added.
func (b *Builder) AddFinding(f Finding) error {
	idx, ok := b.ruleIndex[f.RuleID]
	if !ok {
		return fmt.Errorf("sarif: finding for unregistered rule %q", f.RuleID)
	}
	res := &Result{
		RuleID:       f.RuleID,
		RuleIndex:    idx,
		Level:        cmpOr(f.Level, LevelWarning),
		Message:      Message{Text: Flatten(f.Message)},
		Locations:    []Location{{PhysicalLocation: b.physical(f.Start, f.End)}},
		Suppressions: []Suppression{},
	}
	for i, r := range f.Related {
		res.RelatedLocations = append(res.RelatedLocations, Location{
			ID:               i + 1,
			PhysicalLocation: b.physical(r.Start, r.End),
			Message:          &Message{Text: Flatten(r.Message)},
		})
	}
	if len(f.Edits) > 0 {
		byFile := map[string]int{}
		fix := Fix{Description: Message{Text: cmpOr(Flatten(f.FixMessage), "apply suggested fix")}}
		for _, e := range f.Edits {
			i, ok := byFile[e.Filename]
			if !ok {
				i = len(fix.ArtifactChanges)
				byFile[e.Filename] = i
				fix.ArtifactChanges = append(fix.ArtifactChanges, ArtifactChange{ArtifactLocation: b.artifact(e.Filename)})
			}
			off, n := e.Offset, e.Length
			rep := Replacement{DeletedRegion: Region{ByteOffset: &off, ByteLength: &n}}
			if e.Text != "" {
				rep.InsertedContent = &ArtifactContent{Text: e.Text}
			}
			fix.ArtifactChanges[i].Replacements = append(fix.ArtifactChanges[i].Replacements, rep)
		}
		res.Fixes = []Fix{fix}
	}
	if f.Suppressed {
		res.Suppressions = []Suppression{{Kind: "inSource", Justification: f.Justification}}
	}
	run := b.log.Runs[0]
	run.Results = append(run.Results, res)
	return nil
}

// AddNotification records a tool-level error (for example a package that
// failed to load) and marks the invocation unsuccessful when level is error.
func (b *Builder) AddNotification(level, text string) {
	run := b.log.Runs[0]
	if len(run.Invocations) == 0 {
		run.Invocations = []Invocation{{ExecutionSuccessful: true}}
	}
	inv := &run.Invocations[0]
	inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, Notification{Level: level, Message: Message{Text: Flatten(text)}})
	if level == LevelError {
		inv.ExecutionSuccessful = false
	}
}

// Log returns the assembled log.
func (b *Builder) Log() *Log {
	run := b.log.Runs[0]
	if len(run.Invocations) == 0 {
		run.Invocations = []Invocation{{ExecutionSuccessful: true}}
	}
	return b.log
}

// Encode writes the log as indented JSON.
func (b *Builder) Encode(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(b.Log()); err != nil {
		return fmt.Errorf("sarif: encode: %w", err)
	}
	return nil
}

func (b *Builder) artifact(filename string) ArtifactLocation {
	if b.root != "" {
		if rel, err := filepath.Rel(b.root, filename); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			u := url.URL{Path: filepath.ToSlash(rel)}
			return ArtifactLocation{URI: u.String(), URIBaseID: SrcRoot}
		}
	}
	if filepath.IsAbs(filename) {
		u := url.URL{Scheme: "file", Path: filepath.ToSlash(filename)}
		return ArtifactLocation{URI: u.String()}
	}
	u := url.URL{Path: filepath.ToSlash(filename)}
	return ArtifactLocation{URI: u.String()}
}

func (b *Builder) physical(start, end Pos) PhysicalLocation {
	pl := PhysicalLocation{ArtifactLocation: b.artifact(start.Filename)}
	if start.Line <= 0 {
		return pl // whole-file finding: no region
	}
	r := &Region{StartLine: start.Line, StartColumn: b.column(start)}
	if end.Line >= start.Line && end.Filename == start.Filename {
		r.EndLine = end.Line
		r.EndColumn = b.column(end)
		if r.EndLine == r.StartLine && r.EndColumn < r.StartColumn {
			r.EndColumn = r.StartColumn
		}
	}
	pl.Region = r
	return pl
}

// column converts a 1-based byte column into a 1-based UTF-16 column.
func (b *Builder) column(p Pos) int {
	if p.Column <= 0 {
		return 1
	}
	if b.readLine == nil {
		return p.Column
	}
	return UTF16Column(b.readLine(p.Filename, p.Line), p.Column)
}

// UTF16Column converts a 1-based byte column in line into a 1-based column
// counted in UTF-16 code units. Bytes beyond the line are counted as one unit each.
func UTF16Column(line []byte, byteCol int) int {
	if byteCol <= 1 {
		return 1
	}
	prefix := byteCol - 1
	if prefix > len(line) {
		extra := prefix - len(line)
		return utf16Len(line) + extra + 1
	}
	return utf16Len(line[:prefix]) + 1
}

func utf16Len(b []byte) int {
	n := 0
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		b = b[size:]
		if r == utf8.RuneError && size <= 1 {
			n++
			continue
		}
		n += utf16.RuneLen(r)
	}
	return n
}

// Flatten joins lines with spaces: GitHub renders message line breaks
// literally, which breaks the single-line alert list (staticcheck does the same).
func Flatten(s string) string {
	s = strings.TrimSpace(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' })
	for i := range fields {
		fields[i] = strings.TrimSpace(fields[i])
	}
	return strings.Join(fields, " ")
}

// LevelOf maps a migrate-check severity to a SARIF level.
func LevelOf(severity string) string {
	switch severity {
	case "error":
		return LevelError
	case "info":
		return LevelNote
	default:
		return LevelWarning
	}
}

func problemSeverity(level string) string {
	switch level {
	case LevelError:
		return "error"
	case LevelNote, LevelNone:
		return "recommendation"
	default:
		return "warning"
	}
}

func cmpOr(vals ...string) string {
	for _, v := range vals {
		if v != "" {
			return v
		}
	}
	return ""
}
