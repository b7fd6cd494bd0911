// End to end against the real server: full matches played by the Node helper.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

import {
  BotKind, CardEffect, ErrorReason, MatchError, MatchStatus, Profile, equalBytes, newStats, run, seedCommitment, verifySeed,
} from '../src/node.js';
import { seededRandom, startProxy, startServer } from './harness.js';

const SEED = 20261130n;

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

/** A seeded random bot that records what it sees. */
function recordingBot(seed) {
  const random = seededRandom(seed);
  const bot = {
    name: `js-${seed}`,
    welcomes: [],
    snapshots: [],
    rawEvents: [], // event numbers as they came off the wire
    perStream: [],
    events: [], // event numbers as handed to the bot
    rejections: [],
    prompts: 0,
    random,
    decide(prompt) {
      bot.prompts += 1;
      return prompt.legalActions[Math.floor(random() * prompt.legalActions.length)].index;
    },
    onMessage(m) {
      if (m.kind.case === 'welcome') bot.perStream.push([]);
      if (m.kind.case === 'event') {
        bot.rawEvents.push(Number(m.kind.value.number));
        bot.perStream.at(-1).push(Number(m.kind.value.number));
      }
    },
    onWelcome: (w) => bot.welcomes.push(w),
    onSnapshot: (s) => bot.snapshots.push(s),
    onEvent: (e) => bot.events.push(Number(e.number)),
    onRejected: (r) => bot.rejections.push(r.reason),
  };
  return bot;
}

async function createClassic(remote, seats = 4) {
  const bots = [];
  for (let s = remote; s < seats; s++) bots.push({ seat: s, kind: BotKind.RANDOM });
  const created = await server.matches.createMatch({
    config: { profile: Profile.CLASSIC, seats },
    seed: SEED,
    bots,
    label: 'node client test',
  });
  assert.deepEqual(created.seatTokens.map((t) => t.seat), [...Array(remote).keys()]);
  // Salted: not SHA-256 of the seed alone (the salt is revealed at the end).
  assert.ok(!equalBytes(created.seedCommitment, seedCommitment(SEED)));
  return created;
}

function assertContiguous(numbers, start) {
  assert.ok(numbers.length > 0, 'no events');
  assert.deepEqual(numbers, numbers.map((_, i) => start + i), 'event numbers skip or repeat');
}

function checkReport(report, created, seats) {
  assert.equal(report.matchId, created.matchId);
  assert.equal(report.status, MatchStatus.FINISHED);
  assert.equal(report.seed, SEED);
  assert.equal(report.seedSalt.length, 16);
  assert.ok(equalBytes(report.seedCommitment, seedCommitment(SEED, report.seedSalt)));
  assert.ok(verifySeed(report, created.seedCommitment));
  assert.ok(equalBytes(report.seedCommitment, created.seedCommitment));
  assert.ok(verifySeed(report));
  const { standings } = report.result;
  assert.equal(report.result.seats, seats);
  assert.deepEqual(standings.map((s) => s.seat), [...Array(seats).keys()]);
  assert.ok(report.rounds.length >= 1);
  assert.equal(report.result.rounds, report.rounds.length);
  const placings = standings.map((s) => s.placing);
  assert.equal(Math.min(...placings), 1);
  for (const p of placings) assert.equal(p, placings.filter((q) => q < p).length + 1, `placings ${placings}`);
  for (const a of standings) {
    for (const b of standings) {
      if (a.total < b.total) assert.ok(a.placing <= b.placing, 'a lower penalty total never places worse');
    }
  }
  assert.deepEqual(report.rounds.at(-1).totals, standings.map((s) => s.total));
  assert.ok(report.actions > 0);
}

