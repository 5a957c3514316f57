// `interpreter --gui` in a real browser: Debian's chromium, headless, driven by playwright-core, against the scripted
// model server of the agent tests (tests/agent/scripted_server.py), code running in the real sandbox. Each scenario
// is a fresh agent process in a fresh workspace and HOME; the agent's stdin is a pipe the test writes to (the
// terminal's side of the session), so messages come from both sides.
//
//   node gui_e2e.mjs INTERPRETER SCRIPTED_SERVER PLAYWRIGHT_CORE_DIR [SCREENSHOT_DIR]
// Exits 0 when every scenario passed. Prints the page's first paint and the streamed tokens' latency (figures for
// docs/performance.md; bench/gui/run.sh repeats them).
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createServer, request } from "node:http";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startModel as startScriptedModel } from "../scripted_model.mjs";
import { createRequire } from "node:module";

if (process.argv.length < 5) {
  console.error("usage: node gui_e2e.mjs INTERPRETER SCRIPTED_SERVER PLAYWRIGHT_CORE_DIR [SCREENSHOT_DIR]");
  process.exit(2);
}
const [interpreter, scriptedServer, playwrightDir] = process.argv.slice(2, 5).map((p) => resolve(p));
const screenshots = process.argv[5] ? resolve(process.argv[5]) : null;
if (!existsSync(join(playwrightDir, "package.json"))) {
  console.error(`gui_e2e: playwright-core is not installed at ${playwrightDir} (the agent_gui_deps test installs it)`);
  process.exit(1);
}
const { chromium } = createRequire(import.meta.url)(playwrightDir);
const chromiumPath = process.env.OISHELL_CHROMIUM ?? "/usr/bin/chromium";
if (!existsSync(chromiumPath)) {
  console.error(`gui_e2e: no browser at ${chromiumPath} (Debian's chromium package; tools/dev installs it)`);
  process.exit(1);
}

const block = (code) => ({ name: "execute", arguments: JSON.stringify({ language: "python", code }) });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const startModel = (dir, script) => startScriptedModel(scriptedServer, dir, script);

// A loopback HTTP server answering every request with `handler(req, res)`.
async function startHttp(handler) {
  const server = createServer(handler);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return { server, port: server.address().port };
}

const browser = await chromium.launch({
  executablePath: chromiumPath,
  headless: true,
  // No network but loopback: names resolve to nothing, and the browser's own services stay off.
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--no-pings",
         "--disable-domain-reliability", "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"],
});

const figures = { firstPaint: [], latencies: [] };

