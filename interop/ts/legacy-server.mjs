// Legacy (MCP 2025-11-25 experimental tasks) fixture server on the official
// TypeScript SDK v1. tasksbridge's tests put the bridge's modern face in front
// of it (tools: interop/README.md) and drive it directly with the legacy clients
// as a baseline.
//
// Usage: node legacy-server.mjs [--port 0] [--poll-ms 100] [--time-scale 1]
//                                [--compose ask-first|task-first]
//                                [--exit-on-stdin-close] [--log]
// Prints "listening http://127.0.0.1:PORT/mcp" on stdout once it accepts
// connections. Always binds 127.0.0.1. Durations given to the tools (ms,
// seconds, the fixed failing_job delay) are multiplied by --time-scale
// (env LEGACY_FIXTURE_TIME_SCALE) so suites can run fast; --poll-ms (env
// LEGACY_FIXTURE_POLL_MS) is the pollInterval every task advertises and the
// interval at which the SDK's blocking tasks/result re-checks the store.
// --compose (env LEGACY_FIXTURE_COMPOSE) picks the shape of
// test_tool_with_task: ask-first (default) elicits on the tools/call stream
// before the task exists; task-first creates the task, marks it
// input_required and queues the elicitation for the tasks/result side
// channel before answering the tools/call (the common 2025-11-25 pattern).
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { createMcpExpressApp } from '@modelcontextprotocol/sdk/server/express.js';
import {
  InMemoryTaskStore,
  InMemoryTaskMessageQueue,
} from '@modelcontextprotocol/sdk/experimental/tasks';
import {
  CreateMessageResultSchema,
  ElicitResultSchema,
  isInitializeRequest,
} from '@modelcontextprotocol/sdk/types.js';

const { values: opts } = parseArgs({
  options: {
    port: { type: 'string', default: process.env.LEGACY_FIXTURE_PORT ?? '0' },
    'poll-ms': { type: 'string', default: process.env.LEGACY_FIXTURE_POLL_MS ?? '100' },
    'time-scale': { type: 'string', default: process.env.LEGACY_FIXTURE_TIME_SCALE ?? '1' },
    compose: { type: 'string', default: process.env.LEGACY_FIXTURE_COMPOSE ?? 'ask-first' },
    'exit-on-stdin-close': { type: 'boolean', default: false },
    log: { type: 'boolean', default: process.env.LEGACY_FIXTURE_LOG === '1' },
  },
});

const port = Number.parseInt(opts.port, 10);
const pollMs = Number.parseInt(opts['poll-ms'], 10);
const timeScale = Number.parseFloat(opts['time-scale']);
if (!Number.isInteger(port) || port < 0 || port > 65535) fatal(`bad --port ${opts.port}`);
if (!Number.isInteger(pollMs) || pollMs <= 0) fatal(`bad --poll-ms ${opts['poll-ms']}`);
if (!Number.isFinite(timeScale) || timeScale < 0) fatal(`bad --time-scale ${opts['time-scale']}`);
if (opts.compose !== 'ask-first' && opts.compose !== 'task-first') fatal(`bad --compose ${opts.compose}: want ask-first or task-first`);

function fatal(msg) {
  process.stderr.write(`legacy-server: ${msg}\n`);
  process.exit(2);
}

function log(...args) {
  if (opts.log) process.stderr.write(`legacy-server: ${args.join(' ')}\n`);
}

const scaled = (ms) => Math.max(0, Math.round(ms * timeScale));
const terminal = (s) => s === 'completed' || s === 'failed' || s === 'cancelled';

// FixtureTaskStore lets a task end with a JSON-RPC error on tasks/result
// (protocol_error_job): the SDK's tasks/result handler returns whatever
// getTaskResult throws as the error response. A plain Error with a numeric
// code keeps the message free of McpError's "MCP error N:" prefix.
class FixtureTaskStore extends InMemoryTaskStore {
  constructor() {
    super();
    this.protocolErrors = new Map();
  }

  async getTaskResult(taskId, sessionId) {
    const perr = this.protocolErrors.get(taskId);
    if (perr && (await this.getTask(taskId, sessionId))) {
      throw Object.assign(new Error(perr.message), { code: perr.code });
    }
    return super.getTaskResult(taskId, sessionId);
  }
}

