package modernface

import (
	"encoding/json"
	"sync"

	"github.com/tasksbridge/tasksbridge/internal/rawjson"
	"github.com/tasksbridge/tasksbridge/modern"
)

// metaCache keeps the decoded, validated per-request _meta of recent
// requests by its bytes. A client sends the same _meta (version,
// capabilities, clientInfo) on every request (M-01), so the lean path
// decodes it once rather than per request. Only successes are kept: a _meta
// that fails is decoded afresh each time, so its -32602 (M-37) keeps its
// words. The cache is bounded in entries and key size and forgets
// everything when full.
type metaCache struct {
	mu sync.RWMutex
	m  map[string]modern.RequestMeta
}

const (
	metaCacheEntries = 512
	metaCacheKeyMax  = 4 << 10
)

func (mc *metaCache) get(key json.RawMessage) (modern.RequestMeta, bool) {
	mc.mu.RLock()
	defer mc.mu.RUnlock()
	m, ok := mc.m[string(key)]
	return m, ok
}

func (mc *metaCache) put(key json.RawMessage, m modern.RequestMeta) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if mc.m == nil || len(mc.m) >= metaCacheEntries {
		mc.m = make(map[string]modern.RequestMeta, 64)
	}
	mc.m[string(key)] = m
}

// requestMeta decodes and validates a request's _meta (M-37) from its
// params (valid JSON: the front decoded the message), split into members by
// o when ok. The decoded meta depends on the _meta object's bytes alone, so
// they are the cache key.
func (f *Face) requestMeta(params json.RawMessage, o rawjson.Object, ok bool) (modern.RequestMeta, error) {
	var key json.RawMessage
	if ok {
		if m, has := o.Get("_meta"); has && rawjson.IsObject(m) && len(m) <= metaCacheKeyMax {
			key = m
		}
	}
	if key != nil {
		if meta, hit := f.metas.get(key); hit {
			return meta, nil
		}
	}
	meta, err := modern.DecodeRequestMeta(params)
	if err == nil {
		err = meta.Validate()
	}
	if err == nil && key != nil {
		f.metas.put(key, meta)
	}
	return meta, err
}
