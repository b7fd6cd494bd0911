// Type-checked by test/types.test.js: the browser entry (moduleResolution bundler with the
// "browser" condition picks src/browser.d.ts).
import { MatchStatus, connect, run, type MatchReport } from '@maumau/client';

export async function play(server: string, token: string): Promise<boolean> {
  const { play } = connect(server);
  void play;
  const report: MatchReport = await run((prompt) => prompt.legalActions[0].index, server, token);
  return report.status === MatchStatus.FINISHED;
}
