// `oishell mcp` played by the official MCP TypeScript SDK's stdio client (@modelcontextprotocol/sdk, pinned in
// package.json), as an agent host plays it: initialize (timed), tools/list, every tool called, python state kept
// across calls, an image, progress notifications with the output, a cancelled call, the sandbox's denials as error
// results naming the rule and the layer, a network question answered through elicitation and the denial that
// follows as a log notification, resources, and a client without elicitation whose questions are denied.
//   node mcp_e2e.mjs OISHELL SDK_DIR
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { check, finish } from './checks.mjs';

const oishell = path.resolve(process.argv[2]);
const sdkDir = path.resolve(process.argv[3]);
const sdk = (p) => import(pathToFileURL(path.join(sdkDir, 'node_modules/@modelcontextprotocol/sdk/dist/esm', p)).href);
const { Client } = await sdk('client/index.js');
const { StdioClientTransport } = await sdk('client/stdio.js');
const { ElicitRequestSchema, LoggingMessageNotificationSchema } = await sdk('types.js');

const TINY_PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAAC0lEQVR4nGNgAAIAAAUAAXpeqz8AAAAASUVORK5CYII=';
// The python driver's figure path with a stand-in for pyplot (matplotlib need not be installed).
const FAKE_PYPLOT = `import base64, sys, types
png = base64.b64decode('${TINY_PNG}')
plt = types.ModuleType('matplotlib.pyplot')
class Figure:
    def savefig(self, buf, format=None, **kwargs):
        buf.write(png)
plt.get_fignums = lambda: [] if getattr(plt, 'closed', False) else [1]
plt.figure = lambda num=None: Figure()
def close(which=None):
    plt.closed = True
plt.close = close
plt.show = lambda *a, **k: None
sys.modules['matplotlib.pyplot'] = plt
print('drawn')`;

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'oishell-mcp-'));
fs.chmodSync(workspace, 0o755);
fs.writeFileSync(path.join(workspace, 'notes.txt'), 'alpha\nbeta\nbeta\n');
fs.writeFileSync(path.join(workspace, 'secret.txt'), 'not for the sandbox\n');
const secret = path.join(workspace, 'secret.txt');


async function connect({ elicitation, args = [] }) {
  const transport = new StdioClientTransport({
    command: oishell,
    args: ['mcp', '--workspace', workspace, '--hide', secret, ...args],
    cwd: workspace,
    stderr: 'inherit',
  });
  const client = new Client({ name: 'oishell-e2e', version: '1.0.0' },
                            { capabilities: elicitation ? { elicitation: {} } : {} });
  const started = process.hrtime.bigint();
  await client.connect(transport);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { client, transport, ms };
}

const text = (result) => result.content.filter((c) => c.type === 'text').map((c) => c.text).join('\n');
const call = (client, name, args, options) => client.callTool({ name, arguments: args }, undefined, options);

const questions = [];
const logs = [];
const { client, ms } = await connect({ elicitation: true });
client.setRequestHandler(ElicitRequestSchema, async (request) => {
  questions.push(request.params);
  return { action: 'accept', content: { decision: 'deny' } };
});
client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => logs.push(n.params));
console.log(`connect (spawn + initialize + initialized): ${ms.toFixed(1)} ms`);

await check('initialize names the server and negotiates 2025-11-25', async () => {
  assert.equal(client.getServerVersion().name, 'oishell');
  assert.ok(client.getServerCapabilities().tools);
  assert.ok(client.getServerCapabilities().logging);
  assert.ok(client.getServerCapabilities().resources);
  assert.match(client.getInstructions(), /sandbox/);
  await client.ping();
});

await check('tools/list has every tool with input and output schemas', async () => {
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['edit_file', 'interrupt', 'list_files', 'policy', 'read_file', 'reset', 'run_code',
                           'run_command', 'write_file']);
  for (const t of tools) {
    assert.equal(t.inputSchema.type, 'object', t.name);
    assert.equal(t.outputSchema?.type, 'object', t.name);
  }
});

await check('run_code keeps python state across calls', async () => {
  const a = await call(client, 'run_code', { language: 'python', code: 'x = 41\nimport math' });
  assert.equal(a.isError, undefined, text(a));
  assert.equal(a.structuredContent.status, 'ok');
  const b = await call(client, 'run_code', { language: 'py', code: 'x + 1' });
  assert.equal(b.structuredContent.stdout, '42\n');
  assert.equal(text(b), '42\n');
});

