// Type-checked by test/types.test.js (tsc --noEmit --strict): the public API as a TypeScript bot
// author uses it, from the Node entry.
import {
  BotKind, MatchStatus, Profile, connect, create, holdLobby, newStats, run, verifySeed,
  type Bot, type DecisionPrompt, type MatchReport,
} from '@maumau/client';
import { CreateMatchRequestSchema } from '@maumau/client';

const bot: Bot = {
  name: 'typed',
  decide: (prompt: DecisionPrompt) => prompt.legalActions[0].index,
  decideOptional: (prompt) => prompt.legalActions.find((a) => a.action?.kind.case === 'challenge')?.index ?? null,
  onEvent: (event) => {
    const n: bigint = event.number;
    void n;
  },
};

export async function play(address: string): Promise<MatchReport> {
  const { matches, close } = connect(address);
  const request = create(CreateMatchRequestSchema, { config: { profile: Profile.CLASSIC, seats: 2 }, bots: [{ seat: 1, kind: BotKind.RANDOM }] });
  const created = await matches.createMatch(request);
  close();
  const stats = newStats();
  const report = await run(bot, address, created.seatTokens[0].token, { stats, batched: false });
  const finished: boolean = report.status === MatchStatus.FINISHED && verifySeed(report);
  void finished;
  await holdLobby((p) => p.legalActions[0].index, address, 'mmv_key', { onEvent: (kind, message) => void [kind, message] });
  return report;
}
