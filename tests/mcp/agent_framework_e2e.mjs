// A real agent framework drives `oishell mcp`: the OpenAI Agents SDK for JavaScript (@openai/agents, pinned in
// agent-framework/package.json) with its MCP server support, once over stdio (MCPServerStdio spawns `oishell
// mcp`) and once over streamable HTTP (MCPServerStreamableHttp to `oishell mcp --http`, with the bearer token).
// The model is scripted (no network, no key): it asks for the tools the way a model would, and each step checks
// what the framework handed back from the sandbox: python state kept between two calls, a denial the model can
// read (an error result naming the rule), and a final answer built from the tool results.
//   node agent_framework_e2e.mjs OISHELL AGENTS_DIR
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

import { check, finish } from './checks.mjs';

const oishell = path.resolve(process.argv[2]);
const agentsDir = path.resolve(process.argv[3]);
const agents = await import(pathToFileURL(path.join(agentsDir, 'node_modules/@openai/agents/dist/index.mjs')).href);
const { Agent, Runner, MCPServerStdio, MCPServerStreamableHttp, Usage, setTracingDisabled } = agents;
setTracingDisabled(true);  // traces would go to OpenAI's servers
console.log(`node ${process.versions.node}, @openai/agents ${JSON.parse(fs.readFileSync(
  path.join(agentsDir, 'node_modules/@openai/agents/package.json'), 'utf8')).version}`);

const workspace = fs.mkdtempSync(path.join(os.tmpdir(), 'oishell-mcp-agents-'));
fs.chmodSync(workspace, 0o755);
const secret = path.join(workspace, 'secret.txt');
fs.writeFileSync(secret, 'not for the sandbox\n');

// The text a tool result carries, as the framework gives it to the model (a string, or content parts).
function resultText(item) {
  const out = item.output;
  if (typeof out === 'string') return out;
  if (Array.isArray(out)) return out.map((p) => p.text ?? JSON.stringify(p)).join('\n');
  return out?.text ?? JSON.stringify(out);
}

// A model that plays a script: each turn looks at what came back from the previous tool call and returns the
// next call, then a final message. What it saw is kept for the checks.
function scriptedModel(seen) {
  const steps = [
    { name: 'run_code', arguments: { language: 'python', code: 'answer = 6 * 7' } },
    { name: 'run_code', arguments: { language: 'python', code: 'print(answer)' } },
    { name: 'read_file', arguments: { path: secret } },
  ];
  let turn = 0;
  const response = (output) => ({ usage: new Usage(), output, responseId: `scripted-${turn}` });
  return {
    async getResponse(request) {
      const items = Array.isArray(request.input) ? request.input : [];
      const results = items.filter((i) => i.type === 'function_call_result');
      if (results.length) seen.push(resultText(results[results.length - 1]));
      seen.tools = request.tools.map((t) => t.name);
      if (turn < steps.length) {
        const step = steps[turn++];
        return response([{ type: 'function_call', callId: `call_${turn}`, name: step.name, status: 'completed',
                           arguments: JSON.stringify(step.arguments) }]);
      }
      turn++;
      return response([{ type: 'message', role: 'assistant', status: 'completed', id: 'final',
                         content: [{ type: 'output_text', text: `The sandbox computed ${seen[1].trim()}.` }] }]);
    },
    async *getStreamedResponse() {
      throw new Error('this scripted model does not stream');
    },
  };
}

async function drive(server) {
  const seen = [];
  const agent = new Agent({ name: 'sandboxed', instructions: 'Use the oishell tools.', mcpServers: [server],
                            model: scriptedModel(seen) });
  const result = await new Runner({ tracingDisabled: true }).run(agent, 'Compute 6 * 7 in python, then read the secret.');
  return { seen, result };
}

function assertRun({ seen, result }) {
  for (const tool of ['run_code', 'read_file', 'policy']) assert.ok(seen.tools.includes(tool), seen.tools.join(','));
  assert.equal(seen.length, 3, JSON.stringify(seen));
  assert.doesNotMatch(seen[0], /error/i, seen[0]);
  assert.match(seen[1], /42/);  // the state of the first call, read by the second
  assert.match(seen[2], /filesystem\.hide/);  // the denial reached the model as text it can act on
  assert.match(seen[2], /layer: /);
  assert.equal(result.finalOutput, 'The sandbox computed 42.');
}

await check('@openai/agents with MCPServerStdio drives `oishell mcp` with a scripted model', async () => {
  const server = new MCPServerStdio({ name: 'oishell', command: oishell,
                                      args: ['mcp', '--workspace', workspace, '--hide', secret], cwd: workspace });
  await server.connect();
  try {
    assertRun(await drive(server));
  } finally {
    await server.close();
  }
});

await check('@openai/agents with MCPServerStreamableHttp drives `oishell mcp --http` with its token', async () => {
  const child = spawn(oishell, ['mcp', '--http', '127.0.0.1:0', '--workspace', workspace, '--hide', secret],
                      { cwd: workspace, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    let stderr = '';
    const [url, token] = await new Promise((resolve, reject) => {
      child.stderr.on('data', (d) => {
        stderr += d;
        const u = /serving MCP \(streamable HTTP\) at (\S+)/.exec(stderr);
        const t = /token: ([0-9a-f]{64})/.exec(stderr);
        if (u && t) resolve([u[1], t[1]]);
      });
      exited.then((code) => reject(new Error(`the server ended (${code}): ${stderr}`)));
    });
    // Without the token the framework cannot connect; with it, it can.
    const refused = new MCPServerStreamableHttp({ name: 'no-token', url });
    await assert.rejects(refused.connect());
    await refused.close().catch(() => {});
    const server = new MCPServerStreamableHttp({ name: 'oishell', url,
                                                 requestInit: { headers: { Authorization: `Bearer ${token}` } } });
    await server.connect();
    try {
      assertRun(await drive(server));
    } finally {
      await server.close();
    }
  } finally {
    child.kill('SIGTERM');
    assert.equal(await exited, 0);
  }
});

fs.rmSync(workspace, { recursive: true, force: true });
finish();
