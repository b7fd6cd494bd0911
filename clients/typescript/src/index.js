// Node client of Mau Mau Arena: the gRPC services, loaded at run time from the same proto files
// as the Rust server (no generated code, no protoc), a thin bot helper, and (src/lobby.js) the
// ladder's registration and lobby helper.
//
//   import { run } from '@maumau/client';
//   const report = await run((prompt) => prompt.legal_actions[0].index, '127.0.0.1:50051', token);
//
// Messages are plain objects with the proto field names (keepCase): `prompt.legal_actions`,
// `prompt.state_id`. 64-bit integers (state ids, event numbers, seeds) are decimal strings,
// enums are their names ('MATCH_STATUS_FINISHED'), bytes are Buffers, and every oneof has a
// property naming the field that is set (`message.kind === 'prompt'`).

import { createHash } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import grpc from '@grpc/grpc-js';
import protoLoader from '@grpc/proto-loader';

/** The repository's proto root (override with MAUMAU_PROTO_DIR or the protoDir arguments). */
export const PROTO_DIR =
  process.env.MAUMAU_PROTO_DIR ??
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'proto');

/** The files that define the services; they import the rest. */
export const PROTO_FILES = ['maumau/v1/match.proto', 'maumau/v1/play.proto', 'maumau/v1/ladder.proto'];

/** How proto-loader maps messages to JavaScript objects (see the top of this file). */
export const LOADER_OPTIONS = Object.freeze({
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});

const loaded = new Map();

/**
 * Loads the maumau.v1 package from the proto files: `{ MatchService, PlayService, ... }`, each
 * service a client constructor taking (address, credentials).
 */
export function loadPackage(protoDir = PROTO_DIR) {
  let pkg = loaded.get(protoDir);
  if (!pkg) {
    const definition = protoLoader.loadSync(PROTO_FILES, { ...LOADER_OPTIONS, includeDirs: [protoDir] });
    pkg = grpc.loadPackageDefinition(definition).maumau.v1;
    loaded.set(protoDir, pkg);
  }
  return pkg;
}

/** Clients of both services on one insecure channel to `address` (host:port). */
export function connect(address, { protoDir = PROTO_DIR, channelOptions = {} } = {}) {
  const pkg = loadPackage(protoDir);
  const credentials = grpc.credentials.createInsecure();
  const matches = new pkg.MatchService(address, credentials, channelOptions);
  const play = new pkg.PlayService(address, credentials, { ...channelOptions, channelOverride: matches.getChannel() });
  return { matches, play, close: () => matches.close() };
}

/** Calls a unary method and resolves with its answer: `await unary(matches, 'CreateMatch', req)`. */
export function unary(client, method, request, { timeoutMs = 10_000, metadata = new grpc.Metadata() } = {}) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata, { deadline: Date.now() + timeoutMs }, (err, response) =>
      err ? reject(err) : resolve(response),
    );
  });
}

/**
 * SHA-256(salt ‖ seed as 8 big-endian bytes), as sent in Welcome and CreateMatchResponse. `salt`
 * is the 16 bytes revealed with the seed (`MatchReport.seed_salt`); it is empty only in records
 * written before salted commitments.
 */
export function seedCommitment(seed, salt = Buffer.alloc(0)) {
  const bytes = Buffer.alloc(8);
  bytes.writeBigUInt64BE(BigInt(seed));
  return createHash('sha256').update(Buffer.from(salt)).update(bytes).digest();
}

/**
 * True when the report's revealed seed and salt match the commitment: the one you kept from
 * Welcome (pass it), else the one the report repeats.
 */
export function verifySeed(report, commitment = report.seed_commitment) {
  return seedCommitment(report.seed, report.seed_salt ?? Buffer.alloc(0)).equals(Buffer.from(commitment));
}

/** The stream was refused for good (bad token, superseded, ...), or the server stayed away. */
export class MatchError extends Error {
  constructor(message, { reason = '', code = undefined, cause = undefined } = {}) {
    super(message, { cause });
    this.name = 'MatchError';
    this.reason = reason;
    this.code = code;
  }
}

const FATAL_REASONS = new Set([
  'ERROR_REASON_BAD_TOKEN',
  'ERROR_REASON_NOT_SEATED',
  'ERROR_REASON_NOT_JOINED',
  'ERROR_REASON_ALREADY_JOINED',
  'ERROR_REASON_SUPERSEDED',
  'ERROR_REASON_PERMISSION_DENIED',
  'ERROR_REASON_MATCH_NOT_FOUND',
  'ERROR_REASON_MALFORMED_MESSAGE',
]);
const S = grpc.status;
const RETRYABLE_CODES = new Set([
  S.UNAVAILABLE,
  S.CANCELLED,
  S.UNKNOWN,
  S.INTERNAL,
  S.DEADLINE_EXCEEDED,
  S.ABORTED,
  S.RESOURCE_EXHAUSTED,
]);

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Counters of what happened on the wire during `run` (pass one as `options.stats`). */
export function newStats() {
  return {
    streams: 0,
    resumedFrom: [],
    events: 0,
    duplicates: 0,
    gaps: 0,
    prompts: 0,
    resent: 0,
    rejected: 0,
    batches: 0,
    accepted: 0,
    lastEventNumber: 0,
  };
}

