// The check runner of the MCP end-to-end scripts: each check runs, says ok or FAIL with the reason, and the script
// exits 1 when any failed.
let failures = 0;

export async function check(name, fn) {
  try {
    await fn();
    console.log(`ok   ${name}`);
  } catch (e) {
    failures++;
    console.log(`FAIL ${name}: ${e.stack || e}`);
  }
}

export function finish() {
  if (failures) {
    console.log(`${failures} check(s) failed`);
    process.exit(1);
  }
  console.log('all checks passed');
}
