#!/usr/bin/env node
// tests/mcp/raw.mjs [-- SERVER-COMMAND...] - sbx-mcp over a raw pipe, one JSON-RPC message a line, with
// what a well-behaved client never sends: malformed JSON, unknown methods, wrong params and shapes, a
// line over the 4 MiB cap, notifications nobody answers; after each the server must keep serving.
// Output as lib.mjs says.
import { spawn } from 'node:child_process';
import { ok, eq, note, clip, main, sleep, serverArgv } from './lib.mjs';

class Pipe {
    constructor(argv) {
        this.p = spawn(argv[0], argv.slice(1), { stdio: ['pipe', 'pipe', 'pipe'] });
        this.buf = '';
        this.msgs = [];
        this.stderr = '';
        this.exit = new Promise((r) => this.p.on('exit', (code, sig) => r({ code, sig })));
        this.p.stdout.on('data', (d) => {
            this.buf += d.toString();
            let i;
            while ((i = this.buf.indexOf('\n')) >= 0) {
                const line = this.buf.slice(0, i);
                this.buf = this.buf.slice(i + 1);
                try { this.msgs.push(JSON.parse(line)); } catch { this.msgs.push({ unparsable: line }); }
            }
        });
        this.p.stderr.on('data', (d) => { this.stderr += d.toString(); });
        this.p.stdin.on('error', () => {});
    }
    send(line) { return new Promise((r) => this.p.stdin.write(line + '\n', r)); }
    // the next message (in order) within ms, or undefined
    async next(ms = 10000) {
        const t0 = Date.now();
        while (!this.msgs.length && Date.now() - t0 < ms) await sleep(20);
        return this.msgs.shift();
    }
    async request(id, method, params) {
        await this.send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
        return this.next();
    }
}

async function initialized(argv, version) {
    const p = new Pipe(argv);
    const r = await p.request(1, 'initialize',
        { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '0' } });
    await p.send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    return [p, r];
}

// an error answer to ID with CODE (id null: ID === null)
function isError(m, id, code, what) {
    return ok(m && m.jsonrpc === '2.0' && m.id === id && m.error?.code === code && typeof m.error?.message === 'string'
        && !('result' in m), `${what}: error ${code}${id === null ? ' (id null)' : ''}`, m);
}

main(async () => {
    const argv = serverArgv();
    for (const [asked, want] of [['2025-06-18', '2025-06-18'], ['2025-11-25', '2025-11-25'], ['1999-01-01', '2025-11-25']]) {
        const [p, r] = await initialized(argv, asked);
        eq(want, r?.result?.protocolVersion, `initialize asking ${asked}: the server answers ${want}`);
        p.p.stdin.end();
        const e = await Promise.race([p.exit, sleep(10000).then(() => null)]);
        eq({ code: 0, sig: null }, e, `asking ${asked}: the server exits 0 at the end of its input`);
        if (!e) p.p.kill('SIGKILL');
    }

    const [p] = await initialized(argv, '2025-11-25');
    const ping = async (id, after) => eq({ jsonrpc: '2.0', id, result: {} }, await p.request(id, 'ping'), `ping after ${after}`);
    await p.send('{"jsonrpc": "2.0", "id": 2, "method": "ping"');
    isError(await p.next(), null, -32700, 'malformed JSON');
    await ping(3, 'malformed JSON');
    await p.send('\u0000\u00ff garbage');
    isError(await p.next(), null, -32700, 'binary garbage');
    await ping(4, 'binary garbage');
    isError(await p.request(5, 'no/such/method'), 5, -32601, 'an unknown method');
    isError(await p.request('six', 'resources/list'), 'six', -32601, 'a method the server does not offer (string id)');
    isError(await p.request(7, 'tools/call', { name: 42 }), 7, -32602, 'tools/call with a name that is not a string');
    isError(await p.request(8, 'tools/call'), 8, -32602, 'tools/call without params');
    isError(await p.request(9, 'tools/call', { name: 'no_such_tool', arguments: {} }), 9, -32602, 'tools/call of an unknown tool');
    isError(await p.request(10, 'logging/setLevel', { level: 'loudest' }), 10, -32602, 'logging/setLevel with an unknown level');
    // a tool's arguments of the wrong type: a protocol error (-32602) or a tool error the model can read
    const wrong = await p.request(11, 'tools/call', { name: 'run', arguments: { argv: 'not a list' } });
    ok(wrong?.error?.code === -32602 || wrong?.result?.isError === true, 'run with argv not a list: -32602 or a tool error', wrong);
    note(`run with argv not a list: ${clip(wrong, 300)}`);
    const none = await p.request(12, 'tools/call', { name: 'run', arguments: {} });
    ok(none?.error?.code === -32602 || none?.result?.isError === true, 'run with neither argv nor script: -32602 or a tool error', none);
    await ping(13, 'wrong params');
    await p.send('{"jsonrpc": "2.0", "id": 14}');
    isError(await p.next(), 14, -32600, 'a request without a method');
    await p.send('[1, 2]');
    isError(await p.next(), null, -32600, 'an array (no batches)');
    await p.send('"a string"');
    isError(await p.next(), null, -32600, 'a JSON string');
    await p.send('{"jsonrpc": "1.0", "id": 15, "method": "ping"}');
    isError(await p.next(), 15, -32600, 'jsonrpc 1.0');
    await ping(16, 'wrong shapes');
    // notifications are never answered, not even unknown ones
    await p.send('{"jsonrpc": "2.0", "method": "notifications/no_such_thing"}');
    await p.send('{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99999}}');
    await ping(17, 'two notifications (no answer in between)');
    // a line over the cap: refused whole, the server keeps serving
    const big = JSON.stringify({ jsonrpc: '2.0', id: 18, method: 'ping', params: { pad: 'x'.repeat(5 << 20) } });
    await p.send(big);
    const m = await p.next(30000);
    ok(m?.error?.code === -32600 && (m.id === null || m.id === 18), 'a 5 MiB line: error -32600', m);
    ok(/4\s?MiB|4194304/.test(m?.error?.message ?? ''), 'the error message says the cap', m?.error?.message);
    await ping(19, 'the oversized line');
    // just under the cap: a legal message is served
    const near = JSON.stringify({ jsonrpc: '2.0', id: 20, method: 'ping', params: { pad: 'x'.repeat((4 << 20) - 200) } });
    await p.send(near);
    eq({ jsonrpc: '2.0', id: 20, result: {} }, await p.next(30000), 'a ping just under 4 MiB is answered');
    eq(undefined, await p.next(500), 'nothing else was sent');
    p.p.stdin.end();
    const e = await Promise.race([p.exit, sleep(10000).then(() => null)]);
    eq({ code: 0, sig: null }, e, 'the server exits 0 at the end of its input');
    if (!e) p.p.kill('SIGKILL');
    if (p.stderr) note(`server stderr: ${clip(p.stderr, 400)}`);
});