await check('run_code streams output as progress notifications', async () => {
  const seen = [];
  const r = await call(client, 'run_code',
                       { language: 'python', code: 'import time\nfor i in range(3):\n    print("line", i, flush=True)\n    time.sleep(0.2)' },
                       { onprogress: (p) => seen.push(p) });
  assert.equal(r.structuredContent.stdout, 'line 0\nline 1\nline 2\n');
  assert.ok(seen.length >= 2, `progress notifications: ${seen.length}`);
  assert.equal(seen.map((p) => p.message).join(''), 'line 0\nline 1\nline 2\n');
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i].progress > seen[i - 1].progress);
});

await check('run_code returns a figure as image content', async () => {
  const r = await call(client, 'run_code', { language: 'python', code: FAKE_PYPLOT });
  const images = r.content.filter((c) => c.type === 'image');
  assert.equal(images.length, 1, JSON.stringify(r));
  assert.equal(images[0].mimeType, 'image/png');
  assert.equal(images[0].data, TINY_PNG);
  assert.equal(r.structuredContent.images, 1);
});

await check('a python exception is an error result with the traceback', async () => {
  const r = await call(client, 'run_code', { language: 'python', code: '1/0' });
  assert.equal(r.isError, true);
  assert.match(text(r), /ZeroDivisionError/);
  assert.equal(r.structuredContent.status, 'error');
});

await check('a cancelled call stops its code and the state is kept', async () => {
  const controller = new AbortController();
  const started = Date.now();
  const pending = call(client, 'run_code', { language: 'python', code: 'import time\nx = 7\ntime.sleep(60)' },
                       { signal: controller.signal });
  setTimeout(() => controller.abort('enough'), 700);
  await assert.rejects(pending);
  const r = await call(client, 'run_code', { language: 'python', code: 'x' });
  assert.equal(r.structuredContent.stdout, '7\n', text(r));
  assert.ok(Date.now() - started < 10000, `took ${Date.now() - started} ms`);
});

await check('the interrupt tool ends a running call as interrupted', async () => {
  const pending = call(client, 'run_code', { language: 'python', code: 'import time\ntime.sleep(60)' });
  await new Promise((r) => setTimeout(r, 700));
  const i = await call(client, 'interrupt', {});
  assert.equal(i.structuredContent.interrupted, 1);
  const r = await pending;
  assert.equal(r.isError, true);
  assert.equal(r.structuredContent.status, 'interrupted');
});

await check('a run_code timeout ends the call as timeout', async () => {
  const r = await call(client, 'run_code', { language: 'shell', code: 'sleep 30', timeout: 0.5 });
  assert.equal(r.structuredContent.status, 'timeout', text(r));
});

await check('run_command runs argv and command lines', async () => {
  const a = await call(client, 'run_command', { argv: ['sh', '-c', 'echo hi; echo err >&2; exit 3'] });
  assert.equal(a.isError, true);
  assert.equal(a.structuredContent.exit_code, 3);
  assert.equal(a.structuredContent.stdout, 'hi\n');
  assert.equal(a.structuredContent.stderr, 'err\n');
  const b = await call(client, 'run_command', { command: 'echo $((6 * 7)); pwd', cwd: '/tmp' });
  assert.equal(b.structuredContent.stdout, '42\n/tmp\n');
  const c = await call(client, 'run_command', { argv: ['cat'], stdin: 'fed\n' });
  assert.equal(c.structuredContent.stdout, 'fed\n');
  const d = await call(client, 'run_command', { argv: ['no-such-program-here'] });
  assert.equal(d.isError, true);
  const e = await call(client, 'run_command', {});
  assert.equal(e.isError, true);
  assert.match(text(e), /argv.*command/);
});

await check('write_file, read_file, edit_file and list_files work in the workspace', async () => {
  const w = await call(client, 'write_file', { path: 'made.txt', content: 'one\ntwo\n' });
  assert.equal(w.structuredContent.created, true, text(w));
  assert.equal(fs.readFileSync(path.join(workspace, 'made.txt'), 'utf8'), 'one\ntwo\n');
  const r = await call(client, 'read_file', { path: path.join(workspace, 'made.txt') });
  assert.equal(r.structuredContent.content, 'one\ntwo\n');
  const e = await call(client, 'edit_file', { path: 'made.txt', old_text: 'two', new_text: 'three' });
  assert.equal(e.structuredContent.replacements, 1, text(e));
  assert.equal(fs.readFileSync(path.join(workspace, 'made.txt'), 'utf8'), 'one\nthree\n');
  const amb = await call(client, 'edit_file', { path: 'notes.txt', old_text: 'beta', new_text: 'gamma' });
  assert.equal(amb.isError, true);
  assert.match(text(amb), /2 times/);
  const l = await call(client, 'list_files', {});
  const names = l.structuredContent.entries.map((x) => x.path);
  assert.ok(names.includes('made.txt') && names.includes('notes.txt'), names.join(','));
  const bin = await call(client, 'write_file', { path: 'bytes.bin', content: 'x' });
  assert.equal(bin.isError, undefined);
});

