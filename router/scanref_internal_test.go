package router

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The reference scanJSON is checked against: encoding/json's token decoder
// with a dotted path rebuilt at every level. It is what the router ran
// before it got the linear scan (quadratic on deep bodies), kept here as the
// oracle of the tests and the fuzz target, on bodies within maxNesting.

// scanJSONTokens is scanJSON with encoding/json's token decoder.
func scanJSONTokens(t []byte) (dup string, err error) {
	dec := json.NewDecoder(bytes.NewReader(t))
	dec.UseNumber()
	var walk func(path string) error
	walk = func(path string) error {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return err
				}
				name, _ := k.(string)
				p := name
				if path != "" {
					p = path + "." + name
				}
				if seen[name] && dup == "" {
					dup = p
				}
				seen[name] = true
				if err := walk(p); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		case json.Delim('['):
			for dec.More() {
				if err := walk(path); err != nil {
					return err
				}
			}
			_, err = dec.Token()
			return err
		}
		return nil
	}
	if err := walk(""); err != nil {
		var se *json.SyntaxError
		switch {
		case errors.As(err, &se):
			return "", fmt.Errorf("invalid JSON at offset %d: %s", se.Offset, se.Error())
		case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
			return "", errors.New("the JSON ends before the message is complete")
		}
		return "", fmt.Errorf("invalid JSON: %s", err.Error())
	}
	rest := t[dec.InputOffset():]
	if extra := bytes.TrimLeft(rest, " \t\r\n"); len(extra) > 0 {
		return "", fmt.Errorf("unexpected data after the JSON-RPC message at offset %d; send exactly one JSON value per request", len(t)-len(extra))
	}
	return dup, nil
}
