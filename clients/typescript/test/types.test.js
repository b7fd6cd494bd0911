// The .d.ts files are what TypeScript users build against: a Node bot (test/types/bot.ts) and a
// browser page (test/types/browser.ts, resolved with the "browser" condition) must type-check
// under --strict, without skipLibCheck. Also: the SHA-256 behind seedCommitment agrees with
// node:crypto, and addresses parse as documented.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { parseAddress, seedCommitment } from '../src/node.js';
import { sha256 } from '../src/sha256.js';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const TSC = path.join(HERE, '..', 'node_modules', 'typescript', 'bin', 'tsc');

for (const entry of ['node', 'browser']) {
  test(`the ${entry} entry's types check a bot written in TypeScript`, { timeout: 60_000 }, () => {
    execFileSync(process.execPath, [TSC, '-p', path.join(HERE, 'types', `tsconfig.${entry}.json`)], { stdio: 'inherit' });
  });
}

test('sha256 agrees with node:crypto', () => {
  for (const n of [0, 1, 24, 55, 56, 63, 64, 65, 300]) {
    const bytes = crypto.randomBytes(n);
    assert.equal(Buffer.from(sha256(bytes)).toString('hex'), crypto.createHash('sha256').update(bytes).digest('hex'), `${n} bytes`);
  }
  const salt = crypto.randomBytes(16);
  const seed = Buffer.alloc(8);
  seed.writeBigUInt64BE(18446744073709551615n);
  const want = crypto.createHash('sha256').update(salt).update(seed).digest();
  assert.deepEqual(Buffer.from(seedCommitment(18446744073709551615n, salt)), want);
});

test('addresses: host:port, URLs and Unix sockets', () => {
  assert.deepEqual(parseAddress('127.0.0.1:50051'), { baseUrl: 'http://127.0.0.1:50051', socketPath: null });
  assert.deepEqual(parseAddress('http://[::1]:7/'), { baseUrl: 'http://[::1]:7', socketPath: null });
  assert.deepEqual(parseAddress('unix:/run/maumau.sock'), { baseUrl: 'http://localhost', socketPath: '/run/maumau.sock' });
  assert.deepEqual(parseAddress('unix:///run/maumau.sock'), { baseUrl: 'http://localhost', socketPath: '/run/maumau.sock' });
});
