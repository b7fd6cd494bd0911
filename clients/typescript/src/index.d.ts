// Types of the Node client of Mau Mau Arena (src/index.js). Messages follow the proto files in
// proto/maumau/v1 with proto field names; only the parts the helper relies on are spelled out.

import type * as grpc from '@grpc/grpc-js';

/** A uint64 on the wire (state ids, event numbers, seeds): a decimal string. */
export type Uint64 = string;

export interface Card { rank: string; suit: string }
export interface Action {
  kind: 'play' | 'draw' | 'pass_turn' | 'declare_suit' | 'announce' | 'challenge';
  play?: { card: Card; suit: string; call: string } | null;
  declare_suit?: { suit: string } | null;
  announce?: { call: string } | null;
  [field: string]: unknown;
}
export interface LegalAction { index: number; action: Action }
export interface Observation {
  seat?: number;
  to_act?: number;
  hand: Card[];
  hand_sizes: number[];
  top: Card | null;
  clockwise: boolean;
  [field: string]: unknown;
}
export interface DecisionPrompt {
  state_id: Uint64;
  legal_actions: LegalAction[];
  required: boolean;
  deadline_unix_ms: Uint64;
  time_left_ms: number;
  time_bank_ms: number;
  observation: Observation;
  last_event_number: Uint64;
}
export interface Welcome {
  match_id: string;
  seat?: number;
  rules: { profile: string; seats: number; ranks: { rank: string; in_deck: boolean; effect: string; value: number }[]; [field: string]: unknown };
  seed_commitment: Buffer;
  status: string;
  [field: string]: unknown;
}
export interface Snapshot { state_id: Uint64; last_event_number: Uint64; observation: Observation }
export interface NumberedEvent { number: Uint64; event: { kind: string; [field: string]: unknown } }
export interface ActionRejected { request_id: Uint64; reason: string; message: string; state_id: Uint64 }
export interface SeatStanding { seat: number; placing: number; total: number; rounds_won: number }
export interface SeatStats {
  seat: number; decisions: number; timeouts: number; rejections: number;
  gave_up: boolean; forfeited: boolean; [field: string]: unknown;
}
export interface MatchReport {
  match_id: string;
  status: string;
  result: { seats: number; rounds: number; standings: SeatStanding[] } | null;
  rounds: { round: number; end: string; points: number[]; totals: number[]; winner?: number }[];
  seats: SeatStats[];
  seed: Uint64;
  /** SHA-256(seed_salt ‖ seed as 8 big-endian bytes). */
  seed_commitment: Buffer;
  actions: number;
  players: { seat: number; name: string; bot: string; connected: boolean }[];
  /** The commitment's 16-byte salt, revealed with the seed. */
  seed_salt: Buffer;
}
export interface ServerMessage {
  kind: 'welcome' | 'snapshot' | 'event' | 'prompt' | 'accepted' | 'rejected' | 'finished' | 'pong';
  welcome?: Welcome | null;
  snapshot?: Snapshot | null;
  event?: NumberedEvent | null;
  prompt?: DecisionPrompt | null;
  rejected?: ActionRejected | null;
  finished?: { report: MatchReport } | null;
  [field: string]: unknown;
}

type MaybePromise<T> = T | Promise<T>;

/** A bot: a decide function, or an object with decide and optional hooks. */
export type DecideFn = (prompt: DecisionPrompt) => MaybePromise<number>;
export interface Bot {
  /** Join.client_name. */
  name?: string;
  /** The dense index of one of prompt.legal_actions, for every required prompt. */
  decide: DecideFn;
  /** An optional prompt (a challenge or late cure is open): an index, or null to let it pass. */
  decideOptional?(prompt: DecisionPrompt): MaybePromise<number | null | undefined>;
  onMessage?(message: ServerMessage): void;
  onWelcome?(welcome: Welcome): void;
  onSnapshot?(snapshot: Snapshot): void;
  /** Each event exactly once, in order of its number. */
  onEvent?(event: NumberedEvent): void;
  onRejected?(rejected: ActionRejected): void;
  onDisconnect?(error: unknown, attempt: number): void;
  onFinished?(report: MatchReport): void;
}

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
  /** ActionAccepted received, on their own or in batches. */
  accepted: number;
  lastEventNumber: number;
}

