// What the browser and Node entries of @maumau/client share: the generated maumau.v1 types and
// service descriptors (src/gen, from proto/ by `npm run generate`), `createClients(transport)`,
// the seed check, and the bot helper's session, which plays a seat over either
//
//   - PlayService.Play, one bidirectional stream (Node: gRPC over HTTP/2), or
//   - PlayService.Watch for the seat's feed and SubmitAction to act (any transport; the only way
//     a browser can play, since grpc-web streams from the server only).
//
// Messages are protobuf-es messages: camelCase fields (`prompt.legalActions`, `prompt.stateId`),
// uint64 and int64 as bigint, enums as numbers (compare with the generated enums:
// `report.status === MatchStatus.FINISHED`; `MatchStatus[n]` names one), bytes as Uint8Array,
// and a oneof as `{ case, value }` (`message.kind.case === 'prompt'`).

import { create } from '@bufbuild/protobuf';
import { Code, ConnectError, createClient } from '@connectrpc/connect';

import { ErrorReason } from './gen/maumau/v1/errors_pb.js';
import { LadderService } from './gen/maumau/v1/ladder_pb.js';
import { MatchService } from './gen/maumau/v1/match_pb.js';
import { EventDelivery, PlayService, ServerMessageSchema } from './gen/maumau/v1/play_pb.js';
import { sha256 } from './sha256.js';

export * from './gen/maumau/v1/cards_pb.js';
export * from './gen/maumau/v1/errors_pb.js';
export * from './gen/maumau/v1/events_pb.js';
export * from './gen/maumau/v1/game_pb.js';
export * from './gen/maumau/v1/ladder_pb.js';
export * from './gen/maumau/v1/match_pb.js';
export * from './gen/maumau/v1/play_pb.js';
export * from './gen/maumau/v1/record_pb.js';
export * from './gen/maumau/v1/rules_pb.js';
export { create } from '@bufbuild/protobuf';
export { Code, ConnectError } from '@connectrpc/connect';

/** Clients of the three services on one transport: `{ matches, play, ladder }`. */
export function createClients(transport) {
  return {
    matches: createClient(MatchService, transport),
    play: createClient(PlayService, transport),
    ladder: createClient(LadderService, transport),
  };
}

/** Call options that send `token` as `authorization: Bearer TOKEN` (not in a URL, not in a body). */
export function bearer(token, options = {}) {
  return { ...options, headers: { ...options.headers, authorization: `Bearer ${token}` } };
}

/**
 * SHA-256(salt ‖ seed as 8 big-endian bytes), as sent in Welcome and CreateMatchResponse (a
 * Uint8Array). `salt` is the 16 bytes revealed with the seed (`MatchReport.seedSalt`); it is empty
 * only in records written before salted commitments.
 */
export function seedCommitment(seed, salt = new Uint8Array(0)) {
  const bytes = new Uint8Array(salt.length + 8);
  bytes.set(salt);
  new DataView(bytes.buffer).setBigUint64(salt.length, BigInt(seed));
  return sha256(bytes);
}

