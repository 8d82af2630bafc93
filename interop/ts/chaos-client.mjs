// Legacy (MCP 2025-11-25 experimental tasks) clients on the official
// TypeScript SDK v1 for the chaos tool (bench/cmd/chaos) and the
// multi-replica end-to-end test (bench/cluster): they keep working while
// bridge replicas are killed under them.
//
// Usage: node chaos-client.mjs [options] URL
//   --mode chaos|resume     chaos (default): --clients loops of task work for
//                           --duration-ms; resume: one slow task whose
//                           tasks/result stream the caller breaks
//   --clients N (2)  --duration-ms MS (60000)  --request-timeout-ms MS (30000)
//   --task-budget-ms MS (120000)  how long one task may take, retries included
//   --slow-ms MS (1500)           slow_task duration (resume mode: its wait)
//   --id PREFIX (c)               marker prefix (markers are PREFIX-N-SEQ)
//   --kinds LIST (slow,elicit,cancel,iserror)   the task kinds each client cycles through
//   --result-at-once              call tasks/result right after the create (slow,
//                                 elicit, iserror), not after tasks/get saw the task end
//                                 (or input_required): waits are open when replicas die
//
// Every tools/call carries arguments.marker, unique per call, which the
// upstream ignores and the chaos tool's recorder uses to match the upstream
// task. Prints JSON lines on stdout:
//   chaos:  {"type":"task","client","kind","marker","taskId","expect","final",
//            "resultOk","presented","errors","timeouts","unknown","detail"?}
//           {"type":"unacked","client","kind","marker","error","timeout"}
//           {"type":"list","client","missing":[ids]}
//           {"type":"summary","client","requests","errors","timeouts","sessionsLost"}
//   resume: {"event":"streaming"} once the tasks/result stream's first event id
//           (its priming event) reached the client,
//           then {"event":"result","ok","ms","text"?,"error"?,"timeout"}
// Kinds: slow (completed), cancel (cancelled), iserror (failed, isError
// result, L-29), elicit (input_required, answered on the tasks/result stream,
// then completed).
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema, ErrorCode } from '@modelcontextprotocol/sdk/types.js';

const RELATED_TASK = 'io.modelcontextprotocol/related-task';
const KINDS = ['slow', 'elicit', 'cancel', 'iserror'];
const EXPECT = { slow: 'completed', elicit: 'completed', cancel: 'cancelled', iserror: 'failed' };

const { values: opts, positionals } = parseArgs({
  options: {
    mode: { type: 'string', default: 'chaos' },
    clients: { type: 'string', default: '2' },
    'duration-ms': { type: 'string', default: '60000' },
    'request-timeout-ms': { type: 'string', default: '30000' },
    'task-budget-ms': { type: 'string', default: '120000' },
    'slow-ms': { type: 'string', default: '1500' },
    id: { type: 'string', default: 'c' },
    kinds: { type: 'string', default: 'slow,elicit,cancel,iserror' },
    'result-at-once': { type: 'boolean', default: false },
  },
  allowPositionals: true,
});
const url = positionals.at(-1);
const int = (n) => {
  const v = Number.parseInt(opts[n], 10);
  if (!Number.isInteger(v) || v <= 0) {
    process.stderr.write(`chaos-client: --${n} must be a positive integer\n`);
    process.exit(2);
  }
  return v;
};
if (!url || !['chaos', 'resume'].includes(opts.mode)) {
  process.stderr.write('usage: node chaos-client.mjs [--mode chaos|resume] [--clients N] [--duration-ms MS] URL\n');
  process.exit(2);
}
const kinds = opts.kinds.split(',').map((k) => k.trim()).filter(Boolean);
if (kinds.length === 0 || kinds.some((k) => !KINDS.includes(k))) {
  process.stderr.write(`chaos-client: --kinds must list some of ${KINDS.join(',')}\n`);
  process.exit(2);
}
const reqTimeout = int('request-timeout-ms');
const reqOpts = { timeout: reqTimeout };
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const emit = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const terminal = (s) => s === 'completed' || s === 'failed' || s === 'cancelled';
const isTimeout = (e) => e?.code === ErrorCode.RequestTimeout;
const isUnknown = (e) => e?.code === ErrorCode.InvalidParams;
const errText = (e) => String(e?.message ?? e).slice(0, 300);
const firstText = (r) => (r?.content ?? []).find((c) => c.type === 'text')?.text ?? '';