test('a full classic match: two Node seats and two built-in random bots', { timeout: 120_000 }, async () => {
  const created = await createClassic(2);
  const bots = [recordingBot(1), recordingBot(2)];
  const stats = [newStats(), newStats()];
  const reports = await Promise.all(
    created.seatTokens.map((t, i) => run(bots[i], server.address, t.token, { stats: stats[i] })),
  );
  const [report] = reports;
  assert.deepEqual(reports[1], report, 'every seat gets the same report');
  checkReport(report, created, 4);
  assert.deepEqual(report.players.map((p) => p.bot), [
    BotKind.UNSPECIFIED,
    BotKind.UNSPECIFIED,
    BotKind.RANDOM,
    BotKind.RANDOM,
  ]);
  bots.forEach((bot, seat) => {
    assert.equal(bot.welcomes[0].seat, seat);
    assert.equal(bot.welcomes[0].rules.profile, Profile.CLASSIC);
    assert.ok(equalBytes(bot.welcomes[0].seedCommitment, created.seedCommitment));
    assert.equal(stats[seat].streams, 1);
    assertContiguous(bot.rawEvents, Number(bot.snapshots[0].lastEventNumber) + 1);
    assert.deepEqual(bot.events, bot.rawEvents);
    assert.deepEqual(bot.rejections, []);
    const row = report.seats[seat];
    assert.equal(row.decisions, bot.prompts);
    assert.ok(bot.prompts > 0);
    assert.equal(row.timeouts, 0);
    assert.equal(row.gaveUp, false);
  });
  assert.equal(bots[0].events.at(-1), bots[1].events.at(-1));

  const { report: stored } = await server.matches.getResult({ matchId: created.matchId });
  assert.deepEqual(stored, report);
  const { replay } = await server.matches.getReplay({ matchId: created.matchId });
  assert.equal(replay.actions.length, report.actions);
  const verdict = await server.matches.verifyReplay({ replay });
  assert.ok(verdict.valid && verdict.finished, JSON.stringify(verdict.error));
});

test('a bot that throws fails its match at once, on either stream, instead of reconnecting', { timeout: 120_000 }, async () => {
  for (const watch of [false, true]) {
    const created = await createClassic(1, 2);
    const stats = newStats();
    let calls = 0;
    const broken = () => {
      calls += 1;
      throw new Error('this bot is broken');
    };
    await assert.rejects(
      run(broken, server.address, created.seatTokens[0].token, { stats, watch }),
      (e) => e instanceof MatchError && e.message === 'the bot failed: this bot is broken'
        && e.cause?.message === 'this bot is broken',
    );
    assert.equal(calls, 1, 'asked once');
    assert.equal(stats.streams, 1, 'no reconnection');
  }
});

test('a bot class with private fields and getters plays as itself', { timeout: 120_000 }, async () => {
  class Counting {
    #decisions = 0;

    get name() {
      return `js-private-${this.#decisions}`;
    }

    get decisions() {
      return this.#decisions;
    }

    decide(prompt) {
      this.#decisions += 1;
      return prompt.legalActions[0].index;
    }
  }
  const created = await createClassic(1, 2);
  const bot = new Counting();
  const report = await run(bot, server.address, created.seatTokens[0].token);
  assert.equal(MatchStatus[report.status], 'FINISHED');
  assert.ok(bot.decisions > 0);
  assert.equal(report.seats[0].decisions, bot.decisions);
});

test('batched: events and answers come in EventBatch messages, handed over one by one', { timeout: 120_000 }, async () => {
  const created = await createClassic(2);
  const bots = [recordingBot(3), recordingBot(4)];
  const stats = [newStats(), newStats()];
  const reports = await Promise.all(
    created.seatTokens.map((t, i) => run(bots[i], server.address, t.token, { stats: stats[i], batched: true })),
  );
  const [report] = reports;
  assert.deepEqual(reports[1], report, 'every seat gets the same report');
  checkReport(report, created, 4);
  bots.forEach((bot, seat) => {
    const st = stats[seat];
    assert.ok(st.batches >= bot.prompts && bot.prompts > 0, JSON.stringify(st));
    assert.ok(st.batches < st.events, 'fewer messages than events');
    assertContiguous(bot.rawEvents, Number(bot.snapshots[0].lastEventNumber) + 1);
    assert.deepEqual(bot.events, bot.rawEvents);
    assert.deepEqual(bot.rejections, []);
    assert.equal(report.seats[seat].decisions, bot.prompts);
    assert.equal(st.accepted, bot.prompts, 'every accepted action answered once');
  });
});

test('Watch + SubmitAction: a seat plays a full match as a browser does', { timeout: 120_000 }, async () => {
  const created = await createClassic(2);
  const bots = [recordingBot(7), recordingBot(8)];
  const stats = [newStats(), newStats()];
  const reports = await Promise.all([
    run(bots[0], server.address, created.seatTokens[0].token, { stats: stats[0], watch: true }),
    run(bots[1], server.address, created.seatTokens[1].token, { stats: stats[1] }),
  ]);
  assert.deepEqual(reports[1], reports[0]);
  checkReport(reports[0], created, 4);
  const [bot] = bots;
  const [st] = stats;
  assert.equal(st.streams, 1);
  assert.equal(st.batches, 0, 'Watch sends every event on its own');
  assertContiguous(bot.rawEvents, Number(bot.snapshots[0].lastEventNumber) + 1);
  assert.deepEqual(bot.events, bot.rawEvents);
  assert.deepEqual(bot.rejections, []);
  assert.equal(st.accepted, bot.prompts, 'every SubmitAction accepted');
  assert.equal(reports[0].seats[0].decisions, bot.prompts);
  assert.equal(bot.events.at(-1), bots[1].events.at(-1));
});

