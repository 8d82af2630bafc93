package sessionmap

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// The three Redis topologies the store runs on, named by --store:
//
//	redis://[USER[:PASSWORD]@]HOST:PORT[/DB]        one server (rediss:// for TLS)
//	redis+sentinel://[USER[:PASSWORD]@]S1:PORT,S2:PORT/MASTER[/DB]
//	                                                the primary that Redis Sentinel names MASTER
//	                                                (rediss+sentinel:// for TLS, to sentinels and data nodes)
//	redis+cluster://[USER[:PASSWORD]@]N1:PORT,N2:PORT
//	                                                a Redis Cluster, any of its nodes as seeds
//	                                                (rediss+cluster:// for TLS)
//
// USER and PASSWORD are the data nodes' ACL user; RedisConfig.Password
// (from --redis-password-file or the environment) replaces a password in the
// URL, and RedisConfig.SentinelUser/SentinelPassword authenticate to the
// sentinels when they have their own ACL. Passwords are never logged:
// errors and logs name the topology and the addresses only.

// Topology names of RedisTarget.Kind.
const (
	RedisSingle   = "single"
	RedisSentinel = "sentinel"
	RedisCluster  = "cluster"
)

// RedisTarget is a parsed store URL.
type RedisTarget struct {
	Kind     string   // RedisSingle, RedisSentinel or RedisCluster
	Addrs    []string // HOST:PORT of the server, the sentinels or the cluster seeds
	Master   string   // Sentinel's master name
	DB       int
	User     string
	Password string
	TLS      bool
}

var redisSchemes = map[string]struct {
	kind string
	tls  bool
}{
	"redis":            {RedisSingle, false},
	"rediss":           {RedisSingle, true},
	"redis+sentinel":   {RedisSentinel, false},
	"rediss+sentinel":  {RedisSentinel, true},
	"redis+cluster":    {RedisCluster, false},
	"rediss+cluster":   {RedisCluster, true},
	"redis-sentinel":   {RedisSentinel, false}, // spellings other tools use
	"redis-cluster":    {RedisCluster, false},
	"rediss-sentinel":  {RedisSentinel, true},
	"rediss-cluster":   {RedisCluster, true},
	"valkey":           {RedisSingle, false},
	"valkeys":          {RedisSingle, true},
	"valkey+sentinel":  {RedisSentinel, false},
	"valkey+cluster":   {RedisCluster, false},
	"valkeys+sentinel": {RedisSentinel, true},
	"valkeys+cluster":  {RedisCluster, true},
}

// redisURLForms is the hint every URL error ends with.
const redisURLForms = "use redis://[USER:PASSWORD@]HOST:PORT/DB, redis+sentinel://[USER:PASSWORD@]HOST:PORT,HOST:PORT/MASTER/DB " +
	"or redis+cluster://[USER:PASSWORD@]HOST:PORT,HOST:PORT (rediss… for TLS); the value given is not shown: it may hold a password"

// IsRedisURL reports whether s names a Redis store (any scheme of the three
// topologies).
func IsRedisURL(s string) bool {
	scheme, _, ok := strings.Cut(s, "://")
	_, known := redisSchemes[strings.ToLower(scheme)]
	return ok && known
}