// A legacy client: one SDK Client on one session, re-initialized if the
// session is lost (HTTP 404).
class Legacy {
  constructor(name, onStream) {
    this.name = name;
    this.onStream = onStream;
    this.presented = new Map(); // taskId -> elicitations presented
    this.stats = { requests: 0, errors: 0, timeouts: 0, sessionsLost: 0 };
  }

  async connect() {
    // onStream fires once the client has read the first event id of a
    // tasks/result stream (its priming event): from then on the SDK can
    // resume that stream with Last-Event-ID.
    const fetchHook = async (input, init) => {
      const res = await fetch(input, init);
      if (!this.onStream || typeof init?.body !== 'string' || !init.body.includes('"tasks/result"') ||
          !(res.headers.get('content-type') ?? '').includes('text/event-stream') || !res.body) {
        return res;
      }
      const [mine, theirs] = res.body.tee();
      const onStream = this.onStream;
      (async () => {
        let buf = '';
        try {
          for await (const chunk of mine.pipeThrough(new TextDecoderStream())) {
            buf += chunk;
            if (/(^|\n)id:/.test(buf)) {
              onStream();
              break;
            }
          }
        } catch {
          // the stream broke before an id: nothing to report
        }
      })();
      return new Response(theirs, { status: res.status, statusText: res.statusText, headers: res.headers });
    };
    this.client = new Client({ name: `tasksbridge-chaos-${this.name}`, version: '1.0.0' }, { capabilities: { elicitation: { form: {} } } });
    this.client.setRequestHandler(ElicitRequestSchema, async (req) => {
      const id = req.params._meta?.[RELATED_TASK]?.taskId ?? '';
      this.presented.set(id, (this.presented.get(id) ?? 0) + 1);
      return { action: 'accept', content: { answer: `answer-${id}` } };
    });
    this.client.onerror = () => {}; // stream disconnects are expected here
    this.transport = new StreamableHTTPClientTransport(new URL(url), { fetch: fetchHook });
    await this.client.connect(this.transport, reqOpts);
    this.tasks = this.client.experimental.tasks;
  }

  // call runs one request, counting it; a lost session reconnects (and the
  // error is rethrown: that request did not happen).
  async call(fn) {
    this.stats.requests++;
    try {
      return await fn();
    } catch (err) {
      if (isTimeout(err)) this.stats.timeouts++;
      else this.stats.errors++;
      if (err?.code === 404) {
        this.stats.sessionsLost++;
        await this.client.close().catch(() => {});
        await this.connect().catch(() => {});
      }
      throw err;
    }
  }

  create(kind, marker) {
    const ms = int('slow-ms');
    const args = {
      slow: ['slow_task', { ms, text: `done ${marker}`, marker }],
      cancel: ['slow_task', { ms: 3_600_000, text: `never ${marker}`, marker }],
      iserror: ['error_task', { reason: `bad ${marker}`, marker }],
      elicit: ['elicit_task', { question: `Answer for ${marker}?`, marker }],
    }[kind];
    return this.call(() => this.client.request({ method: 'tools/call', params: { name: args[0], arguments: args[1] } },
      CreateTaskResultSchema, { ...reqOpts, task: { ttl: 600_000 } }));
  }
}

// retry runs step until it succeeds or the task's budget ends; an unknown
// task (-32602) ends it at once: the bridge forgot an acknowledged task.
async function retry(rec, deadline, step) {
  for (;;) {
    try {
      return await step();
    } catch (err) {
      if (isTimeout(err)) rec.timeouts++;
      else rec.errors++;
      rec.detail = errText(err);
      if (isUnknown(err)) {
        rec.unknown = true;
        throw err;
      }
      if (Date.now() > deadline) throw err;
      await sleep(200);
    }
  }
}

async function untilStatus(c, rec, deadline, want) {
  for (;;) {
    const t = await retry(rec, deadline, () => c.call(() => c.tasks.getTask(rec.taskId, reqOpts)));
    if (want(t.status) || terminal(t.status)) return t.status;
    if (Date.now() > deadline) throw new Error(`still ${t.status} after the task budget`);
    await sleep(Math.min(Math.max(t.pollInterval ?? 100, 50), 500));
  }
}

