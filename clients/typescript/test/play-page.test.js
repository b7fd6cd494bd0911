// The server's own /play page in Chromium, as a person uses it: `maumau serve --public-play` (the
// command of docs/VIEWER.md's "Play in the browser", run as written, on another port only when
// 50051 is taken), the page picks classic with 3 seats against 2 bots, deals, and plays the match to
// its end by clicking what the page marks (legal cards, then suit and call buttons, draw and
// pass), reloads in the middle and finds the same seat and hand, and shows the result naming the
// winner, again after a reload once it is over; no console error. Screenshots (1366×900 and
// 390×844) go to $MAUMAU_TEST_OUTPUT/play (default target/test-output/play). Also: the long clock
// counts down; a server without --public-play says so on the page; every profile deals; a person
// who resigns is asked first, then placed last.
//
// It also prints measurements for docs/PERFORMANCE.md (never asserted): the page's first load
// (bytes, ms to the `maumau-ready` mark), the click-to-next-prompt latency in the page
// (Performance API measures `click-to-prompt`), and the server's decision latency seen by a
// gRPC client in the same run (an answer sent to the next prompt received).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { BotKind, Profile, connect, run } from '../src/node.js';
import { launchChromium, serverBinary, startServer } from './harness.js';
import { deal, playOut } from './play-ui.js';

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const OUTPUT = path.resolve(REPO, process.env.MAUMAU_TEST_OUTPUT ?? path.join('target', 'test-output'), 'play');
const DOC = fs.readFileSync(path.join(REPO, 'docs', 'VIEWER.md'), 'utf8');
const SERVE = 'maumau serve --public-play';
const OPEN = 'http://127.0.0.1:50051/play';
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

function portFree(port) {
  return new Promise((resolve) => {
    const probe = net.createServer();
    probe.once('error', () => resolve(false));
    probe.listen(port, '127.0.0.1', () => probe.close(() => resolve(true)));
  });
}

let dir;
let server;
let address;
let browser;

before(async () => {
  for (const line of [SERVE, OPEN]) assert.ok(DOC.includes(line), `docs/VIEWER.md shows \`${line}\``);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'maumau-play-'));
  fs.mkdirSync(path.join(dir, 'bin'));
  fs.symlinkSync(serverBinary(), path.join(dir, 'bin', 'maumau'));
  const env = { ...process.env, PATH: `${path.join(dir, 'bin')}${path.delimiter}${process.env.PATH}` };
  const exact = await portFree(50051);
  const [command, ...args] = SERVE.split(' ');
  if (!exact) args.push('--listen', '127.0.0.1:0');
  const proc = spawn(command, args, { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  proc.stdout.on('data', (d) => { output += d; });
  proc.stderr.on('data', (d) => { output += d; });
  let exited = null;
  const exit = new Promise((resolve) => proc.on('exit', (code, signal) => resolve((exited = code ?? signal))));
  for (const deadline = Date.now() + 30_000; !/serving on (\S+)/.test(output); await sleep(50)) {
    if (exited !== null || Date.now() > deadline) throw new Error(`${SERVE}: ${exited === null ? 'timed out' : `exited (${exited})`}\n${output}`);
  }
  address = /serving on (\S+)/.exec(output)[1];
  if (exact) assert.equal(`http://${address}/play`, OPEN);
  server = {
    output: () => output,
    async stop() {
      if (exited === null) {
        proc.kill('SIGINT');
        const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
        await exit;
        clearTimeout(timer);
      }
    },
  };
  browser = await launchChromium();
});

