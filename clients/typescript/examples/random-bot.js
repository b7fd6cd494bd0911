// A bot that plays a random legal action, but names the suit it holds most when it plays a jack.
//
//   node examples/random-bot.js --address 127.0.0.1:50051 --token SEAT_TOKEN
//
// The address may be host:port, http://host:port or unix:/path/to.sock.
//
// --address and --token default to $MAUMAU_ADDR and $MAUMAU_TOKEN (what `maumau check-bot` sets).
// The seat token comes from MatchService.CreateMatch (one per remote seat).
import { parseArgs } from 'node:util';

import { MatchStatus, run, verifySeed } from '@maumau/client';
import { decide } from './random-policy.js';

const { values } = parseArgs({
  options: {
    address: { type: 'string', default: process.env.MAUMAU_ADDR ?? '127.0.0.1:50051' },
    token: { type: 'string', default: process.env.MAUMAU_TOKEN },
  },
});
if (!values.token) {
  console.error('usage: node examples/random-bot.js --address HOST:PORT --token SEAT_TOKEN');
  process.exit(2);
}

// Events come with each prompt (one message per decision); { batched: false } as a fourth
// argument gets them as they happen, one message per step of the match.
const report = await run({ name: 'js-random', decide }, values.address, values.token);

console.log('status:', MatchStatus[report.status]);
for (const s of report.result?.standings ?? []) {
  console.log(`seat ${s.seat}: placing ${s.placing}, total ${s.total}, rounds won ${s.roundsWon}`);
}
console.log(`seed ${report.seed} matches its commitment: ${verifySeed(report)}`);
