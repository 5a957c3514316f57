// oishell javascript executor driver: one persistent global context, like node's REPL.
//
// Started by the supervisor as `node node_driver.js` with the control socket at fd 3 (docs/protocol.md,
// "Executor control channel"). Each block is a vm.Script run in this context, so `var`, functions and globals
// persist (top-level `let`/`const` too, as in the REPL). The value of the last expression is printed with
// util.inspect; a returned promise is awaited. SIGINT stops a running block (breakOnSigint) and keeps the session.
// Top-level `await` works as in the REPL: a block that does not compile because of it is rewritten by the REPL's
// own transform (node's internal/repl/await, reachable with --expose-internals, which language.cc passes) into an
// async function whose declarations stay global. An error nobody catches (a rejected promise nobody awaits, a throw
// in a timer) is printed as the REPL prints it and fails the block it happens in; it does not end the session.
// Known gap: a SIGINT in the microseconds in which a block's synchronous part ends can slip between vm's watchdog
// and the 'SIGINT' listener node removes while the script runs; the supervisor then kills the executor after its
// grace period (executor_restarted), as for a block that ignores SIGINT.
'use strict';
const fs = require('fs');
const vm = require('vm');
const util = require('util');
const path = require('path');
const Module = require('module');

const CTL = 3;

function send(line) {
  const data = Buffer.from(line + '\n', 'utf8');
  let off = 0;
  while (off < data.length) {
    try {
      off += fs.writeSync(CTL, data, off, data.length - off);
    } catch (e) {
      if (e.code !== 'EAGAIN' && e.code !== 'EINTR') process.exit(0);  // the supervisor is gone
    }
  }
}

// The block's output goes to fds 1 and 2 with write(2), not through node's stream machinery. That keeps state in
// JavaScript (writing, buffered chunks), and an interrupt terminates whatever JavaScript runs: one that landed
// inside console.log left process.stdout half-updated, and every later line of the session was buffered for ever.
function syncWriter(fd) {
  return function write(chunk, encoding, callback) {
    if (typeof encoding === 'function') {
      callback = encoding;
      encoding = undefined;
    }
    const data = typeof chunk === 'string' ? Buffer.from(chunk, encoding || 'utf8') : chunk;
    let off = 0;
    while (off < data.byteLength) {
      try {
        off += fs.writeSync(fd, data, off, data.byteLength - off);
      } catch (e) {
        if (e.code === 'EAGAIN' || e.code === 'EINTR') continue;
        if (callback) process.nextTick(callback, e);
        return false;
      }
    }
    if (callback) process.nextTick(callback);
    return true;
  };
}
process.stdout.write = syncWriter(1);
process.stderr.write = syncWriter(2);

globalThis.require = Module.createRequire(path.join(process.cwd(), '<oishell>'));
globalThis.module = { exports: {} };

let interruptWaiter = null;  // set while awaiting a block's promise
process.on('SIGINT', () => {
  if (interruptWaiter) interruptWaiter();
});

// The error's stack without the frames of this driver and of node's vm module.
function printError(err, prefix = '') {
  let text = err && err.stack ? String(err.stack) : util.inspect(err);
  const lines = text.split('\n');
  const cut = lines.findIndex((l, i) => i > 0 && /^\s+at /.test(l) && (l.includes('node:vm') ||
      l.includes('sigintHandlersWrap') || l.includes(__filename)));
  if (cut > 0) text = lines.slice(0, cut).join('\n');
  process.stderr.write(prefix + text + '\n');
}

// Node ends the process on an uncaught exception or an unhandled rejection (--unhandled-rejections=throw): every
// definition of the session would be lost to one forgotten `.catch`. The REPL prints them instead; so does this.
let running = null;  // { failed } while a block runs
function uncaught(err) {
  printError(err, 'Uncaught ');
  if (running) running.failed = true;
}
process.on('uncaughtException', uncaught);
process.on('unhandledRejection', uncaught);

// The REPL's top-level-await transform; null where this node does not have it (or was started without
// --expose-internals): top-level await is then the SyntaxError vm.Script reports.
let processTopLevelAwait = null;
try {
  ({ processTopLevelAwait } = require('internal/repl/await'));
} catch (_) { /* not available */ }

