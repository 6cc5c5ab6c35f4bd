#!/usr/bin/env node
// tests/mcp/client.mjs SCENARIO [ARGS...] [-- SERVER-COMMAND...] - one scenario of the integration tests
// (tests/integration/test-67-mcp.sh, test-68-mcp-limits.sh), played by the MCP SDK's client against
// sbx-mcp (default: sbx-mcp from PATH). Prints "ok - ..." / "not ok - ..." per check and "info KEY VALUE"
// for what the shell test checks on the system side; exit status 1 when a check failed.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import {
    TOOLS, Session, OutputSchemas, connect, negotiatedVersion, checkCommandResult, ok, eq, info, note, main, sleep,
    serverArgv, ownArgs,
} from './lib.mjs';

const server = serverArgv();
const args = ownArgs();
const scenario = args.shift();

// The SDK's client checks structuredContent against a tool's outputSchema itself: shown here on a server
// of the SDK's own (in memory) whose tool answers against its schema, so that a passing call elsewhere
// means the SDK checked it (lib.mjs checks it again with an Ajv of its own)
async function sdkValidates() {
    const srv = new Server({ name: 'wrong-shape', version: '1' }, { capabilities: { tools: {} } });
    srv.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [{
        name: 'n', inputSchema: { type: 'object' },
        outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
    }] }));
    let answer;
    srv.setRequestHandler(CallToolRequestSchema, async () => answer);
    const [a, b] = InMemoryTransport.createLinkedPair();
    await srv.connect(a);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(b);
    await client.listTools();
    const cases = [
        ['a value of the wrong type', { content: [], structuredContent: { n: 'x' } }, true],
        ['a required key missing', { content: [], structuredContent: {} }, true],
        ['no structuredContent at all', { content: [{ type: 'text', text: 'x' }] }, true],
        ['a conforming result', { content: [], structuredContent: { n: 1 } }, false],
    ];
    for (const [what, res, bad] of cases) {
        answer = res;
        let threw = null;
        try { await client.callTool({ name: 'n', arguments: {} }); } catch (e) { threw = e.message; }
        ok(bad ? threw !== null : threw === null, `the SDK's client ${bad ? 'refuses' : 'accepts'} ${what}`, threw);
    }
    await client.close();
}

async function handshake() {
    for (const sdk of ['current', '2025-06-18']) {
        const want = sdk === 'current' ? '2025-11-25' : '2025-06-18';
        const c = await connect({ sdk, server });
        eq(want, negotiatedVersion(c.log), `initialize with ${want}: the server answers that version`);
        const v = c.client.getServerVersion();
        eq('sbx-mcp', v?.name, `${want}: serverInfo.name`);
        ok(typeof v?.version === 'string' && /^\d+\.\d+/.test(v.version), `${want}: serverInfo.version`, v);
        const caps = c.client.getServerCapabilities();
        eq({ listChanged: false }, caps?.tools, `${want}: capabilities.tools`);
        ok(caps?.logging !== undefined, `${want}: capabilities.logging`, caps);
        const tools = (await c.client.listTools()).tools;
        eq(TOOLS, tools.map((t) => t.name).sort(), `${want}: tools/list names every tool`);
        for (const t of tools) {
            ok(t.inputSchema?.type === 'object' && t.outputSchema?.type === 'object',
                `${want}: ${t.name} has an input and an output schema of type object`, t);
            ok(typeof t.description === 'string' && t.description.length > 10, `${want}: ${t.name} is described`, t);
        }
        const schemas = new OutputSchemas(tools);
        eq([], schemas.errors, `${want}: every outputSchema is a valid JSON Schema (Ajv compiles it)`);
        eq({}, await c.client.ping(), `${want}: ping`);
        await c.client.setLoggingLevel('debug');
        ok(true, `${want}: logging/setLevel answered`);
        await c.close();
    }
}

