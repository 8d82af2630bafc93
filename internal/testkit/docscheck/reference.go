package docscheck

import (
	"errors"
	"strings"
)

// The config file reference in docs/MIGRATION.md ("Configuration file") is
// the output of `bridge config reference`, made from the flag definitions,
// between these two markers; docs-check fails when the two differ, so a flag
// added, renamed or reworded shows up in the guide.
const (
	ReferenceBegin = "<!-- config-reference: the output of `bridge config reference`, compared with it by TestDocsConfigReference -->"
	ReferenceEnd   = "<!-- /config-reference -->"
)

// ConfigReference returns the text between ReferenceBegin and ReferenceEnd.
func ConfigReference(doc []byte) (string, error) {
	s := string(doc)
	_, rest, ok := strings.Cut(s, ReferenceBegin+"\n")
	if !ok {
		return "", errors.New("no " + ReferenceBegin + " line")
	}
	table, _, ok := strings.Cut(rest, ReferenceEnd)
	if !ok {
		return "", errors.New("no " + ReferenceEnd + " after the reference")
	}
	return table, nil
}