await check('file tools are refused what the sandbox refuses, naming the rule and the layer', async () => {
  // secret.txt is hidden by --hide; the supervisor itself could read it.
  const hidden = await call(client, 'read_file', { path: secret });
  assert.equal(hidden.isError, true, text(hidden));
  assert.match(text(hidden), /filesystem\.hide/);
  assert.match(text(hidden), /layer: /);
  // /etc/shadow is hidden by the default profile (even when this test runs as root).
  const shadow = await call(client, 'read_file', { path: '/etc/shadow' });
  assert.equal(shadow.isError, true);
  assert.match(text(shadow), /hidden/);
  // The system is read-only inside; the workspace beside it is writable (above).
  const ro = await call(client, 'write_file', { path: '/usr/oishell-mcp-test', content: 'x' });
  assert.equal(ro.isError, true);
  assert.match(text(ro), /EROFS|EACCES/);
  assert.match(text(ro), /read-only/);
  assert.ok(!fs.existsSync('/usr/oishell-mcp-test'));
  const c = await call(client, 'run_code', { language: 'python', code: `open(${JSON.stringify(secret)}).read()` });
  assert.equal(c.isError, true);
});

await check('a network question goes to the client as elicitation; the denial arrives as a log', async () => {
  await client.setLoggingLevel('info');
  const r = await call(client, 'run_code', {
    language: 'python',
    code: 'import urllib.request\ntry:\n    urllib.request.urlopen("http://oishell-test.invalid/", timeout=20)\nexcept Exception as e:\n    print(type(e).__name__, e)',
  });
  assert.equal(questions.length, 1, JSON.stringify(questions));
  assert.match(questions[0].message, /oishell-test\.invalid:80/);
  assert.match(r.structuredContent.stdout, /403|Forbidden/, text(r));
  assert.ok(r.structuredContent.denials?.some((d) => /oishell-test\.invalid/.test(d)), text(r));
  await new Promise((res) => setTimeout(res, 100));
  assert.ok(logs.some((l) => l.level === 'warning' && /oishell-test\.invalid/.test(l.data)), JSON.stringify(logs));
});

await check('policy says what the sandbox allows and how questions are answered', async () => {
  const p = await call(client, 'policy', {});
  assert.equal(p.structuredContent.network_questions, 'elicitation');
  assert.match(text(p), /Network/);
  assert.ok(p.structuredContent.summary.workspace);
});

await check('resources: workspace files and the event log', async () => {
  const { resources } = await client.listResources();
  const uris = resources.map((r) => r.uri);
  assert.ok(uris.includes('oishell://session/events'), uris.join(','));
  assert.ok(uris.includes(`file://${path.join(workspace, 'notes.txt')}`), uris.join(','));
  const file = await client.readResource({ uri: `file://${path.join(workspace, 'notes.txt')}` });
  assert.equal(file.contents[0].text, 'alpha\nbeta\nbeta\n');
  const log = await client.readResource({ uri: 'oishell://session/events' });
  assert.match(log.contents[0].text, /net\.denied/);
  await assert.rejects(client.readResource({ uri: `file://${secret}` }));
  await assert.rejects(client.readResource({ uri: 'file:///etc/hostname' }));
});

await check('reset loses the python state', async () => {
  const r = await call(client, 'reset', { language: 'python' });
  assert.deepEqual(r.structuredContent.reset, ['python']);
  const x = await call(client, 'run_code', { language: 'python', code: 'x' });
  assert.equal(x.isError, true);
  assert.match(text(x), /NameError/);
});

await check('an unknown tool is a protocol error', async () => {
  await assert.rejects(call(client, 'no_such_tool', {}), /Unknown tool/);
});

await client.close();

// A client that cannot answer questions: they are denied, and `policy` says so.
await check('without elicitation, network questions are denied and policy says so', async () => {
  const { client: plain } = await connect({ elicitation: false });
  const p = await call(plain, 'policy', {});
  assert.equal(p.structuredContent.network_questions, 'denied');
  const r = await call(plain, 'run_code', {
    language: 'python',
    code: 'import urllib.request\ntry:\n    urllib.request.urlopen("http://oishell-test.invalid/", timeout=20)\nexcept Exception as e:\n    print(type(e).__name__, e)',
  });
  assert.match(r.structuredContent.stdout, /403|Forbidden/, text(r));
  await plain.close();
});

fs.rmSync(workspace, { recursive: true, force: true });
finish();