// Like the REPL: a block that is an object literal (`{a: 1}`) is an expression, not a block statement.
function asScript(code, filename) {
  const trimmed = code.trim();
  if (trimmed.startsWith('{') && !trimmed.endsWith(';')) {
    try {
      return new vm.Script(`(${code}\n)`, { filename });
    } catch (_) { /* not an expression: compile it as written */ }
  }
  try {
    return new vm.Script(code, { filename });
  } catch (err) {
    // `await` outside an async function: the REPL's rewrite evaluates to a promise of { value } (or undefined).
    if (!(err instanceof SyntaxError) || !processTopLevelAwait || !code.includes('await')) throw err;
    let wrapped = null;
    try {
      wrapped = processTopLevelAwait(code);
    } catch (_) { /* not parseable: the original error says why */ }
    if (wrapped === null) throw err;
    const script = new vm.Script(wrapped, { filename });
    script.topLevelAwait = true;
    return script;
  }
}

async function runBlock(seq, code) {
  running = { failed: false };
  const [status, exitCode] = await evaluate(seq, code);
  // One more turn of the event loop: a promise the block rejected without handling it is reported (by
  // 'unhandledRejection', after the microtasks) before the block's end, and fails it.
  await new Promise((resolve) => setImmediate(resolve));
  const failed = running.failed;
  running = null;
  return failed && status === 'ok' ? ['error', 1] : [status, exitCode];
}

async function evaluate(seq, code) {
  let script;
  try {
    script = asScript(code, `<block ${seq}>`);
  } catch (err) {
    printError(err);
    return ['error', 1];
  }
  let result;
  try {
    result = script.runInThisContext({ breakOnSigint: true, displayErrors: false });
  } catch (err) {
    if (err && err.code === 'ERR_SCRIPT_EXECUTION_INTERRUPTED') {
      process.stderr.write('Interrupted\n');
      return ['interrupted', 130];
    }
    printError(err);
    return ['error', 1];
  }
  if (result && typeof result.then === 'function') {
    try {
      result = await new Promise((resolve, reject) => {
        interruptWaiter = () => reject(Object.assign(new Error('Interrupted'), { oishellInterrupt: true }));
        result.then(resolve, reject);
      });
    } catch (err) {
      if (err && err.oishellInterrupt) {
        process.stderr.write('Interrupted\n');
        return ['interrupted', 130];
      }
      printError(err);
      return ['error', 1];
    } finally {
      interruptWaiter = null;
    }
  }
  if (script.topLevelAwait) result = result === undefined ? undefined : result.value;
  if (result !== undefined) {
    let text;
    try {
      text = util.inspect(result, { colors: false });  // runs the value's own [util.inspect.custom], if any
    } catch (err) {
      printError(err);
      return ['error', 1];
    }
    process.stdout.write(text + '\n');
  }
  return ['ok', 0];
}

// Request: "X <seq> <code bytes> <stdin bytes or -1>\n", the code, NUL, and (when given) stdin data, NUL. The
// stdin data is ignored: a javascript block's stdin is at EOF (the supervisor refuses stdin for javascript).
let pending = Buffer.alloc(0);
let busy = false;
const queue = [];

async function pump() {
  if (busy) return;
  busy = true;
  while (queue.length) {
    const { seq, code } = queue.shift();
    let status = 'error', exitCode = 1;
    try {
      [status, exitCode] = await runBlock(seq, code);
    } catch (err) {  // a fault of this driver: the block fails, the queue goes on (it would stall for ever)
      printError(err, 'oishell node driver: ');
      running = null;
    }
    send(`D ${seq} ${status} ${exitCode}`);
  }
  busy = false;
}

function parse() {
  for (;;) {
    const nl = pending.indexOf(10);
    if (nl < 0) return;
    const parts = pending.subarray(0, nl).toString('ascii').split(' ');
    if (parts.length !== 4 || parts[0] !== 'X') {
      process.stderr.write(`oishell node driver: bad request\n`);
      pending = pending.subarray(nl + 1);
      continue;
    }
    const codeLen = Number(parts[2]);
    const stdinLen = Number(parts[3]);
    const total = codeLen + 1 + (stdinLen >= 0 ? stdinLen + 1 : 0);
    if (pending.length < nl + 1 + total) return;
    const code = pending.subarray(nl + 1, nl + 1 + codeLen).toString('utf8');
    pending = pending.subarray(nl + 1 + total);
    queue.push({ seq: parts[1], code });
  }
}

const channel = new (require('net').Socket)({ fd: CTL, readable: true, writable: false });
channel.on('data', (chunk) => {
  pending = Buffer.concat([pending, chunk]);
  parse();
  pump();
});
channel.on('end', () => process.exit(0));
channel.on('error', () => process.exit(0));
send('R');