// One agent with --gui. `body` gets the page (opened with the URL the agent printed), the agent's stdin and what it
// printed so far.
async function withAgent(name, script, { args = [], home, prepare } = {}, body) {
  const dir = mkdtempSync(join(tmpdir(), `gui-e2e-${name}-`));
  const workspace = join(dir, "workspace");
  home ??= join(dir, "home");
  mkdirSync(workspace, { recursive: true });
  mkdirSync(home, { recursive: true });
  if (prepare) prepare({ dir, home, workspace });
  const model = await startModel(dir, script);
  const env = { PATH: process.env.PATH, HOME: home, XDG_DATA_HOME: join(home, ".local/share"),
                XDG_CONFIG_HOME: join(home, ".config"), LANG: "C.UTF-8", OPENAI_API_KEY: "sk-scripted",
                TMPDIR: process.env.TMPDIR ?? "/tmp" };
  const agent = spawn(interpreter, ["--gui", "--model", "scripted-model", "--api_base",
                                    `http://127.0.0.1:${model.port}/v1`, "--sandbox", "openshell", ...args],
                      { cwd: workspace, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
  let stdout = "";
  let stderr = "";
  agent.stdout.on("data", (d) => { stdout += d; });
  agent.stderr.on("data", (d) => { stderr += d; });
  const exited = new Promise((resolve) => agent.once("exit", (code, signal) => resolve({ code, signal })));
  const context = await browser.newContext({ viewport: { width: 1280, height: 860 } });
  const page = await context.newPage();
  try {
    const deadline = Date.now() + 20000;
    while (!/The session's page[^:]*: (http\S+)/.test(stdout)) {
      if (Date.now() > deadline) throw new Error("the agent printed no page address");
      await sleep(20);
    }
    const url = stdout.match(/The session's page[^:]*: (http\S+)/)[1];
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}$/);
    await page.goto(url);
    await page.waitForURL((u) => u.pathname === "/" && u.hash === "");  // the token left the address at once
    await page.waitForSelector("#status:not(:text('connecting...'))");
    const paint = await page.evaluate(() =>
      performance.getEntriesByType("paint").find((e) => e.name === "first-contentful-paint")?.startTime);
    if (paint !== undefined) figures.firstPaint.push(paint);
    await body({ page, context, url, agent, stdout: () => stdout, dir, home, workspace, model });
    // At the prompt before the Ctrl-C below, which then ends the session: during a turn it stops the turn (on a
    // loaded machine a scenario's last answer can still be streaming or being saved when its body returns).
    await page.waitForSelector("#stop:disabled", { timeout: 30000 });
    figures.latencies.push(...await page.evaluate(() => window.oishellPage.latencies));
  } catch (e) {
    const failure = join(tmpdir(), `gui-e2e-failure-${name}.png`);
    await page.screenshot({ path: failure }).catch(() => {});
    const html = await page.evaluate(() => document.getElementById("conversation")?.outerHTML ?? "").catch(() => "");
    throw new Error(`${name}: ${e.message}\n--- the page (screenshot: ${failure}) ---\n${html.slice(-4000)}\n` +
                    `--- agent's stdout ---\n${stdout}\n--- agent's stderr ---\n${stderr}`);
  } finally {
    await context.close();
    agent.kill("SIGINT");  // Ctrl-C at the prompt ends the session
    const timer = setTimeout(() => { try { process.kill(-agent.pid, "SIGKILL"); } catch {} }, 10000);
    const end = await exited;
    clearTimeout(timer);
    model.child.stdin.end();
    model.child.kill();
    rmSync(dir, { recursive: true, force: true });
    if (end.signal === "SIGKILL") throw new Error(`${name}: the agent did not end on Ctrl-C`);
  }
}

const shot = async (page, file) => {
  if (!screenshots) return;
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: join(screenshots, file) });
};

// Streams, code, output, the workspace diff; a message from the page and one from the terminal in one session.
await withAgent("stream", [
  { text: "Let me **write** the notes file.", chunk: 3, hold_ms: 10,
    tool_calls: [block("open('notes.txt', 'w').write('one\\ntwo\\n')\nprint('written')")] },
  { text: "Done: `notes.txt` has *two* lines." },
  { text: "Hello, terminal. <img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script> " +
          "[a link](javascript:window.pwned=3) and [a real one](https://example.org/)" },
], {}, async ({ page, agent, stdout, workspace }) => {
  await page.fill("#input", "write the notes");
  await page.press("#input", "Enter");
  await page.waitForSelector(".msg.user:text('write the notes')");
  await page.waitForSelector(".msg.assistant strong:text('write')");           // markdown, rendered
  await page.waitForSelector(".block pre.output:text('written')");
  await page.waitForSelector(".block .result:text('done')");
  assert.match(await page.textContent(".block .lang"), /python/);
  assert.ok(await page.$(".block pre code .hljs-string, .block pre code span"), "the code is highlighted");
  await page.click(".changes summary");
  await page.waitForSelector(".changes .file:has-text('created notes.txt')");
  assert.equal((await page.textContent(".changes .diff .add")).trim(), "+one");
  await page.waitForSelector(".msg.assistant em:text('two')");
  assert.equal(readFileSync(join(workspace, "notes.txt"), "utf8"), "one\ntwo\n");
  assert.match(stdout(), /> write the notes {3}\(sent from the page\)/);
  await page.waitForSelector("#stop:disabled");
  // The terminal's side: a line on the agent's stdin reaches the same session, and the page shows it.
  agent.stdin.write("say hello\n");
  await page.waitForSelector(".msg.user:text('say hello')");
  await page.waitForSelector(".msg.assistant:has-text('Hello, terminal.')");
  // What the model wrote as HTML is shown as text: nothing of it runs, no image loads, no javascript: link.
  await page.waitForSelector(".msg.assistant:has-text('<img src=x')");
  assert.equal(await page.locator(".msg.assistant img, .msg.assistant script").count(), 0);
  assert.equal(await page.locator(".msg.assistant a[href^='javascript']").count(), 0);
  assert.equal(await page.getAttribute(".msg.assistant a", "href"), "https://example.org/");
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  await page.waitForSelector("#policy:text('Workspace')");
  await shot(page, "gui-session.png");
  // A page opened later (or reloaded) sees the whole session.
  await page.reload();
  await page.waitForSelector(".msg.assistant:has-text('Hello, terminal.')");
  assert.equal(await page.locator(".block").count(), 1);
});