async function run() {
    const s = await Session.open({ server });
    let r = await s.call('run', { argv: ['sh', '-c', 'echo out; printf err >&2; exit 3'] }, { tag: 'argv' });
    let c = checkCommandResult(r, 'run (argv)');
    eq([3, null, 'exit-code'], [c.exit_code, c.signal, c.stop_reason], 'run (argv): exit code, signal, stop reason');
    eq(['out\n', 'err', 4, 3, false, false],
        [c.stdout, c.stderr, c.stdout_bytes, c.stderr_bytes, c.stdout_truncated, c.stderr_truncated],
        'run (argv): stdout, stderr and their byte counts');
    if (!ok(/^[0-9a-f]{32}$/.test(c.run_id ?? ''), 'run (argv): run_id', c.run_id)) return s.close();
    const text = s.text(r);
    ok(text.indexOf('out\n') >= 0 && text.indexOf('out\n') < text.indexOf('err'), 'run: the text has stdout, then stderr', text);
    info('run_id', c.run_id);
    const first = c.run_id;

    r = await s.call('run', { script: 'echo "$GREETING from $0"; cat', env: { GREETING: 'hello' }, stdin: 'piped in\n' },
        { tag: 'script' });
    c = checkCommandResult(r, 'run (script)');
    eq(['hello from /bin/sh\npiped in\n', 0, 'success'], [c.stdout, c.exit_code, c.stop_reason],
        'run (script): /bin/sh -c, env and stdin');

    r = await s.call('run', { argv: ['sh', '-c', 'kill -KILL $$'] }, { tag: 'signal' });
    c = checkCommandResult(r, 'run (signal)');
    eq([null, 9, 'signal'], [c.exit_code, c.signal, c.stop_reason], 'run (signal): killed by SIGKILL');

    r = await s.call('run', { argv: ['sleep', '30'], timeout: '1s' }, { tag: 'timeout' });
    c = checkCommandResult(r, 'run (timeout)');
    eq('timeout', c.stop_reason, 'run (timeout): stop reason');

    r = await s.call('show_run', { run_id: first });
    eq([first, 'finished'], [r.structuredContent?.run_id, r.structuredContent?.state], 'show_run: the record of the first run');
    r = await s.call('show_run', { run_id: '0123456789abcdef0123456789abcdef' }, { expectError: true });
    ok(/\S/.test(s.text(r)), 'show_run of an unknown run: a sentence', r);
    await s.close();
}

const HELLO_C = '#include <stdio.h>\nint main(void) { printf("built inside: %d\\n", 6 * 7); return 0; }\n';
const MAKEFILE = 'hello: hello.c\n\tcc -O0 -o hello hello.c\n';

