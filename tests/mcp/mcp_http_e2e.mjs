// `oishell mcp --http` played by the official MCP TypeScript SDK's streamable HTTP client
// (@modelcontextprotocol/sdk's StreamableHTTPClientTransport, pinned in package.json), and by raw HTTP requests for
// what no well-behaved client sends. Every refusal is checked beside the request it lets through. Traffic only on
// 127.0.0.1; every process started here is ended here.
//   node mcp_http_e2e.mjs OISHELL SDK_DIR
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { check, finish } from './checks.mjs';

const oishell = path.resolve(process.argv[2]);
const sdkDir = path.resolve(process.argv[3]);
const sdk = (p) => import(pathToFileURL(path.join(sdkDir, 'node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StreamableHTTPClientTransport } = await sdk('client/streamableHttp.js');
const { ElicitRequestSchema } = await sdk('types.js');

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'oishell-mcp-http-'));
fs.chmodSync(workspace, 0o755);
fs.writeFileSync(path.join(workspace, 'secret.txt'), 'not for the sandbox\n');
const secret = path.join(workspace, 'secret.txt');
const children = new Set();

// Starts `oishell mcp --http ADDRESS ...`; resolves with its endpoint and token once it prints them, or with its
// exit when it ends first.
function startServer(address, extra = []) {
  const child = spawn(oishell, ['mcp', '--http', address, '--workspace', workspace, '--hide', secret, ...extra],
                      { cwd: workspace, stdio: ['ignore', 'ignore', 'pipe'] });
  children.add(child);
  let stderr = '';
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => {
    children.delete(child);
    resolve({ code, signal });
  }));
  const ready = new Promise((resolve) => {
    child.stderr.on('data', (d) => {
      stderr += d;
      const url = /serving MCP \(streamable HTTP\) at (\S+)/.exec(stderr);
      const token = /token: ([0-9a-f]{64})/.exec(stderr);
      const file = /token in (\S+)/.exec(stderr);
      if (url && (token || file)) resolve({ url: url[1], token: token?.[1] });
    });
    exited.then((e) => resolve({ exited: e }));
  });
  return { child, exited, ready, stderr: () => stderr };
}

// One raw HTTP request (node:http lets a test set Host and Origin as an attacker would).
function raw(url, { method = 'POST', headers = {}, body, timeoutMs = 20000 } = {}) {
  const u = new URL(url);
  const data = body === undefined ? undefined : (typeof body === 'string' ? body : JSON.stringify(body));
  headers = Object.fromEntries(Object.entries(headers).filter(([, v]) => v !== undefined));
  if (data !== undefined && !('Content-Length' in headers)) headers['Content-Length'] = Buffer.byteLength(data);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port: u.port, path: u.pathname, method, headers }, (res) => {
      let text = '';
      res.on('data', (d) => { text += d; });
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on('error', reject);
    req.setTimeout(timeoutMs, () => req.destroy(new Error('timed out')));
    req.end(data);
  });
}

// Host processes whose command line holds `marker` (a sandbox's processes are the host's too, in a child PID
// namespace).
function processesWith(marker) {
  const found = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) found.push(Number(pid));
    } catch { /* gone meanwhile */ }
  }
  return found;
}

async function waitFor(what, predicate, ms = 15000) {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const call = (client, name, args, options) => client.callTool({ name, arguments: args }, undefined, options);

async function connect(url, token, capabilities = {}) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: 'oishell-http-e2e', version: '1.0.0' }, { capabilities });
  const started = process.hrtime.bigint();
  await client.connect(transport);
  return { client, transport, ms: Number(process.hrtime.bigint() - started) / 1e6 };
}