// The run confirmation and the sandbox's network question, answered with the page's buttons; a denial.
const upstream = await startHttp((req, res) => res.end("pong from " + req.headers.host));
const policyFile = join(mkdtempSync(join(tmpdir(), "gui-e2e-policy-")), "ask.yaml");
writeFileSync(policyFile, "version: 1\nextends: default\nnetwork:\n  on_unlisted: ask\n" +
                          "  hosts: {ask.test: 127.0.0.1, denied.test: 127.0.0.1}\n  allow_private: [127.0.0.0/8]\n");
const fetchCode = (host) => "import urllib.request\ntry:\n" +
  `    print(urllib.request.urlopen('http://${host}:${upstream.port}/', timeout=20).read().decode())\n` +
  "except Exception as e:\n    print('refused:', e)\n";
await withAgent("ask", [
  { tool_calls: [block(fetchCode("ask.test"))] },
  { text: "Fetched." },
  { tool_calls: [block(fetchCode("denied.test"))] },
  { text: "It was refused." },
], { args: ["--safe_mode", "ask", "--policy", policyFile] }, async ({ page, stdout, workspace }) => {
  await page.fill("#input", "fetch it");
  await page.press("#input", "Enter");
  await page.waitForSelector(".ask button[data-answer='y']");
  // No terminal can answer here (stdin is a pipe, no controlling terminal): the terminal says where it is awaited.
  assert.match(stdout(), /Run this code\? {3}\(waiting for the answer on the page\)/);
  await shot(page, "gui-confirm.png");
  await page.click(".ask button[data-answer='y']");
  await page.waitForSelector(".ask button[data-answer='o']");
  assert.match(await page.textContent(".ask:last-of-type .question"), /ask\.test/);
  await shot(page, "gui-network-ask.png");
  await page.click(".ask button[data-answer='a']");
  // "Allow always": the diff of the workspace policy, then a question of its own with two buttons; written on yes.
  const keep = page.locator(".ask").nth(2);
  await keep.locator("button[data-answer='y']").waitFor();
  assert.equal(await keep.locator("button[data-answer='y']").textContent(), "Write it");
  assert.equal(await keep.locator("button[data-answer='n']").textContent(), "Don't write");
  assert.match(await page.locator(".notice").last().textContent(), /\+\+\+ b\/.*\.oishell\/policy\.yaml/);
  await keep.locator("button[data-answer='y']").click();
  await page.waitForSelector(`.block pre.output:text('pong from ask.test:${upstream.port}')`);
  await page.waitForSelector(".notice:has-text('later sessions in this workspace allow')");
  assert.match(readFileSync(join(workspace, ".oishell", "policy.yaml"), "utf8"), new RegExp(`ask\\.test:${upstream.port}`));
  await page.waitForSelector(".msg.assistant:has-text('Fetched.')");
  await page.waitForSelector("#stop:disabled");
  await page.fill("#input", "fetch the other");
  await page.press("#input", "Enter");
  await page.locator(".ask button[data-answer='y']").last().click();
  await page.waitForSelector(".ask button[data-answer='d']");
  await page.click(".ask button[data-answer='d']");
  await page.waitForSelector(".block pre.output:text('refused')");
  await page.waitForSelector("#denials li:text('denied.test')");
  assert.equal(await page.textContent("#denied-count"), "1");
  await page.waitForSelector(".ask .done:text('Deny (answered here)')");
});
upstream.server.close();

