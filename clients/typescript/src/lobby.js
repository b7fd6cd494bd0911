// Joining a ladder: register a version (`register`) and hold its lobby (`holdLobby`).
//
//   import { holdLobby, register } from '@maumau/client';
//   const keys = await register('127.0.0.1:50051', { owner: 'me', bot: 'first-legal', version: '1.0' });
//   const drain = new AbortController();       // abort it (e.g. on SIGINT) to drain and return
//   await holdLobby((prompt) => prompt.legalActions[0].index, '127.0.0.1:50051', keys.versionKey,
//     { signal: drain.signal });
//
// holdLobby opens LadderService.Lobby with the version key, plays every invitation with `run`
// (several at once, up to maxMatches), reports what happens to onEvent (by default as lines on the
// console such as "waiting: no opponent online (1 bots online)"), reconnects after a dropped lobby
// with a growing delay, and when the signal aborts sends LobbyDrain, lets the running matches
// finish and resolves.

import { Code, ConnectError, createClient } from '@connectrpc/connect';

import { bearer } from './common.js';
import { LadderService, VersionStatus, WaitingReason } from './gen/maumau/v1/ladder_pb.js';
import { PlayService } from './gen/maumau/v1/play_pb.js';
import { openTransport, run } from './node.js';

/**
 * The lobby a tournament launched this bot for (`--entrant 'name=lobby:COMMAND'`), from
 * $MAUMAU_LOBBY_ADDR (host:port, http://host:port or unix:/path) and $MAUMAU_LOBBY_KEY: `{ address, key }`, or null when either
 * is unset. A ladder bot that tries this first plays tournaments unchanged: the tournament invites
 * it to each of its matches and, when it is over, closes the lobby, which ends holdLobby as a
 * drain does.
 */
export function lobbyFromEnv(env = process.env) {
  const address = (env.MAUMAU_LOBBY_ADDR ?? '').trim().replace(/\/+$/, '');
  const key = (env.MAUMAU_LOBBY_KEY ?? '').trim();
  return address && key ? { address, key } : null;
}

/** Every rule profile, by name. */
export const ALL_PROFILES = Object.freeze(['classic', 'penalty-points', 'brazilian', 'romanian-32']);

// Refusals after which opening the lobby again cannot help.
const FATAL_CODES = new Set([
  Code.Unauthenticated,
  Code.PermissionDenied,
  Code.InvalidArgument,
  Code.NotFound,
  Code.FailedPrecondition,
  Code.AlreadyExists,
  Code.Aborted, // superseded: a newer lobby of the same version took over
]);

/** The ladder refused the lobby or a registration for good (bad key, superseded, a taken name). */
export class LobbyError extends Error {
  constructor(message, { reason = '', code = undefined, cause = undefined } = {}) {
    super(message, { cause });
    this.name = 'LobbyError';
    this.reason = reason; // the maumau-ladder-reason trailer, e.g. LADDER_ERROR_REASON_BAD_KEY
    this.code = code;
  }
}

function refused(what, e) {
  const err = ConnectError.from(e);
  const reason = err.metadata.get('maumau-ladder-reason') ?? '';
  return new LobbyError(`${what}: ${err.message}`, { reason, code: err.code, cause: e });
}

/**
 * Registers an owner (or uses `ownerKey`), a bot (or adds to `botId`) and a version; resolves
 * with `{ ownerKey, botId, versionId, versionKey }` (the keys are shown only once: keep them).
 */
export async function register(address, { owner = '', bot = '', version = '1', ownerKey = '', botId = 0n, invitationCode = '' } = {}) {
  const { transport, close } = openTransport(address);
  const client = createClient(LadderService, transport);
  try {
    let ownerKeyNow = ownerKey;
    if (!ownerKeyNow) ownerKeyNow = (await client.registerOwner({ name: owner, invitationCode })).ownerKey;
    const auth = bearer(ownerKeyNow);
    let botIdNow = BigInt(botId);
    if (!botIdNow) botIdNow = (await client.registerBot({ name: bot }, auth)).botId;
    const added = await client.addVersion({ botId: botIdNow, label: version }, auth);
    return { ownerKey: ownerKeyNow, botId: botIdNow, versionId: added.versionId, versionKey: added.versionKey };
  } catch (e) {
    throw refused('registration refused', e);
  } finally {
    close();
  }
}

