// A ladder bot: registers a version (or reads its key), holds its lobby and plays every
// invitation with the policy of random-bot.js (random-policy.js), until Ctrl-C or SIGTERM drains it.
//
//   node examples/ladder-bot.js --ladder 127.0.0.1:50051 --register OWNER,BOT,VERSION
//   node examples/ladder-bot.js --ladder 127.0.0.1:50051 --key-file ~/.maumau-key
//
// The key comes from --key, $MAUMAU_LADDER_KEY or --key-file; --register prints a new one (shown
// once: keep it). Each event is printed as a line ("invitation: ...", "match ... finished:
// placing 1, rating ...", "waiting: ... (N bots online)").
//
// Launched by a tournament (`--entrant 'js=lobby:node examples/ladder-bot.js'`) it finds its lobby
// in $MAUMAU_LOBBY_ADDR and $MAUMAU_LOBBY_KEY and ends when the tournament closes it.
import fs from 'node:fs';
import { parseArgs } from 'node:util';

import { LobbyError, holdLobby, lobbyFromEnv, register } from '@maumau/client';
import { decide } from './random-policy.js';

const { values } = parseArgs({
  options: {
    ladder: { type: 'string' },
    key: { type: 'string', default: process.env.MAUMAU_LADDER_KEY },
    'key-file': { type: 'string' },
    register: { type: 'string' },
    'max-matches': { type: 'string', default: '1' },
    profiles: { type: 'string', default: 'classic,penalty-points,brazilian,romanian-32' },
    seats: { type: 'string', default: '2,3,4' },
  },
});

let key = values.key;
const tournament = lobbyFromEnv();
if (tournament && !values.ladder && !values.key && !values['key-file'] && !values.register) {
  values.ladder = tournament.address;
  key = tournament.key;
}
values.ladder ??= process.env.MAUMAU_ADDR ?? '127.0.0.1:50051';
if (values.register) {
  const [owner, bot, version] = values.register.split(',');
  const keys = await register(values.ladder, { owner, bot, version });
  console.log(`owner key (shown once, keep it): ${keys.ownerKey}`);
  console.log(`version key (shown once, keep it): ${keys.versionKey}`);
  key = keys.versionKey;
} else if (values['key-file']) {
  key = fs.readFileSync(values['key-file'], 'utf8').trim();
}
if (!key) {
  console.error('usage: node examples/ladder-bot.js --ladder HOST:PORT (--key KEY | --key-file PATH | --register OWNER,BOT,VERSION)');
  process.exit(2);
}

const drain = new AbortController();
process.on('SIGINT', () => drain.abort());
process.on('SIGTERM', () => drain.abort());

try {
  const stats = await holdLobby(decide, values.ladder, key, {
    maxMatches: Number(values['max-matches']),
    profiles: values.profiles.split(','),
    seats: values.seats.split(',').map(Number),
    signal: drain.signal,
  });
  console.log(`${stats.ended.length} matches ended`);
} catch (e) {
  if (!(e instanceof LobbyError)) throw e;
  console.error(`ladder-bot: ${e.message}`);
  process.exit(1);
}