// ParseRedisURL parses a store URL. Its errors never quote the URL.
func ParseRedisURL(s string) (RedisTarget, error) {
	scheme, rest, ok := strings.Cut(s, "://")
	sch, known := redisSchemes[strings.ToLower(scheme)]
	if !ok || !known {
		return RedisTarget{}, errors.New("sessionmap: unknown Redis store URL scheme: " + redisURLForms)
	}
	t := RedisTarget{Kind: sch.kind, TLS: sch.tls}
	if q := strings.IndexAny(rest, "?#"); q >= 0 {
		return RedisTarget{}, errors.New("sessionmap: the Redis store URL takes no query or fragment " +
			"(TLS files and passwords are flags: --redis-ca, --redis-cert, --redis-key, --redis-password-file); " + redisURLForms)
	}
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		ui := rest[:at]
		rest = rest[at+1:]
		u, p, hasPass := strings.Cut(ui, ":")
		var err error
		if t.User, err = pctDecode(u); err != nil {
			return RedisTarget{}, errors.New("sessionmap: the Redis store URL's user name is badly escaped: " + redisURLForms)
		}
		if hasPass {
			if t.Password, err = pctDecode(p); err != nil {
				return RedisTarget{}, errors.New("sessionmap: the Redis store URL's password is badly escaped: " + redisURLForms)
			}
		}
	}
	hosts, path, _ := strings.Cut(rest, "/")
	for _, h := range strings.Split(hosts, ",") {
		if h == "" {
			continue
		}
		host, port, err := net.SplitHostPort(h)
		if err != nil && strings.Contains(h, ":") {
			return RedisTarget{}, errors.New("sessionmap: the Redis store URL has a bad HOST:PORT: " + redisURLForms)
		}
		if err != nil {
			host, port = h, "6379"
			if t.Kind == RedisSentinel {
				port = "26379"
			}
		}
		if host == "" {
			return RedisTarget{}, errors.New("sessionmap: the Redis store URL has an address without a host: " + redisURLForms)
		}
		if n, err := strconv.Atoi(port); err != nil || n <= 0 || n > 65535 {
			return RedisTarget{}, fmt.Errorf("sessionmap: the Redis store URL has a bad port %q: %s", port, redisURLForms)
		}
		t.Addrs = append(t.Addrs, net.JoinHostPort(host, port))
	}
	if len(t.Addrs) == 0 {
		return RedisTarget{}, errors.New("sessionmap: the Redis store URL names no server: " + redisURLForms)
	}
	segs := []string{}
	for _, p := range strings.Split(path, "/") {
		if p != "" {
			segs = append(segs, p)
		}
	}
	switch t.Kind {
	case RedisSingle:
		if len(t.Addrs) > 1 {
			return RedisTarget{}, errors.New("sessionmap: a redis:// store URL names one server; " +
				"for several use redis+sentinel:// or redis+cluster://")
		}
	case RedisSentinel:
		if len(segs) == 0 {
			return RedisTarget{}, errors.New("sessionmap: a redis+sentinel:// store URL needs the master's name after the sentinels' addresses: " + redisURLForms)
		}
		t.Master, segs = segs[0], segs[1:]
	case RedisCluster:
		if len(segs) > 0 && segs[0] != "0" {
			return RedisTarget{}, errors.New("sessionmap: a Redis Cluster has database 0 only; drop the /DB of the redis+cluster:// URL")
		}
		segs = nil
	}
	if len(segs) > 1 {
		return RedisTarget{}, errors.New("sessionmap: the Redis store URL has too many path parts: " + redisURLForms)
	}
	if len(segs) == 1 {
		db, err := strconv.Atoi(segs[0])
		if err != nil || db < 0 {
			return RedisTarget{}, fmt.Errorf("sessionmap: the Redis store URL's database %q is not a number: %s", segs[0], redisURLForms)
		}
		t.DB = db
	}
	return t, nil
}

func pctDecode(s string) (string, error) { return url.PathUnescape(s) }

// String names the target for logs and errors: topology and addresses,
// never the credentials.
func (t RedisTarget) String() string {
	switch t.Kind {
	case RedisSentinel:
		return fmt.Sprintf("Redis Sentinel master %q via %s (database %d)", t.Master, strings.Join(t.Addrs, ","), t.DB)
	case RedisCluster:
		return "Redis Cluster at " + strings.Join(t.Addrs, ",")
	}
	return fmt.Sprintf("Redis at %s (database %d)", t.Addrs[0], t.DB)
}

// RedactURL returns u with any password replaced, for logs and errors.
// A string that does not parse is not shown at all.
func RedactURL(u string) string {
	if _, err := ParseRedisURL(u); err != nil {
		return "(unparsable URL, not shown)"
	}
	scheme, rest, _ := strings.Cut(u, "://")
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		user, _, hasPass := strings.Cut(rest[:at], ":")
		if hasPass {
			user += ":xxxxx"
		}
		rest = user + "@" + rest[at+1:]
	}
	return scheme + "://" + rest
}

// tlsConfig builds the client TLS configuration: the system roots or
// cfg.CAFile, and a client certificate when cfg.CertFile is set.
func (cfg RedisConfig) tlsConfig(t RedisTarget) (*tls.Config, error) {
	if !t.TLS && cfg.CAFile == "" && cfg.CertFile == "" {
		return nil, nil
	}
	if !t.TLS {
		return nil, errors.New("sessionmap: --redis-ca, --redis-cert and --redis-key need a TLS store URL (rediss://, rediss+sentinel:// or rediss+cluster://)")
	}
	tc := &tls.Config{MinVersion: tls.VersionTLS12}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("sessionmap: read the Redis CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("sessionmap: the Redis CA file %s holds no PEM certificate", cfg.CAFile)
		}
		tc.RootCAs = pool
	}
	if (cfg.CertFile == "") != (cfg.KeyFile == "") {
		return nil, errors.New("sessionmap: a Redis client certificate needs both --redis-cert and --redis-key")
	}
	if cfg.CertFile != "" {
		cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("sessionmap: load the Redis client certificate: %w", err)
		}
		tc.Certificates = []tls.Certificate{cert}
	}
	if cfg.TLSServerName != "" {
		tc.ServerName = cfg.TLSServerName
	} else if t.Kind == RedisSingle {
		tc.ServerName, _, _ = net.SplitHostPort(t.Addrs[0])
	}
	// Sentinel and Cluster hand out addresses (often IPs) the client did not
	// name: go-redis sets each connection's ServerName from the address it
	// dials when none is configured.
	return tc, nil
}

// Client timeouts. A command's reply is awaited for redisReadTimeout, so a
// primary that died without closing its sockets is noticed within it; the
// store's own retries (redisRetry) then bound the whole stall by
// RedisConfig.FailoverTimeout.
const (
	redisReadTimeout  = 3 * time.Second
	redisWriteTimeout = 3 * time.Second
)

