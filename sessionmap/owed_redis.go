package sessionmap

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"github.com/redis/go-redis/v9"
)

// The stream index (owed.go) in Redis, under the store's prefix P:
//
//	P:ow:{<session id>}   hash: stream id → {"p": principal, "s": indexed at,
//	                      "h": holder, "l": lease until, "x": expires at,
//	                      "d": 1 once settled}
//
// Times are milliseconds on the store's clock, passed in by the caller, so a
// lease means the same on every replica whatever Redis's own clock says. The
// scripts check the principal (an entry of another principal is invisible,
// as a stream of another scope is), drop expired entries, keep at most
// MaxOwedStreams and renew the key's TTL; a claim is a compare-and-set in
// one script, so two replicas never both hold a stream.

var _ StreamIndex = (*Redis)(nil)

func (k redisKeys) owed(session string) string { return k.base + "ow:{" + session + "}" }

// oweStreamScript indexes ARGV[1] for principal ARGV[2], held by ARGV[3];
// ARGV[4] now, ARGV[5] lease, ARGV[6] ttl (ms), ARGV[7] the bound. It
// returns 0 when the stream is another principal's.
var oweStreamScript = redis.NewScript(`
local now = tonumber(ARGV[4])
local all = redis.call('HGETALL', KEYS[1])
local live, n = {}, 0
for i = 1, #all, 2 do
  local e = cjson.decode(all[i+1])
  if tonumber(e.x) <= now then
    redis.call('HDEL', KEYS[1], all[i])
  else
    live[all[i]] = e
    n = n + 1
  end
end
local e = live[ARGV[1]]
if e and e.p ~= ARGV[2] then return 0 end
if e and (e.d == 1 or ARGV[3] == '') then return 1 end
if not e then
  e = {p = ARGV[2], s = now}
  n = n + 1
end
e.h = ARGV[3]
e.l = now + tonumber(ARGV[5])
if ARGV[3] == '' then e.l = 0 end
e.x = now + tonumber(ARGV[6])
live[ARGV[1]] = e
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
while n > tonumber(ARGV[7]) do
  local oid, o = nil, nil
  for id, c in pairs(live) do
    local cd, od = c.d == 1, o ~= nil and o.d == 1
    if oid == nil or (cd and not od) or (cd == od and (c.s < o.s or (c.s == o.s and id < oid))) then oid, o = id, c end
  end
  live[oid] = nil
  redis.call('HDEL', KEYS[1], oid)
  n = n - 1
end
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[6]) then
  redis.call('PEXPIRE', KEYS[1], ARGV[6])
end
return 1
`)

// claimOwedScript gives ARGV[1] to holder ARGV[3] for ARGV[5] ms when it is
// principal ARGV[2]'s, live, and free or ARGV[3]'s already (now ARGV[4]).
var claimOwedScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local e = cjson.decode(v)
local now = tonumber(ARGV[4])
if e.p ~= ARGV[2] or tonumber(e.x) <= now or e.d == 1 then return 0 end
if e.h ~= '' and e.h ~= ARGV[3] and tonumber(e.l) > now then return 0 end
e.h = ARGV[3]
e.l = now + tonumber(ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
return 1
`)

// releaseOwedScript frees ARGV[1] when principal ARGV[2]'s holder ARGV[3]
// holds it.
var releaseOwedScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local e = cjson.decode(v)
if e.p ~= ARGV[2] or e.h ~= ARGV[3] or e.d == 1 then return 0 end
e.h = ''
e.l = 0
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
return 1
`)

// settleOwedScript settles ARGV[1] when it is principal ARGV[2]'s and
// holder ARGV[3] holds it (kept, invisible, until it expires).
var settleOwedScript = redis.NewScript(`
local v = redis.call('HGET', KEYS[1], ARGV[1])
if not v then return 0 end
local e = cjson.decode(v)
if ARGV[3] == '' or e.p ~= ARGV[2] or e.h ~= ARGV[3] or e.d == 1 then return 0 end
e.d = 1
e.h = ''
e.l = 0
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode(e))
return 1
`)