try {
  const server = startServer('127.0.0.1:0');
  const { url, token, exited: early } = await server.ready;
  assert.ok(!early, `the server ended: ${JSON.stringify(early)}: ${server.stderr()}`);
  const host = new URL(url).host;
  const questions = [];
  const { client, transport, ms } = await connect(url, token, { elicitation: {} });
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    questions.push(request.params);
    return { action: 'accept', content: { decision: 'deny' } };
  });
  console.log(`connect over HTTP (initialize + initialized): ${ms.toFixed(1)} ms`);
  const session = transport.sessionId;
  const auth = { Authorization: `Bearer ${token}` };
  const mcpHeaders = { ...auth, 'Content-Type': 'application/json', Accept: 'application/json',
                       'Mcp-Session-Id': session, 'MCP-Protocol-Version': '2025-11-25' };
  const ping = (id) => ({ jsonrpc: '2.0', id, method: 'ping' });

  await check('the SDK client initializes over HTTP and gets a session id', async () => {
    assert.equal(client.getServerVersion().name, 'oishell');
    assert.match(session, /^[0-9a-f]{64}$/);
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    await client.ping();
  });

  await check('tools/list over HTTP has every tool', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ['edit_file', 'interrupt', 'list_files', 'policy', 'read_file',
                                                       'reset', 'run_code', 'run_command', 'write_file']);
  });

  await check('run_code twice keeps python state, with progress on the POST stream', async () => {
    const a = await call(client, 'run_code', { language: 'python', code: 'x = 41' });
    assert.equal(a.isError, undefined, text(a));
    const seen = [];
    const b = await call(client, 'run_code', { language: 'python', code: 'print(x + 1)' },
                         { onprogress: (p) => seen.push(p) });
    assert.equal(b.structuredContent.stdout, '42\n', text(b));
    assert.equal(seen.map((p) => p.message).join(''), '42\n');
  });

  await check('a denial is an error result naming the rule; a workspace file beside it is read', async () => {
    const hidden = await call(client, 'read_file', { path: secret });
    assert.equal(hidden.isError, true, text(hidden));
    assert.match(text(hidden), /filesystem\.hide/);
    await call(client, 'write_file', { path: 'open.txt', content: 'readable\n' });
    const open = await call(client, 'read_file', { path: path.join(workspace, 'open.txt') });
    assert.equal(open.isError, undefined, text(open));
    assert.equal(open.structuredContent.content, 'readable\n');
  });

  await check('a network question reaches the client as elicitation over HTTP, and its denial holds', async () => {
    const r = await call(client, 'run_code', {
      language: 'python',
      code: 'import urllib.request\ntry:\n    urllib.request.urlopen("http://oishell-test.invalid/", timeout=20)\nexcept Exception as e:\n    print(type(e).__name__, e)',
    });
    assert.equal(questions.length, 1, JSON.stringify(questions));
    assert.match(questions[0].message, /oishell-test\.invalid:80/);
    assert.match(r.structuredContent.stdout, /403|Forbidden/, text(r));
  });

  await check('a cancelled call stops its code, the state is kept', async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = call(client, 'run_code', { language: 'python', code: 'import time\nx = 7\ntime.sleep(60)' },
                         { signal: controller.signal });
    setTimeout(() => controller.abort('enough'), 700);
    await assert.rejects(pending);
    const r = await call(client, 'run_code', { language: 'python', code: 'print(x)' });
    assert.equal(r.structuredContent.stdout, '7\n', text(r));
    assert.ok(Date.now() - started < 10000, `took ${Date.now() - started} ms`);
  });

  await check('no token and a wrong token are refused (401); the right one is answered', async () => {
    const none = await raw(url, { headers: { ...mcpHeaders, Authorization: undefined }, body: ping(1) });
    assert.equal(none.status, 401, none.text);
    assert.match(none.headers['www-authenticate'], /^Bearer/);
    const wrong = await raw(url, { headers: { ...mcpHeaders, Authorization: `Bearer ${'0'.repeat(64)}` }, body: ping(2) });
    assert.equal(wrong.status, 401, wrong.text);
    const asKey = await raw(url, { headers: { ...mcpHeaders, Authorization: undefined, 'X-API-KEY': token }, body: ping(3) });
    assert.equal(asKey.status, 401, asKey.text);
    const right = await raw(url, { headers: mcpHeaders, body: ping(4) });
    assert.equal(right.status, 200, right.text);
    assert.deepEqual(JSON.parse(right.text), { jsonrpc: '2.0', id: 4, result: {} });
    for (const r of [none, wrong, right]) assert.equal(r.headers['set-cookie'], undefined);
  });

  await check('a foreign Origin is refused (403); the server\'s own is answered', async () => {
    const foreign = await raw(url, { headers: { ...mcpHeaders, Origin: 'http://evil.example' }, body: ping(5) });
    assert.equal(foreign.status, 403, foreign.text);
    const own = await raw(url, { headers: { ...mcpHeaders, Origin: `http://${host}` }, body: ping(6) });
    assert.equal(own.status, 200, own.text);
  });

  await check('a rebound Host is refused (421) even with the token; the served one is answered', async () => {
    const rebound = await raw(url, { headers: { ...mcpHeaders, Host: `evil.example:${new URL(url).port}` }, body: ping(7) });
    assert.equal(rebound.status, 421, rebound.text);
    const served = await raw(url, { headers: { ...mcpHeaders, Host: `localhost:${new URL(url).port}` }, body: ping(8) });
    assert.equal(served.status, 200, served.text);
  });

  await check('bad JSON, a batch, an unknown method, a huge body and foreign sessions each get their error', async () => {
    const bad = await raw(url, { headers: mcpHeaders, body: '{"jsonrpc": "2.0", "id": 9, ' });
    assert.equal(bad.status, 400);
    assert.equal(JSON.parse(bad.text).error.code, -32700);
    const batch = await raw(url, { headers: mcpHeaders, body: [ping(10), ping(11)] });
    assert.equal(batch.status, 400);
    assert.equal(JSON.parse(batch.text).error.code, -32600);
    const unknown = await raw(url, { headers: mcpHeaders, body: { jsonrpc: '2.0', id: 12, method: 'no/such' } });
    assert.equal(unknown.status, 200);
    assert.equal(JSON.parse(unknown.text).error.code, -32601);
    // 40 MB announced: refused from the head, before any of it is read (the limit is 32 MiB, stdio's too).
    const huge = await raw(url, { headers: { ...mcpHeaders, 'Content-Length': String(40 << 20) } });
    assert.equal(huge.status, 413, huge.text);
    // The same, with the body sent: the client still reads the 413 (the server reads what follows, then closes).
    const sent = await fetch(url, { method: 'POST', headers: mcpHeaders, body: ' '.repeat(40 << 20) });
    assert.equal(sent.status, 413);
    assert.equal((await sent.json()).error.code, -32600);
    const wrongSession = await raw(url, { headers: { ...mcpHeaders, 'Mcp-Session-Id': 'f'.repeat(64) }, body: ping(13) });
    assert.equal(wrongSession.status, 404, wrongSession.text);
    const noSession = await raw(url, { headers: { ...mcpHeaders, 'Mcp-Session-Id': undefined }, body: ping(14) });
    assert.equal(noSession.status, 400, noSession.text);
    const version = await raw(url, { headers: { ...mcpHeaders, 'MCP-Protocol-Version': '1999-01-01' }, body: ping(16) });
    assert.equal(version.status, 400, version.text);
    const put = await raw(url, { method: 'PUT', headers: mcpHeaders, body: ping(17) });
    assert.equal(put.status, 405);
    const elsewhere = await raw(url.replace(/\/mcp$/, '/other'), { headers: mcpHeaders, body: ping(18) });
    assert.equal(elsewhere.status, 404);
    const fine = await raw(url, { headers: mcpHeaders, body: ping(19) });
    assert.equal(fine.status, 200, fine.text);
  });

  await check('a client that vanishes mid-call leaves nothing running', async () => {
    const marker = `oishell-vanish-${crypto.randomBytes(6).toString('hex')}`;
    const u = new URL(url);
    const body = JSON.stringify({ jsonrpc: '2.0', id: 'vanishing', method: 'tools/call',
                                  params: { name: 'run_command', arguments: { command: `exec -a ${marker} sleep 300` } } });
    const req = http.request({ host: '127.0.0.1', port: u.port, path: u.pathname, method: 'POST',
                               headers: { ...mcpHeaders, Accept: 'application/json, text/event-stream',
                                          'Content-Length': Buffer.byteLength(body) } });
    let status = 0;
    req.on('response', (res) => { status = res.statusCode; res.resume(); });
    req.on('error', () => {});
    req.end(body);
    await waitFor('the call\'s process', () => processesWith(marker).length > 0);
    assert.equal(status, 200);  // the event stream is open, the call runs
    req.destroy();
    await waitFor('the call\'s process to end', () => processesWith(marker).length === 0);
    const after = await raw(url, { headers: mcpHeaders, body: ping(20) });
    assert.equal(after.status, 200, after.text);
  });

  await check('DELETE ends the session: the call still running, the sandbox and the server end', async () => {
    const marker = `oishell-session-${crypto.randomBytes(6).toString('hex')}`;
    const running = call(client, 'run_command', { command: `exec -a ${marker} sleep 300` });
    running.catch(() => {});  // ended with the session
    await waitFor('the running call\'s process', () => processesWith(marker).length > 0);
    await transport.terminateSession();
    const { code } = await Promise.race([server.exited, new Promise((r) => setTimeout(() => r({ code: 'running' }), 15000))]);
    assert.equal(code, 0, server.stderr());
    assert.deepEqual(processesWith(marker), []);
    await assert.rejects(raw(url, { headers: mcpHeaders, body: ping(21) }), /ECONNREFUSED/);
  });
  await client.close().catch(() => {});

  await check('a non-loopback address is refused at start; loopback ones serve', async () => {
    for (const address of ['0.0.0.0:0', '[::]:0', '8.8.8.8:0', 'example.com:0']) {
      const s = startServer(address);
      const { code } = await s.exited;
      assert.equal(code, 2, `${address}: ${s.stderr()}`);
      assert.match(s.stderr(), /loopback only/, address);
    }
    const ok = startServer('localhost:0');
    const ready = await ok.ready;
    assert.ok(ready.url, ok.stderr());
    assert.match(ready.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
    ok.child.kill('SIGTERM');
    assert.equal((await ok.exited).code, 0, ok.stderr());
  });

  await check('a new initialize takes the session over: the old id is refused, the sandbox\'s state stays', async () => {
    const s = startServer('127.0.0.1:0');
    const { url: u, token: t } = await s.ready;
    assert.ok(u, s.stderr());
    const first = await connect(u, t);
    await call(first.client, 'run_code', { language: 'python', code: 'kept = "from the first client"' });
    const marker = `oishell-takeover-${crypto.randomBytes(6).toString('hex')}`;
    call(first.client, 'run_command', { command: `exec -a ${marker} sleep 300` }).catch(() => {});
    await waitFor('the first client\'s call', () => processesWith(marker).length > 0);
    const oldSession = first.transport.sessionId;
    const second = await connect(u, t);
    assert.notEqual(second.transport.sessionId, oldSession);
    const r = await call(second.client, 'run_code', { language: 'python', code: 'print(kept)' });
    assert.equal(r.structuredContent.stdout, 'from the first client\n', text(r));
    await waitFor('the first client\'s call to be cancelled', () => processesWith(marker).length === 0);
    const stale = await raw(u, { headers: { Authorization: `Bearer ${t}`, 'Content-Type': 'application/json',
                                            Accept: 'application/json', 'Mcp-Session-Id': oldSession },
                                 body: { jsonrpc: '2.0', id: 1, method: 'ping' } });
    assert.equal(stale.status, 404, stale.text);
    await second.client.ping();
    assert.match(s.stderr(), /previous client's session ends/);
    await first.client.close().catch(() => {});
    await second.transport.terminateSession();
    assert.equal((await s.exited).code, 0, s.stderr());
  });

  await check('--token-file: created 0600 and read again; a file others can read is refused', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'oishell-mcp-token-'));
    const file = path.join(dir, 'token');
    const first = startServer('127.0.0.1:0', ['--token-file', file]);
    const a = await first.ready;
    assert.ok(a.url, first.stderr());
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    const saved = fs.readFileSync(file, 'utf8').trim();
    assert.match(saved, /^[0-9a-f]{64}$/);
    assert.doesNotMatch(first.stderr(), new RegExp(saved));  // said once: in the file, not on stderr
    // (CI saw one request of this check time out once, under a heavy load: a failure says which step, at what
    // address, and what the server said.)
    let step = `connect to ${a.url}`;
    try {
      const { client: c } = await connect(a.url, saved);
      step = 'ping';
      await c.ping();
      step = 'close';
      await c.close();
    } catch (e) {
      throw new Error(`${step}: ${e.message}; the server's stderr:\n${first.stderr()}`);
    }
    first.child.kill('SIGTERM');
    await first.exited;
    fs.chmodSync(file, 0o644);
    const loose = startServer('127.0.0.1:0', ['--token-file', file]);
    assert.equal((await loose.exited).code, 2);
    assert.match(loose.stderr(), /mode 0644/);
    fs.rmSync(dir, { recursive: true, force: true });
  });
} finally {
  for (const child of children) child.kill('SIGKILL');
  fs.rmSync(workspace, { recursive: true, force: true });
}
finish();
