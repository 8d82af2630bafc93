// OAuth-protected legacy (MCP 2025-11-25 experimental tasks) client test on
// the official TypeScript SDK v1 (1.32.2): the SDK's own OAuth client
// support (ClientCredentialsProvider of client/auth-extensions.js, the
// client_credentials grant with client_secret_basic) discovers the
// authorization server from the server's 401 (RFC 9728 resource_metadata →
// protected resource metadata → RFC 8414/OIDC discovery), asks for a token
// for the server's URL (RFC 8707 resource) and retries; then task-augmented
// tools/call, tasks/get and tasks/result run with that token.
//
// Usage: node oauth-legacy-client.mjs [options] URL        (URL last)
//   --steps unauth,prm,init,task,expiry     (default: unauth,prm,init,task)
//   --client-id ID --client-secret SECRET   pre-registered client (required)
//   --issuer URL          the authorization server the client trusts
//                         (ClientCredentialsProvider's expectedIssuer)
//   --task-tool NAME --task-args JSON       (slow_task {"ms":300})
//   --expiry-tool NAME --expiry-args JSON   a task that outlives the token:
//                         created with one token, polled and read after that
//                         token expired, with the next one (slow_task; ms is
//                         set to the token's remaining lifetime + 1.5 s)
//   --timeout-ms MS (60000)  --request-timeout-ms MS (30000)
//
// Steps:
//   unauth  POST initialize without a token: HTTP 401 with
//           WWW-Authenticate: Bearer resource_metadata="…" on the server's
//           own origin (RFC 9728 §5.1, RFC 6750 §3)
//   prm     GET that document: resource == URL (RFC 9728 §3.3),
//           authorization_servers names --issuer
//   init    connect through the SDK's OAuth flow; negotiated 2025-11-25 with
//           capabilities.tasks; the token's iss is --issuer and its aud the
//           URL (RFC 8707)
//   task    tools/call + task → tasks/get until completed → tasks/result
//   expiry  see --expiry-tool; the task must complete and its result arrive
//           under the second token (tasks survive token refresh)
//
// Prints one JSON report on stdout like legacy-client.mjs:
//   {"client","url","ok","steps":[{"name","ok","ms","error"?,"details"}],"http":[…],"error"?}
// "http" lists every HTTP exchange (method, path, MCP method, status,
// WWW-Authenticate). Exit code 0 only if every selected step passed; 1
// otherwise; 2 on bad usage.
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ClientCredentialsProvider } from '@modelcontextprotocol/sdk/client/auth-extensions.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';

const ALL_STEPS = ['unauth', 'prm', 'init', 'task', 'expiry'];
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

const { values: opts, positionals } = (() => {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        steps: { type: 'string', default: 'unauth,prm,init,task' },
        'client-id': { type: 'string' },
        'client-secret': { type: 'string' },
        issuer: { type: 'string' },
        'task-tool': { type: 'string', default: 'slow_task' },
        'task-args': { type: 'string', default: '{"ms":300,"text":"oauth task"}' },
        'expiry-tool': { type: 'string', default: 'slow_task' },
        'expiry-args': { type: 'string', default: '{"text":"outlives its token"}' },
        'timeout-ms': { type: 'string', default: '60000' },
        'request-timeout-ms': { type: 'string', default: '30000' },
      },
    });
  } catch (err) {
    return usage(err.message);
  }
})();

function usage(msg) {
  process.stderr.write(`oauth-legacy-client: ${msg}\nusage: node oauth-legacy-client.mjs --client-id ID --client-secret S --issuer URL [--steps a,b] URL\n`);
  process.exit(2);
}
const url = positionals.at(-1);
if (!url) usage('missing server URL (last argument)');
if (!opts['client-id'] || !opts['client-secret']) usage('--client-id and --client-secret are required');
if (!opts.issuer) usage('--issuer is required');
const steps = opts.steps.split(',').map((s) => s.trim()).filter(Boolean);
for (const s of steps) if (!ALL_STEPS.includes(s)) usage(`unknown step ${s} (known: ${ALL_STEPS.join(',')})`);
const json = (name) => {
  try {
    return JSON.parse(opts[name]);
  } catch (err) {
    return usage(`--${name}: ${err.message}`);
  }
};
const int = (name) => {
  const n = Number.parseInt(opts[name], 10);
  if (!Number.isInteger(n) || n <= 0) usage(`--${name} must be a positive integer`);
  return n;
};
const taskTool = { name: opts['task-tool'], args: json('task-args') };
const expiryTool = { name: opts['expiry-tool'], args: json('expiry-args') };
const overallTimeout = int('timeout-ms');
const reqOpts = { timeout: int('request-timeout-ms') };

