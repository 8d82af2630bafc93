// Legacy (MCP 2025-11-25 experimental tasks) client test on the official
// TypeScript SDK v1 (`client.experimental.tasks`). It
// runs against any legacy server: tasksbridge's legacy face, the TS fixture
// server (legacy-server.mjs), the mcp-go fixture server.
//
// Usage: node legacy-client.mjs [options] URL        (URL last, as the
//        conformance harness passes it)
//   --steps init,list,task,stream,plain,tasklist,cancel,fail,iserror,elicit,sample
//   --<step>-tool NAME --<step>-args JSON    for task, stream, plain, cancel,
//                                            fail, iserror, elicit, sample
//   --elicit-answer JSON     content of the accepted elicitation
//   --elicit-expect TEXT     must appear in the elicit result (default: the
//                            answer's first string value)
//   --sample-text TEXT       text the sampling handler answers with
//   --expect-fail any|error|iserror   which failure shape `fail` accepts
//   --side-on LIST (tasks/result)  the streams side requests may come on; add GET when
//                    a test breaks the tasks/result stream and the client resumes it
//   --ttl MS (60000)  --timeout-ms MS (overall, 60000)  --request-timeout-ms MS (30000)
//   --default-poll-ms MS     the SDK's poll interval for tasks without
//                            pollInterval (SDK default 1000)
// Environment: NODE_EXTRA_CA_CERTS (an https URL's private CA);
//   TASKSBRIDGE_TLS_CLIENT_CERT, TASKSBRIDGE_TLS_CLIENT_KEY (a client
//   certificate, PEM, for mutual TLS).
//
// Prints one JSON report on stdout:
//   {"client","url","ok","steps":[{"name","ok","ms","error"?,"details"}],
//    "sideRequests":[...],"statusNotifications":N,"error"?}
// Exit code 0 only if every selected step passed; 1 otherwise; 2 on bad usage.
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';

const ALL_STEPS = ['init', 'list', 'task', 'stream', 'plain', 'tasklist', 'cancel', 'fail', 'iserror', 'elicit', 'sample'];
const RELATED_TASK = 'io.modelcontextprotocol/related-task';

// Defaults fit tasksbridge's embedded modern upstream (seen through the
// bridge) and the TS fixture server alike.
const TOOL_DEFAULTS = {
  task: ['slow_task', { ms: 300, text: 'task step' }],
  stream: ['slow_task', { ms: 300, text: 'stream step' }],
  plain: ['slow_task', { ms: 200, text: 'plain step' }],
  cancel: ['slow_task', { ms: 60000, text: 'cancel step' }],
  fail: ['fail_task', { reason: 'fail step' }],
  iserror: ['error_task', { reason: 'iserror step' }],
  elicit: ['elicit_task', { question: 'Your name?' }],
  sample: ['sample_task', { prompt: 'Say hello' }],
};

const options = {
  steps: { type: 'string', default: ALL_STEPS.join(',') },
  'elicit-answer': { type: 'string', default: '{"answer":"legacy-client-answer"}' },
  'elicit-expect': { type: 'string' },
  'sample-text': { type: 'string', default: 'sampled by the legacy client' },
  'expect-fail': { type: 'string', default: 'any' },
  'side-on': { type: 'string', default: 'tasks/result' },
  ttl: { type: 'string', default: '60000' },
  'timeout-ms': { type: 'string', default: '60000' },
  'request-timeout-ms': { type: 'string', default: '30000' },
  'default-poll-ms': { type: 'string' },
  help: { type: 'boolean', default: false },
};
for (const step of Object.keys(TOOL_DEFAULTS)) {
  options[`${step}-tool`] = { type: 'string', default: TOOL_DEFAULTS[step][0] };
  options[`${step}-args`] = { type: 'string', default: JSON.stringify(TOOL_DEFAULTS[step][1]) };
}

function usage(msg) {
  process.stderr.write(`legacy-client: ${msg}\nusage: node legacy-client.mjs [--steps a,b] [--<step>-tool N --<step>-args JSON] ... URL\n`);
  process.exit(2);
}

let parsed;
try {
  parsed = parseArgs({ options, allowPositionals: true });
} catch (err) {
  usage(err.message);
}
const opts = parsed.values;
if (opts.help) usage('help');
const url = parsed.positionals.at(-1);
if (!url) usage('missing server URL (last argument)');

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

