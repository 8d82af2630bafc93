package mcpio

import (
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
)

// BodyWords are a server's plain-text answers to a request body it cannot
// take: TooLarge (HTTP 413) is a format with one %d, the limit in bytes;
// Unreadable (HTTP 400) is said as it is. Each server keeps its own words;
// the reading is the same.
type BodyWords struct {
	TooLarge   string
	Unreadable string
}

// ReadBody reads r's body of at most limit bytes, for a server not behind
// the bridge's edge (which reads the body once for /mcp). When the body is
// larger or cannot be read it answers w itself, in words, and returns
// false.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64, words BodyWords) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf(words.TooLarge, mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, words.Unreadable, http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// DecodeChecked is DecodeMessage after the nesting-depth check the edge
// makes (rawjson.CheckDepth), so a body read by ReadBody is judged as one
// read at the edge: too deep is a *rawjson.DepthError, never a parse error.
func DecodeChecked(body []byte) (jsonrpc.Message, error) {
	if err := rawjson.CheckDepth(body, rawjson.DefaultMaxDepth); err != nil {
		return nil, err
	}
	return DecodeMessage(body)
}
