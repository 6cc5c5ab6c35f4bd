// tests/mcp/lib.mjs - what the MCP clients of the integration tests and the bench share: starting
// sbx-mcp under the MCP SDK's own client (stdio transport), a tap on every JSON-RPC message both ways,
// a check of each tool result against the tool's outputSchema (an Ajv of our own, beside the SDK's), and
// TAP-like output the shell tests read:
//   ok - WHAT | not ok - WHAT: WHY | info KEY VALUE | # note
// A script's exit status is 1 when any check failed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as Client0618 } from 'mcp-sdk-2025-06-18/client/index.js';
import { StdioClientTransport as StdioClientTransport0618 } from 'mcp-sdk-2025-06-18/client/stdio.js';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';

export const TOOLS = ['export', 'list_files', 'read_file', 'run', 'sandbox_create', 'sandbox_exec',
    'sandbox_remove', 'show_run', 'write_file'];
export const COMMAND_RESULT_KEYS = ['run_id', 'exit_code', 'signal', 'stop_reason', 'stdout', 'stderr',
    'stdout_bytes', 'stderr_bytes', 'stdout_truncated', 'stderr_truncated', 'agent_lines'];
// calls that run commands may take long (minutes under the VM lane's emulation); the SDK's default is 60 s
export const CALL_TIMEOUT_MS = 600000;

let failed = 0;
export function ok(cond, what, why) {
    if (cond) {
        console.log(`ok - ${what}`);
    } else {
        failed++;
        console.log(`not ok - ${what}${why === undefined ? '' : ': ' + clip(why)}`);
    }
    return !!cond;
}
export function eq(want, got, what) {
    return ok(JSON.stringify(want) === JSON.stringify(got), what,
        `expected ${JSON.stringify(want)}, got ${JSON.stringify(got)}`);
}
export function info(key, value) { console.log(`info ${key} ${value}`); }
export function note(text) { console.log(`# ${text}`); }
export function clip(v, n = 600) {
    let s = typeof v === 'string' ? v : JSON.stringify(v);
    s = (s === undefined ? String(v) : s).replace(/\s*\n\s*/g, ' | ');
    return s.length > n ? s.slice(0, n) + '...' : s;
}
export function failures() { return failed; }
export function finish() { process.exit(failed ? 1 : 0); }
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The server's command line: what follows "--" on ours (default: sbx-mcp from PATH)
export function serverArgv(argv = process.argv) {
    const i = argv.indexOf('--');
    const cmd = i < 0 ? [] : argv.slice(i + 1);
    return cmd.length ? cmd : ['sbx-mcp'];
}
// Our own arguments: what comes before "--", after the script's name
export function ownArgs(argv = process.argv) {
    const i = argv.indexOf('--');
    return argv.slice(2, i < 0 ? undefined : i);
}

// Every message both ways, for the checks the SDK does not expose (the negotiated version, a response
// that arrives after the client cancelled its request) and for reports of the exact JSON exchanged.
function tapTransport(transport, log) {
    const send = transport.send.bind(transport);
    transport.send = (msg, opts) => { log.push({ dir: 'out', msg }); return send(msg, opts); };
    let handler;
    Object.defineProperty(transport, 'onmessage', {
        configurable: true,
        get() { return handler; },
        set(h) { handler = h && ((msg, extra) => { log.push({ dir: 'in', msg }); return h(msg, extra); }); },
    });
}

// connect({ sdk: 'current' | '2025-06-18', server: [cmd, ...args], name })
//   -> { client, transport, log, pid, stderr(), close() }
export async function connect({ sdk = 'current', server = serverArgv(), name = 'sbx-mcp-tests' } = {}) {
    const [C, T] = sdk === '2025-06-18' ? [Client0618, StdioClientTransport0618] : [Client, StdioClientTransport];
    const transport = new T({ command: server[0], args: server.slice(1), stderr: 'pipe',
        env: { ...process.env } });
    const log = [];
    let err = '';
    tapTransport(transport, log);
    transport.stderr?.on('data', (d) => { err += d.toString(); });
    const client = new C({ name, version: '1.0.0' }, { capabilities: {} });
    await client.connect(transport);
    return {
        client, transport, log,
        pid: transport.pid,
        stderr: () => err,
        close: () => client.close(),
    };
}