// A hostile model and hostile output (issue 34): what the page asks about is exactly what runs. A call carrying a
// decoy `code` nested beside the real one is refused (never offered, never run); of two calls in one answer, each
// question shows its own code in its card, hidden characters marked; the model's remote image stays text, its bidi
// controls are marked; output's hyperlinks and colour changes are dropped.
await withAgent("hostile", [
  { text: "Status: ![s](http://127.0.0.1:9/?d=secret) \u202eevil\u202c.",
    tool_calls: [{ name: "execute", arguments: `{"meta":{"code":"print('hello world')"},"language":"python",` +
                                               `"code":"open('evil.txt', 'w').write('ran')"}` }] },
  { tool_calls: [block("open('real\u200b.txt', 'w').write('ran')\n" +
                       "print('\\x1b]8;;http://127.0.0.1:9/\\x07click\\x1b]8;;\\x07 \\x1b]11;#ffffff\\x07done')"),
                 block("open('second.txt', 'w').write('ran')")] },
  { text: "Done." },
], { args: ["--safe_mode", "ask"] }, async ({ page, workspace }) => {
  await page.fill("#input", "go");
  await page.press("#input", "Enter");
  const first = page.locator(".ask").first();
  await first.locator("button[data-answer='y']").waitFor();
  assert.equal(await first.locator(".ask-language").textContent(), "python");
  assert.equal(await first.locator(".ask-code").textContent(),
               "open('real<U+200B>.txt', 'w').write('ran')\n" +
               "print('\\x1b]8;;http://127.0.0.1:9/\\x07click\\x1b]8;;\\x07 \\x1b]11;#ffffff\\x07done')");
  await shot(page, "gui-hostile-question.png");
  await first.locator("button[data-answer='y']").click();
  const second = page.locator(".ask").nth(1);
  await second.locator("button[data-answer='y']").waitFor();
  assert.equal(await second.locator(".ask-code").textContent(), "open('second.txt', 'w').write('ran')");
  await second.locator("button[data-answer='y']").click();
  await page.waitForSelector(".msg.assistant:has-text('Done.')");
  // Ran: the two calls asked about, nothing else.
  assert.equal(readFileSync(join(workspace, "real\u200b.txt"), "utf8"), "ran");
  assert.equal(readFileSync(join(workspace, "second.txt"), "utf8"), "ran");
  assert.equal(existsSync(join(workspace, "evil.txt")), false, "the call with a decoy never ran");
  assert.equal(await page.locator(".ask").count(), 2);
  for (const text of await page.locator(".ask").allTextContents()) {
    assert.ok(!text.includes("hello world") && !text.includes("evil.txt"), `asked about the refused call: ${text}`);
  }
  assert.ok(!(await page.textContent("#conversation")).includes("hello world"), "the decoy was shown");
  // The refused call's block (its real code) never ran: no result, and the refusal right under it.
  assert.equal(await page.locator(".block[data-block='1'] .result").count(), 0);
  assert.match(await page.locator(".block[data-block='1'] + .notice.warning").textContent(),
               /^The call of `execute` was refused and nothing was run: its `meta` holds another `code`/);
  // The model's prose: the remote image is text, bidi controls marked.
  const prose = await page.locator(".msg.assistant").first().textContent();
  assert.ok(prose.includes("<U+202E>evil<U+202C>"), prose);
  assert.equal(await page.locator(".msg.assistant img").count(), 0);
  // The output: the hyperlink and the background colour dropped, their text kept.
  await page.waitForSelector(".block pre.output:text('click done')");
  assert.equal(await page.locator(".block pre.output a").count(), 0);
});