async function sandboxBuild() {
    const s = await Session.open({ server });
    let r = await s.call('sandbox_create', { name: 'mcp-build' });
    const id = r.structuredContent?.sandbox_id;
    info('sandbox_id', id);
    info('sandbox_workspace', r.structuredContent?.workspace);
    if (!ok(/^[0-9a-f]{32}$/.test(id ?? ''), 'sandbox_create: an id', r.structuredContent)) return s.close();
    r = await s.call('write_file', { sandbox_id: id, path: 'hello.c', content: HELLO_C }, { tag: 'hello.c' });
    eq(Buffer.byteLength(HELLO_C), r.structuredContent?.bytes, 'write_file: bytes written');
    await s.call('write_file', { sandbox_id: id, path: 'Makefile', content: MAKEFILE }, { tag: 'Makefile' });
    const blob = Buffer.from([0, 1, 2, 255, 254, 10, 0x80]);
    r = await s.call('write_file', { sandbox_id: id, path: '/tmp/blob', content: blob.toString('base64'), encoding: 'base64' },
        { tag: 'base64' });
    eq(blob.length, r.structuredContent?.bytes, 'write_file (base64, absolute /tmp path): bytes written');

    r = await s.call('sandbox_exec', { sandbox_id: id, script: 'cd "$HOME" && make && ./hello' }, { tag: 'make' });
    let c = checkCommandResult(r, 'sandbox_exec (make)');
    eq(0, c.exit_code, 'sandbox_exec: make and the built program exit 0');
    ok((c.stdout ?? '').endsWith('built inside: 42\n'), 'sandbox_exec: the program built inside the sandbox runs', c);
    r = await s.call('sandbox_exec', { sandbox_id: id, argv: ['pwd'], cwd: '/tmp' }, { tag: 'cwd' });
    eq('/tmp\n', r.structuredContent?.stdout, 'sandbox_exec: cwd');
    r = await s.call('sandbox_exec', { sandbox_id: id, argv: ['sh', '-c', 'mkdir -p "$HOME/sub/deeper" && ln -sf hello.c "$HOME/link"'] },
        { tag: 'mkdir' });

    r = await s.call('read_file', { sandbox_id: id, path: 'hello.c' }, { tag: 'text' });
    eq([HELLO_C, 'utf-8', Buffer.byteLength(HELLO_C), false],
        [r.structuredContent?.content, r.structuredContent?.encoding, r.structuredContent?.bytes, r.structuredContent?.truncated],
        'read_file: the source back, utf-8');
    r = await s.call('read_file', { sandbox_id: id, path: 'hello' }, { tag: 'binary' });
    const elf = Buffer.from(r.structuredContent?.content ?? '', 'base64');
    eq('base64', r.structuredContent?.encoding, 'read_file of the built program: base64 (not UTF-8)');
    ok(elf.subarray(0, 4).equals(Buffer.from('\x7fELF', 'latin1')), 'read_file: the program is an ELF file', elf.subarray(0, 8));
    const helloSize = r.structuredContent?.bytes;
    r = await s.call('read_file', { sandbox_id: id, path: '/tmp/blob' }, { tag: 'blob' });
    eq([blob.toString('base64'), 'base64'], [r.structuredContent?.content, r.structuredContent?.encoding],
        'read_file: the base64 file written before');

    r = await s.call('list_files', { sandbox_id: id });
    const byName = Object.fromEntries((r.structuredContent?.entries ?? []).map((e) => [e.name, e]));
    eq({ name: 'hello.c', type: 'file', size: Buffer.byteLength(HELLO_C) }, byName['hello.c'], 'list_files: hello.c');
    eq({ name: 'hello', type: 'file', size: helloSize }, byName.hello, 'list_files: the built program, the size read_file said');
    eq('directory', byName.sub?.type, 'list_files: a directory');
    eq('symlink', byName.link?.type, 'list_files: a symlink');
    r = await s.call('list_files', { sandbox_id: id, path: 'sub' }, { tag: 'sub' });
    eq([{ name: 'deeper', type: 'directory' }], (r.structuredContent?.entries ?? []).map((e) => ({ name: e.name, type: e.type })),
        'list_files of a subdirectory');
    r = await s.call('read_file', { sandbox_id: id, path: 'no/such/file' }, { expectError: true, tag: 'missing' });
    ok(/\S/.test(s.text(r)), 'read_file of a missing file: a sentence', r);

    if (args[0]) {   // a workspace: a file written there is on the host
        await s.call('write_file', { sandbox_id: id, path: 'workspace/from-mcp.txt', content: 'through the workspace\n' },
            { tag: 'workspace' });
    }
    r = await s.call('sandbox_remove', { sandbox_id: id });
    eq(id, r.structuredContent?.sandbox_id, 'sandbox_remove: the id');
    ok(typeof r.structuredContent?.stop_reason === 'string', 'sandbox_remove: a stop reason', r.structuredContent);
    r = await s.call('sandbox_exec', { sandbox_id: id, argv: ['true'] }, { expectError: true, tag: 'after remove' });
    await s.close();
}

// cancel: the SDK's own cancellation (an aborted signal sends notifications/cancelled); the response
// the server still sends (stop_reason cancelled) is seen on the tap, as the SDK drops it
async function cancel() {
    const s = await Session.open({ server });
    const ac = new AbortController();
    const progress = [];
    const call = s.call('run', { argv: ['sh', '-c', 'echo started; exec sleep 300'] },
        { signal: ac.signal, progress: (p) => progress.push(p), tag: 'cancelled' });
    const t0 = Date.now();
    while (progress.length < 1 && Date.now() - t0 < 20000) await sleep(100);
    ok(progress.length >= 1, 'progress notifications while the command runs', progress);
    if (progress[0]) {
        ok(typeof progress[0].progress === 'number' && / s, \d+ bytes of output$/.test(progress[0].message ?? ''),
            'progress: elapsed seconds and "N s, M bytes of output"', progress[0]);
    }
    const req = s.conn.log.find((e) => e.dir === 'out' && e.msg.method === 'tools/call' && e.msg.params?.name === 'run');
    ac.abort('the test cancels it');
    let threw = null;
    try { await call; } catch (e) { threw = e; }
    ok(threw !== null, 'the SDK rejects the cancelled call');
    const sent = s.conn.log.find((e) => e.dir === 'out' && e.msg.method === 'notifications/cancelled');
    eq(req?.msg.id, sent?.msg.params?.requestId, 'the SDK sent notifications/cancelled for the request');
    let resp;
    const t1 = Date.now();
    while (!(resp = s.conn.log.find((e) => e.dir === 'in' && e.msg.id === req?.msg.id)) && Date.now() - t1 < 30000) await sleep(100);
    ok(resp !== undefined, 'the server still answered the cancelled request');
    const sc = resp?.msg.result?.structuredContent;
    eq('cancelled', sc?.stop_reason, 'the answer: stop_reason cancelled');
    ok(Date.now() - t0 < 60000, 'cancelled well before the command would end', Date.now() - t0);
    if (sc) {
        const bad = s.schemas.check('run', sc);
        ok(bad === null, 'the answer matches the outputSchema', bad);
        info('run_id', sc.run_id);
    }
    // notifications/cancelled for an unknown request: ignored, the server goes on
    await s.client.notification({ method: 'notifications/cancelled', params: { requestId: 987654, reason: 'none such' } });
    eq({}, await s.client.ping(), 'ping after a cancellation of an unknown request');
    await s.close();
}

