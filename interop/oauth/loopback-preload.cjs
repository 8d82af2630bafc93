// Preload (NODE_OPTIONS="-r <abs path>") for the conformance harness's client
// scenarios: every net.Server.listen() call without a host binds 127.0.0.1
// instead of all interfaces, and does so synchronously.
//
// interop/ts/loopback-preload.cjs adds the host, which makes Node resolve it
// with dns.lookup before binding, i.e. on a later tick. The harness's auth
// scenario servers call `app.listen(0)` and read `server.address().port` on
// the next line, which is null until the bind: they crash with "Cannot read
// properties of null (reading 'port')". Here the loopback literal is
// "resolved" synchronously, so the bind happens inside listen() as it does
// without a host.
'use strict';

const net = require('node:net');
const dns = require('node:dns');

const LOOPBACK = '127.0.0.1';
const original = net.Server.prototype.listen;

function isPort(v) {
  return typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v));
}

// withHost returns args with LOOPBACK as the host, or null to leave the call
// alone (a host, a unix socket path or a handle was given).
function withHost(args) {
  const [first] = args;
  if (args.length === 0 || typeof first === 'function') return [0, LOOPBACK, ...args];
  if (first === undefined || first === null) {
    if (typeof args[1] === 'string') return null;
    return [0, LOOPBACK, ...args.slice(1)];
  }
  if (isPort(first)) {
    if (typeof args[1] === 'string') return null;
    return [first, LOOPBACK, ...args.slice(1)];
  }
  if (typeof first === 'object' && !first._handle && first.fd === undefined && first.handle === undefined
    && first.path === undefined && (first.host === undefined || first.host === null || first.host === '')) {
    return [{ ...first, host: LOOPBACK }, ...args.slice(1)];
  }
  return null;
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const changed = withHost(args);
  if (!changed) return original.apply(this, args);
  const lookup = dns.lookup;
  dns.lookup = function syncLoopback(host, opts, cb) {
    const callback = typeof opts === 'function' ? opts : cb;
    if (host === LOOPBACK && typeof callback === 'function') {
      callback(null, LOOPBACK, 4);
      return {};
    }
    return lookup.apply(this, arguments);
  };
  try {
    return original.apply(this, changed);
  } finally {
    dns.lookup = lookup;
  }
};