const lower = (name) => String(name).toLowerCase();

/** One line for a lobby event (what the default onEvent prints). */
export function describe(kind, message) {
  switch (kind) {
    case 'waiting': {
      const detail = message.detail || lower(WaitingReason[message.reason]);
      return `waiting: ${detail} (${message.botsOnline} bots online)`;
    }
    case 'welcome': {
      const season = message.season ? `season ${message.season}` : 'no season open';
      return `lobby open: version ${message.versionId} of bot ${message.botId}, ${season}, status ${lower(VersionStatus[message.status])}`;
    }
    case 'invitation': {
      const how = message.validation ? 'validation' : message.rated ? 'rated' : 'unrated';
      return `invitation: match ${message.ladderMatchId} (${message.matchId}), ${message.profile} with ${message.seats} seats, seat ${message.seat}, ${how}`;
    }
    case 'matchEnded': {
      let text = `match ${message.ladderMatchId} (${message.matchId}) `;
      text += message.finished ? `finished: placing ${message.placing}` : 'aborted';
      if (message.rated && message.rating) {
        const r = message.rating;
        const where = message.profile ? ` in ${message.profile}` : '';
        text += `, rating${where} μ ${r.mu.toFixed(2)} σ ${r.sigma.toFixed(2)} (score ${r.score.toFixed(2)})`;
      }
      return text + (message.reason ? `: ${message.reason}` : '');
    }
    case 'notice':
      return `status: ${lower(VersionStatus[message.status])}` + (message.reason ? ` (${message.reason})` : '');
    case 'dropped':
      return `lobby dropped (${message?.message ?? message}); reconnecting`;
    case 'played': {
      const { invitation, error } = message;
      return `match ${invitation.ladderMatchId}: ` + (error ? `failed: ${error.message}` : 'played');
    }
    default:
      return kind;
  }
}

/** What holdLobby saw. */
export function newLobbyStats() {
  return { lobbies: 0, invitations: 0, ended: [], waiting: [], failures: [], drained: false };
}

function target(nodeAddress, address) {
  if (!nodeAddress) return address;
  return nodeAddress.replace(/\/$/, '');
}

