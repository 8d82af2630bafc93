// Package cmdline splits a command line (such as --upstream-command) into
// argv words like a POSIX shell would, without any expansions.
package cmdline

import (
	"errors"
	"fmt"
	"strings"
)

// Split splits s into words: spaces, tabs and newlines separate words,
// single quotes keep everything literal, and double quotes and backslashes
// work as in a POSIX shell (inside double quotes a backslash only escapes
// " \ $ and `). Nothing is expanded. An empty or blank s gives no words; a
// trailing backslash or an unterminated quote is an error.
func Split(s string) ([]string, error) {
	var (
		words []string
		cur   strings.Builder
		in    bool // inside a word, so "" still makes an (empty) word
		quote rune
	)
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case quote == '\'':
			if r == '\'' {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case quote == '"':
			switch {
			case r == '"':
				quote = 0
			case r == '\\' && i+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[i+1]):
				i++
				cur.WriteRune(rs[i])
			default:
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == '\\':
			if i+1 >= len(rs) {
				return nil, errors.New("trailing backslash")
			}
			i++
			cur.WriteRune(rs[i])
			in = true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				words = append(words, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated %c quote", quote)
	}
	if in {
		words = append(words, cur.String())
	}
	return words, nil
}