const steps = opts.steps.split(',').map((s) => s.trim()).filter(Boolean);
for (const s of steps) if (!ALL_STEPS.includes(s)) usage(`unknown step ${s} (known: ${ALL_STEPS.join(',')})`);
if (!['any', 'error', 'iserror'].includes(opts['expect-fail'])) usage('--expect-fail must be any, error or iserror');
const tool = {};
for (const step of Object.keys(TOOL_DEFAULTS)) tool[step] = { name: opts[`${step}-tool`], args: json(`${step}-args`) };
const elicitAnswer = json('elicit-answer');
const elicitExpect = opts['elicit-expect'] ?? Object.values(elicitAnswer).find((v) => typeof v === 'string');
const ttl = int('ttl');
const overallTimeout = int('timeout-ms');
const reqTimeout = int('request-timeout-ms');
const reqOpts = { timeout: reqTimeout };

// ---------------------------------------------------------------- report
const report = {
  client: 'typescript-sdk@1.32.2',
  url,
  ok: false,
  steps: [],
  sideRequests: [],
  statusNotifications: 0,
};
let finished = false;
function finish(error) {
  if (finished) return;
  finished = true;
  if (error) report.error = error;
  const selected = new Set(steps);
  report.ok = !error && report.steps.length === selected.size && report.steps.every((s) => s.ok);
  process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(report.ok ? 0 : 1));
}
const overall = setTimeout(() => finish(`overall timeout after ${overallTimeout}ms`), overallTimeout);
overall.unref?.();

// ------------------------------------------------------------------ wire
// The SDK hides which HTTP response stream a server→client message came on.
// Tee every SSE body and note, per message, the method of the request whose
// response carried it ("GET" for the standalone stream), so `elicit` and
// `sample` can check the legacy side channel really is the tasks/result
// stream (L-46).
async function observe(body, on) {
  const lines = body.pipeThrough(new TextDecoderStream());
  let buf = '';
  try {
    for await (const chunk of lines) {
      buf += chunk;
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i).replace(/\r$/, '');
        buf = buf.slice(i + 1);
        if (!line.startsWith('data:')) continue;
        let msg;
        try {
          msg = JSON.parse(line.slice(5).trim());
        } catch {
          continue;
        }
        if (msg.method && msg.id !== undefined) {
          report.sideRequests.push({
            method: msg.method,
            id: msg.id,
            on,
            relatedTaskId: msg.params?._meta?.[RELATED_TASK]?.taskId ?? null,
          });
        }
      }
    }
  } catch {
    // stream aborted (client closed): nothing more to observe
  }
}

// Mutual TLS (a bridge listening with --tls-client-ca): with
// TASKSBRIDGE_TLS_CLIENT_CERT and TASKSBRIDGE_TLS_CLIENT_KEY (PEM files) every
// request presents that certificate through an undici Agent. The server's CA
// comes from NODE_EXTRA_CA_CERTS, as for any Node client.
const baseFetch = await clientCertFetch();
async function clientCertFetch() {
  const cert = process.env.TASKSBRIDGE_TLS_CLIENT_CERT;
  const key = process.env.TASKSBRIDGE_TLS_CLIENT_KEY;
  if (!cert || !key) return fetch;
  const { Agent, fetch: undiciFetch } = await import('undici');
  const { readFileSync } = await import('node:fs');
  const dispatcher = new Agent({ connect: { cert: readFileSync(cert), key: readFileSync(key) } });
  return (input, init) => undiciFetch(input, { ...init, dispatcher });
}

async function observingFetch(input, init) {
  const res = await baseFetch(input, init);
  let on = init?.method ?? 'GET';
  if (on === 'POST' && typeof init?.body === 'string') {
    try {
      const b = JSON.parse(init.body);
      on = Array.isArray(b) ? 'batch' : b.method ?? 'response';
    } catch {
      // not JSON: keep POST
    }
  }
  if (!res.body || !(res.headers.get('content-type') ?? '').includes('text/event-stream')) return res;
  const [mine, theirs] = res.body.tee();
  observe(mine, on);
  return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
}