async function outputCap() {
    const cap = Number(args[0] ?? 1024);
    const s = await Session.open({ server });
    const r = await s.call('run', { script: 'head -c 100000 /dev/zero | tr "\\0" x; head -c 10 /dev/zero | tr "\\0" y >&2' });
    const c = checkCommandResult(r, 'run past the output cap');
    eq([cap, 100000, true], [c.stdout?.length, c.stdout_bytes, c.stdout_truncated], 'stdout: cut at the cap, every byte counted');
    eq(['yyyyyyyyyy', 10, false], [c.stderr, c.stderr_bytes, c.stderr_truncated], 'stderr: under the cap, whole');
    eq([0, 'success'], [c.exit_code, c.stop_reason], 'the command ran to its end');
    ok(s.text(r).includes(`[... ${100000 - cap} bytes cut: output cap]`), 'the text says what was cut', s.text(r).slice(-300));
    await s.close();
}

// MEMORY-ASKED: a run over that ceiling; its result carries sbx's limit line among agent_lines
async function memory() {
    const mem = args[0] ?? '64M';
    const s = await Session.open({ server });
    const r = await s.call('run', { argv: ['python3', '-c', 'x = bytearray(300 << 20); print("ALLOCATED", len(x))'], memory: mem });
    const c = checkCommandResult(r, 'run over its memory ceiling');
    eq('oom-kill', c.stop_reason, "stop reason (the record's)");
    ok((c.agent_lines ?? []).some((l) => l.includes(`memory limit ${mem} reached`)), 'agent_lines: the memory limit line', c.agent_lines);
    ok(!(c.stdout ?? '').includes('ALLOCATED'), 'the allocation did not succeed', c.stdout);
    ok(s.text(r).includes(`memory limit ${mem} reached`), 'the text has the limit line', s.text(r));
    info('run_id', c.run_id);
    await s.close();
}

// PROFILE ADDR PORT: a connection the profile's allowlist does not open; the denial among agent_lines
async function egress() {
    const [profile, addr, port] = args;
    const s = await Session.open({ server });
    const py = 'import socket, sys\ns = socket.socket(); s.settimeout(5)\n' +
        'try:\n    s.connect((sys.argv[1], int(sys.argv[2]))); print("CONNECTED")\n' +
        'except OSError as e:\n    print("ERR", e.errno)\n';
    const r = await s.call('run', { argv: ['python3', '-c', py, addr, port], profile });
    const c = checkCommandResult(r, 'run with a denied destination');
    eq('ERR 1\n', c.stdout, 'the connection fails with EPERM');
    ok((c.agent_lines ?? []).some((l) => l.includes(`egress denied: ${addr}:${port}/tcp`)), 'agent_lines: the egress denial',
        c.agent_lines);
    info('run_id', c.run_id);
    await s.close();
}

// what the server's configuration refuses: tool errors whose sentence names the fault
async function refused() {
    const [hostDir] = args;
    const s = await Session.open({ server });
    let r = await s.call('run', { argv: ['true'], workspace: hostDir }, { expectError: true, tag: 'workspace not configured' });
    ok(s.text(r).includes(hostDir), 'the sentence names the refused host path', s.text(r));
    note(`workspace refused: ${s.text(r)}`);
    r = await s.call('sandbox_create', { workspace: '/' }, { expectError: true, tag: 'workspace /' });
    r = await s.call('run', { argv: ['true'], profile: 'coding' }, { expectError: true, tag: 'a profile not configured' });
    ok(s.text(r).includes('coding'), 'the sentence names the refused profile', s.text(r));
    note(`profile refused: ${s.text(r)}`);
    r = await s.call('run', { argv: ['true'], profile: 'no-such-profile' }, { expectError: true, tag: 'an unknown profile' });
    r = await s.call('run', { argv: ['true'], memory: '100G' }, { expectError: true, tag: 'memory over --memory-max' });
    note(`memory refused: ${s.text(r)}`);
    r = await s.call('run', { argv: ['true'], timeout: '10h' }, { expectError: true, tag: 'timeout over --timeout-max' });
    r = await s.call('sandbox_exec', { sandbox_id: '0123456789abcdef0123456789abcdef', argv: ['true'] },
        { expectError: true, tag: 'an unknown sandbox' });
    r = await s.call('export', { sandbox_id: '0123456789abcdef0123456789abcdef' }, { expectError: true, tag: 'no --export-dir' });
    // and the server still runs what it allows
    r = await s.call('run', { argv: ['echo', 'still serving'] }, { tag: 'after the refusals' });
    eq('still serving\n', r.structuredContent?.stdout, 'a run after the refusals');
    await s.close();
}

