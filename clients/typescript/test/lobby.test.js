// End to end against the real `maumau serve --ladder`: the lobby helper (holdLobby) registers,
// plays rated matches, reports what happens, and drains; a bad key is refused for good; the
// ladder example registers, plays and drains on SIGINT. And in a real `maumau tournament`, a
// lobby program whose player fails has its seats resigned at once.
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { LobbyError, WaitingReason, describe, holdLobby, newLobbyStats, register } from '../src/node.js';
import { serverBinary, startServer } from './harness.js';

let server;
before(async () => {
  server = await startServer({ ladder: true });
});
after(async () => {
  await server?.stop();
});

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
async function waitFor(condition, what, limitMs = 120_000) {
  for (const deadline = Date.now() + limitMs; !condition(); await sleep(50)) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
  }
}

const firstLegal = (prompt) => prompt.legalActions[0].index;

test('two lobby helpers play rated matches and drain', async () => {
  const keys = [];
  for (const n of ['a', 'b']) {
    keys.push(await register(server.address, { owner: `js-lobby-${n}`, bot: `js-lobby-${n}-bot`, version: '1.0' }));
  }
  assert.ok(keys.every((k) => k.versionKey.startsWith('mmv_') && k.ownerKey.startsWith('mmo_')));
  const lobbies = keys.map((k) => {
    const drain = new AbortController();
    const stats = newLobbyStats();
    const lines = [];
    const done = holdLobby(firstLegal, server.address, k.versionKey, {
      maxMatches: 2, profiles: ['classic'], seats: [2], signal: drain.signal, stats,
      onEvent: (kind, message) => lines.push(describe(kind, message)),
    });
    return { drain, stats, lines, done };
  });
  const rated = (stats) => stats.ended.filter((e) => e.finished && e.rated);
  await waitFor(() => lobbies.every((l) => rated(l.stats).length >= 2), 'two rated matches each');
  for (const l of lobbies) l.drain.abort();
  for (const l of lobbies) {
    const stats = await l.done;
    assert.ok(stats.drained);
    assert.deepEqual(stats.failures, []);
    assert.match(l.lines[0], /^lobby open: version/);
    assert.ok(l.lines.some((line) => line.startsWith('invitation: match')), l.lines.join('\n'));
    assert.ok(l.lines.some((line) => line.includes('rating in ')), l.lines.join('\n'));
    assert.equal(l.lines.at(-1), 'drained');
  }
  const board = await server.ladder.getLeaderboard({ profile: 'classic' });
  assert.deepEqual(new Set(board.standings.map((s) => s.botName)), new Set(['js-lobby-a-bot', 'js-lobby-b-bot']));
});

test('a player that fails before joining gives its seat up at once', async () => {
  // A join deadline far beyond the test's patience: only the withdrawal ends the match soon.
  const own = await startServer({
    ladder: true,
    ladderConfig: 'ladder_join_deadline_ms = 3600000\njoin_timeout_ms = 3700000\n',
  });
  try {
    const keys = [];
    for (const n of ['a', 'b']) {
      keys.push(await register(own.address, { owner: `js-fail-${n}`, bot: `js-fail-${n}-bot`, version: '1.0' }));
    }
    // A's "bot" is not one: every match fails before it joins.
    const players = [null, firstLegal];
    const lobbies = keys.map((k, i) => {
      const drain = new AbortController();
      const stats = newLobbyStats();
      const done = holdLobby(players[i], own.address, k.versionKey, {
        profiles: ['classic'], seats: [2], signal: drain.signal, stats, onEvent: () => {},
      });
      return { drain, stats, done };
    });
    await waitFor(
      () => lobbies[1].stats.ended.some((e) => e.reason.includes('withdrew before joining')),
      "the healthy lobby to hear that the broken one gave its seat up",
    );
    assert.ok(lobbies[0].stats.failures.length >= 1);
    for (const l of lobbies) l.drain.abort();
    for (const l of lobbies) await l.done;
  } finally {
    await own.stop();
  }
});

test('a bad key is refused for good', async () => {
  await assert.rejects(
    holdLobby(firstLegal, server.address, 'mmv_not-a-key', { onEvent: () => {} }),
    (e) => e instanceof LobbyError && e.reason === 'LADDER_ERROR_REASON_BAD_KEY',
  );
});

test('a waiting message reads as one line', () => {
  assert.equal(
    describe('waiting', { reason: WaitingReason.NO_OPPONENTS, detail: 'no opponent of classic with 2 seats is online', botsOnline: 1 }),
    'waiting: no opponent of classic with 2 seats is online (1 bots online)',
  );
  assert.equal(describe('waiting', { reason: WaitingReason.NO_SEASON, detail: '', botsOnline: 3 }), 'waiting: no_season (3 bots online)');
});

test('the ladder example registers, plays rated matches and drains on SIGINT', async () => {
  const opponent = await register(server.address, { owner: 'js-example-opponent', bot: 'js-example-opponent-bot', version: '1' });
  const drain = new AbortController();
  const done = holdLobby(firstLegal, server.address, opponent.versionKey, {
    profiles: ['classic'], seats: [2], signal: drain.signal, onEvent: () => {},
  });
  const example = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'ladder-bot.js');
  const child = spawn(process.execPath, [example, '--ladder', server.address, '--register', 'js-example,js-example-bot,1',
    '--profiles', 'classic', '--seats', '2'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    await waitFor(() => out.includes('rating in '), "the example's first rated match");
    child.kill('SIGINT');
    assert.equal(await exited, 0, out);
  } finally {
    child.kill('SIGKILL');
  }
  assert.match(out, /version key \(shown once, keep it\): mmv_/);
  assert.ok(out.split('\n').includes('drained'), out);
  drain.abort();
  await done;
});

test('a tournament lobby program whose player fails has its seats resigned at once', async () => {
  // A lobby entrant whose player throws at its first prompt. The tournament's game server is no
  // ladder: the helper resigns the seat with its token. With ten minutes of grace (how long a
  // seat may be missing, and how long the server waits for every seat to join) the games are
  // over in seconds, each a forfeit by resignation.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'maumau-js-tournament-'));
  const node = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'node.js');
  const bot = path.join(dir, 'broken-lobby-bot.mjs');
  fs.writeFileSync(bot, [
    `import { holdLobby, lobbyFromEnv } from ${JSON.stringify(node)};`,
    'const { address, key } = lobbyFromEnv();',
    "await holdLobby(() => { throw new Error('this bot is broken'); }, address, key, { onEvent: () => {} });",
    '',
  ].join('\n'));
  const args = ['tournament', '--seats', '2', '--deals', '2', '--threads', '2', '--seed', '5',
    '--out', path.join(dir, 'out'), '--bots', 'random', '--grace-ms', '600000',
    '--entrant', `broken=lobby:${process.execPath} ${bot}`];
  const shown = await new Promise((resolve, reject) => {
    execFile(serverBinary(), args, { timeout: 120_000 }, (error, stdout, stderr) => {
      if (error) {
        reject(new Error(`the tournament failed or waited for the seats' clocks: ${error.message}\n${stdout}\n${stderr}`));
      } else {
        resolve(stdout);
      }
    });
  });
  assert.ok(shown.includes('broken forfeited 4 of its 4 games'), shown);
  assert.equal(shown.split('its program gave the seat up (it resigned)').length - 1, 4, shown);
  fs.rmSync(dir, { recursive: true, force: true });
});