// ---------------------------------------------------------------- client
const client = new Client(
  { name: 'tasksbridge-legacy-client', version: '1.0.0' },
  {
    capabilities: { elicitation: { form: {} }, sampling: {} },
    ...(opts['default-poll-ms'] ? { defaultTaskPollInterval: int('default-poll-ms') } : {}),
  },
);
const elicitations = [];
const samplings = [];
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  elicitations.push({
    message: req.params.message,
    mode: req.params.mode ?? 'form',
    fields: Object.keys(req.params.requestedSchema?.properties ?? {}),
    relatedTaskId: req.params._meta?.[RELATED_TASK]?.taskId ?? null,
  });
  return { action: 'accept', content: elicitAnswer };
});
client.setRequestHandler(CreateMessageRequestSchema, async (req) => {
  samplings.push({
    messages: req.params.messages.length,
    relatedTaskId: req.params._meta?.[RELATED_TASK]?.taskId ?? null,
  });
  return {
    role: 'assistant',
    content: { type: 'text', text: opts['sample-text'] },
    model: 'tasksbridge-legacy-client',
    stopReason: 'endTurn',
  };
});
client.setNotificationHandler(TaskStatusNotificationSchema, () => {
  report.statusNotifications++;
});
const transport = new StreamableHTTPClientTransport(new URL(url), { fetch: observingFetch });
const tasks = client.experimental.tasks;

// --------------------------------------------------------------- helpers
class StepError extends Error {
  constructor(message, details) {
    super(message);
    this.details = details;
  }
}
function check(cond, message) {
  if (!cond) throw new StepError(message);
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const terminal = (s) => s === 'completed' || s === 'failed' || s === 'cancelled';
const created = []; // every task id this client created, for `tasklist`
const errInfo = (err) => (err instanceof McpError || typeof err?.code === 'number' ? { code: err.code, message: err.message } : { message: String(err?.message ?? err) });
const firstText = (r) => (r?.content ?? []).find((c) => c.type === 'text')?.text ?? null;

let toolsListed = null;
async function listAllTools() {
  const all = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined, reqOpts);
    all.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor);
  // listTools caches taskSupport per page; callToolStream needs all of them.
  client.cacheToolMetadata?.(all);
  toolsListed = all;
  return all;
}

// createTask sends tools/call with params.task and checks the
// CreateTaskResult fields TS clients need (L-12, L-21, L-22).
async function createTask(t) {
  const res = await client.request(
    { method: 'tools/call', params: { name: t.name, arguments: t.args } },
    CreateTaskResultSchema,
    { ...reqOpts, task: { ttl } },
  );
  const task = res.task;
  check(typeof task?.taskId === 'string' && task.taskId.length > 0, 'CreateTaskResult without taskId');
  check('ttl' in task, 'CreateTaskResult task has no ttl key');
  created.push(task.taskId);
  return task;
}

// poll calls tasks/get until until(status) or a terminal status.
async function poll(taskId, until = terminal) {
  const seen = [];
  for (;;) {
    const t = await tasks.getTask(taskId, reqOpts);
    check(t.taskId === taskId, `tasks/get returned taskId ${t.taskId}, want ${taskId}`);
    if (seen.at(-1) !== t.status) seen.push(t.status);
    if (until(t.status) || terminal(t.status)) return { task: t, seen };
    await sleep(Math.min(Math.max(t.pollInterval ?? 100, 10), 1000));
  }
}

function checkRelatedMeta(result, taskId) {
  const rel = result?._meta?.[RELATED_TASK]?.taskId;
  check(rel === taskId, `tasks/result _meta["${RELATED_TASK}"].taskId = ${JSON.stringify(rel)}, want ${taskId}`);
}

