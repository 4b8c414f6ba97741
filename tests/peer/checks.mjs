// What the peer client scripts share: one line per check, and a closing "N passed, M failed"
// line with the exit status (1 on any failure). And `require` of the peers' npm packages.
import { createRequire } from "node:module";

export const require = createRequire(process.env.NODE_PATH + "/");
let passed = 0;
let failed = 0;

export function check(name, ok, detail) {
  if (ok) {
    passed++;
    console.log(`ok   ${name}`);
  } else {
    failed++;
    console.log(`FAIL ${name}: ${JSON.stringify(detail).slice(0, 400)}`);
  }
}

export function finish() {
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}