// One store for every session (as in the SDK's own example): the store scopes
// lookups by session id itself.
const taskStore = new FixtureTaskStore();

// sleepWhileActive waits ms, returning false early when the task reached a
// terminal state meanwhile (tasks/cancel), so cancelled work really stops.
async function sleepWhileActive(store, taskId, ms) {
  const end = Date.now() + ms;
  for (;;) {
    const left = end - Date.now();
    if (left <= 0) return true;
    await new Promise((r) => setTimeout(r, Math.min(left, pollMs)));
    const task = await store.getTask(taskId).catch(() => null);
    if (!task || terminal(task.status)) return false;
  }
}

// finish stores the outcome unless the task already ended (cancelled, or
// expired): the store refuses results for terminal tasks.
async function finish(store, taskId, status, result) {
  try {
    await store.storeTaskResult(taskId, status, result);
  } catch (err) {
    log(`task ${taskId}: not stored (${err.message})`);
  }
}

const text = (t) => ({ type: 'text', text: t });

// taskTool creates the task and runs work(store, taskId) in the background;
// work returns {status, result} or undefined when it already stored one.
// before, when given, runs before the task exists: a request it sends with
// extra.sendRequest travels on the tools/call stream itself (the legacy shape
// of an MRTR round before task creation); its result reaches work as `pre`.
function taskTool(work, before) {
  return {
    // Tools without an inputSchema get createTask(extra) from the SDK.
    async createTask(a, b) {
      const [args, extra] = b === undefined ? [{}, a] : [a, b];
      const store = extra.taskStore;
      const pre = before ? await before(args ?? {}, extra) : undefined;
      const task = await store.createTask({ ttl: extra.taskRequestedTtl, pollInterval: pollMs });
      log(`task ${task.taskId} created`);
      (async () => {
        try {
          const out = await work(args ?? {}, store, task.taskId, pre);
          if (out) await finish(store, task.taskId, out.status, out.result);
        } catch (err) {
          log(`task ${task.taskId}: ${err.stack ?? err}`);
          await finish(store, task.taskId, 'failed', {
            content: [text(`${err.message ?? err}`)],
            isError: true,
          });
        }
      })();
      // A copy: the store hands out its live object, which a zero-delay task
      // could complete before this result is serialized.
      return { task: { ...task } };
    },
    async getTask(a, b) {
      const extra = b ?? a;
      return extra.taskStore.getTask(extra.taskId);
    },
    async getTaskResult(a, b) {
      const extra = b ?? a;
      return extra.taskStore.getTaskResult(extra.taskId);
    },
  };
}

// sideRequests sends server→client requests tied to the task. The SDK queues
// them (related-task _meta) for delivery on the client's blocking tasks/result
// stream; the task shows input_required until every answer is in.
async function sideRequests(mcp, store, taskId, requests, statusMessage) {
  await store.updateTaskStatus(taskId, 'input_required', statusMessage);
  const answers = await Promise.all(
    requests.map(({ method, params, schema }) =>
      mcp.server.request({ method, params }, schema, { relatedTask: { taskId }, timeout: 120000 }),
    ),
  );
  const task = await store.getTask(taskId).catch(() => null);
  if (!task || terminal(task.status)) return null;
  await store.updateTaskStatus(taskId, 'working', 'input received');
  return answers;
}

const form = (message, properties, required = Object.keys(properties)) => ({
  method: 'elicitation/create',
  schema: ElicitResultSchema,
  params: { mode: 'form', message, requestedSchema: { type: 'object', properties, required } },
});

function describeElicit(answer) {
  return `elicitation ${answer.action}: ${JSON.stringify(answer.content ?? {})}`;
}