export interface RunOptions {
  clientName?: string;
  maxReconnects?: number;
  reconnectDelayMs?: number;
  connectTimeoutMs?: number;
  stats?: RunStats;
  protoDir?: string;
  /**
   * Join with EVENT_DELIVERY_WITH_PROMPT (true, the default): events and the answers to the
   * seat's actions come in one EventBatch with its next prompt, handed to the bot one by one as
   * usual. false opts out: EVENT_DELIVERY_PER_STEP, events as they happen, one EventBatch per
   * step of the match.
   */
  batched?: boolean;
  /** A PlayService client to use instead of a new one (it is not closed). */
  client?: grpc.Client;
}

export const PROTO_DIR: string;
export const PROTO_FILES: string[];
export const LOADER_OPTIONS: Readonly<Record<string, unknown>>;

/** The maumau.v1 package: service client constructors and message types. */
export function loadPackage(protoDir?: string): Record<string, any>;
export function connect(
  address: string,
  options?: { protoDir?: string; channelOptions?: grpc.ChannelOptions },
): { matches: grpc.Client & Record<string, any>; play: grpc.Client & Record<string, any>; close(): void };
export function unary<T = any>(
  client: grpc.Client,
  method: string,
  request: object,
  options?: { timeoutMs?: number; metadata?: grpc.Metadata },
): Promise<T>;
export function seedCommitment(seed: bigint | number | string, salt?: Uint8Array): Buffer;
export function verifySeed(report: MatchReport, commitment?: Uint8Array): boolean;
export function newStats(): RunStats;
export class MatchError extends Error {
  reason: string;
  code?: number;
}
export function run(bot: DecideFn | Bot, address: string, token: string, options?: RunOptions): Promise<MatchReport>;

// ----- the ladder (src/lobby.js) -------------------------------------------------------------

export const ALL_PROFILES: readonly string[];

/** What register made; the keys are shown only once, so keep them. */
export interface Registration { owner_key: string; bot_id: Uint64; version_id: Uint64; version_key: string }
export function register(
  address: string,
  options: { owner?: string; bot?: string; version?: string; ownerKey?: string; botId?: Uint64; invitationCode?: string; protoDir?: string },
): Promise<Registration>;

export interface Rating { mu: number; sigma: number; score: number; interval_low: number; interval_high: number }
export interface LobbyWelcome { version_id: Uint64; bot_id: Uint64; season: string; status: string; reason: string }
export interface LobbyWaiting { reason: string; detail: string; bots_online: number }
export interface Invitation {
  ladder_match_id: Uint64; match_id: string; seat: number; seat_token: string; node_address: string;
  join_deadline_unix_ms: Uint64; profile: string; seats: number; rated: boolean; validation: boolean;
}
export interface LadderMatchEnded {
  ladder_match_id: Uint64; match_id: string; finished: boolean; rated: boolean; placing: number;
  rating: Rating | null; reason: string; seat: number; validation: boolean;
}
export interface LobbyNotice { status: string; reason: string }

/** What holdLobby saw. */
export interface LobbyStats {
  lobbies: number;
  invitations: number;
  ended: LadderMatchEnded[];
  waiting: LobbyWaiting[];
  failures: { invitation: Invitation; error: unknown }[];
  /** The server confirmed the drain. */
  drained: boolean;
}
export function newLobbyStats(): LobbyStats;

export type LobbyEventKind =
  | 'welcome' | 'waiting' | 'invitation' | 'match_ended' | 'notice' | 'played' | 'dropped' | 'draining' | 'drained';
/** One line for a lobby event: "waiting: DETAIL (N bots online)", "invitation: match ...". */
export function describe(kind: LobbyEventKind, message: unknown): string;

export interface LobbyOptions {
  /** Matches played at once (1 to 64). */
  maxMatches?: number;
  profiles?: string[];
  seats?: number[];
  /** Aborting it drains the lobby: no new invitations, the running matches finish. */
  signal?: AbortSignal;
  onEvent?(kind: LobbyEventKind, message: unknown): void;
  maxBackoffMs?: number;
  firstBackoffMs?: number;
  stats?: LobbyStats;
  protoDir?: string;
}
/** The ladder refused the lobby or a registration for good. */
export class LobbyError extends Error {
  /** The maumau-ladder-reason trailer, e.g. LADDER_ERROR_REASON_BAD_KEY. */
  reason: string;
  code?: number;
}
/** Holds the version's lobby and plays every invitation with `bot` until the signal drains it. */
/** The lobby a tournament launched this bot for ($MAUMAU_LOBBY_ADDR, $MAUMAU_LOBBY_KEY), or null. */
export function lobbyFromEnv(env?: Record<string, string | undefined>): { address: string; key: string } | null;
export function holdLobby(bot: DecideFn | Bot, address: string, key: string, options?: LobbyOptions): Promise<LobbyStats>;