class Session {
  constructor(bot, token, clientName, stats, batched = true) {
    this.bot = bot;
    this.token = token;
    this.clientName = clientName;
    this.batched = batched;
    this.stats = stats;
    this.lastEvent = 0;
    this.joined = false;
    this.matchId = '';
    this.requestId = 0;
    this.pending = null; // the last required prompt, until its answer is acknowledged
    this.pendingIndex = null;
    this.pendingRequest = 0;
    this.answered = new Set(); // state ids answered on the current stream
    this.fallbackUsed = new Set();
    this.resyncing = false;
    this.call = null;
  }

  newStream(call) {
    this.call = call;
    this.answered = new Set();
    this.resyncing = false;
  }

  send(request) {
    const call = this.call;
    if (call && !call.destroyed && call.writable) call.write(request);
  }

  submit(stateId, index) {
    this.requestId += 1;
    this.send({ action: { state_id: String(stateId), action_index: index, request_id: String(this.requestId) } });
    return this.requestId;
  }

  answer(stateId, index) {
    this.pendingIndex = index;
    this.pendingRequest = this.submit(stateId, index);
  }

  joinRequest() {
    const join = { token: this.token, client_name: this.clientName };
    join.event_delivery = this.batched ? 'EVENT_DELIVERY_WITH_PROMPT' : 'EVENT_DELIVERY_PER_STEP';
    if (this.joined) {
      join.resume = { last_event_number: String(this.lastEvent) };
      this.stats.resumedFrom.push(this.lastEvent);
    }
    return { join };
  }

  /** Handles one server message; resolves with the report when the match is over. */
  async handle(msg) {
    if (msg.kind === 'batch') {
      // EVENT_DELIVERY_WITH_PROMPT or _PER_STEP: the held answers, the events, then the prompt,
      // each handled (and shown to the bot) as if it had come on its own.
      this.stats.batches += 1;
      const { accepted = [], events = [], prompt = null } = msg.batch;
      for (const a of accepted) await this.handle({ kind: 'accepted', accepted: a });
      for (const e of events) await this.handle({ kind: 'event', event: e });
      if (prompt) await this.handle({ kind: 'prompt', prompt });
      return null;
    }
    this.bot.onMessage?.(msg);
    switch (msg.kind) {
      case 'welcome': {
        const resumed = this.joined;
        this.joined = true;
        this.resyncing = false;
        this.matchId = msg.welcome.match_id;
        this.bot.onWelcome?.(msg.welcome);
        if (resumed && this.pending && this.pendingIndex !== null) {
          // The server does not always repeat a pending prompt after a resume: answer it again.
          // If the first answer got through, this one is refused as stale.
          this.answered.add(this.pending.state_id);
          this.stats.resent += 1;
          this.answer(this.pending.state_id, this.pendingIndex);
        }
        break;
      }
      case 'snapshot':
        this.lastEvent = Math.max(this.lastEvent, Number(msg.snapshot.last_event_number));
        this.stats.lastEventNumber = this.lastEvent;
        this.bot.onSnapshot?.(msg.snapshot);
        break;
      case 'event': {
        const n = Number(msg.event.number);
        if (this.resyncing) break; // wait for the Welcome that answers our Resume
        if (n <= this.lastEvent) {
          this.stats.duplicates += 1;
        } else if (n > this.lastEvent + 1) {
          this.stats.gaps += 1;
          this.resyncing = true;
          this.send({ resume: { last_event_number: String(this.lastEvent) } });
        } else {
          this.lastEvent = n;
          this.stats.lastEventNumber = n;
          this.stats.events += 1;
          this.bot.onEvent?.(msg.event);
        }
        break;
      }
      case 'prompt':
        await this.prompt(msg.prompt);
        break;
      case 'accepted':
        this.stats.accepted += 1;
        if (this.pending && Number(msg.accepted.request_id) === this.pendingRequest) {
          this.pending = null;
          this.pendingIndex = null;
        }
        break;
      case 'rejected':
        await this.rejected(msg.rejected);
        break;
      case 'finished':
        this.bot.onFinished?.(msg.finished.report);
        return msg.finished.report;
      default:
        break;
    }
    return null;
  }

