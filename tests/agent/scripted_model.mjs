// The scripted model server (scripted_server.py) for the node tests (acp/acp_e2e.mjs, gui/gui_e2e.mjs): started
// with `script` in `dir`, its port read from its first line; it logs every request to DIR/requests.jsonl and ends
// when its stdin closes.
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";

export async function startModel(scriptedServer, dir, script) {
  writeFileSync(join(dir, "script.json"), JSON.stringify(script));
  const child = spawn("python3", [scriptedServer, join(dir, "script.json"), join(dir, "requests.jsonl")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const line = await new Promise((resolve, reject) => {
    createInterface({ input: child.stdout }).once("line", resolve);
    child.once("exit", () => reject(new Error("scripted server exited")));
  });
  return { child, port: Number(line) };
}
