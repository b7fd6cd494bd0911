// @maumau/client in a browser: grpc-web over fetch (@connectrpc/connect-web). Browsers stream
// from the server only, so a seat plays on Watch (its feed) and SubmitAction (its actions); the
// server must allow the page's origin (`maumau serve --allow-origin https://your.app`).
//
//   import { connect, run, BotKind, Profile } from '@maumau/client';
//   const { matches } = connect('http://127.0.0.1:50051');
//   const report = await run((prompt) => prompt.legalActions[0].index, 'http://127.0.0.1:50051', token);
//
// Keep a seat token in memory or sessionStorage; the helper sends it in the authorization header,
// never in a URL. See src/common.js for what messages look like.

import { createGrpcWebTransport } from '@connectrpc/connect-web';

import { createClients, runOn } from './common.js';

export * from './common.js';

/** The base URL for an address: http(s)://host:port as is, host:port as http://host:port. */
export function baseUrl(address) {
  const text = String(address).trim().replace(/\/+$/, '');
  return /^https?:\/\//.test(text) ? text : `http://${text}`;
}

/** A grpc-web transport to `address`; `options` are connect-web's createGrpcWebTransport options. */
export function createTransport(address, options = {}) {
  return createGrpcWebTransport({ ...options, baseUrl: baseUrl(address) });
}

/** `{ matches, play, ladder, transport, close }`: clients of the three services (close does nothing). */
export function connect(address, options = {}) {
  const transport = createTransport(address, options);
  return { ...createClients(transport), transport, close() {} };
}

/**
 * Plays one seat to the end of its match over Watch and SubmitAction and resolves with the final
 * MatchReport. `bot` and the options are those of the Node entry's `run` (a dropped feed is
 * reopened from the last event seen, a lost answer sent again), except that there is no Play
 * stream: events come as they happen and `batched` does not apply.
 */
export async function run(bot, address, token, options = {}) {
  const transport = options.transport ?? createTransport(address, options.transportOptions);
  return runOn(transport, bot, token, { where: address, ...options, watch: true });
}
