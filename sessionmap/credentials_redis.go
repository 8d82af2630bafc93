package sessionmap

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/redis/go-redis/v9"
)

// Credential records in Redis (credentials.go has the rules):
//
//	P:c:{<principal>}:<owner digest>   hash: e (expiry), w (written), v (record)
//
// The hash tag {<principal>} puts every key of one principal in one
// Redis Cluster slot, next to that principal's other keys, so that a
// later multi-key script over one principal's records stays legal in a
// cluster; a principal that is not a plain token (the bridge's are hex
// digests) is tagged with a digest of it instead, so no brace or colon of
// it can end the tag early. e and w are zero-padded decimal Unix
// nanoseconds, so the script compares them as strings (Lua numbers are
// doubles and would round nanoseconds). The key has a Redis TTL at the
// credential's expiry: Redis removes it by itself.
//
// Writes do not WAIT for replicas (RedisConfig.WaitReplicas): a credential
// lost in a failover only means that the tasks of its principal wait for
// the client's next request, which brings the credential again.

var credTagRE = regexp.MustCompile(`^[A-Za-z0-9._-]{1,128}$`)

func (k redisKeys) credential(principal, upstream string) string {
	tag := principal
	if !credTagRE.MatchString(tag) {
		id := credentialID(principal, "")
		tag = "h" + hex.EncodeToString(id[:16])
	}
	id := credentialID(principal, upstream)
	return k.base + "c:{" + tag + "}:" + hex.EncodeToString(id[:16])
}

// putCredentialScript stores ARGV (e, w, v, ttl ms, now) unless the key
// holds an unexpired record that is fresher; it returns {stored, e, w, v}
// of the record afterwards.
var putCredentialScript = redis.NewScript(`
local cur = redis.call('HMGET', KEYS[1], 'e', 'w', 'v')
if cur[1] and cur[2] and cur[3] and ARGV[5] < cur[1] then
  if ARGV[1] < cur[1] or (ARGV[1] == cur[1] and ARGV[2] < cur[2]) then
    return {0, cur[1], cur[2], cur[3]}
  end
end
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'e', ARGV[1], 'w', ARGV[2], 'v', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return {1, ARGV[1], ARGV[2], ARGV[3]}
`)

func nanoText(t time.Time) string { return fmt.Sprintf("%020d", max(t.UnixNano(), 0)) }

// PutCredential implements CredentialStore.
func (r *Redis) PutCredential(ctx context.Context, c Credential) (Credential, bool, error) {
	if err := r.enter(ctx); err != nil {
		return Credential{}, false, err
	}
	if err := r.writable(); err != nil {
		return Credential{}, false, err
	}
	now := r.now()
	c, err := prepareCredential(c, now)
	if err != nil {
		return Credential{}, false, err
	}
	if c.Expired(now) {
		cur, err := r.GetCredential(ctx, c.Principal, c.Upstream)
		if errors.Is(err, ErrNotFound) {
			err = nil
		}
		return cur, false, err
	}
	key := r.keys.credential(c.Principal, c.Upstream)
	res, err := putCredentialScript.Run(ctx, r.rdb, []string{key},
		nanoText(c.Expires), nanoText(c.WrittenAt), encodeCredential(c),
		ttlUntil(c.Expires, now).Milliseconds(), nanoText(now)).Slice()
	if err != nil {
		return Credential{}, false, r.fail(ctx, "put credential", err)
	}
	if len(res) != 4 {
		return Credential{}, false, fmt.Errorf("%w: credential script answer", ErrCorrupt)
	}
	stored, _ := res[0].(int64)
	v, _ := res[3].(string)
	out, err := decodeCredential([]byte(v))
	if err != nil {
		return Credential{}, false, err
	}
	return out, stored == 1, nil
}

// GetCredential implements CredentialStore.
func (r *Redis) GetCredential(ctx context.Context, principal, upstream string) (Credential, error) {
	if err := r.enter(ctx); err != nil {
		return Credential{}, err
	}
	v, err := r.rdb.HGet(ctx, r.keys.credential(principal, upstream), "v").Result()
	if errors.Is(err, redis.Nil) {
		return Credential{}, ErrNotFound
	}
	if err != nil {
		return Credential{}, r.fail(ctx, "get credential", err)
	}
	c, err := decodeCredential([]byte(v))
	if err != nil || c.Principal != principal || c.Upstream != upstream || c.Expired(r.now()) {
		return Credential{}, ErrNotFound
	}
	return c, nil
}
