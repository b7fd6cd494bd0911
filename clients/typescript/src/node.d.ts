// Types of the Node entry of @maumau/client (src/node.js): gRPC over HTTP/2, and the ladder's
// lobby helper (src/lobby.js).

import type { GrpcTransportOptions } from '@connectrpc/connect-node';
import type { Transport } from '@connectrpc/connect';
import type { Bot, Clients, DecideFn, MatchReport, RunOptions } from './common.js';
import type { Invitation, LadderMatchEnded, LobbyNotice, LobbyWaiting, LobbyWelcome } from './gen/maumau/v1/ladder_pb.js';

export * from './common.js';

/** createGrpcTransport's options without the address, plus HTTP/2 session options. */
export type TransportOptions = Partial<Omit<GrpcTransportOptions, 'baseUrl' | 'httpVersion' | 'sessionManager'>>;

/** `{ baseUrl, socketPath }` for host:port, http(s)://host:port or unix:/path/to.sock. */
export function parseAddress(address: string): { baseUrl: string; socketPath: string | null };
/** A gRPC (HTTP/2) transport to `address` and its close(), which ends the connection. */
export function openTransport(address: string, options?: TransportOptions): { transport: Transport; close(): void };
/** A gRPC (HTTP/2) transport to `address`. */
export function createTransport(address: string, options?: TransportOptions): Transport;
/** Clients of the three services on one connection; close() ends it. */
export function connect(address: string, options?: TransportOptions): Clients & { transport: Transport; close(): void };

/** Plays one seat to the end of its match (Play stream, or `watch: true`); resolves with the report. */
export function run(
  bot: DecideFn | Bot,
  address: string,
  token: string,
  options?: RunOptions & { watch?: boolean; transportOptions?: TransportOptions },
): Promise<MatchReport>;

// ----- the ladder (src/lobby.js) -------------------------------------------------------------

export const ALL_PROFILES: readonly string[];

/** What register made; the keys are shown only once, so keep them. */
export interface Registration { ownerKey: string; botId: bigint; versionId: bigint; versionKey: string }
export function register(
  address: string,
  options: { owner?: string; bot?: string; version?: string; ownerKey?: string; botId?: bigint; invitationCode?: string },
): Promise<Registration>;

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
  | 'welcome' | 'waiting' | 'invitation' | 'matchEnded' | 'notice' | 'played' | 'dropped' | 'draining' | 'drained';
/** What each lobby event carries. */
export interface LobbyEvents {
  welcome: LobbyWelcome;
  waiting: LobbyWaiting;
  invitation: Invitation;
  matchEnded: LadderMatchEnded;
  notice: LobbyNotice;
  played: { invitation: Invitation; error: unknown };
  dropped: unknown;
  draining: null;
  drained: null;
}
/** One line for a lobby event: "waiting: DETAIL (N bots online)", "invitation: match ...". */
export function describe<K extends LobbyEventKind>(kind: K, message: LobbyEvents[K] | Record<string, unknown>): string;

export interface LobbyOptions {
  /** Matches played at once (1 to 64). */
  maxMatches?: number;
  profiles?: string[];
  seats?: number[];
  /** Aborting it drains the lobby: no new invitations, the running matches finish. */
  signal?: AbortSignal;
  onEvent?<K extends LobbyEventKind>(kind: K, message: LobbyEvents[K]): void;
  maxBackoffMs?: number;
  firstBackoffMs?: number;
  stats?: LobbyStats;
  /** Options for `run` of each invitation. */
  runOptions?: RunOptions;
}
/** The ladder refused the lobby or a registration for good. */
export class LobbyError extends Error {
  /** The maumau-ladder-reason trailer, e.g. LADDER_ERROR_REASON_BAD_KEY. */
  reason: string;
  code?: number;
}
/** The lobby a tournament launched this bot for ($MAUMAU_LOBBY_ADDR, $MAUMAU_LOBBY_KEY), or null. */
export function lobbyFromEnv(env?: Record<string, string | undefined>): { address: string; key: string } | null;
/** Holds the version's lobby and plays every invitation with `bot` until the signal drains it. */
export function holdLobby(bot: DecideFn | Bot, address: string, key: string, options?: LobbyOptions): Promise<LobbyStats>;
