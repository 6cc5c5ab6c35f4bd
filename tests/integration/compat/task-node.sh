#!/usr/bin/env bash
# node: JIT-compiled hot code (V8 needs writable and executable memory), the file system, child
# processes, a worker thread, zlib and crypto, and a TCP server and client on loopback.
. "$(dirname "$0")/lib-task.sh"
command -v node >/dev/null || fail "node not installed"
echo "node $(node --version)"
cat > main.js <<'JS'
'use strict';
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const cp = require('child_process');
const zlib = require('zlib');
const crypto = require('crypto');
const net = require('net');
const { Worker } = require('worker_threads');

// hot code: optimised by TurboFan after a few thousand calls
function collatz(n) { let s = 0; while (n !== 1) { n = (n % 2) ? 3 * n + 1 : n / 2; s++; } return s; }
let best = 0, arg = 0;
for (let i = 1; i < 300000; i++) { const s = collatz(i); if (s > best) { best = s; arg = i; } }
assert.strictEqual(arg, 230631); assert.strictEqual(best, 442);
console.log('jit ok', arg, best);
// a function made at run time (new code in executable memory)
assert.strictEqual(new Function('a', 'b', 'return a * b + 1')(6, 7), 43);
// eval'd regular expressions, compiled to native code by irregexp
assert.ok(/^(a+)+b$/.test('a'.repeat(20) + 'b'));

// file system: workspace, HOME and the temporary directory
for (const dir of [process.cwd(), os.homedir(), os.tmpdir()]) {
  const d = fs.mkdtempSync(path.join(dir, 'node-'));
  const f = path.join(d, 'f.txt');
  fs.writeFileSync(f, 'x'.repeat(100000));
  assert.strictEqual(fs.readFileSync(f, 'utf8').length, 100000);
  fs.renameSync(f, f + '.2'); fs.symlinkSync(f + '.2', f);
  assert.strictEqual(fs.statSync(f).size, 100000);
  fs.rmSync(d, { recursive: true });
}
console.log('fs ok', os.homedir(), os.tmpdir());

// child processes
assert.strictEqual(cp.execFileSync('sh', ['-c', 'echo $((6*7))']).toString().trim(), '42');
const r = cp.spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']);
assert.strictEqual(r.status, 0); assert.ok(Number(r.stdout.toString()) > 0);
console.log('child_process ok');

// zlib and crypto
const big = Buffer.alloc(1 << 20, 'abc');
assert.ok(zlib.gunzipSync(zlib.gzipSync(big)).equals(big));
assert.strictEqual(crypto.createHash('sha256').update('abc').digest('hex'),
  'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
assert.strictEqual(crypto.randomBytes(16).length, 16);
console.log('zlib crypto ok');

// a worker thread, then a TCP echo on loopback
const w = new Worker(`
  const { parentPort } = require('worker_threads');
  parentPort.on('message', (n) => { let s = 0; for (let i = 0; i < n; i++) s += i; parentPort.postMessage(s); });`,
  { eval: true });
w.postMessage(1000000);
w.once('message', (s) => {
  assert.strictEqual(s, 499999500000);
  console.log('worker ok');
  w.terminate();
  const srv = net.createServer((c) => c.pipe(c)).listen(0, '127.0.0.1', () => {
    const c = net.connect(srv.address().port, '127.0.0.1', () => c.end('ping'));
    let got = '';
    c.on('data', (d) => { got += d; });
    c.on('close', () => { assert.strictEqual(got, 'ping'); console.log('loopback ok'); srv.close(); });
  });
});
JS
out=$(node main.js 2>&1); rc=$?
echo "$out"
[ "$rc" = 0 ] || fail "node exited $rc"
for w in "jit ok" "fs ok" "child_process ok" "zlib crypto ok" "worker ok" "loopback ok"; do
  contains "$out" "$w" "node's output"
done
step "node -e and a pipe"
expect 3 "$(printf '1\n2\n3\n' | node -e 'let n=0; process.stdin.on("data", d => n += d.toString().trim().split("\n").length).on("end", () => console.log(n))')" "lines counted by node"
ok