// ------------------------------------------------------------------ steps
const impl = {
  async init() {
    await client.connect(transport, reqOpts);
    const caps = client.getServerCapabilities() ?? {};
    const d = {
      protocolVersion: transport.protocolVersion ?? null,
      sessionId: transport.sessionId ?? null,
      server: client.getServerVersion() ?? null,
      tasks: caps.tasks ?? null,
    };
    check(d.protocolVersion === '2025-11-25', `negotiated protocol ${d.protocolVersion}, want 2025-11-25`);
    check(caps.tasks?.requests?.tools?.call !== undefined, 'server did not declare capabilities.tasks.requests.tools.call');
    return d;
  },

  async list() {
    const all = await listAllTools();
    const taskSupport = Object.fromEntries(all.map((t) => [t.name, t.execution?.taskSupport ?? null]));
    const needed = new Set(steps.filter((s) => tool[s]).map((s) => tool[s].name));
    const missing = [...needed].filter((n) => !(n in taskSupport));
    check(missing.length === 0, `tools/list lacks ${missing.join(', ')}`);
    return { taskSupport };
  },

  async task() {
    const t = tool.task;
    const task = await createTask(t);
    const { task: end, seen } = await poll(task.taskId);
    check(end.status === 'completed', `task ended ${end.status} (${end.statusMessage ?? ''}), want completed`);
    const result = await tasks.getTaskResult(task.taskId, CallToolResultSchema, reqOpts);
    checkRelatedMeta(result, task.taskId);
    check(!result.isError, 'tasks/result isError');
    check((result.content ?? []).length > 0, 'tasks/result has no content');
    return { taskId: task.taskId, created: task, statuses: seen, pollInterval: end.pollInterval ?? null, text: firstText(result) };
  },

  async stream() {
    const t = tool.stream;
    if (!toolsListed) await listAllTools();
    const kinds = [];
    let taskId = null;
    let result = null;
    let error = null;
    for await (const msg of tasks.callToolStream({ name: t.name, arguments: t.args }, CallToolResultSchema, reqOpts)) {
      kinds.push(msg.type === 'taskStatus' ? `taskStatus:${msg.task.status}` : msg.type);
      if (msg.type === 'taskCreated') {
        taskId = msg.task.taskId;
        created.push(taskId);
      } else if (msg.type === 'result') result = msg.result;
      else if (msg.type === 'error') error = msg.error;
    }
    const d = { taskId, messages: kinds, text: firstText(result) };
    if (error) throw new StepError(`callToolStream yielded error: ${error.message}`, d);
    check(taskId !== null, 'callToolStream yielded no taskCreated (tool not task-capable?)');
    check(result && !result.isError, 'callToolStream yielded no successful result');
    return d;
  },

  async plain() {
    const t = tool.plain;
    if (!toolsListed) await listAllTools();
    const result = await client.callTool({ name: t.name, arguments: t.args }, CallToolResultSchema, reqOpts);
    check(!('task' in result), 'plain tools/call answered with a task');
    check(!result.isError, `plain tools/call isError: ${firstText(result)}`);
    check((result.content ?? []).length > 0, 'plain tools/call without content');
    return { text: firstText(result) };
  },

  async tasklist() {
    const listed = new Set();
    let cursor;
    let pages = 0;
    do {
      const page = await tasks.listTasks(cursor, reqOpts);
      pages++;
      for (const t of page.tasks) listed.add(t.taskId);
      cursor = page.nextCursor;
      check(pages < 1000, 'tasks/list pagination does not end');
    } while (cursor);
    const missing = created.filter((id) => !listed.has(id));
    check(missing.length === 0, `tasks/list lacks ${missing.length} of ${created.length} created tasks: ${missing.join(', ')}`);
    return { created: created.length, listed: listed.size, pages };
  },

  async cancel() {
    const t = tool.cancel;
    const task = await createTask(t);
    const cancelled = await tasks.cancelTask(task.taskId, reqOpts);
    check(cancelled.status === 'cancelled', `tasks/cancel returned status ${cancelled.status}, want cancelled`);
    const after = await tasks.getTask(task.taskId, reqOpts);
    check(after.status === 'cancelled', `tasks/get after cancel shows ${after.status}, want cancelled`);
    const d = { taskId: task.taskId, statusMessage: cancelled.statusMessage ?? null };
    try {
      await tasks.cancelTask(task.taskId, reqOpts);
      throw new StepError('second tasks/cancel succeeded, want -32602', d);
    } catch (err) {
      if (err instanceof StepError) throw err;
      d.secondCancel = errInfo(err);
      check(err.code === -32602, `second tasks/cancel gave ${err.code}, want -32602`);
    }
    // What tasks/result says for a cancelled task is recorded, not judged.
    try {
      await tasks.getTaskResult(task.taskId, CallToolResultSchema, { timeout: Math.min(reqTimeout, 5000) });
      d.resultAfterCancel = 'result';
    } catch (err) {
      d.resultAfterCancel = errInfo(err);
    }
    return d;
  },

  // fail: status failed, then tasks/result gives either a JSON-RPC error
  // ("error") or an isError result ("iserror"); --expect-fail narrows it.
  async fail() {
    const t = tool.fail;
    const task = await createTask(t);
    const { task: end, seen } = await poll(task.taskId);
    const d = { taskId: task.taskId, statuses: seen, statusMessage: end.statusMessage ?? null };
    check(end.status === 'failed', `task ended ${end.status}, want failed`);
    try {
      const result = await tasks.getTaskResult(task.taskId, CallToolResultSchema, reqOpts);
      d.shape = result.isError === true ? 'iserror' : 'result';
      d.text = firstText(result);
    } catch (err) {
      d.shape = 'error';
      d.error = errInfo(err);
    }
    if (d.shape === 'result') throw new StepError('tasks/result of a failed task returned a non-error result', d);
    if (opts['expect-fail'] !== 'any' && d.shape !== opts['expect-fail']) {
      throw new StepError(`failure shape ${d.shape}, want ${opts['expect-fail']}`, d);
    }
    return d;
  },

  // iserror: a tool result with isError:true makes the legacy task failed
  // (L-29), and tasks/result returns that result.
  async iserror() {
    const t = tool.iserror;
    const task = await createTask(t);
    const { task: end, seen } = await poll(task.taskId);
    const d = { taskId: task.taskId, statuses: seen, statusMessage: end.statusMessage ?? null };
    check(end.status === 'failed', `task ended ${end.status}, want failed (isError result, L-29)`);
    const result = await tasks.getTaskResult(task.taskId, CallToolResultSchema, reqOpts);
    d.text = firstText(result);
    checkRelatedMeta(result, task.taskId);
    check(result.isError === true, 'tasks/result lacks isError: true');
    return d;
  },

  async elicit() {
    return sideChannel(tool.elicit, 'elicitation/create', elicitations, elicitExpect);
  },

  async sample() {
    return sideChannel(tool.sample, 'sampling/createMessage', samplings, opts['sample-text']);
  },
};

