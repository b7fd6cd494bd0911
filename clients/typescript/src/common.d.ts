// Types of what the browser and Node entries share (src/common.js). The messages, enums and
// service descriptors are generated from proto/maumau/v1 into src/gen by `npm run generate`.

import type { CallOptions, Client, Transport } from '@connectrpc/connect';
import type { ActionAccepted, ActionRejected, DecisionPrompt, NumberedEvent, ServerMessage, Snapshot, Welcome } from './gen/maumau/v1/play_pb.js';
import type { LadderService } from './gen/maumau/v1/ladder_pb.js';
import type { MatchService } from './gen/maumau/v1/match_pb.js';
import type { PlayService } from './gen/maumau/v1/play_pb.js';
import type { MatchReport } from './gen/maumau/v1/record_pb.js';

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
export type { CallOptions, Transport } from '@connectrpc/connect';

/** Clients of the three services. */
export interface Clients {
  matches: Client<typeof MatchService>;
  play: Client<typeof PlayService>;
  ladder: Client<typeof LadderService>;
}
/** Clients of the three services on one transport. */
export function createClients(transport: Transport): Clients;

/** Call options that send `token` as `authorization: Bearer TOKEN`. */
export function bearer(token: string, options?: CallOptions): CallOptions;

/** SHA-256(salt ‖ seed as 8 big-endian bytes), as sent in Welcome and CreateMatchResponse. */
export function seedCommitment(seed: bigint | number | string, salt?: Uint8Array): Uint8Array;
/** True when two byte arrays hold the same bytes. */
export function equalBytes(a: Uint8Array, b: Uint8Array): boolean;
/** True when the report's seed and salt match `commitment` (by default the report's own). */
export function verifySeed(report: MatchReport, commitment?: Uint8Array): boolean;

/**
 * The stream was refused for good (bad token, superseded, ...), the server stayed away, or the
 * bot's own code threw (then `cause` is what it threw).
 */
export class MatchError extends Error {
  /** The maumau-reason trailer, e.g. 'ERROR_REASON_BAD_TOKEN' ('' when there was none). */
  reason: string;
  /** The gRPC status code (Code of @connectrpc/connect), when the server sent one. */
  code?: number;
}

type MaybePromise<T> = T | Promise<T>;

/** A bot: a decide function, or an object with decide and optional hooks. */
export type DecideFn = (prompt: DecisionPrompt) => MaybePromise<number>;
export interface Bot {
  /** Join.client_name (WatchRequest.client_name). */
  name?: string;
  /** The dense index of one of prompt.legalActions, for every required prompt. */
  decide: DecideFn;
  /** An optional prompt (a challenge or late cure is open): an index, or null to let it pass. */
  decideOptional?(prompt: DecisionPrompt): MaybePromise<number | null | undefined>;
  /** Every message, a batch's parts one by one (`message.kind.case` names it). */
  onMessage?(message: ServerMessage): void;
  onWelcome?(welcome: Welcome): void;
  onSnapshot?(snapshot: Snapshot): void;
  /** Each event exactly once, in order of its number. */
  onEvent?(event: NumberedEvent): void;
  onRejected?(rejected: ActionRejected): void;
  onDisconnect?(error: unknown, attempt: number): void;
  onFinished?(report: MatchReport): void;
}

/** Counters of what happened on the wire during `run` (event numbers as numbers). */
export interface RunStats {
  streams: number;
  resumedFrom: number[];
  events: number;
  duplicates: number;
  gaps: number;
  prompts: number;
  resent: number;
  rejected: number;
  /** EventBatch messages received. */
  batches: number;
  /** ActionAccepted received, on their own, in batches or as SubmitAction answers. */
  accepted: number;
  lastEventNumber: number;
}
export function newStats(): RunStats;

export interface RunOptions {
  clientName?: string;
  maxReconnects?: number;
  reconnectDelayMs?: number;
  stats?: RunStats;
  /**
   * Play stream only. Join with EVENT_DELIVERY_WITH_PROMPT (true, the default): events and the
   * answers to the seat's actions come in one EventBatch with its next prompt, handed to the bot
   * one by one as usual. false: EVENT_DELIVERY_PER_STEP, events as they happen, one EventBatch
   * per step of the match.
   */
  batched?: boolean;
  /**
   * More fields of the Join (Play stream) or WatchRequest (Watch) the helper sends, e.g. fields
   * newer than the helper; token, clientName and resume are the helper's.
   */
  join?: Record<string, unknown>;
  /** Options for every call (e.g. extra headers); the seat token is added by the helper. */
  callOptions?: CallOptions;
  /** Play on this transport (it is not closed) instead of a new one to the address. */
  transport?: Transport;
}

/** Plays one seat on `transport` (`watch`: over Watch and SubmitAction instead of Play). */
export function runOn(
  transport: Transport,
  bot: DecideFn | Bot,
  token: string,
  options?: RunOptions & { watch?: boolean; where?: string },
): Promise<MatchReport>;

export type { ActionAccepted, ActionRejected, DecisionPrompt, NumberedEvent, ServerMessage, Snapshot, Welcome, MatchReport };
