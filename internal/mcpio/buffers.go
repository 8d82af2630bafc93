package mcpio

import (
	"bytes"
	"sync"
)

// maxPooledBuffer is the largest buffer PutBuffer keeps: the odd huge
// answer should not stay alive in the pool.
const maxPooledBuffer = 64 << 10

var buffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// GetBuffer returns an empty buffer from the pool shared by every request
// path (encoded answers, events, copies of request bodies).
func GetBuffer() *bytes.Buffer {
	b := buffers.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

// PutBuffer returns b to the pool; nothing may use b afterwards.
func PutBuffer(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBuffer {
		buffers.Put(b)
	}
}