// ---------------------------------------------------------------- report
const report = { client: 'typescript-sdk@1.32.2+oauth-client-credentials', url, ok: false, steps: [], http: [] };
let finished = false;
function finish(error) {
  if (finished) return;
  finished = true;
  if (error) report.error = error;
  report.ok = !error && report.steps.length === steps.length && report.steps.every((s) => s.ok);
  process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(report.ok ? 0 : 1));
}
setTimeout(() => finish(`overall timeout after ${overallTimeout}ms`), overallTimeout).unref?.();

class StepError extends Error {
  constructor(message, details) {
    super(message);
    this.details = details;
  }
}
function check(cond, message, details) {
  if (!cond) throw new StepError(message, details);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const terminal = (s) => s === 'completed' || s === 'failed' || s === 'cancelled';

// Every HTTP exchange, so a failure shows where the flow stopped. Tokens are
// never recorded.
async function recordingFetch(input, init) {
  const res = await fetch(input, init);
  let rpc = null;
  if (typeof init?.body === 'string') {
    try {
      rpc = JSON.parse(init.body).method ?? 'response';
    } catch {
      rpc = null;
    }
  }
  const u = new URL(typeof input === 'string' ? input : input.url ?? String(input));
  report.http.push({
    method: init?.method ?? 'GET',
    url: `${u.origin}${u.pathname}`,
    rpc,
    authorized: new Headers(init?.headers ?? {}).has('authorization'),
    status: res.status,
    wwwAuthenticate: res.headers.get('www-authenticate'),
  });
  return res;
}

// jwtClaims decodes (never verifies) a JWT's payload: the client only
// reports what it was given; the server side verifies.
function jwtClaims(token) {
  try {
    return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString('utf8'));
  } catch {
    return null;
  }
}

// parseChallenge reads the Bearer challenge's auth-params (RFC 9110 §11.6.1).
function parseChallenge(h) {
  if (!h) return null;
  const m = /(^|,\s*)Bearer\s+(.*)$/i.exec(h) ?? (/^Bearer$/i.test(h.trim()) ? [null, null, ''] : null);
  if (!m) return null;
  const params = {};
  for (const p of m[2].matchAll(/([a-zA-Z_]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))/g)) params[p[1].toLowerCase()] = p[2] ?? p[3];
  return params;
}

// ---------------------------------------------------------------- client
const provider = new ClientCredentialsProvider({
  clientId: opts['client-id'],
  clientSecret: opts['client-secret'],
  expectedIssuer: opts.issuer,
  clientName: 'tasksbridge-oauth-legacy-client',
});
const client = new Client({ name: 'tasksbridge-oauth-legacy-client', version: '1.0.0' }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url), { authProvider: provider, fetch: recordingFetch });
const tasks = client.experimental.tasks;
let connected = false;
let prmDoc = null;

function tokenInfo() {
  const tok = provider.tokens()?.access_token;
  const c = tok ? jwtClaims(tok) : null;
  return c ? { iss: c.iss, aud: c.aud, sub: c.sub, scope: c.scope, exp: c.exp, jti: c.jti } : null;
}

async function connect() {
  if (connected) return;
  await client.connect(transport, reqOpts);
  connected = true;
}

async function createTask(t) {
  const res = await client.request({ method: 'tools/call', params: { name: t.name, arguments: t.args } }, CreateTaskResultSchema, {
    ...reqOpts,
    task: { ttl: 60000 },
  });
  check(typeof res.task?.taskId === 'string' && res.task.taskId !== '', 'CreateTaskResult without taskId', res);
  return res.task;
}

async function pollAndResult(taskId) {
  const seen = [];
  for (;;) {
    const t = await tasks.getTask(taskId, reqOpts);
    if (seen.at(-1) !== t.status) seen.push(t.status);
    if (terminal(t.status)) {
      check(t.status === 'completed', `task ended ${t.status} (${t.statusMessage ?? ''}), want completed`, { seen });
      break;
    }
    await sleep(Math.min(Math.max(t.pollInterval ?? 100, 10), 500));
  }
  const result = await tasks.getTaskResult(taskId, CallToolResultSchema, reqOpts);
  check(result?._meta?.[RELATED_TASK]?.taskId === taskId, 'tasks/result lacks the related-task _meta', { result });
  check(!result.isError && (result.content ?? []).length > 0, 'tasks/result is an error or empty', { result });
  return { statuses: seen, text: (result.content ?? []).find((c) => c.type === 'text')?.text ?? null };
}