// Stop: what Ctrl-C does to a long block; the model is told and answers.
await withAgent("stop", [
  { tool_calls: [block("import time\nprint('sleeping', flush=True)\ntime.sleep(120)")] },
  { text: "Stopped, as you asked." },
], {}, async ({ page }) => {
  await page.fill("#input", "sleep long");
  await page.press("#input", "Enter");
  await page.waitForSelector(".block pre.output:text('sleeping')");
  const clicked = Date.now();
  await page.click("#stop");
  await page.waitForSelector(".block .result.failed", { timeout: 15000 });
  assert.ok(Date.now() - clicked < 15000);
  await page.waitForSelector(".msg.assistant:has-text('Stopped, as you asked.')");
  await page.waitForSelector("#stop:disabled");
  // At the prompt Stop has nothing to stop: the session goes on.
  const r = await page.evaluate(() => fetch("/api/stop", {
    method: "POST", body: "{}",
    headers: { "Content-Type": "application/json", Authorization: "Bearer " + sessionStorage.getItem("oishell-token") },
  }).then((r) => r.json()));
  assert.equal(r.stopped, false);
});

// An image a block displays (a figure, as the python driver sends matplotlib's: here a stand-in pyplot drawing a
// 4x4 red PNG) is shown in the block.
const redSquare = "iVBORw0KGgoAAAANSUhEUgAAAAQAAAAECAIAAAAmkwkpAAAAEElEQVR4nGP4z8AARwzEcQCukw/x0F8jngAAAABJRU5ErkJggg==";
await withAgent("image", [
  { tool_calls: [block("import sys, types, base64\n" +
      `PNG = base64.b64decode('${redSquare}')\n` +
      "class Figure:\n    def savefig(self, buf, format=None, **kw):\n        buf.write(PNG)\n" +
      "plt = types.ModuleType('matplotlib.pyplot')\nfigures = [1]\n" +
      "plt.get_fignums = lambda: list(figures)\nplt.figure = lambda num=None: Figure()\n" +
      "plt.close = lambda *a: figures.clear()\nplt.show = lambda *a, **k: None\n" +
      "sys.modules['matplotlib.pyplot'] = plt\nprint('drawn')\n")] },
  { text: "A red square." },
], {}, async ({ page }) => {
  await page.fill("#input", "draw");
  await page.press("#input", "Enter");
  await page.waitForSelector(".block img");
  await page.waitForFunction(() => document.querySelector(".block img").naturalWidth === 4);
  assert.equal(await page.getAttribute(".block img", "src"), "data:image/png;base64," + redSquare);
  await page.waitForSelector(".msg.assistant:has-text('A red square.')");
});

// Computer use (--os): each action is a block in words with its screenshot, and the latest screenshot is the live
// screen beside the conversation, captioned with the action it followed.
const computer = (action) => ({ name: "computer", arguments: JSON.stringify(action) });
const tkApp = "import tkinter as tk\nr = tk.Tk()\nr.geometry('1024x768+0+0')\nr.configure(bg='#2b6cb0')\n" +
  "tk.Label(r, text='An application on the sandbox\\'s own display', font=('DejaVu Sans', 28), bg='#2b6cb0', " +
  "fg='white').place(x=80, y=300)\nr.after(200, lambda: open('app-up', 'w').close())\nr.mainloop()\n";