/** True when two byte arrays hold the same bytes. */
export function equalBytes(a, b) {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/**
 * True when the report's revealed seed and salt match the commitment: the one you kept from
 * Welcome (pass it), else the one the report repeats.
 */
export function verifySeed(report, commitment = report.seedCommitment) {
  return equalBytes(seedCommitment(report.seed, report.seedSalt), commitment);
}

/** The stream was refused for good (bad token, superseded, ...), or the server stayed away. */
export class MatchError extends Error {
  constructor(message, { reason = '', code = undefined, cause = undefined } = {}) {
    super(message, { cause });
    this.name = 'MatchError';
    /** The maumau-reason trailer, e.g. 'ERROR_REASON_BAD_TOKEN' ('' when there was none). */
    this.reason = reason;
    /** The gRPC status code (the Code enum of @connectrpc/connect). */
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
const RETRYABLE_CODES = new Set([
  Code.Unavailable,
  Code.Canceled,
  Code.Unknown,
  Code.Internal,
  Code.DeadlineExceeded,
  Code.Aborted,
  Code.ResourceExhausted,
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

/** A gap on a Watch stream: it cannot take a Resume, so it is reopened from the last event. */
class Resync extends Error {}

/** What the bot's own code threw: it fails the match (reconnecting would only call it again). */
class BotFailed extends Error {}

/**
 * The bot with every method wrapped so that what it throws (or rejects with) becomes a BotFailed:
 * told apart from the connection's errors, which are retried.
 */
function guarded(bot) {
  const failed = (e) => new BotFailed(`the bot failed: ${e?.message ?? e}`, { cause: e });
  return new Proxy(bot, {
    get(target, prop) {
      // `this` is the bot itself, for getters and methods alike (its private fields work).
      const value = Reflect.get(target, prop);
      if (typeof value !== 'function') return value;
      return (...args) => {
        let result;
        try {
          result = value.apply(target, args);
        } catch (e) {
          throw failed(e);
        }
        return typeof result?.then === 'function'
          ? result.then(undefined, (e) => {
            throw failed(e);
          })
          : result;
      };
    },
  });
}

/** The request side of a Play stream: an async iterable that `push` feeds until `close`. */
function requestQueue() {
  const queue = [];
  let wake = null;
  let closed = false;
  return {
    push(request) {
      if (closed) return;
      queue.push(request);
      wake?.();
    },
    close() {
      closed = true;
      wake?.();
    },
    async *[Symbol.asyncIterator]() {
      for (;;) {
        while (queue.length > 0) yield queue.shift();
        if (closed) return;
        await new Promise((resolve) => (wake = resolve));
        wake = null;
      }
    },
  };
}

const message = (kind, value) => create(ServerMessageSchema, { kind: { case: kind, value } });

class Session {
  constructor(bot, token, clientName, stats, { batched, watch, client, callOptions, join }) {
    this.bot = bot;
    this.token = token;
    this.clientName = clientName;
    this.batched = batched;
    this.watch = watch; // Watch + SubmitAction instead of Play
    this.client = client;
    this.callOptions = callOptions;
    this.join = join; // more fields of Join (Play) or WatchRequest (Watch)
    this.stats = stats;
    this.lastEvent = 0n;
    this.joined = false;
    this.matchId = '';
    this.requestId = 0n;
    this.pending = null; // the last required prompt, until its answer is acknowledged
    this.pendingIndex = null;
    this.pendingRequest = 0n;
    this.answered = new Set(); // state ids answered on the current stream
    this.fallbackUsed = new Set();
    this.resyncing = false;
    this.requests = null; // the Play stream's request queue
  }

  /** The first request of a new stream: a first connection, or a resume after the last event. */
  resume() {
    this.answered = new Set();
    this.resyncing = false;
    if (!this.joined) return undefined;
    this.stats.resumedFrom.push(Number(this.lastEvent));
    return { lastEventNumber: this.lastEvent };
  }

  /** Opens the seat's feed: Play (sending Join) or Watch. */
  open(signal) {
    const options = { ...this.callOptions, signal };
    const resume = this.resume();
    if (this.watch) {
      return this.client.watch({ ...this.join, clientName: this.clientName, resume }, bearer(this.token, options));
    }
    this.requests = requestQueue();
    const eventDelivery = this.batched ? EventDelivery.WITH_PROMPT : EventDelivery.PER_STEP;
    const join = { eventDelivery, ...this.join, token: this.token, clientName: this.clientName, resume };
    this.requests.push({ kind: { case: 'join', value: join } });
    return this.client.play(this.requests, options);
  }

  close() {
    this.requests?.close();
    this.requests = null;
  }

  async submit(stateId, index) {
    this.requestId += 1n;
    const requestId = this.requestId;
    const action = { stateId, choice: { case: 'actionIndex', value: index }, requestId };
    if (!this.watch) {
      this.requests?.push({ kind: { case: 'action', value: action } });
      return requestId;
    }
    const { result } = await this.client.submitAction({ action }, bearer(this.token, this.callOptions));
    if (result.case) await this.handle(message(result.case, result.value));
    return requestId;
  }

  async answer(stateId, index) {
    this.pendingIndex = index;
    this.pendingRequest = this.requestId + 1n;
    await this.submit(stateId, index);
  }

  /** Handles one server message; resolves with the report when the match is over. */
  async handle(msg) {
    const { case: kind, value } = msg.kind;
    if (kind === 'batch') {
      // EVENT_DELIVERY_WITH_PROMPT or _PER_STEP: the held answers, the events, then the prompt,
      // each handled (and shown to the bot) as if it had come on its own.
      this.stats.batches += 1;
      for (const a of value.accepted) await this.handle(message('accepted', a));
      for (const e of value.events) await this.handle(message('event', e));
      if (value.prompt) await this.handle(message('prompt', value.prompt));
      return null;
    }
    this.bot.onMessage?.(msg);
    switch (kind) {
      case 'welcome': {
        const resumed = this.joined;
        this.joined = true;
        this.resyncing = false;
        this.matchId = value.matchId;
        this.bot.onWelcome?.(value);
        if (resumed && this.pending && this.pendingIndex !== null) {
          // The server does not always repeat a pending prompt after a resume: answer it again.
          // If the first answer got through, this one is refused as stale.
          this.answered.add(this.pending.stateId);
          this.stats.resent += 1;
          await this.answer(this.pending.stateId, this.pendingIndex);
        }
        break;
      }
      case 'snapshot':
        if (value.lastEventNumber > this.lastEvent) this.lastEvent = value.lastEventNumber;
        this.stats.lastEventNumber = Number(this.lastEvent);
        this.bot.onSnapshot?.(value);
        break;
      case 'event': {
        const n = value.number;
        if (this.resyncing) break; // wait for the Welcome that answers our Resume
        if (n <= this.lastEvent) {
          this.stats.duplicates += 1;
        } else if (n > this.lastEvent + 1n) {
          this.stats.gaps += 1;
          this.resyncing = true;
          if (this.watch) throw new Resync(`event ${n} after ${this.lastEvent}`);
          this.requests?.push({ kind: { case: 'resume', value: { lastEventNumber: this.lastEvent } } });
        } else {
          this.lastEvent = n;
          this.stats.lastEventNumber = Number(n);
          this.stats.events += 1;
          this.bot.onEvent?.(value);
        }
        break;
      }
      case 'prompt':
        await this.prompt(value);
        break;
      case 'accepted':
        this.stats.accepted += 1;
        if (this.pending && value.requestId === this.pendingRequest) {
          this.pending = null;
          this.pendingIndex = null;
        }
        break;
      case 'rejected':
        await this.rejected(value);
        break;
      case 'finished':
        this.bot.onFinished?.(value.report);
        return value.report;
      default:
        break;
    }
    return null;
  }

  async prompt(prompt) {
    const legal = new Set(prompt.legalActions.map((a) => a.index));
    if (!prompt.required) {
      const choice = this.bot.decideOptional ? await this.bot.decideOptional(prompt) : null;
      if (choice !== null && choice !== undefined) {
        if (!legal.has(choice)) throw new RangeError(`decideOptional returned ${choice}, not a legal index`);
        await this.submit(0n, choice); // challenges and announces may race: state 0
      }
      return;
    }
    if (this.answered.has(prompt.stateId)) return; // answered on this stream already
    const choice = await this.bot.decide(prompt);
    if (!legal.has(choice)) {
      throw new RangeError(`decide returned ${choice}, not one of the legal indices ${[...legal].join(', ')}`);
    }
    this.pending = prompt;
    this.answered.add(prompt.stateId);
    this.stats.prompts += 1;
    await this.answer(prompt.stateId, choice);
  }

  async rejected(rejected) {
    this.stats.rejected += 1;
    this.bot.onRejected?.(rejected);
    const pending = this.pending;
    if (!pending || rejected.requestId !== this.pendingRequest) return;
    const reason = rejected.reason;
    if (reason === ErrorReason.STALE_STATE || reason === ErrorReason.MATCH_OVER) {
      this.pending = null; // the match moved on; a new prompt follows if one is due
      this.pendingIndex = null;
    } else if (reason === ErrorReason.RATE_LIMITED) {
      await sleep(50);
      await this.answer(pending.stateId, this.pendingIndex);
    } else if (!this.fallbackUsed.has(pending.stateId)) {
      // The engine refused a listed action: play the first legal one so the match goes on.
      this.fallbackUsed.add(pending.stateId);
      await this.answer(pending.stateId, pending.legalActions[0].index);
    }
  }
}

/**
 * Plays one seat to the end of its match on `transport` and resolves with the final MatchReport
 * (what `run` in either entry does once it has a transport). `watch: true` plays over Watch and
 * SubmitAction instead of the Play stream.
 */
export async function runOn(transport, bot, token, options = {}) {
  const b = typeof bot === 'function' ? { decide: bot } : bot;
  const {
    clientName = b.name || 'maumau-client-js',
    maxReconnects = 10,
    reconnectDelayMs = 200,
    stats = newStats(),
    batched = true,
    watch = false,
    callOptions = {},
    join = {},
    where = 'the server',
  } = options;
  const client = createClient(PlayService, transport);
  const session = new Session(guarded(b), token, clientName, stats, { batched, watch, client, callOptions, join });
  let failures = 0;
  for (;;) {
    let error = null;
    let heard = false;
    const stream = new AbortController();
    try {
      const responses = session.open(stream.signal);
      stats.streams += 1;
      for await (const response of responses) {
        heard = true;
        if (!response.message) continue;
        const report = await session.handle(response.message);
        if (report) return report;
      }
      error = new Error('the server closed the stream before MatchFinished');
    } catch (e) {
      if (e instanceof RangeError) throw e;
      if (e instanceof BotFailed) throw new MatchError(e.message, { cause: e.cause });
      if (!(e instanceof Resync)) {
        const err = ConnectError.from(e);
        const reason = err.metadata.get('maumau-reason') ?? '';
        if (FATAL_REASONS.has(reason) || !RETRYABLE_CODES.has(err.code)) {
          throw new MatchError(err.message, { reason, code: err.code, cause: e });
        }
      }
      error = e;
    } finally {
      session.close();
      stream.abort();
    }
    if (error instanceof Resync) continue; // reopen at once, from the last event seen
    failures = heard ? 0 : failures + 1;
    if (failures > maxReconnects) {
      throw new MatchError(`no answer from ${where} after ${failures} attempts: ${error?.message}`, { cause: error });
    }
    b.onDisconnect?.(error, failures);
    await sleep(Math.min(reconnectDelayMs * 2 ** Math.max(failures - 1, 0), 5000));
  }
}
