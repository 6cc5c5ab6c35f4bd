#!/usr/bin/env node
// tests/mcp/bench-exec.mjs N SANDBOX [-- SERVER-COMMAND...] - the samples of bench/mcp-exec.sh: N rounds,
// each one sandbox_exec of /bin/true through sbx-mcp (one long-lived client, the MCP SDK's; a sandbox the
// server created) and one `sbxctl exec SANDBOX -- /bin/true` (a sandbox made by sbxctl), interleaved,
// after one warm-up of each. Prints "mcp MS" and "sbxctl MS" per sample; exit status 1 on a failure.
import { spawn } from 'node:child_process';
import { connect, serverArgv, ownArgs } from './lib.mjs';

const [n, sandbox] = ownArgs();
const ms = (t0) => Number(process.hrtime.bigint() - t0) / 1e6;
const sbxctl = () => new Promise((resolve, reject) => {
    const p = spawn('sbxctl', ['exec', sandbox, '--', '/bin/true'], { stdio: ['ignore', 'ignore', 'inherit'] });
    p.on('error', reject);
    p.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`sbxctl exec exited ${code}`))));
});

const c = await connect({ server: serverArgv() });
let id;
try {
    await c.client.listTools();   // the SDK's output validators, as any client that lists the tools has
    const r = await c.client.callTool({ name: 'sandbox_create', arguments: { name: 'sbx-bench-mcp' } });
    id = r.structuredContent?.sandbox_id;
    if (r.isError || !id) throw new Error(`sandbox_create: ${JSON.stringify(r)}`);
    const viaMcp = async () => {
        const x = await c.client.callTool({ name: 'sandbox_exec', arguments: { sandbox_id: id, argv: ['/bin/true'] } });
        if (x.isError || x.structuredContent?.exit_code !== 0) throw new Error(`sandbox_exec: ${JSON.stringify(x)}`);
    };
    await viaMcp(); await sbxctl();   // warm-up
    for (let i = 0; i < Number(n); i++) {
        let t0 = process.hrtime.bigint(); await viaMcp(); console.log(`mcp ${ms(t0).toFixed(3)}`);
        t0 = process.hrtime.bigint(); await sbxctl(); console.log(`sbxctl ${ms(t0).toFixed(3)}`);
    }
    await c.client.callTool({ name: 'sandbox_remove', arguments: { sandbox_id: id } });
    await c.close();
} catch (e) {
    console.error(`bench-exec: ${e.message}`);
    await c.close().catch(() => {});
    process.exit(1);
}