// the protocol version the server answered in initialize (from the tap)
export function negotiatedVersion(log) {
    const init = log.find((e) => e.dir === 'out' && e.msg.method === 'initialize');
    const resp = init && log.find((e) => e.dir === 'in' && e.msg.id === init.msg.id);
    return resp?.msg?.result?.protocolVersion;
}

// Our own validators of every tool's outputSchema, compiled from tools/list (strict schema checking off,
// as MCP schemas may carry keywords of later drafts; the schema itself must be a valid one)
export class OutputSchemas {
    constructor(tools) {
        this.ajv = new Ajv({ strict: false, allErrors: true, validateSchema: true });
        addFormats(this.ajv);
        this.by = new Map();
        this.errors = [];
        for (const t of tools) {
            if (!t.outputSchema) continue;
            try {
                this.by.set(t.name, this.ajv.compile(t.outputSchema));
            } catch (e) {
                this.errors.push(`${t.name}: ${e.message}`);
            }
        }
    }
    // null when it conforms, else why not
    check(tool, structured) {
        const v = this.by.get(tool);
        if (!v) return `no outputSchema for ${tool}`;
        return v(structured) ? null : this.ajv.errorsText(v.errors);
    }
}

// A session: the client plus the schemas of its tools; call() checks every result's shape.
export class Session {
    static async open(opts = {}) {
        const s = new Session();
        s.conn = await connect(opts);
        s.client = s.conn.client;
        s.tools = (await s.client.listTools()).tools;   // also primes the SDK's own output validators
        s.schemas = new OutputSchemas(s.tools);
        s.label = opts.label ?? 'call';
        return s;
    }
    // call(tool, args, { expectError, progress, signal }) -> the CallToolResult
    async call(tool, args, opts = {}) {
        const o = { timeout: CALL_TIMEOUT_MS, signal: opts.signal };
        if (opts.progress) { o.onprogress = opts.progress; o.resetTimeoutOnProgress = true; }
        const r = await this.client.callTool({ name: tool, arguments: args }, undefined, o);
        const what = `${tool}${opts.tag ? ' (' + opts.tag + ')' : ''}`;
        if (opts.expectError) {
            ok(r.isError === true, `${what}: a tool error (isError)`, r);
            return r;
        }
        if (!ok(r.isError !== true, `${what}: no tool error`, r.content?.[0]?.text ?? r)) return r;
        const bad = this.schemas.check(tool, r.structuredContent);
        ok(bad === null, `${what}: structuredContent matches the outputSchema`, `${bad}: ${clip(r.structuredContent)}`);
        ok(Array.isArray(r.content) && r.content.length > 0 && r.content.every((c) => c.type === 'text'),
            `${what}: text content`, r.content);
        return r;
    }
    text(r) { return (r.content ?? []).map((c) => c.text).join(''); }
    close() { return this.conn.close(); }
}

// checks of a CommandResult beyond its schema: the keys of the interface and the text content's form
export function checkCommandResult(r, what) {
    const s = r.structuredContent ?? {};
    const missing = COMMAND_RESULT_KEYS.filter((k) => !(k in s));
    ok(missing.length === 0, `${what}: CommandResult has every key`, `missing ${missing.join(', ')}`);
    const text = (r.content ?? []).map((c) => c.text).join('');
    const last = text.trimEnd().split('\n').pop();
    if (Number.isInteger(s.exit_code)) {
        eq(`exit ${s.exit_code} (${s.stop_reason})`, last, `${what}: the text's last line`);
    } else {
        ok(typeof last === 'string' && last.startsWith('exit ') && last.endsWith(` (${s.stop_reason})`),
            `${what}: the text's last line`, last);
    }
    return s;
}

// Run an async main; an exception is a failed check, not a crash without output
export function main(fn) {
    fn().catch((e) => { ok(false, 'the client ran to its end', e?.stack ?? e); })
        .finally(() => finish());
}