// a server whose profile is of the gVisor tier: its runs run in gVisor, its sandboxes are refused with
// the sentence sbxctl prints
async function gvisor() {
    const s = await Session.open({ server });
    const r = await s.call('run', { argv: ['uname', '-r'] }, { tag: 'a run in gVisor' });
    const c = checkCommandResult(r, 'a run in gVisor');
    eq('4.4.0\n', c.stdout, "gVisor's kernel answers uname");
    info('run_id', c.run_id);
    const e = await s.call('sandbox_create', {}, { expectError: true, tag: 'a sandbox of the gVisor tier' });
    ok(s.text(e).includes('process.isolation "gvisor" runs one command per run'), 'the refusal names why', s.text(e));
    note(`sandbox refused: ${s.text(e)}`);
    await s.close();
}

// two clients at once (two servers), and two calls in flight at once from one of them
async function concurrent() {
    const [a, b] = await Promise.all([Session.open({ server }), Session.open({ server })]);
    const script = (k) => ({ script: `date +%s%N; sleep 2; echo done-${k}; date +%s%N` });
    const t0 = Date.now();
    const rs = await Promise.all([a.call('run', script(1)), b.call('run', script(2)), a.call('run', script(3))]);
    const times = rs.map((r, i) => {
        const c = checkCommandResult(r, `concurrent run ${i + 1}`);
        const [begin, done, end] = (c.stdout ?? '').trim().split('\n');
        eq(`done-${i + 1}`, done, `concurrent run ${i + 1}: its own output`);
        return [BigInt(begin || 0), BigInt(end || 0)];
    });
    const lastBegin = times.reduce((m, t) => (t[0] > m ? t[0] : m), 0n);
    const firstEnd = times.reduce((m, t) => (m === null || t[1] < m ? t[1] : m), null);
    ok(lastBegin < firstEnd, 'the three commands ran side by side (all began before any ended)', times.map(String));
    note(`three 2 s commands took ${Date.now() - t0} ms`);
    eq(3, new Set(rs.map((r) => r.structuredContent?.run_id)).size, 'three runs, three run ids');
    await Promise.all([a.close(), b.close()]);
}

// a client that goes away mid-command: holds a sandbox with a command running in it and a run, says
// "info ready", then waits to be killed (the shell test kills it and looks at what is left)
async function hold() {
    const s = await Session.open({ server });
    const r = await s.call('sandbox_create', { name: 'mcp-vanish' });
    const id = r.structuredContent?.sandbox_id;
    if (!ok(id, 'sandbox_create', r)) return s.close();
    info('sandbox_id', id);
    info('server_pid', s.conn.pid);
    const seen = { exec: 0, run: 0 };
    s.call('sandbox_exec', { sandbox_id: id, argv: ['sleep', '600'] }, { progress: () => seen.exec++ }).catch(() => {});
    s.call('run', { argv: ['sleep', '600'] }, { progress: () => seen.run++ }).catch(() => {});
    const t0 = Date.now();
    while ((seen.exec < 1 || seen.run < 1) && Date.now() - t0 < 30000) await sleep(100);
    ok(seen.exec >= 1 && seen.run >= 1, 'both commands running (progress seen)', seen);
    info('ready', 1);
    await sleep(600000);
}

const SCENARIOS = {
    'sdk-validates': sdkValidates, handshake, run, 'sandbox-build': sandboxBuild, cancel,
    'output-cap': outputCap, memory, egress, refused, concurrent, hold, gvisor,
};
if (!SCENARIOS[scenario]) {
    console.error(`usage: client.mjs {${Object.keys(SCENARIOS).join('|')}} [ARGS...] [-- SERVER-COMMAND...]`);
    process.exit(2);
}
main(SCENARIOS[scenario]);
