// Preload (`node -r ./loopback-preload.cjs`, or NODE_OPTIONS="-r <abs path>")
// that makes every net.Server.listen() call without a host bind 127.0.0.1
// instead of all interfaces. Third-party peers such as server-everything and
// the conformance harness's own test servers call listen(port) or listen(0)
// with no host; tests must stay on loopback.
// Calls that name a host, a unix socket path or a handle are left alone.
'use strict';

const net = require('node:net');

const LOOPBACK = '127.0.0.1';
const original = net.Server.prototype.listen;

function isPort(v) {
  return typeof v === 'number' || (typeof v === 'string' && /^\d+$/.test(v));
}

net.Server.prototype.listen = function listenOnLoopback(...args) {
  const [first] = args;
  if (args.length === 0 || typeof first === 'function') {
    // listen() / listen(cb): an ephemeral port on every interface.
    return original.call(this, 0, LOOPBACK, ...args);
  }
  if (first === undefined || first === null) {
    // listen(undefined[, host]...): the port defaults to an ephemeral one.
    if (typeof args[1] === 'string') return original.call(this, 0, ...args.slice(1));
    return original.call(this, 0, LOOPBACK, ...args.slice(1));
  }
  if (isPort(first)) {
    if (typeof args[1] === 'string') return original.apply(this, args); // host given
    return original.call(this, first, LOOPBACK, ...args.slice(1));
  }
  if (typeof first === 'object' && !first._handle && first.fd === undefined && first.handle === undefined) {
    // listen(options[, cb]); a path means a unix socket, which has no host.
    if (first.path === undefined && (first.host === undefined || first.host === null || first.host === '')) {
      return original.call(this, { ...first, host: LOOPBACK }, ...args.slice(1));
    }
  }
  return original.apply(this, args);
};
