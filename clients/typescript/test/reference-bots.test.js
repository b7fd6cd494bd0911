// End to end: the Node helper plays complete matches against the Rust reference bots that the
// server seats itself (BOT_KIND_HEURISTIC, BOT_KIND_SEARCH).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { BotKind, CallsMode, ErrorReason, MatchStatus, Profile, newStats, run, verifySeed } from '../src/node.js';
import { seededRandom, startServer } from './harness.js';

let server;
before(async () => {
  server = await startServer();
});
after(async () => {
  await server?.stop();
});

/** A seeded random bot that challenges every omission it is offered. */
function seededBot(seed) {
  const random = seededRandom(seed);
  const bot = {
    name: `js-${seed}`,
    prompts: 0,
    rejections: [],
    decide(prompt) {
      bot.prompts += 1;
      return prompt.legalActions[Math.floor(random() * prompt.legalActions.length)].index;
    },
    decideOptional: (prompt) => prompt.legalActions.find((a) => a.action.kind.case === 'challenge')?.index ?? null,
    onRejected: (r) => bot.rejections.push(r.reason),
  };
  return bot;
}

const cases = [
  ['classic', Profile.CLASSIC, [BotKind.HEURISTIC, BotKind.SEARCH]],
  ['romanian-32', Profile.ROMANIAN_32, [BotKind.SEARCH, BotKind.HEURISTIC]],
  ['penalty-points', Profile.PENALTY_POINTS, [BotKind.SEARCH, BotKind.HEURISTIC, BotKind.SEARCH]],
];

for (const [name, profile, kinds] of cases) {
  test(`${name}: a Node seat plays a complete match against heuristic and search`, { timeout: 120_000 }, async () => {
    const seats = 1 + kinds.length;
    const created = await server.matches.createMatch({
      config: { profile, seats, calls: CallsMode.CHALLENGE, maxRounds: 2 },
      seed: 11n,
      bots: kinds.map((kind, i) => ({ seat: 1 + i, kind })),
    });
    assert.deepEqual(created.seatTokens.map((t) => t.seat), [0]);
    const bot = seededBot(5);
    const stats = newStats();
    const report = await run(bot, server.address, created.seatTokens[0].token, { stats });

    assert.equal(report.status, MatchStatus.FINISHED);
    assert.ok(verifySeed(report));
    assert.deepEqual(report.players.map((p) => p.bot), [BotKind.UNSPECIFIED, ...kinds]);
    assert.equal(report.result.standings.length, seats);
    const mine = report.seats[0];
    assert.equal(mine.decisions, bot.prompts);
    assert.equal(stats.prompts, bot.prompts);
    assert.ok(bot.prompts > 0);
    assert.equal(mine.timeouts, 0);
    assert.equal(mine.gaveUp, false);
    // A challenge may lose the race with the next play; nothing else is refused.
    assert.ok(bot.rejections.every((r) => r === ErrorReason.STALE_STATE), bot.rejections.join());
    for (let s = 1; s < seats; s++) assert.ok(report.seats[s].decisions > 0, `seat ${s} played`);
    const { replay } = await server.matches.getReplay({ matchId: created.matchId });
    const verdict = await server.matches.verifyReplay({ replay });
    assert.ok(verdict.valid && verdict.finished, JSON.stringify(verdict.error));
  });
}