after(async () => {
  await browser?.close();
  await server?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];
const fmt = (xs) => (xs.length ? `median ${median(xs).toFixed(1)} ms, p90 ${p90(xs).toFixed(1)} ms over ${xs.length}` : 'no samples');

test('a person plays a whole match on /play by clicks, reloads midway, and sees who won', { timeout: 300_000 }, async () => {
  fs.mkdirSync(OUTPUT, { recursive: true });
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));

  // The first load: bytes over the wire and the moment the form can be used.
  await page.goto(`http://${address}/play`);
  await page.waitForFunction(() => performance.getEntriesByName('maumau-ready').length > 0);
  const load = await page.evaluate(() => {
    const nav = performance.getEntriesByType('navigation')[0];
    return { bytes: nav.transferSize, body: nav.encodedBodySize, ready: performance.getEntriesByName('maumau-ready')[0].startTime, dcl: nav.domContentLoadedEventEnd };
  });
  console.log(`# /play first load: ${load.bytes} bytes transferred (${load.body} body), usable after ${load.ready.toFixed(1)} ms (DOMContentLoaded ${load.dcl.toFixed(1)} ms)`);
  await page.screenshot({ path: path.join(OUTPUT, 'setup-1366x900.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(OUTPUT, 'setup-390x844.png'), fullPage: true });
  await page.setViewportSize({ width: 1366, height: 900 });

  // Classic, 3 seats: the person at seat 0, two heuristic bots.
  const latencies = [];
  const matchId = await deal(page);
  const storage = await page.evaluate(() => ({ ...localStorage }));
  assert.ok(storage[`maumau-play:${matchId}`], 'the seat token is in localStorage');
  assert.ok(!page.url().includes(storage[`maumau-play:${matchId}`]), 'and not in the URL');
  const { clicks, reloaded } = await playOut(page, latencies, true, { log: () => server.output(), shots: OUTPUT });
  assert.ok(reloaded, `the match ended before a reload (after ${clicks} clicks)`);
  const result = await page.textContent('#result');
  assert.match(result, /Winner: \S/);
  await page.screenshot({ path: path.join(OUTPUT, 'result-1366x900.png') });
  await page.setViewportSize({ width: 390, height: 844 });
  await page.screenshot({ path: path.join(OUTPUT, 'result-390x844.png'), fullPage: true });
  await page.setViewportSize({ width: 1366, height: 900 });

  // The same link after the end shows the result again.
  await page.reload();
  await page.waitForFunction(() => /Winner: \S/.test(document.getElementById('result').textContent), null, { timeout: 30_000 });
  assert.equal(await page.textContent('#result'), result);

  // The result the server has names the same winner.
  const { matches, close } = connect(address);
  const { report } = await matches.getResult({ matchId });
  close();
  const first = report.result.standings.filter((s) => s.placing === 1).map((s) => s.seat);
  if (first.includes(0)) assert.match(result, /You (won|share first place)/);
  else assert.doesNotMatch(result, /You won/);
  // The events are the viewer's notation: the page shows the lines of the seat's frames.
  const events = await page.$$eval('#events li', (items) => items.map((li) => li.textContent));
  const res = await fetch(`http://${address}/matches/${encodeURIComponent(matchId)}/frames`, { headers: { authorization: `Bearer ${storage[`maumau-play:${matchId}`]}` } });
  const lines = (await res.json()).frames.map((f) => f.line);
  assert.ok(events.length > 0 && events.every((e) => lines.some((l) => e.startsWith(l))), events.join('\n'));

  // "New match", and a second one to its end, for more measurements.
  await page.click('#again');
  await page.waitForFunction(() => !document.getElementById('setup').hidden);
  await deal(page);
  const second = await playOut(page, latencies, false, { log: () => server.output() });
  console.log(`# /play click to next prompt in Chromium: ${fmt(latencies)} (${clicks + second.clicks} clicks in two matches)`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('the long clock counts down on the page; a server without public play says so', { timeout: 120_000 }, async () => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://${address}/play`);
  await page.check('input[name=clock][value=long]');
  await deal(page);
  await page.waitForFunction(() => /^\d+:\d\d for this move · bank \d+:\d\d$/.test(document.getElementById('clock-left').textContent), null, { timeout: 30_000 });
  assert.match(await page.textContent('#rules'), /30 s a move/);
  await page.screenshot({ path: path.join(OUTPUT, 'clock-1366x900.png') });
  assert.deepEqual(errors, []);
  await page.close();

  const off = await startServer();
  try {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`http://${off.address}/play`);
    assert.match(await page.textContent('#off'), /maumau serve --public-play/);
    assert.ok(await page.isDisabled('#create'));
    await page.close();
  } finally {
    await off.stop();
  }
});

test('a person resigns: asked first, then placed last while the bots play on to the end', { timeout: 120_000 }, async () => {
  const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
  const errors = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`http://${address}/play`);
  assert.ok(await page.isHidden('#resign'), 'no Resign before a match');
  await deal(page);
  await page.waitForFunction(() => document.querySelectorAll('#hand [data-card]').length > 0, null, { timeout: 30_000 });
  assert.ok(await page.isVisible('#resign'));
  await page.screenshot({ path: path.join(OUTPUT, 'resign-1366x900.png') });
  // Said no to: nothing changes.
  const asked = [];
  page.once('dialog', (d) => { asked.push(d.message()); d.dismiss(); });
  await page.click('#resign');
  await sleep(500);
  assert.match(asked[0] ?? '', /^Resign this match\? You will be placed last/);
  assert.equal(await page.textContent('#result'), '');
  assert.ok(await page.isVisible('#resign'));
  // Said yes to: the seat forfeits, the bots finish the match, the person is last.
  page.once('dialog', (d) => d.accept());
  await page.click('#resign');
  await page.waitForFunction(() => /Winner: \S/.test(document.getElementById('result').textContent), null, { timeout: 30_000 });
  const mine = await page.$$eval('#result tr.you td', (cells) => cells.map((c) => c.textContent));
  assert.equal(mine[0], '3', `placed last: ${mine}`);
  assert.equal(mine[1], 'you (resigned)');
  assert.ok(await page.isHidden('#resign'), 'no Resign once the match is over');
  await page.screenshot({ path: path.join(OUTPUT, 'resigned-1366x900.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

test('every profile deals from the page, one round or a whole match', { timeout: 120_000 }, async () => {
  // A server of its own: the documented server keeps its budget of public matches for the rest.
  const own = await startServer({ args: ['--public-play'] });
  try {
    const page = await browser.newPage({ viewport: { width: 1366, height: 900 } });
    const errors = [];
    page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
    page.on('pageerror', (e) => errors.push(String(e)));
    for (const [profile, seats, single] of [['CLASSIC', '2', false], ['PENALTY_POINTS', '4', true], ['BRAZILIAN', '5', true], ['ROMANIAN_32', '3', false]]) {
      await page.goto(`http://${own.address}/play`);
      await page.selectOption('#profile', profile);
      await page.selectOption('#seats', seats);
      await page.setChecked('#single', single);
      await page.click('#create');
      await page.waitForFunction(() => location.hash.length > 1 || document.getElementById('setup-error').textContent, null, { timeout: 30_000 });
      assert.equal(await page.textContent('#setup-error'), '', profile);
      await page.waitForFunction(() => document.querySelectorAll('#hand [data-card]').length > 0, null, { timeout: 30_000 });
      assert.equal(await page.locator('#opponents .seat').count(), Number(seats) - 1, profile);
    }
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await own.stop();
  }
});

test('the same server, seen by a gRPC client: answer sent to the next prompt received', { timeout: 120_000 }, async () => {
  // Three one-round matches each way (the pages made three: nine of the ten public matches an
  // address may create a minute): the Play stream, and Watch + SubmitAction as the page does
  // (over gRPC from Node: the server's side of the page's round trip, without the browser).
  for (const watch of [false, true]) {
    const rounds = [];
    for (let i = 0; i < 3; i++) {
      const { matches, close } = connect(address);
      const created = await matches.createPublicMatch({
        config: { profile: Profile.CLASSIC, seats: 3, options: { singleRound: true } },
        bots: [1, 2].map((seat) => ({ seat, kind: BotKind.HEURISTIC })),
      });
      close();
      let sent = 0;
      await run((prompt) => {
        if (sent) rounds.push(performance.now() - sent);
        sent = performance.now();
        return prompt.legalActions[0].index;
      }, address, created.seatTokens[0].token, { watch });
    }
    console.log(`# the server's decision latency, Node gRPC client (${watch ? 'Watch + SubmitAction' : 'Play stream'}): answer sent to next prompt ${fmt(rounds)}`);
    assert.ok(rounds.length > 0);
  }
});