await withAgent("computer", [
  { tool_calls: [block("import subprocess, time, os\n" +
      `subprocess.Popen(['python3', '-c', ${JSON.stringify(tkApp)}])\n` +
      "for _ in range(200):\n    if os.path.exists('app-up'): break\n    time.sleep(0.05)\nprint('up')\n")] },
  { tool_calls: [computer({ action: "screenshot" })] },
  { tool_calls: [computer({ action: "mouse_move", coordinate: [10, 20] })] },
  { text: "I moved the mouse. The task is done." },
], { args: ["--os"] }, async ({ page }) => {
  assert.equal(await page.isHidden("#screen-section"), true);
  await page.fill("#input", "look");
  await page.press("#input", "Enter");
  await page.waitForSelector(".msg.assistant:has-text('I moved the mouse.')", { timeout: 60000 });
  assert.equal(await page.isVisible("#screen-section"), true);
  assert.equal(await page.textContent("#screen-action"), "after mouse_move (10, 20)");
  await page.waitForFunction(() => document.querySelector("#screen").naturalWidth === 1024);
  assert.equal(await page.evaluate(() => document.querySelector("#screen").naturalHeight), 768);
  assert.equal(await page.locator(".block .lang", { hasText: "computer" }).count(), 2);
  assert.equal(await page.evaluate(() => {  // the live screen shows the application (its blue), not a blank root
    const img = document.querySelector("#screen");
    const c = document.createElement("canvas");
    c.width = img.naturalWidth; c.height = img.naturalHeight;
    const g = c.getContext("2d");
    g.drawImage(img, 0, 0);
    return Array.from(g.getImageData(20, 20, 1, 1).data.slice(0, 3)).join(",");
  }), "43,108,176");
  assert.equal(await page.locator(".block img").count(), 2);
  await shot(page, "gui-computer.png");
});

// Resume a saved conversation from the page's list; the model then sees its messages.
await withAgent("resume", [{ text: "Welcome back." }], {
  prepare: ({ home }) => {
    const saved = join(home, ".local/share/open-interpreter/conversations");
    mkdirSync(saved, { recursive: true });
    writeFileSync(join(saved, "greet_me__2026-12-01_10-00-00.json"), JSON.stringify([
      { role: "user", type: "message", content: "greet me" },
      { role: "assistant", type: "message", content: "Hello from the **past**" },
    ]));
  },
}, async ({ page, dir }) => {
  await page.waitForSelector("#conversations button[data-name='greet_me__2026-12-01_10-00-00']");
  await shot(page, "gui-conversations.png");
  await page.click("#conversations button[data-name='greet_me__2026-12-01_10-00-00']");
  await page.waitForSelector(".msg.assistant strong:text('past')");
  await page.waitForSelector(".notice:text('Resumed greet me')");
  await page.fill("#input", "and now?");
  await page.press("#input", "Enter");
  await page.waitForSelector(".msg.assistant:has-text('Welcome back.')");
  const sent = readFileSync(join(dir, "requests.jsonl"), "utf8");
  assert.match(sent, /Hello from the \*\*past\*\*/);
});