// run() asks for its events with its prompts unless told otherwise; `batched: false` gets every
// step as it happens, in one message each.
for (const [what, options, check] of [
  ['by default: one message per prompt', {}, (st, bot) => st.batches >= bot.prompts && st.batches <= bot.prompts + 1],
  ['batched: false: every step as it happens, one message each', { batched: false }, (st, bot) => st.batches > bot.prompts + 1],
]) {
  test(`delivery ${what}`, { timeout: 120_000 }, async () => {
    const created = await createClassic(2);
    const bots = [recordingBot(5), recordingBot(6)];
    const stats = [newStats(), newStats()];
    const reports = await Promise.all(
      created.seatTokens.map((t, i) => run(bots[i], server.address, t.token, { stats: stats[i], ...options })),
    );
    checkReport(reports[0], created, 4);
    bots.forEach((bot, seat) => {
      const st = stats[seat];
      assert.ok(check(st, bot), JSON.stringify({ ...st, prompts: bot.prompts }));
      assert.ok(st.batches < st.events, 'fewer messages than events');
      assertContiguous(bot.rawEvents, Number(bot.snapshots[0].lastEventNumber) + 1);
      assert.equal(st.accepted, bot.prompts, 'every accepted action answered once');
      assert.equal(reports[0].seats[seat].decisions, bot.prompts);
    });
  });
}

test('a dropped connection resumes without missing or repeating an event', { timeout: 120_000 }, async () => {
  const created = await createClassic(2);
  const proxy = await startProxy(server.address);
  let resumed;
  const back = new Promise((resolve) => (resumed = resolve));
  let dropped = false;
  let promptAtDrop = null;

  // Seat 0, through the proxy: once, right after choosing a play that hands the turn to seat 1
  // (it keeps two cards, and the card neither skips nor reverses), it has the proxy swallow the
  // server's messages and then cut the connection.
  const a = recordingBot(3);
  let rules = null;
  const onWelcome = a.onWelcome;
  a.onWelcome = (w) => {
    onWelcome(w);
    rules = w.rules;
    if (a.welcomes.length === 2) resumed();
  };
  const handsTurnOn = (prompt, legal) => {
    const obs = prompt.observation;
    if (legal.action.kind.case !== 'play' || obs.hand.length < 3 || !obs.clockwise) return false;
    const effect = rules.ranks.find((r) => r.rank === legal.action.kind.value.card.rank).effect;
    return effect !== CardEffect.SKIP && effect !== CardEffect.REVERSE;
  };
  const decideA = a.decide;
  a.decide = (prompt) => {
    if (!dropped && a.prompts >= 2) {
      const plays = prompt.legalActions.filter((l) => handsTurnOn(prompt, l));
      if (plays.length > 0) {
        a.prompts += 1;
        dropped = true;
        promptAtDrop = prompt;
        proxy.cut(500);
        return plays[Math.floor(a.random() * plays.length)].index;
      }
    }
    return decideA(prompt);
  };

  // Seat 1: while seat 0 is away it waits for it, so the turn cannot reach seat 0 meanwhile.
  const b = recordingBot(4);
  const decideB = b.decide;
  b.decide = async (prompt) => {
    if (dropped) await back;
    return decideB(prompt);
  };

  const stats = [newStats(), newStats()];
  try {
    const reports = await Promise.all([
      // Events as they happen (one message per step): the step of seat 0's play then sends it
      // a message for the proxy to swallow. Batched with its prompts, nothing would come to it
      // until seat 1 moved, which waits for seat 0 to be back.
      run(a, proxy.address, created.seatTokens[0].token, { stats: stats[0], batched: false }),
      run(b, server.address, created.seatTokens[1].token, { stats: stats[1] }),
    ]);
    const [report] = reports;
    assert.deepEqual(reports[1], report);
    checkReport(report, created, 4);
    assert.ok(dropped);
    assert.equal(proxy.state.cuts, 1);
    assert.ok(proxy.state.swallowed > 0);

    const [sa] = stats;
    assert.equal(sa.streams, 2);
    assert.equal(a.welcomes.length, 2);
    const [first, second] = a.perStream;
    assert.deepEqual(sa.resumedFrom, [first.at(-1)]);
    assert.equal(first.at(-1), Number(promptAtDrop.lastEventNumber));
    assert.ok(second.length > 0);
    assert.equal(second[0], first.at(-1) + 1, 'the resume starts right after the last event seen');
    assertContiguous(a.rawEvents, Number(a.snapshots[0].lastEventNumber) + 1);
    assert.deepEqual(a.events, a.rawEvents);
    assert.equal(sa.duplicates, 0);
    assert.equal(sa.gaps, 0);
    assert.equal(a.events.at(-1), b.events.at(-1), 'both seats end on the same event number');
    assertContiguous(b.rawEvents, Number(b.snapshots[0].lastEventNumber) + 1);

    // The play chosen before the drop got through (the re-sent answer was refused as stale).
    assert.equal(sa.resent, 1);
    assert.ok(a.rejections.length <= 1 && a.rejections.every((r) => r === ErrorReason.STALE_STATE));
    const row = report.seats[0];
    assert.equal(row.timeouts, 0);
    assert.equal(row.gaveUp, false);
    assert.equal(row.rejections, a.rejections.length);
  } finally {
    await proxy.close();
  }
});