function buildServer() {
  const mcp = new McpServer(
    { name: 'tasksbridge-legacy-fixture', version: '1.0.0' },
    {
      capabilities: {
        tools: {},
        tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
      },
      taskStore,
      taskMessageQueue: new InMemoryTaskMessageQueue(),
      defaultTaskPollInterval: pollMs,
    },
  );
  const tasks = mcp.experimental.tasks;

  // --- tasksbridge's own legacy tool set (interop/README.md, Tools) ---
  mcp.registerTool(
    'echo',
    { description: 'Synchronous: returns text unchanged.', inputSchema: { text: z.string() } },
    async ({ text: t }) => ({ content: [text(t)] }),
  );

  const slow = (name) => async ({ ms, text: t }, store, taskId) => {
    const d = scaled(ms);
    if (!(await sleepWhileActive(store, taskId, d))) return undefined;
    return {
      status: 'completed',
      result: { content: [text(`slept ${d}ms: ${t}`)], structuredContent: { sleptMs: d, text: t, tool: name } },
    };
  };
  tasks.registerToolTask(
    'slow_task',
    {
      description: 'Task (optional): sleeps ms, then completes with text.',
      inputSchema: { ms: z.number().int().min(0).default(2000), text: z.string().default('') },
      execution: { taskSupport: 'optional' },
    },
    taskTool(slow('slow_task')),
  );
  tasks.registerToolTask(
    'slow_required',
    {
      description: 'Task (required): sleeps ms, then completes with text.',
      inputSchema: { ms: z.number().int().min(0).default(1000), text: z.string().default('') },
      execution: { taskSupport: 'required' },
    },
    taskTool(slow('slow_required')),
  );
  tasks.registerToolTask(
    'fail_task',
    {
      description: 'Task (optional): after ms ends failed; tasks/result returns an isError result with reason.',
      inputSchema: { ms: z.number().int().min(0).default(300), reason: z.string().default('fail_task failed') },
      execution: { taskSupport: 'optional' },
    },
    taskTool(async ({ ms, reason }, store, taskId) => {
      if (!(await sleepWhileActive(store, taskId, scaled(ms)))) return undefined;
      return { status: 'failed', result: { content: [text(reason)], isError: true } };
    }),
  );
  tasks.registerToolTask(
    'elicit_task',
    {
      description:
        'Task (required): goes input_required and asks question through a form elicitation ' +
        '{answer: string} delivered on the tasks/result stream, then completes with the answer.',
      inputSchema: { question: z.string().default('Your answer?'), delayMs: z.number().int().min(0).default(0) },
      execution: { taskSupport: 'required' },
    },
    taskTool(async ({ question, delayMs }, store, taskId) => {
      if (!(await sleepWhileActive(store, taskId, scaled(delayMs)))) return undefined;
      const answers = await sideRequests(
        mcp,
        store,
        taskId,
        [form(question, { answer: { type: 'string', title: 'Answer' } })],
        'waiting for elicitation answer',
      );
      if (!answers) return undefined;
      const [a] = answers;
      return {
        status: 'completed',
        result: { content: [text(describeElicit(a))], structuredContent: { action: a.action, content: a.content ?? {} } },
      };
    }),
  );
  tasks.registerToolTask(
    'sample_task',
    {
      description:
        'Task (required): goes input_required and asks for a completion of prompt through ' +
        'sampling/createMessage on the tasks/result stream, then completes with the sampled text.',
      inputSchema: { prompt: z.string().default('Say hello') },
      execution: { taskSupport: 'required' },
    },
    taskTool(async ({ prompt }, store, taskId) => {
      const answers = await sideRequests(
        mcp,
        store,
        taskId,
        [
          {
            method: 'sampling/createMessage',
            schema: CreateMessageResultSchema,
            params: { messages: [{ role: 'user', content: text(prompt) }], maxTokens: 256 },
          },
        ],
        'waiting for a sampled message',
      );
      if (!answers) return undefined;
      const c = answers[0].content;
      const sampled = c && c.type === 'text' ? c.text : JSON.stringify(c);
      return { status: 'completed', result: { content: [text(sampled)] } };
    }),
  );

  // --- legacy twins of the conformance 0.2.0-alpha.12 fixtures (§7.3) ---
  mcp.registerTool(
    'greet',
    { description: 'Synchronous: returns "Hello, {name}!".', inputSchema: { name: z.string() } },
    async ({ name }) => ({ content: [text(`Hello, ${name}!`)] }),
  );
  tasks.registerToolTask(
    'slow_compute',
    {
      description: 'Task (optional): sleeps seconds (scaled), then completes; settles cancelled on tasks/cancel.',
      inputSchema: { seconds: z.number().min(0).default(3), label: z.string().default('') },
      execution: { taskSupport: 'optional' },
    },
    taskTool(async ({ seconds, label }, store, taskId) => {
      const d = scaled(seconds * 1000);
      if (!(await sleepWhileActive(store, taskId, d))) return undefined;
      return {
        status: 'completed',
        result: { content: [text(`computed ${label || 'result'} after ${seconds}s`)], structuredContent: { seconds, label } },
      };
    }),
  );
  tasks.registerToolTask(
    'failing_job',
    {
      description: 'Task (required): after ~1s (scaled) ends failed with an isError tool result.',
      execution: { taskSupport: 'required' },
    },
    taskTool(async (_args, store, taskId) => {
      if (!(await sleepWhileActive(store, taskId, scaled(1000)))) return undefined;
      return { status: 'failed', result: { content: [text('failing_job: simulated tool execution error')], isError: true } };
    }),
  );
  tasks.registerToolTask(
    'protocol_error_job',
    {
      description: 'Task (required): ends failed; tasks/result answers JSON-RPC -32603.',
      execution: { taskSupport: 'required' },
    },
    taskTool(async (_args, store, taskId) => {
      if (!(await sleepWhileActive(store, taskId, scaled(200)))) return undefined;
      taskStore.protocolErrors.set(taskId, { code: -32603, message: 'protocol_error_job: simulated internal failure' });
      return { status: 'failed', result: { content: [text('protocol_error_job: simulated internal failure')], isError: true } };
    }),
  );
  tasks.registerToolTask(
    'confirm_delete',
    {
      description: 'Task (required): one form elicitation {confirm: boolean}, then completes.',
      inputSchema: { filename: z.string().default('file.txt') },
      execution: { taskSupport: 'required' },
    },
    taskTool(async ({ filename }, store, taskId) => {
      const answers = await sideRequests(
        mcp,
        store,
        taskId,
        [form(`Delete ${filename}?`, { confirm: { type: 'boolean', title: 'Confirm' } })],
        `waiting for confirmation to delete ${filename}`,
      );
      if (!answers) return undefined;
      const [a] = answers;
      const yes = a.action === 'accept' && a.content?.confirm === true;
      return { status: 'completed', result: { content: [text(`${yes ? 'Deleted' : 'Kept'} ${filename}`)] } };
    }),
  );
  tasks.registerToolTask(
    'multi_input',
    {
      description: 'Task (required): two form elicitations in parallel (name, confirm), then completes.',
      execution: { taskSupport: 'required' },
    },
    taskTool(async (_args, store, taskId) => {
      const answers = await sideRequests(
        mcp,
        store,
        taskId,
        [
          form('What is your name?', { name: { type: 'string', title: 'Name' } }),
          form('Confirm?', { confirm: { type: 'boolean', title: 'Confirm' } }),
        ],
        'waiting for two answers',
      );
      if (!answers) return undefined;
      return { status: 'completed', result: { content: [text(answers.map(describeElicit).join('\n'))] } };
    }),
  );
  const userName = () => form('What is your name? (user_name)', { name: { type: 'string', title: 'Name' } });
  const hello = (answer) => {
    const c = answer?.content ?? {};
    const name = c.name ?? c.user_name ?? Object.values(c).find((v) => typeof v === 'string') ?? 'anonymous';
    return { content: [text(`Hello, ${name}!`)] };
  };
  if (opts.compose === 'task-first') {
    tasks.registerToolTask(
      'test_tool_with_task',
      {
        description:
          'Task (required): creates its task, elicits user_name {name: string} on the tasks/result stream before ' +
          'answering the tools/call (its CreateTaskResult says input_required), then completes with "Hello, {name}!".',
        execution: { taskSupport: 'required' },
      },
      {
        async createTask(extra) {
          const store = extra.taskStore;
          const task = await store.createTask({ ttl: extra.taskRequestedTtl, pollInterval: pollMs });
          await store.updateTaskStatus(task.taskId, 'input_required', 'waiting for user_name');
          const q = userName();
          // Queued for the tasks/result stream (relatedTask); answered later.
          const answer = mcp.server.request({ method: q.method, params: q.params }, q.schema, {
            relatedTask: { taskId: task.taskId },
            timeout: 120000,
          });
          (async () => {
            try {
              const a = await answer;
              const t = await store.getTask(task.taskId).catch(() => null);
              if (!t || terminal(t.status)) return;
              await store.updateTaskStatus(task.taskId, 'working', 'input received');
              await finish(store, task.taskId, 'completed', hello(a));
            } catch (err) {
              log(`task ${task.taskId}: ${err.stack ?? err}`);
              await finish(store, task.taskId, 'failed', { content: [text(`${err.message ?? err}`)], isError: true });
            }
          })();
          return { task: { ...(await store.getTask(task.taskId)) } };
        },
        async getTask(extra) {
          return extra.taskStore.getTask(extra.taskId);
        },
        async getTaskResult(extra) {
          return extra.taskStore.getTaskResult(extra.taskId);
        },
      },
    );
  } else {
    tasks.registerToolTask(
      'test_tool_with_task',
      {
        description:
          'Task (required): elicits user_name {name: string} on the tools/call stream before creating the task, then completes with "Hello, {name}!".',
        execution: { taskSupport: 'required' },
      },
      taskTool(
        async (_args, _store, _taskId, answer) => ({ status: 'completed', result: hello(answer) }),
        async (_args, extra) => {
          const q = userName();
          return extra.sendRequest({ method: q.method, params: q.params }, q.schema, { timeout: 120000 });
        },
      ),
    );
  }
  return mcp;
}

