// A bot that plays a random legal action. Usage:
//
//   node examples/random-bot.js --address 127.0.0.1:50051 --token SEAT_TOKEN
//
// The seat token comes from MatchService.CreateMatch (one per remote seat).
import { parseArgs } from 'node:util';

import { run, verifySeed } from '../src/index.js';

const { values } = parseArgs({
  options: {
    address: { type: 'string', default: '127.0.0.1:50051' },
    token: { type: 'string' },
  },
});
if (!values.token) {
  console.error('usage: node examples/random-bot.js --address HOST:PORT --token SEAT_TOKEN');
  process.exit(2);
}

// Every required prompt lists the legal actions, each with its dense index.
const randomBot = {
  name: 'js-random',
  decide: (prompt) => prompt.legal_actions[Math.floor(Math.random() * prompt.legal_actions.length)].index,
  onDisconnect: (error) => console.error(`connection lost (${error?.message}); resuming`),
};

const report = await run(randomBot, values.address, values.token);

console.log('status:', report.status);
for (const s of report.result.standings) {
  console.log(`seat ${s.seat}: placing ${s.placing}, total ${s.total}, rounds won ${s.rounds_won}`);
}
console.log(`seed ${report.seed} matches its commitment: ${verifySeed(report)}`);