// sideChannel: poll until input_required, then the blocking tasks/result,
// during which the server's request arrives on that stream and our handler
// answers it; then the result, and tasks/get must say completed.
async function sideChannel(t, method, handled, expect) {
  const before = handled.length;
  const task = await createTask(t);
  const { task: mid, seen } = await poll(task.taskId, (s) => s === 'input_required');
  const d = { taskId: task.taskId, statuses: seen };
  check(mid.status === 'input_required', `task reached ${mid.status} before input_required`);
  const result = await tasks.getTaskResult(task.taskId, CallToolResultSchema, reqOpts);
  d.text = firstText(result);
  d.handled = handled.slice(before);
  d.deliveredOn = report.sideRequests.filter((r) => r.method === method && r.relatedTaskId === task.taskId).map((r) => r.on);
  checkRelatedMeta(result, task.taskId);
  check(d.handled.length > 0, `no ${method} reached the client`);
  check(d.handled.every((h) => h.relatedTaskId === task.taskId), `${method} without related-task _meta for ${task.taskId}`);
  const sideOn = opts['side-on'].split(',');
  check(d.deliveredOn.length > 0 && d.deliveredOn.every((on) => sideOn.includes(on)), `${method} not delivered on the tasks/result stream: ${JSON.stringify(d.deliveredOn)}`);
  check(!result.isError, `tasks/result isError: ${d.text}`);
  const all = JSON.stringify(result);
  check(expect === undefined || all.includes(expect), `result does not contain ${JSON.stringify(expect)}`);
  const after = await tasks.getTask(task.taskId, reqOpts);
  d.finalStatus = after.status;
  check(after.status === 'completed', `tasks/get after result shows ${after.status}, want completed`);
  return d;
}

// ------------------------------------------------------------------- main
async function main() {
  let initFailed = false;
  for (const name of steps) {
    if (finished) return;
    const started = Date.now();
    const entry = { name, ok: false, ms: 0 };
    if (initFailed && name !== 'init') {
      entry.error = 'skipped: init failed';
      report.steps.push(entry);
      continue;
    }
    if (name !== 'init' && !client.transport) {
      // init not selected: connect anyway, the steps need a session.
      try {
        await impl.init();
      } catch (err) {
        initFailed = true;
        entry.error = `connect: ${err.message}`;
        report.steps.push(entry);
        continue;
      }
    }
    try {
      entry.details = await impl[name]();
      entry.ok = true;
    } catch (err) {
      entry.error = err.message ?? String(err);
      if (err.details) entry.details = err.details;
      else if (typeof err.code === 'number') entry.details = { code: err.code };
      if (name === 'init') initFailed = true;
    }
    entry.ms = Date.now() - started;
    report.steps.push(entry);
  }
  try {
    await transport.terminateSession();
  } catch {
    // the server may not support DELETE: not a client failure
  }
  await client.close().catch(() => {});
  finish();
}

main().catch((err) => finish(`unexpected: ${err.stack ?? err}`));