// newRedisClient makes the go-redis client of the topology.
func newRedisClient(cfg RedisConfig, t RedisTarget) (redis.UniversalClient, error) {
	tc, err := cfg.tlsConfig(t)
	if err != nil {
		return nil, err
	}
	pass := t.Password
	if cfg.Password != "" {
		pass = cfg.Password
	}
	user := t.User
	if cfg.User != "" {
		user = cfg.User
	}
	// go-redis retries a command itself on a broken connection, READONLY,
	// LOADING, MASTERDOWN, CLUSTERDOWN and TRYAGAIN (a few times, with
	// backoff); the Cluster client also follows MOVED and ASK, and
	// Script.Run reloads a script on NOSCRIPT (a promoted replica or a
	// restarted node has an empty script cache).
	switch t.Kind {
	case RedisSentinel:
		return redis.NewFailoverClient(&redis.FailoverOptions{
			MasterName: t.Master, SentinelAddrs: t.Addrs,
			SentinelUsername: cfg.SentinelUser, SentinelPassword: cfg.SentinelPassword,
			Username: user, Password: pass, DB: t.DB, TLSConfig: tc,
			DialTimeout: redisDialTimeout, ReadTimeout: redisReadTimeout, WriteTimeout: redisWriteTimeout,
			DisableIdentity: true,
			OnConnect:       requirePrimary,
		}), nil
	case RedisCluster:
		return redis.NewClusterClient(&redis.ClusterOptions{
			Addrs: t.Addrs, Username: user, Password: pass, TLSConfig: tc,
			DialTimeout: redisDialTimeout, ReadTimeout: redisReadTimeout, WriteTimeout: redisWriteTimeout,
			DisableIdentity: true,
		}), nil
	}
	return redis.NewClient(&redis.Options{
		Addr: t.Addrs[0], Username: user, Password: pass, DB: t.DB, TLSConfig: tc,
		DialTimeout: redisDialTimeout, ReadTimeout: redisReadTimeout, WriteTimeout: redisWriteTimeout,
		DisableIdentity: true, // no CLIENT SETINFO: older servers and proxies refuse it
	}), nil
}

// requirePrimary refuses a new connection to a node that is not a primary.
// Right after a failover a sentinel that has not learnt of it yet may still
// name the old primary; if that one is back already (restarted, now a
// replica that is still syncing), it would answer reads from an empty or
// stale copy — an acknowledged task would look unknown. Refused, the
// connection is retried until a sentinel names the new primary.
func requirePrimary(ctx context.Context, cn *redis.Conn) error {
	role, err := cn.Do(ctx, "ROLE").Slice()
	if err != nil {
		return err
	}
	if len(role) > 0 {
		// go-redis runs this hook on its sentinel connections too (role
		// "sentinel"): only a replica is refused.
		if r, _ := role[0].(string); r == "slave" || r == "replica" {
			return fmt.Errorf("READONLY the node the sentinels named is a %s, not the primary (a failover is under way)", r)
		}
	}
	return nil
}

// ErrUnavailable: the Redis store could not be reached (or had no writable
// primary) for the whole RedisConfig.FailoverTimeout, e.g. during a failover
// that took longer. The operation may be retried; whether a write that
// failed so was applied is unknown.
var ErrUnavailable = errors.New("sessionmap: the Redis store is unavailable (failover or outage); try again")

// transient reports whether err is what a failover, a restart or a
// resharding looks like to a client: a broken or refused connection, a
// timeout, or a server that says it cannot serve writes right now. The
// store retries such errors until RedisConfig.FailoverTimeout.
func transient(err error) bool {
	if err == nil || errors.Is(err, redis.ErrClosed) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	if errors.Is(err, ErrNotReplicated) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, redis.ErrPoolTimeout) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"READONLY ", "LOADING ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN ", "MOVED ", "ASK ",
		"NOREPLICAS ", "EXECABORT ", "UNBLOCKED ", "redis: all sentinels", "use of closed network connection",
		"connection reset", "broken pipe", "i/o timeout", "connection refused"} {
		if strings.HasPrefix(msg, p) || strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// notApplied reports whether err says for sure that the command never ran:
// the connection could not be made, or the server refused the command
// before running it. A write that must not be applied twice (an event
// appended to a stream) is retried only on these.
func notApplied(err error) bool {
	if err == nil {
		return false
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, redis.ErrPoolTimeout) {
		return true
	}
	msg := err.Error()
	for _, p := range []string{"READONLY ", "LOADING ", "MASTERDOWN ", "CLUSTERDOWN ", "TRYAGAIN ", "MOVED ", "ASK ",
		"EXECABORT ", "redis: all sentinels"} {
		if strings.HasPrefix(msg, p) || strings.Contains(msg, p) {
			return true
		}
	}
	return false
}

// TransientRedisError reports whether err is what a Redis failover, restart
// or resharding looks like (the store retries such errors), for code that
// shares the store's Redis client (runtime/coord).
func TransientRedisError(err error) bool { return transient(err) }
