// End to end: the Node helper plays complete matches against the Rust reference bots that the
// server seats itself (BOT_KIND_HEURISTIC, BOT_KIND_SEARCH).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';

import { newStats, run, unary, verifySeed } from '../src/index.js';
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
      return prompt.legal_actions[Math.floor(random() * prompt.legal_actions.length)].index;
    },
    decideOptional: (prompt) => prompt.legal_actions.find((a) => a.action.kind === 'challenge')?.index ?? null,
    onRejected: (r) => bot.rejections.push(r.reason),
  };
  return bot;
}

const cases = [
  ['classic', 'PROFILE_CLASSIC', ['BOT_KIND_HEURISTIC', 'BOT_KIND_SEARCH']],
  ['romanian-32', 'PROFILE_ROMANIAN_32', ['BOT_KIND_SEARCH', 'BOT_KIND_HEURISTIC']],
  ['penalty-points', 'PROFILE_PENALTY_POINTS', ['BOT_KIND_SEARCH', 'BOT_KIND_HEURISTIC', 'BOT_KIND_SEARCH']],
];

for (const [name, profile, kinds] of cases) {
  test(`${name}: a Node seat plays a complete match against heuristic and search`, { timeout: 120_000 }, async () => {
    const seats = 1 + kinds.length;
    const created = await unary(server.matches, 'CreateMatch', {
      config: { profile, seats, calls: 'CALLS_MODE_CHALLENGE', max_rounds: 2 },
      seed: '11',
      bots: kinds.map((kind, i) => ({ seat: 1 + i, kind })),
    });
    assert.deepEqual(created.seat_tokens.map((t) => t.seat), [0]);
    const bot = seededBot(5);
    const stats = newStats();
    const report = await run(bot, server.address, created.seat_tokens[0].token, { stats });

    assert.equal(report.status, 'MATCH_STATUS_FINISHED');
    assert.ok(verifySeed(report));
    assert.deepEqual(report.players.map((p) => p.bot), ['BOT_KIND_UNSPECIFIED', ...kinds]);
    assert.equal(report.result.standings.length, seats);
    const mine = report.seats[0];
    assert.equal(mine.decisions, bot.prompts);
    assert.equal(stats.prompts, bot.prompts);
    assert.ok(bot.prompts > 0);
    assert.equal(mine.timeouts, 0);
    assert.equal(mine.gave_up, false);
    // A challenge may lose the race with the next play; nothing else is refused.
    assert.ok(bot.rejections.every((r) => r === 'ERROR_REASON_STALE_STATE'), bot.rejections.join());
    for (let s = 1; s < seats; s++) assert.ok(report.seats[s].decisions > 0, `seat ${s} played`);
    const { replay } = await unary(server.matches, 'GetReplay', { match_id: created.match_id });
    const verdict = await unary(server.matches, 'VerifyReplay', { replay });
    assert.ok(verdict.valid && verdict.finished, JSON.stringify(verdict.error));
  });
}