const impl = {
  async unauth() {
    const res = await recordingFetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'unauth-probe',
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'unauth-probe', version: '1' } },
      }),
    });
    const body = (await res.text()).slice(0, 500);
    const www = res.headers.get('www-authenticate');
    const ch = parseChallenge(www);
    const d = { status: res.status, wwwAuthenticate: www, body };
    check(res.status === 401, `initialize without a token answered HTTP ${res.status}, want 401`, d);
    check(ch !== null, 'the 401 has no Bearer challenge in WWW-Authenticate', d);
    check(!!ch.resource_metadata, 'the Bearer challenge has no resource_metadata parameter', d);
    check(new URL(ch.resource_metadata).origin === new URL(url).origin, `resource_metadata ${ch.resource_metadata} is not on ${new URL(url).origin}, the origin the client dialed`, d);
    d.resourceMetadata = ch.resource_metadata;
    return d;
  },

  async prm() {
    const u = new URL(url);
    const prmURL = report.steps.find((s) => s.name === 'unauth')?.details?.resourceMetadata
      ?? `${u.origin}/.well-known/oauth-protected-resource${u.pathname}`;
    const res = await recordingFetch(prmURL, { headers: { accept: 'application/json' } });
    const text = await res.text();
    const d = { url: prmURL, status: res.status, body: text.slice(0, 800) };
    check(res.status === 200, `GET ${prmURL} answered HTTP ${res.status}, want 200`, d);
    prmDoc = JSON.parse(text);
    d.resource = prmDoc.resource;
    d.authorizationServers = prmDoc.authorization_servers;
    check(prmDoc.resource === url, `protected resource metadata names resource ${prmDoc.resource}, want ${url} (RFC 9728 §3.3)`, d);
    check(Array.isArray(prmDoc.authorization_servers) && prmDoc.authorization_servers.includes(opts.issuer),
      `authorization_servers ${JSON.stringify(prmDoc.authorization_servers)} does not name ${opts.issuer}`, d);
    return d;
  },

  async init() {
    const d = {};
    try {
      await connect();
    } catch (err) {
      d.token = tokenInfo();
      throw new StepError(`connect: ${err.message}`, d);
    }
    const caps = client.getServerCapabilities() ?? {};
    d.protocolVersion = transport.protocolVersion ?? null;
    d.server = client.getServerVersion() ?? null;
    d.tasks = caps.tasks ?? null;
    d.token = tokenInfo();
    check(d.token !== null, 'connected without a JWT access token', d);
    check(d.token.iss === opts.issuer, `token iss ${d.token.iss}, want ${opts.issuer}`, d);
    const aud = [].concat(d.token.aud);
    check(aud.includes(url), `token aud ${JSON.stringify(d.token.aud)} does not name ${url} (RFC 8707)`, d);
    check(d.protocolVersion === '2025-11-25', `negotiated ${d.protocolVersion}, want 2025-11-25`, d);
    check(caps.tasks?.requests?.tools?.call !== undefined, 'server did not declare capabilities.tasks.requests.tools.call', d);
    return d;
  },

  async task() {
    await connect();
    const task = await createTask(taskTool);
    return { taskId: task.taskId, ...(await pollAndResult(task.taskId)) };
  },

  // expiry: the task is created under one token and finishes after it
  // expired; polling and tasks/result then run under the next token (the
  // SDK gets a 401, fetches a new token and retries).
  async expiry() {
    await connect();
    const first = tokenInfo();
    check(first?.exp, 'no token expiry to outlive', { first });
    const left = first.exp * 1000 - Date.now();
    const args = { ...expiryTool.args, ms: Math.max(left, 0) + 1500 };
    const task = await createTask({ name: expiryTool.name, args });
    await sleep(Math.max(first.exp * 1000 - Date.now(), 0) + 1000);
    const d = { taskId: task.taskId, firstToken: first, taskMs: args.ms };
    try {
      Object.assign(d, await pollAndResult(task.taskId));
    } catch (err) {
      d.secondToken = tokenInfo();
      if (err instanceof StepError) Object.assign(d, err.details);
      throw new StepError(`after the first token expired: ${err.message}`, d);
    }
    d.secondToken = tokenInfo();
    check(d.secondToken?.jti && d.secondToken.jti !== first.jti, 'the client never needed a second token (the first did not expire?)', d);
    return d;
  },
};

async function main() {
  let connectFailed = false;
  for (const name of steps) {
    if (finished) return;
    const started = Date.now();
    const entry = { name, ok: false, ms: 0 };
    if (connectFailed && (name === 'task' || name === 'expiry')) {
      entry.error = 'skipped: the client could not connect';
      report.steps.push(entry);
      continue;
    }
    try {
      entry.details = await impl[name]();
      entry.ok = true;
    } catch (err) {
      entry.error = err.message ?? String(err);
      if (err.details) entry.details = err.details;
      else if (typeof err.code === 'number') entry.details = { code: err.code };
      if (!connected && name !== 'unauth' && name !== 'prm') connectFailed = true;
    }
    entry.ms = Date.now() - started;
    report.steps.push(entry);
  }
  if (connected) {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
  finish();
}

main().catch((err) => finish(`unexpected: ${err.stack ?? err}`));