function pause(ms, signal) {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** The request side of the Lobby stream: Hello now, Drain when asked. */
function lobbyRequests(hello) {
  let drain;
  const drained = new Promise((resolve) => (drain = resolve));
  let stop;
  const stopped = new Promise((resolve) => (stop = resolve));
  return {
    drain,
    stop,
    async *[Symbol.asyncIterator]() {
      yield { kind: { case: 'hello', value: hello } };
      if ((await Promise.race([drained.then(() => 'drain'), stopped])) === 'drain') {
        yield { kind: { case: 'drain', value: {} } };
        await stopped;
      }
    },
  };
}

/**
 * Holds the version's lobby and plays its invitations with `bot` (a decide function or a Bot, as
 * `run` takes; one bot plays every match) until `options.signal` aborts, then drains and resolves
 * with the stats once every running match is over. Rejects with a LobbyError when the ladder
 * refuses the lobby for good (a bad key, a newer lobby of the same version).
 *
 * onEvent(kind, message) hears 'welcome', 'waiting' (a LobbyWaiting), 'invitation',
 * 'matchEnded', 'notice', 'played' ({ invitation, error }), 'dropped' (the error), 'draining'
 * and 'drained'; describe(kind, message) turns each into a line.
 */
export async function holdLobby(bot, address, key, options = {}) {
  const {
    maxMatches = 1,
    profiles = ALL_PROFILES,
    seats = [2, 3, 4],
    signal = undefined,
    onEvent = (kind, message) => console.log(describe(kind, message)),
    maxBackoffMs = 30_000,
    firstBackoffMs = 250,
    stats = newLobbyStats(),
    runOptions = {},
  } = options;
  const { transport, close } = openTransport(address);
  const client = createClient(LadderService, transport);
  const hello = { versionKey: key, maxMatches, profiles: [...profiles], seats: [...seats] };
  const running = new Set();
  // Gives up the seat of a match whose player failed, so that a match it never joined is aborted
  // now rather than at its join deadline (the server leaves a match that started alone). A
  // tournament's game server is no ladder (WithdrawSeat is unimplemented there): the seat is
  // resigned with its token instead (PlayService.Resign), so its match need not wait for its
  // clock. Best effort: a failed call leaves the deadline (or the seat's clock) to do it.
  const withdraw = async (invitation) => {
    const where = target(invitation.nodeAddress, address);
    const node = where === address ? null : openTransport(where);
    const via = node ? node.transport : transport;
    try {
      await createClient(LadderService, via).withdrawSeat(
        { versionKey: key, ladderMatchId: invitation.ladderMatchId, seat: invitation.seat },
        { timeoutMs: 10_000 },
      );
    } catch (e) {
      if (ConnectError.from(e).code === Code.Unimplemented) {
        await createClient(PlayService, via)
          .resign({ token: invitation.seatToken }, { timeoutMs: 10_000 })
          .catch(() => {});
      }
      // otherwise the join deadline aborts the match instead
    } finally {
      node?.close();
    }
  };
  let backoff = firstBackoffMs;
  let refusal = null;
  try {
    while (!signal?.aborted) {
      const requests = lobbyRequests(hello);
      const call = new AbortController();
      stats.lobbies += 1;
      let asked = false;
      const drain = () => {
        asked = true;
        onEvent('draining', null);
        requests.drain();
      };
      signal?.addEventListener('abort', drain, { once: true });
      let error = new Error('the server closed the lobby');
      try {
        for await (const response of client.lobby(requests, { signal: call.signal })) {
          const { case: kind, value: message } = response.kind;
          if (kind === 'welcome') backoff = firstBackoffMs;
          else if (kind === 'waiting') stats.waiting.push(message);
          else if (kind === 'matchEnded') stats.ended.push(message);
          else if (kind === 'drained') {
            // Asked for, or the lobby's last word (a tournament is over): done.
            if (asked || message.closed) {
              stats.drained = true; // reported last, once the matches are done
            } else {
              error = new Error('the server is stopping'); // it drained on its own: come back later
            }
            break;
          }
          if (!kind) continue;
          onEvent(kind, message);
          if (kind === 'invitation') {
            stats.invitations += 1;
            const game = run(bot, target(message.nodeAddress, address), message.seatToken, runOptions)
              .then(
                () => onEvent('played', { invitation: message, error: null }),
                async (e) => {
                  stats.failures.push({ invitation: message, error: e });
                  await withdraw(message);
                  onEvent('played', { invitation: message, error: e });
                },
              )
              .finally(() => running.delete(game));
            running.add(game);
          }
        }
      } catch (e) {
        if (FATAL_CODES.has(ConnectError.from(e).code)) {
          refusal = refused('the ladder refused the lobby', e);
          break;
        }
        error = e;
      } finally {
        signal?.removeEventListener('abort', drain);
        requests.stop();
        call.abort();
      }
      if (stats.drained || signal?.aborted) break;
      onEvent('dropped', error);
      await pause(backoff, signal);
      backoff = Math.min(backoff * 2, maxBackoffMs);
    }
    await Promise.allSettled([...running]);
  } finally {
    close();
  }
  if (refusal) throw refusal;
  if (stats.drained) onEvent('drained', null);
  return stats;
}