async function runTask(c, kind, marker) {
  let created;
  try {
    created = await c.create(kind, marker);
  } catch (err) {
    emit({ type: 'unacked', client: c.name, kind, marker, error: errText(err), timeout: isTimeout(err) });
    return null;
  }
  const rec = { type: 'task', client: c.name, kind, marker, taskId: created.task.taskId, expect: EXPECT[kind],
    final: null, resultOk: false, presented: 0, errors: 0, timeouts: 0, unknown: false };
  const deadline = Date.now() + int('task-budget-ms');
  try {
    if (kind === 'cancel') {
      try {
        await retry(rec, deadline, () => c.call(() => c.tasks.cancelTask(rec.taskId, reqOpts)));
      } catch (err) {
        // A retried cancel whose first answer was lost finds the task
        // cancelled already (-32602): tasks/get below tells.
        if (!rec.unknown) throw err;
        rec.unknown = false;
      }
      rec.final = await untilStatus(c, rec, deadline, terminal);
      rec.resultOk = rec.final === 'cancelled';
    } else if (opts['result-at-once']) {
      // The blocking wait first, as the SDK's callToolStream does: it is open
      // for the task's whole life, so replica kills cut it mid-wait.
      const r = await retry(rec, deadline, () => c.call(() => c.tasks.getTaskResult(rec.taskId, CallToolResultSchema, reqOpts)));
      rec.resultOk = kind === 'slow' ? !r.isError && firstText(r) === `done ${marker}`
        : kind === 'elicit' ? !r.isError && JSON.stringify(r).includes(`answer-${rec.taskId}`) : r.isError === true;
      rec.final = await untilStatus(c, rec, deadline, terminal);
    } else if (kind === 'elicit') {
      await untilStatus(c, rec, deadline, (s) => s === 'input_required');
      const r = await retry(rec, deadline, () => c.call(() => c.tasks.getTaskResult(rec.taskId, CallToolResultSchema, reqOpts)));
      rec.resultOk = !r.isError && JSON.stringify(r).includes(`answer-${rec.taskId}`);
      rec.final = await untilStatus(c, rec, deadline, terminal);
    } else {
      rec.final = await untilStatus(c, rec, deadline, terminal);
      const r = await retry(rec, deadline, () => c.call(() => c.tasks.getTaskResult(rec.taskId, CallToolResultSchema, reqOpts)));
      rec.resultOk = kind === 'slow' ? !r.isError && firstText(r) === `done ${marker}` : r.isError === true;
    }
  } catch (err) {
    rec.detail = errText(err);
  }
  rec.presented = c.presented.get(rec.taskId) ?? 0;
  emit(rec);
  return rec.taskId;
}

// checkList pages through tasks/list and reports acknowledged tasks of this
// session it does not show.
async function checkList(c, acked) {
  const listed = new Set();
  let cursor;
  do {
    const page = await c.call(() => c.tasks.listTasks(cursor, reqOpts));
    for (const t of page.tasks) listed.add(t.taskId);
    cursor = page.nextCursor;
  } while (cursor);
  emit({ type: 'list', client: c.name, listed: listed.size, missing: acked.filter((id) => !listed.has(id)) });
}

async function chaosLoop(n, end) {
  const c = new Legacy(`${opts.id}-${n}`);
  for (;;) {
    try {
      await c.connect();
      break;
    } catch (err) {
      if (Date.now() > end) throw err;
      await sleep(200);
    }
  }
  const acked = [];
  let seq = 0;
  while (Date.now() < end) {
    const kind = kinds[(seq + n) % kinds.length];
    const marker = `${c.name}-${seq++}`;
    const sessionsLost = c.stats.sessionsLost;
    const id = await runTask(c, kind, marker);
    if (c.stats.sessionsLost !== sessionsLost) acked.length = 0; // a new session has no tasks yet
    else if (id) acked.push(id);
    if (seq % 8 === 0) {
      await checkList(c, acked).catch(() => {});
    }
  }
  emit({ type: 'summary', client: c.name, ...c.stats });
  await c.client.close().catch(() => {});
}

async function resume() {
  let t0 = 0;
  const c = new Legacy(`${opts.id}-resume`, () => emit({ event: 'streaming' }));
  await c.connect();
  const created = await c.create('slow', `${opts.id}-resume`);
  t0 = Date.now();
  try {
    const r = await c.tasks.getTaskResult(created.task.taskId, CallToolResultSchema, reqOpts);
    emit({ event: 'result', ok: !r.isError && firstText(r) === `done ${opts.id}-resume`, ms: Date.now() - t0, text: firstText(r), timeout: false });
  } catch (err) {
    emit({ event: 'result', ok: false, ms: Date.now() - t0, error: errText(err), timeout: isTimeout(err) });
  }
  await c.client.close().catch(() => {});
}

if (opts.mode === 'resume') {
  await resume();
} else {
  const end = Date.now() + int('duration-ms');
  await Promise.all(Array.from({ length: int('clients') }, (_, n) => chaosLoop(n, end)));
}
process.exit(0);
