// The web UI's figures (issue 17): the page's first paint over loopback, and how long a streamed token takes from
// the agent to the page. One run, side by side with a baseline: the same page's files served as static files by
// python's http.server (no token, no agent, no events), so the ratio says what the agent's server adds.
//
//   node page_bench.mjs INTERPRETER SCRIPTED_SERVER PLAYWRIGHT_CORE_DIR [ROUNDS]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { createInterface } from "node:readline";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";

const [interpreter, scriptedServer, playwrightDir] = process.argv.slice(2, 5).map((p) => resolve(p));
const rounds = Number(process.argv[5] ?? 30);
const { chromium } = createRequire(import.meta.url)(playwrightDir);
const top = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (a) => { const s = [...a].sort((x, y) => x - y); return s[Math.floor(s.length / 2)]; };
const pct = (a, p) => { const s = [...a].sort((x, y) => x - y); return s[Math.min(s.length - 1, Math.floor(p * s.length))]; };

const dir = mkdtempSync(join(tmpdir(), "gui-bench-"));
const deltas = 400;
writeFileSync(join(dir, "script.json"), JSON.stringify([
  { text: "x".repeat(deltas * 2), chunk: 2, hold_ms: 5 },
]));
const model = spawn("python3", [scriptedServer, join(dir, "script.json"), join(dir, "requests.jsonl")],
                    { stdio: ["pipe", "pipe", "inherit"] });
const modelPort = Number(await new Promise((r) => createInterface({ input: model.stdout }).once("line", r)));
mkdirSync(join(dir, "ws"));
mkdirSync(join(dir, "home"));
const agent = spawn(interpreter, ["--gui", "--model", "m", "--api_base", `http://127.0.0.1:${modelPort}/v1`],
                    { cwd: join(dir, "ws"), stdio: ["pipe", "pipe", "inherit"], detached: true,
                      env: { PATH: process.env.PATH, HOME: join(dir, "home"), LANG: "C.UTF-8", OPENAI_API_KEY: "k" } });
let out = "";
agent.stdout.on("data", (d) => { out += d; });
while (!/page[^:]*: (http\S+)/.test(out)) await sleep(10);
const url = out.match(/page[^:]*: (http\S+)/)[1];
const origin = new URL(url).origin;

// The baseline: the page's own files and Debian's libraries as static files.
const stat = join(dir, "static");
mkdirSync(join(stat, "vendor"), { recursive: true });
for (const f of ["index.html", "app.js", "app.css"]) {
  writeFileSync(join(stat, f), readFileSync(join(top, "agent/gui/page", f)));
}
symlinkSync("/usr/share/javascript/marked/marked.min.js", join(stat, "vendor/marked.js"));
symlinkSync("/usr/share/javascript/highlight.js/highlight.min.js", join(stat, "vendor/highlight.js"));
symlinkSync("/usr/share/javascript/highlight.js/styles/github.css", join(stat, "vendor/highlight.css"));
const staticServer = spawn("python3", ["-m", "http.server", "--bind", "127.0.0.1", "0", "--directory", stat],
                           { stdio: ["ignore", "pipe", "ignore"] });
const staticPort = Number((await new Promise((r) => createInterface({ input: staticServer.stdout }).once("line", r)))
  .match(/port (\d+)/)[1]);

let browser;
const cleanup = () => {
  try { process.kill(-agent.pid, "SIGINT"); } catch {}
  model.stdin.end();
  model.kill();
  staticServer.kill();
};
process.on("exit", cleanup);  // also when a step below throws
browser = await chromium.launch({
  executablePath: process.env.OISHELL_CHROMIUM ?? "/usr/bin/chromium", headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-pings",
         "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"],
});
const context = await browser.newContext();
const page = await context.newPage();
await page.goto(url);  // takes the cookie
await page.waitForURL((u) => u.hash === "");
const fcp = () => page.evaluate(() => new Promise((r) => {
  const e = performance.getEntriesByType("paint").find((p) => p.name === "first-contentful-paint");
  if (e) return r(e.startTime);
  new PerformanceObserver((l) => r(l.getEntries()[0].startTime)).observe({ type: "paint", buffered: true });
}));
const ours = [], base = [];
for (let i = 0; i < rounds; i++) {  // alternated, so that the machine's state weighs on both alike
  await page.goto(origin + "/", { waitUntil: "load" });
  ours.push(await fcp());
  await page.goto(`http://127.0.0.1:${staticPort}/index.html`, { waitUntil: "load" });
  base.push(await fcp());
}
// Cold: a fresh browser context each time, as a user's first visit (ours through the token address; the baseline
// straight to its file).
const coldOurs = [], coldBase = [];
for (let i = 0; i < Math.min(rounds, 15); i++) {
  for (const which of ["ours", "base"]) {
    const c = await browser.newContext();
    const p = await c.newPage();
    if (which === "ours") {
      await p.goto(url);
      await p.waitForURL((u) => u.hash === "", { waitUntil: "load" });
    } else {
      await p.goto(`http://127.0.0.1:${staticPort}/index.html`, { waitUntil: "load" });
    }
    const t = await p.evaluate(() => new Promise((r) => {
      new PerformanceObserver((l) => r(l.getEntries()[0].startTime)).observe({ type: "paint", buffered: true });
    }));
    (which === "ours" ? coldOurs : coldBase).push(t);
    await c.close();
  }
}
await page.goto(origin + "/", { waitUntil: "load" });
await page.waitForSelector("#stop:disabled");
await page.fill("#input", "stream");
await page.press("#input", "Enter");
await page.waitForFunction((n) => window.oishellPage.latencies.length >= n, deltas, { timeout: 60000 });
const lat = await page.evaluate(() => window.oishellPage.latencies);
await browser.close();
agent.kill("SIGINT");
await new Promise((r) => agent.once("exit", r));
model.stdin.end();
model.kill();
staticServer.kill();
rmSync(dir, { recursive: true, force: true });

console.log(`first contentful paint, ${rounds} loads each (median / p90):`);
console.log(`  interpreter --gui  ${median(ours).toFixed(1)} / ${pct(ours, 0.9).toFixed(1)} ms`);
console.log(`  static files       ${median(base).toFixed(1)} / ${pct(base, 0.9).toFixed(1)} ms   (python3 -m http.server)`);
console.log(`  ratio              ${(median(ours) / median(base)).toFixed(2)}`);
console.log(`cold (a fresh browser context), ${coldOurs.length} loads each (median / p90):`);
console.log(`  interpreter --gui  ${median(coldOurs).toFixed(1)} / ${pct(coldOurs, 0.9).toFixed(1)} ms   (the token address)`);
console.log(`  static files       ${median(coldBase).toFixed(1)} / ${pct(coldBase, 0.9).toFixed(1)} ms`);
console.log(`  ratio              ${(median(coldOurs) / median(coldBase)).toFixed(2)}`);
console.log(`streamed token, agent -> page (${lat.length} deltas): p50 ${median(lat)} ms, p99 ${pct(lat, 0.99)} ms, ` +
            `max ${Math.max(...lat)} ms`);