  async prompt(prompt) {
    const legal = new Set(prompt.legal_actions.map((a) => a.index));
    if (!prompt.required) {
      const choice = this.bot.decideOptional ? await this.bot.decideOptional(prompt) : null;
      if (choice !== null && choice !== undefined) {
        if (!legal.has(choice)) throw new RangeError(`decideOptional returned ${choice}, not a legal index`);
        this.submit(0, choice); // challenges and announces may race: state 0
      }
      return;
    }
    if (this.answered.has(prompt.state_id)) return; // answered on this stream already
    const choice = await this.bot.decide(prompt);
    if (!legal.has(choice)) {
      throw new RangeError(`decide returned ${choice}, not one of the legal indices ${[...legal].join(', ')}`);
    }
    this.pending = prompt;
    this.answered.add(prompt.state_id);
    this.stats.prompts += 1;
    this.answer(prompt.state_id, choice);
  }

  async rejected(rejected) {
    this.stats.rejected += 1;
    this.bot.onRejected?.(rejected);
    const pending = this.pending;
    if (!pending || Number(rejected.request_id) !== this.pendingRequest) return;
    const reason = rejected.reason;
    if (reason === 'ERROR_REASON_STALE_STATE' || reason === 'ERROR_REASON_MATCH_OVER') {
      this.pending = null; // the match moved on; a new prompt follows if one is due
      this.pendingIndex = null;
    } else if (reason === 'ERROR_REASON_RATE_LIMITED') {
      await sleep(50);
      this.answer(pending.state_id, this.pendingIndex);
    } else if (!this.fallbackUsed.has(pending.state_id)) {
      // The engine refused a listed action: play the first legal one so the match goes on.
      this.fallbackUsed.add(pending.state_id);
      this.answer(pending.state_id, pending.legal_actions[0].index);
    }
  }
}

function waitForReady(client, timeoutMs) {
  return new Promise((resolve, reject) => {
    client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve()));
  });
}

/**
 * Plays one seat to the end of its match and resolves with the final MatchReport.
 *
 * `bot` is a function `(prompt) => index` (may be async), or an object with `decide(prompt)`
 * and optional hooks: `decideOptional(prompt)`, `onMessage`, `onWelcome`, `onSnapshot`,
 * `onEvent` (each event exactly once, in order), `onRejected`, `onDisconnect(error, attempt)`,
 * `onFinished`, and `name` (Join.client_name).
 *
 * `batched: true` (the default) joins with EVENT_DELIVERY_WITH_PROMPT: the seat's events and the
 * answers to its actions come in one EventBatch with its next prompt (one message per decision
 * instead of one per event). `batched: false` opts out and joins with EVENT_DELIVERY_PER_STEP:
 * events as they happen, each step's answer, events and prompt in one EventBatch, for a bot that
 * must see other seats' plays before its own turn. The bot sees the same messages in the same
 * order either way; batched, it sees them later (an action's ActionAccepted comes with the
 * seat's next prompt).
 *
 * A dropped stream is reopened with Join{resume{last_event_number}}, up to `maxReconnects`
 * times in a row without hearing from the server; refusals a new stream cannot fix reject the
 * promise with a MatchError.
 */
export async function run(bot, address, token, options = {}) {
  const b = typeof bot === 'function' ? { decide: bot } : bot;
  const {
    clientName = b.name || 'maumau-client-js',
    maxReconnects = 10,
    reconnectDelayMs = 200,
    connectTimeoutMs = 10_000,
    stats = newStats(),
    protoDir = PROTO_DIR,
    batched = true,
  } = options;
  const pkg = loadPackage(protoDir);
  const client = options.client ?? new pkg.PlayService(address, grpc.credentials.createInsecure());
  const session = new Session(b, token, clientName, stats, batched);
  let failures = 0;
  try {
    for (;;) {
      let error = null;
      let heard = false;
      try {
        await waitForReady(client, connectTimeoutMs);
      } catch (e) {
        error = e;
      }
      if (!error) {
        const call = client.Play();
        call.on('error', () => {}); // surfaced by the iterator below
        session.newStream(call);
        call.write(session.joinRequest());
        stats.streams += 1;
        try {
          for await (const response of call) {
            heard = true;
            const report = await session.handle(response.message);
            if (report) return report;
          }
          error = new Error('the server closed the stream before MatchFinished');
        } catch (e) {
          if (e instanceof RangeError) throw e;
          const reason = e.metadata?.get?.('maumau-reason')?.[0] ?? '';
          if (FATAL_REASONS.has(reason) || !RETRYABLE_CODES.has(e.code)) {
            throw new MatchError(`${e.message}`, { reason: String(reason), code: e.code, cause: e });
          }
          error = e;
        } finally {
          session.call = null;
          call.end();
          call.cancel();
        }
      }
      failures = heard ? 0 : failures + 1;
      if (failures > maxReconnects) {
        throw new MatchError(`no answer from ${address} after ${failures} attempts: ${error?.message}`, { cause: error });
      }
      b.onDisconnect?.(error, failures);
      await sleep(Math.min(reconnectDelayMs * 2 ** Math.max(failures - 1, 0), 5000));
    }
  } finally {
    if (!options.client) client.close();
  }
}

export { ALL_PROFILES, LobbyError, describe, holdLobby, lobbyFromEnv, newLobbyStats, register } from './lobby.js';
