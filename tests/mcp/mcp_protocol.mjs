// `oishell mcp` spoken to directly, line by line, as no SDK would: malformed JSON, a batch, a wrong version field,
// an unknown method, params that are not an object, a message over the size bound (each answered with its JSON-RPC
// error while the server goes on), bad tool arguments (an error result), and a client that vanishes mid-call
// (the server ends and nothing it started keeps running). Also times initialize from the spawn.
//   node mcp_protocol.mjs OISHELL
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

import { check, finish } from './checks.mjs';

const oishell = path.resolve(process.argv[2]);
const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'oishell-mcp-raw-'));
fs.chmodSync(workspace, 0o755);

class Server {
  constructor(args = []) {
    this.started = process.hrtime.bigint();
    this.child = spawn(oishell, ['mcp', '--workspace', workspace, ...args], { stdio: ['pipe', 'pipe', 'inherit'] });
    this.buffer = '';
    this.messages = [];
    this.waiters = [];
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
    this.child.stdout.on('data', (chunk) => {
      this.buffer += chunk;
      let nl;
      while ((nl = this.buffer.indexOf('\n')) >= 0) {
        const line = this.buffer.slice(0, nl);
        this.buffer = this.buffer.slice(nl + 1);
        const message = JSON.parse(line);
        message.at = process.hrtime.bigint();
        this.messages.push(message);
        this.waiters = this.waiters.filter((w) => !w(message));
      }
    });
    this.child.stdin.on('error', () => {});
  }
  send(text) { this.child.stdin.write(text + '\n'); }
  request(id, method, params) { this.send(JSON.stringify({ jsonrpc: '2.0', id, method, params })); return this.answer(id); }
  answer(id, timeout = 30000) {
    const found = this.messages.find((m) => m.id === id && !m.method);
    if (found) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(id)}`)), timeout);
      this.waiters.push((m) => {
        if (m.id !== id || m.method) return false;
        clearTimeout(timer);
        resolve(m);
        return true;
      });
    });
  }
  async initialize() {
    const r = await this.request(0, 'initialize', { protocolVersion: '2025-06-18', capabilities: {},
                                                     clientInfo: { name: 'raw', version: '1' } });
    this.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    return r;
  }
}


// Processes whose command line holds `marker`, anywhere on the machine.
function processes_with(marker) {
  const found = [];
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(marker)) found.push(pid);
    } catch {}
  }
  return found;
}

await check('initialize is answered quickly, with the version asked for when it is served', async () => {
  const times = [];
  for (let i = 0; i < 9; i++) {
    const s = new Server();
    const r = await s.initialize();
    times.push(Number(r.at - s.started) / 1e6);
    assert.equal(r.result.protocolVersion, '2025-06-18');
    s.child.stdin.end();
    assert.deepEqual(await s.exited, { code: 0, signal: null });
  }
  times.sort((a, b) => a - b);
  console.log(`initialize answered after spawn: median ${times[4].toFixed(1)} ms (min ${times[0].toFixed(1)}, max ${times[8].toFixed(1)})`);
  const s = new Server();
  const old = await s.request(1, 'initialize', { protocolVersion: '2024-11-05', capabilities: {} });
  assert.equal(old.result.protocolVersion, '2024-11-05');
  s.child.stdin.end();
  await s.exited;
  const t = new Server();
  const future = await t.request(1, 'initialize', { protocolVersion: '2099-01-01', capabilities: {} });
  assert.equal(future.result.protocolVersion, '2025-11-25');
  const missing = await t.request(2, 'initialize', { capabilities: {} });
  assert.equal(missing.error.code, -32602);
  t.child.stdin.end();
  await t.exited;
});

await check('bad messages get their JSON-RPC errors and the server goes on', async () => {
  const s = new Server();
  await s.initialize();
  s.send('{oops');
  s.send('[1,2]');
  s.send(JSON.stringify({ jsonrpc: '1.0', id: 'v', method: 'ping' }));
  s.send(JSON.stringify({ jsonrpc: '2.0', id: { a: 1 }, method: 'ping' }));
  await new Promise((r) => setTimeout(r, 300));
  const nulls = s.messages.filter((m) => m.id === null).map((m) => m.error.code);
  assert.deepEqual(nulls, [-32700, -32600, -32600]);
  assert.equal((await s.answer('v')).error.code, -32600);
  assert.equal((await s.request(5, 'no/such/method', {})).error.code, -32601);
  assert.equal((await s.request(6, 'ping', [1, 2])).error.code, -32602);
  assert.equal((await s.request(7, 'logging/setLevel', { level: 'loud' })).error.code, -32602);
  assert.deepEqual((await s.request(8, 'ping')).result, {});
  s.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/whatever' }));  // never answered
  const bad = await s.request(9, 'tools/call', { name: 'run_code', arguments: { language: 'python' } });
  assert.equal(bad.result.isError, true);
  assert.match(bad.result.content[0].text, /missing `code`/);
  assert.equal((await s.request(10, 'tools/call', { name: 'nope', arguments: {} })).error.code, -32602);
  s.child.stdin.end();
  assert.deepEqual(await s.exited, { code: 0, signal: null });
});

await check('a message over the bound is refused and the next one is served', async () => {
  const s = new Server();
  await s.initialize();
  const huge = JSON.stringify({ jsonrpc: '2.0', id: 'huge', method: 'tools/call',
                                params: { name: 'write_file', arguments: { path: 'big', content: 'x'.repeat(40 << 20) } } });
  s.send(huge);
  const refused = await new Promise((resolve) => {
    const poll = () => {
      const m = s.messages.find((x) => x.id === null && x.error);
      m ? resolve(m) : setTimeout(poll, 50);
    };
    poll();
  });
  assert.equal(refused.error.code, -32700);
  assert.match(refused.error.message, /longer than 32 MiB/);
  assert.deepEqual((await s.request(11, 'ping')).result, {});
  assert.ok(!fs.existsSync(path.join(workspace, 'big')));
  s.child.stdin.end();
  await s.exited;
});

await check('a client that vanishes mid-call leaves nothing running', async () => {
  const marker = `1000.${process.pid}${Date.now() % 100000}`;
  const s = new Server();
  await s.initialize();
  s.send(JSON.stringify({ jsonrpc: '2.0', id: 20, method: 'tools/call',
                          params: { name: 'run_command', arguments: { argv: ['sleep', marker + '1'] } } }));
  s.send(JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'tools/call',
                          params: { name: 'run_code', arguments: { language: 'shell', code: `sleep ${marker}2` } } }));
  const deadline = Date.now() + 20000;
  while (processes_with(marker).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assert.equal(processes_with(marker).length, 2, 'both calls run');
  s.child.stdin.destroy();
  s.child.stdout.destroy();
  const exited = await Promise.race([s.exited, new Promise((r) => setTimeout(() => r('still running'), 10000))]);
  assert.deepEqual(exited, { code: 0, signal: null });
  const until = Date.now() + 5000;
  while (processes_with(marker).length && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(processes_with(marker), []);
});

fs.rmSync(workspace, { recursive: true, force: true });
finish();