// --- stateful Streamable HTTP at /mcp, one McpServer per session ---
const sessions = new Map(); // session id → transport
const app = createMcpExpressApp({ host: '127.0.0.1' });

app.post('/mcp', async (req, res) => {
  const sid = req.headers['mcp-session-id'];
  log(`POST ${sid ?? '-'} ${req.body?.method ?? (Array.isArray(req.body) ? 'batch' : 'response')}`);
  try {
    let transport = sid ? sessions.get(sid) : undefined;
    if (!transport) {
      if (sid) {
        res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
        return;
      }
      if (!isInitializeRequest(req.body)) {
        res.status(400).json({
          jsonrpc: '2.0',
          error: { code: -32000, message: 'Bad Request: No valid session ID provided' },
          id: null,
        });
        return;
      }
      transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => sessions.set(id, transport),
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await buildServer().connect(transport);
    }
    await transport.handleRequest(req, res, req.body);
  } catch (err) {
    log(`POST failed: ${err.stack ?? err}`);
    if (!res.headersSent) {
      res.status(500).json({ jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null });
    }
  }
});

const byHeader = async (req, res) => {
  const transport = sessions.get(req.headers['mcp-session-id']);
  if (!transport) {
    res.status(404).json({ jsonrpc: '2.0', error: { code: -32001, message: 'Session not found' }, id: null });
    return;
  }
  await transport.handleRequest(req, res);
};
app.get('/mcp', byHeader);
app.delete('/mcp', byHeader);

const httpServer = app.listen(port, '127.0.0.1', (err) => {
  if (err) fatal(`listen: ${err.message}`);
  const { port: actual } = httpServer.address();
  process.stdout.write(`listening http://127.0.0.1:${actual}/mcp\n`);
});
httpServer.on('error', (err) => fatal(`listen: ${err.message}`));

async function shutdown(code) {
  for (const t of sessions.values()) await t.close().catch(() => {});
  taskStore.cleanup();
  httpServer.close();
  httpServer.closeAllConnections?.();
  process.exit(code);
}
process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));
if (opts['exit-on-stdin-close']) {
  // The parent (a test) holds our stdin; its exit closes the pipe, so a test
  // that dies without cleanup still leaves no server behind.
  process.stdin.on('end', () => shutdown(0));
  process.stdin.on('error', () => shutdown(0));
  process.stdin.resume();
}
