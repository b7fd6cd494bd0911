// Types of the browser entry of @maumau/client (src/browser.js): grpc-web over fetch.

import type { GrpcWebTransportOptions } from '@connectrpc/connect-web';
import type { Transport } from '@connectrpc/connect';
import type { Bot, Clients, DecideFn, MatchReport, RunOptions } from './common.js';

export * from './common.js';

/** The base URL for an address: http(s)://host:port as is, host:port as http://host:port. */
export function baseUrl(address: string): string;
/** A grpc-web transport to `address`. */
export function createTransport(address: string, options?: Partial<GrpcWebTransportOptions>): Transport;
/** Clients of the three services (close does nothing: fetch keeps no connection of its own). */
export function connect(
  address: string,
  options?: Partial<GrpcWebTransportOptions>,
): Clients & { transport: Transport; close(): void };
/** Plays one seat to the end over Watch and SubmitAction; resolves with the final report. */
export function run(
  bot: DecideFn | Bot,
  address: string,
  token: string,
  options?: RunOptions & { transportOptions?: Partial<GrpcWebTransportOptions> },
): Promise<MatchReport>;
