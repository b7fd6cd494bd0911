// Test harness: the real `maumau serve` binary on a free loopback port with a temporary data
// directory, and a TCP proxy that can cut a client's connection.
//
// The binary is $MAUMAU_BIN; without it, `cargo build --release -p maumau-cli` builds it (in
// $CARGO_TARGET_DIR, or the workspace's target directory).
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { connect } from '../src/node.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

let binary = null;
export function serverBinary() {
  if (binary) return binary;
  if (process.env.MAUMAU_BIN) {
    binary = process.env.MAUMAU_BIN;
  } else {
    execFileSync('cargo', ['build', '--release', '--locked', '-p', 'maumau-cli'], { cwd: REPO, stdio: 'inherit' });
    let target = process.env.CARGO_TARGET_DIR;
    if (!target) {
      const meta = execFileSync('cargo', ['metadata', '--format-version', '1', '--no-deps'], { cwd: REPO });
      target = JSON.parse(meta).target_directory;
    }
    binary = path.join(target, 'release', 'maumau');
  }
  if (!fs.existsSync(binary)) throw new Error(`no server binary at ${binary}`);
  return binary;
}

/**
 * Starts `maumau serve --listen 127.0.0.1:0` and reads the address it reports. With
 * `{ ladder: true }` it runs the ladder too, with its default formats and versions rated from
 * their first match (validation matches are tested in the Rust suite); `args` are more flags
 * (such as `--public-play`).
 */
export async function startServer({ ladder = false, ladderConfig = '', args: extra = [] } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'maumau-js-'));
  const logPath = path.join(dir, 'server.log');
  const log = fs.openSync(logPath, 'w');
  const args = ['serve', '--listen', '127.0.0.1:0', '--data-dir', path.join(dir, 'data')];
  if (ladder) {
    const config = path.join(dir, 'ladder.toml');
    fs.writeFileSync(config, `ladder_validation = false\n${ladderConfig}`);
    args.push('--ladder', '--config', config);
  }
  args.push(...extra);
  const proc = spawn(serverBinary(), args, {
    stdio: ['ignore', log, log],
    env: { ...process.env, RUST_LOG: process.env.RUST_LOG ?? 'info' },
  });
  let exited = null;
  const exit = new Promise((resolve) => proc.on('exit', (code, signal) => resolve((exited = code ?? signal))));
  const readLog = () => fs.readFileSync(logPath, 'utf8');
  let address = null;
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(50)) {
    const m = /serving on (\S+)/.exec(readLog());
    if (m) {
      address = m[1];
      break;
    }
    if (exited !== null) throw new Error(`the server exited (${exited}):\n${readLog()}`);
  }
  if (!address) throw new Error(`the server did not say where it listens:\n${readLog()}`);
  const clients = connect(address);
  return {
    address,
    matches: clients.matches,
    ladder: clients.ladder,
    log: readLog,
    async stop() {
      clients.close();
      if (exited === null) {
        proc.kill('SIGINT'); // graceful: the server records its matches
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(timer);
      }
      fs.closeSync(log);
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A TCP proxy on loopback. `cut(afterMs)` first swallows what the server sends (so the client
 * misses it), then closes both sides of every open connection; new connections pass again.
 * `cut(afterMs, { upstream: true })` swallows what the client sends too (the server misses it).
 */
export async function startProxy(target) {
  const [host, port] = [target.slice(0, target.lastIndexOf(':')), Number(target.slice(target.lastIndexOf(':') + 1))];
  const state = { blackhole: false, blackholeUp: false, swallowed: 0, swallowedUp: 0, cuts: 0 };
  const pairs = new Set();
  const server = net.createServer((client) => {
    const upstream = net.connect(port, host);
    const pair = [client, upstream];
    pairs.add(pair);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.on('data', (d) => {
      if (state.blackholeUp) state.swallowedUp += d.length;
      else upstream.write(d);
    });
    upstream.on('data', (d) => {
      if (state.blackhole) state.swallowed += d.length;
      else client.write(d);
    });
    const close = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    for (const s of pair) {
      s.on('error', close);
      s.on('close', close);
    }
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    address: `127.0.0.1:${server.address().port}`,
    state,
    cut(afterMs, { upstream = false } = {}) {
      state.blackhole = true;
      state.blackholeUp = upstream;
      setTimeout(() => {
        for (const [client, upstream] of [...pairs]) {
          client.destroy();
          upstream.destroy();
        }
        pairs.clear();
        state.blackhole = false;
        state.blackholeUp = false;
        state.cuts += 1;
      }, afterMs);
    },
    close: () => new Promise((resolve) => {
      for (const [client, upstream] of pairs) {
        client.destroy();
        upstream.destroy();
      }
      server.close(resolve);
    }),
  };
}

/** A small seeded generator (mulberry32), so that a test plays the same way every time. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Debian's Chromium (or $CHROMIUM), headless, through playwright-core: never a downloaded
 * browser, and none of the background connections this machine's closed network refuses.
 */
export async function launchChromium() {
  const { chromium } = await import('playwright-core');
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--headless', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
}