// On the Play stream, and on Watch + SubmitAction (what a browser uses): there the answer is a
// unary call, lost with the connection, and the feed is a new Watch with resume.
for (const watch of [false, true]) {
  test(`an answer lost with the connection is sent again after the resume${watch ? ' (Watch + SubmitAction)' : ''}`, { timeout: 120_000 }, async () => {
    const created = await createClassic(2);
    const proxy = await startProxy(server.address);
    // Seat 0, through the proxy: on its third decision the proxy swallows both directions (its
    // answer never reaches the server), then cuts the connection.
    const a = recordingBot(5);
    let promptAtDrop = null;
    const decideA = a.decide;
    a.decide = (prompt) => {
      const choice = decideA(prompt);
      if (a.prompts === 3) {
        promptAtDrop = prompt;
        proxy.cut(500, { upstream: true });
      }
      return choice;
    };
    const b = recordingBot(6);
    const stats = [newStats(), newStats()];
    try {
      const reports = await Promise.all([
        run(a, proxy.address, created.seatTokens[0].token, { stats: stats[0], watch }),
        run(b, server.address, created.seatTokens[1].token, { stats: stats[1] }),
      ]);
      const [report] = reports;
      assert.deepEqual(reports[1], report);
      checkReport(report, created, 4);
      const [sa] = stats;
      assert.equal(proxy.state.cuts, 1);
      assert.ok(proxy.state.swallowedUp > 0);
      assert.equal(sa.streams, 2);
      assert.equal(sa.resent, 1);
      const [first, second] = a.perStream;
      // Nothing happened while seat 0 was away: the match waited for its answer.
      assert.equal(first.at(-1), Number(promptAtDrop.lastEventNumber));
      assert.deepEqual(sa.resumedFrom, [first.at(-1)]);
      assert.equal(second[0], first.at(-1) + 1);
      assertContiguous(a.rawEvents, Number(a.snapshots[0].lastEventNumber) + 1);
      assert.deepEqual(a.events, a.rawEvents);
      assert.equal(sa.duplicates + sa.gaps, 0);
      // The answer sent again after the resume was accepted: no refusal, no timeout.
      assert.deepEqual(a.rejections, []);
      const row = report.seats[0];
      assert.equal(row.timeouts, 0);
      assert.equal(row.rejections, 0);
      assert.equal(row.decisions, a.prompts);
    } finally {
      await proxy.close();
    }
  });
}

test('the example bot plays over a Unix socket (MAUMAU_ADDR=unix:/path)', { timeout: 120_000 }, async () => {
  const created = await createClassic(1);
  // A relay from a Unix socket to the server's TCP port, as a sandbox gives its bots.
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'maumau-sock-'));
  const socket = path.join(dir, 'maumau.sock');
  const port = Number(server.address.slice(server.address.lastIndexOf(':') + 1));
  const relay = net.createServer((client) => {
    const upstream = net.connect(port, '127.0.0.1');
    client.pipe(upstream).pipe(client);
    for (const s of [client, upstream]) s.on('error', () => { client.destroy(); upstream.destroy(); });
  });
  await new Promise((resolve) => relay.listen(socket, resolve));
  try {
    const example = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'examples', 'random-bot.js');
    const { stdout } = await promisify(execFile)(process.execPath, [example], {
      env: { ...process.env, MAUMAU_ADDR: `unix:${socket}`, MAUMAU_TOKEN: created.seatTokens[0].token },
    });
    assert.match(stdout, /^status: FINISHED$/m);
    assert.match(stdout, /matches its commitment: true/);
  } finally {
    await new Promise((resolve) => relay.close(resolve));
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
