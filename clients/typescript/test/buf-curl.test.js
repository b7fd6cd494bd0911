// The `buf curl` commands of docs/PROTOCOL.md ("Calling it by hand") run as written against a
// real server on 127.0.0.1:50051 (on a free port, with the address changed to it, only when
// 50051 is taken), and answer: the method list names the game's services, ListMatches answers.
import assert from 'node:assert/strict';
import { execSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { serverBinary } from './harness.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..', '..', '..');
const DEFAULT = '127.0.0.1:50051';

/** The shell commands of the doc's "Calling it by hand" code block. */
function documentedCommands() {
  const doc = fs.readFileSync(path.join(REPO, 'docs', 'PROTOCOL.md'), 'utf8');
  const section = doc.split('## Calling it by hand')[1];
  const block = section.split('```sh\n')[1].split('```')[0];
  return block.trim().split('\n');
}

const free = (port) =>
  new Promise((resolve) => {
    const s = net.createServer().once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

test('the documented buf curl commands answer', async () => {
  const commands = documentedCommands();
  assert.equal(commands.length, 2, commands.join('\n'));
  const listen = (await free(50051)) ? DEFAULT : '127.0.0.1:0';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'maumau-bufcurl-'));
  const logPath = path.join(dir, 'server.log');
  const log = fs.openSync(logPath, 'w');
  const proc = spawn(serverBinary(), ['serve', '--listen', listen, '--data-dir', path.join(dir, 'data')], {
    stdio: ['ignore', log, log],
  });
  try {
    let address = null;
    for (const deadline = Date.now() + 30_000; !address && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 50));
      address = /serving on (\S+)/.exec(fs.readFileSync(logPath, 'utf8'))?.[1] ?? null;
    }
    assert.ok(address, fs.readFileSync(logPath, 'utf8'));
    const run = (command) =>
      execSync(command.replaceAll(DEFAULT, address), { cwd: path.join(REPO, 'clients', 'typescript'), encoding: 'utf8' });
    const methods = run(commands[0]);
    for (const m of ['maumau.v1.MatchService/CreateMatch', 'maumau.v1.PlayService/Watch', 'grpc.health.v1.Health/Check']) {
      assert.ok(methods.includes(m), `${m} in\n${methods}`);
    }
    assert.ok(!methods.includes('LadderService'), `no ladder on a plain server:\n${methods}`);
    assert.deepEqual(JSON.parse(run(commands[1])), {});
  } finally {
    proc.kill('SIGINT');
    await new Promise((r) => proc.on('exit', r));
    fs.closeSync(log);
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
