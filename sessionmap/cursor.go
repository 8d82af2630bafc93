package sessionmap

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"strings"
)

// A tasks/list cursor names the last task of the previous page by its list
// position (CreatedAt, id), so it keeps working when that task is deleted or
// newer tasks arrive (L-54). It is MACed with a per-store secret over the
// owner's scope key: a forged cursor, a damaged one, or one presented by
// another scope fails verification (L-51).
//
// Layout: base64url( version(1) | createdNanos(8, big endian) | id | mac(16) ).

const (
	cursorVersion = 1
	cursorMACLen  = 16
	cursorDomain  = "tasksbridge/sessionmap/cursor/v1\x00"
	secretLen     = 32
)

// pos is a position in the newest-first list order.
type pos struct {
	created int64 // CreatedAt.UnixNano()
	id      string
}

func posOf(t Task) pos { return pos{created: t.CreatedAt.UnixNano(), id: t.ID} }

// comparePos orders newest first, then by id ascending.
func comparePos(a, b pos) int {
	switch {
	case a.created > b.created:
		return -1
	case a.created < b.created:
		return 1
	}
	return strings.Compare(a.id, b.id)
}

// orderKey maps created nanos to bytes whose ascending order is the
// newest-first order: flip the sign bit (signed→unsigned order), then invert.
func orderKey(created int64) [8]byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], ^(uint64(created) ^ (1 << 63)))
	return b
}

func cursorMAC(secret []byte, scopeKey string, payload []byte) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(cursorDomain))
	m.Write([]byte(scopeKey))
	m.Write([]byte{0})
	m.Write(payload)
	return m.Sum(nil)[:cursorMACLen]
}

func encodeCursor(secret []byte, sc Scope, p pos) string {
	payload := make([]byte, 0, 1+8+len(p.id)+cursorMACLen)
	payload = append(payload, cursorVersion)
	payload = binary.BigEndian.AppendUint64(payload, uint64(p.created))
	payload = append(payload, p.id...)
	payload = append(payload, cursorMAC(secret, sc.Key(), payload)...)
	return base64.RawURLEncoding.EncodeToString(payload)
}

// decodeCursor verifies c for scope sc. Every failure is the bare
// ErrInvalidCursor: the face answers -32602 and learns nothing more.
func decodeCursor(secret []byte, sc Scope, c string) (pos, error) {
	if len(c) > 4*(MaxIDLen+64)/3 {
		return pos{}, ErrInvalidCursor
	}
	raw, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil || len(raw) < 1+8+1+cursorMACLen || raw[0] != cursorVersion {
		return pos{}, ErrInvalidCursor
	}
	payload, mac := raw[:len(raw)-cursorMACLen], raw[len(raw)-cursorMACLen:]
	if !hmac.Equal(mac, cursorMAC(secret, sc.Key(), payload)) {
		return pos{}, ErrInvalidCursor
	}
	return pos{created: int64(binary.BigEndian.Uint64(payload[1:9])), id: string(payload[9:])}, nil
}