// owedJSON is an entry as the scripts store it.
type owedJSON struct {
	P string `json:"p"`
	S int64  `json:"s"`
	H string `json:"h"`
	L int64  `json:"l"`
	X int64  `json:"x"`
	D int    `json:"d"`
}

func (r *Redis) owedOK(ctx context.Context, sc Scope, streamID string) error {
	if err := r.enter(ctx); err != nil {
		return err
	}
	if !validID(sc.Session) || !validID(streamID) {
		return ErrInvalidArgument
	}
	return r.writable()
}

func (r *Redis) OweStream(ctx context.Context, sc Scope, streamID, holder string, lease, ttl time.Duration) error {
	if err := r.owedOK(ctx, sc, streamID); err != nil {
		return err
	}
	var n int64
	err := r.retry(ctx, "owe stream", func(bool) (err error) {
		n, err = oweStreamScript.Run(ctx, r.rdb, []string{r.keys.owed(sc.Session)}, streamID, sc.Principal, holder,
			r.now().UnixMilli(), lease.Milliseconds(), ttl.Milliseconds(), MaxOwedStreams).Int64()
		return err
	})
	if err != nil {
		return r.fail(ctx, "owe stream", err)
	}
	if n == 0 {
		return ErrNotFound
	}
	return nil
}

func (r *Redis) ClaimOwed(ctx context.Context, sc Scope, streamID, holder string, lease time.Duration) (bool, error) {
	if err := r.owedOK(ctx, sc, streamID); err != nil {
		return false, err
	}
	var n int64
	err := r.retry(ctx, "claim owed stream", func(bool) (err error) {
		n, err = claimOwedScript.Run(ctx, r.rdb, []string{r.keys.owed(sc.Session)}, streamID, sc.Principal, holder,
			r.now().UnixMilli(), lease.Milliseconds()).Int64()
		return err
	})
	if err != nil {
		return false, r.fail(ctx, "claim owed stream", err)
	}
	return n == 1, nil
}

func (r *Redis) ReleaseOwed(ctx context.Context, sc Scope, streamID, holder string) error {
	if err := r.owedOK(ctx, sc, streamID); err != nil {
		return err
	}
	return r.fail(ctx, "release owed stream", r.retry(ctx, "release owed stream", func(bool) error {
		return releaseOwedScript.Run(ctx, r.rdb, []string{r.keys.owed(sc.Session)}, streamID, sc.Principal, holder).Err()
	}))
}

func (r *Redis) SettleOwed(ctx context.Context, sc Scope, streamID, holder string) error {
	if err := r.owedOK(ctx, sc, streamID); err != nil {
		return err
	}
	return r.fail(ctx, "settle owed stream", r.retry(ctx, "settle owed stream", func(bool) error {
		return settleOwedScript.Run(ctx, r.rdb, []string{r.keys.owed(sc.Session)}, streamID, sc.Principal, holder).Err()
	}))
}

func (r *Redis) OwedStreams(ctx context.Context, sc Scope) ([]OwedStream, error) {
	if err := r.enter(ctx); err != nil {
		return nil, err
	}
	if !validID(sc.Session) {
		return nil, nil
	}
	var all map[string]string
	err := r.retry(ctx, "read owed streams", func(bool) (err error) {
		all, err = r.rdb.HGetAll(ctx, r.keys.owed(sc.Session)).Result()
		return err
	})
	if err != nil {
		return nil, r.fail(ctx, "read owed streams", err)
	}
	now := r.now().UnixMilli()
	var out []OwedStream
	for id, v := range all {
		var e owedJSON
		if json.Unmarshal([]byte(v), &e) != nil || e.P != sc.Principal || e.X <= now || e.D == 1 {
			continue
		}
		o := OwedStream{StreamID: id, Since: time.UnixMilli(e.S), Holder: e.H}
		if e.H != "" {
			o.LeaseUntil = time.UnixMilli(e.L)
		}
		out = append(out, o)
	}
	slices.SortFunc(out, func(a, b OwedStream) int {
		if owedBefore(a, b) {
			return -1
		}
		return 1
	})
	return out, nil
}