// Refusals: no token, a wrong one, another origin (a page of another local site, in the same browser), a rebound
// Host, a form's content type.
await withAgent("refuse", [{ text: "only once" }], {}, async ({ page, url, dir, context }) => {
  const origin = new URL(url).origin;
  const port = new URL(url).port;
  const token = new URL(url).hash.slice("#token=".length);
  // Without the token the page loads (it holds no secret) and says how to get in; the API refuses.
  const stranger = await browser.newContext();
  const p2 = await stranger.newPage();
  let r = await p2.goto(origin + "/");
  assert.equal(r.status(), 200);
  await p2.waitForSelector(".notice.error:text('Open the address interpreter --gui printed')");
  const wrong = await stranger.newPage();
  await wrong.goto(origin + "/#token=" + "0".repeat(64));
  await wrong.waitForSelector(".notice.error:text('The agent refused this page')");
  r = await p2.goto(origin + "/api/events");
  assert.equal(r.status(), 403);
  // The token is this tab's: another tab of the same browser without the address is not let in.
  const p3 = await context.newPage();
  await p3.goto(origin + "/");
  await p3.waitForSelector(".notice.error:text('Open the address interpreter --gui printed')");
  await p3.close();
  await stranger.close();

  // Another site on this machine tries to post a message (same site, other port).
  const evil = await startHttp((req, res) => {
    res.setHeader("Content-Type", "text/html");
    res.end(`<script>
      window.results = [];
      fetch("${origin}/api/message", {method: "POST", credentials: "include", headers: {"Content-Type": "text/plain"},
            body: JSON.stringify({text: "from evil"})}).then(r => results.push(r.status), e => results.push("blocked"));
      fetch("${origin}/api/message", {method: "POST", credentials: "include", mode: "no-cors",
            headers: {"Content-Type": "text/plain"}, body: JSON.stringify({text: "from evil 2"})})
        .then(r => results.push("opaque"), e => results.push("blocked"));
    </script>`);
  });
  const evilPage = await context.newPage();
  await evilPage.goto(`http://127.0.0.1:${evil.port}/`);
  await evilPage.waitForFunction(() => window.results && window.results.length === 2);
  await evilPage.close();
  evil.server.close();

  // Outside a browser: the right token with a foreign Origin, a rebound Host, a form's content type, no Origin, and
  // the token as a cookie or in the URL instead of the header.
  const raw = (headers, body, path = "/api/message") => new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, method: "POST", headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode));
    });
    req.on("error", reject);
    req.end(body);
  });
  const json = JSON.stringify({ text: "from a script" });
  const bearer = { Authorization: `Bearer ${token}` };
  assert.equal(await raw({ ...bearer, Origin: "http://evil.test", "Content-Type": "application/json" }, json), 403);
  assert.equal(await raw({ ...bearer, Host: `evil.test:${port}`, Origin: origin, "Content-Type": "application/json" }, json), 421);
  assert.equal(await raw({ ...bearer, Origin: origin, "Content-Type": "text/plain" }, json), 415);
  assert.equal(await raw({ ...bearer, "Content-Type": "application/json" }, json), 403);  // a POST without Origin
  assert.equal(await raw({ Cookie: `oishell_gui_${port}=${token}`, Origin: origin, "Content-Type": "application/json" }, json), 403);
  assert.equal(await raw({ Origin: origin, "Content-Type": "application/json" }, json, `/api/message?token=${token}`), 403);

  // Bad bodies from the page's side get a clear status, and the session goes on.
  const fromPage = { ...bearer, Origin: origin, "Content-Type": "application/json" };
  assert.equal(await raw(fromPage, '{"name": 5}', "/api/resume"), 422);
  assert.equal(await raw(fromPage, '{"name": "../../etc/passwd"}', "/api/resume"), 422);
  assert.equal(await raw(fromPage, "[1, 2]"), 422);
  assert.equal(await raw(fromPage, "{not json"), 422);
  assert.equal(await raw(fromPage, '{"id": -1, "answer": "y"}', "/api/answer"), 422);
  assert.equal(await raw(fromPage, '{"id": 99, "answer": "y"}', "/api/answer"), 409);
  // A page reloaded more often than the server has connections: each reload's event stream ends with its page.
  for (let i = 0; i < 40; i++) {
    await page.reload();
    await page.waitForFunction(() => window.oishellPage.events > 0);
  }
  // None of them reached the session: the model was never asked, the page shows no such message.
  await sleep(500);
  assert.equal(await page.locator(".msg.user").count(), 0);
  assert.ok(!existsSync(join(dir, "requests.jsonl")) || readFileSync(join(dir, "requests.jsonl"), "utf8") === "");
  // The allowed neighbour: the same request with the token in its header, from the page's origin, is taken.
  assert.equal(await raw({ ...bearer, Origin: origin, "Content-Type": "application/json" }, json), 202);
  await page.waitForSelector(".msg.user:text('from a script')");
  // Its turn ends before the scenario does: a Ctrl-C during a turn stops the turn, not the session (on a loaded
  // machine the answer was still streaming when withAgent's Ctrl-C came, and the agent was killed 10 s later).
  await page.waitForSelector(".msg.assistant:has-text('only once')");
  await page.waitForSelector("#stop:disabled");  // the page's Stop button: enabled while a turn runs
});

await browser.close();
const sorted = (a) => [...a].sort((x, y) => x - y);
const pct = (a, p) => (a.length ? sorted(a)[Math.min(a.length - 1, Math.floor(p * a.length))] : NaN);
console.log(`gui_e2e: all scenarios passed; first paint median ${pct(figures.firstPaint, 0.5).toFixed(1)} ms ` +
            `(${figures.firstPaint.length} pages); streamed token latency p50 ${pct(figures.latencies, 0.5)} ms, ` +
            `p99 ${pct(figures.latencies, 0.99)} ms (${figures.latencies.length} deltas)`);
