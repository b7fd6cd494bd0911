// @maumau/client in Node: gRPC over HTTP/2 (@connectrpc/connect-node), so a seat plays on the
// Play stream and a ladder bot holds its Lobby stream (src/lobby.js).
//
//   import { run, verifySeed } from '@maumau/client';
//   const report = await run((prompt) => prompt.legalActions[0].index, '127.0.0.1:50051', token);
//
// An address is `host:port`, `http://host:port` or `unix:/path/to.sock` (a Unix socket, as a
// sandboxed bot is given in $MAUMAU_ADDR). See src/common.js for what messages look like.

import net from 'node:net';

import { Http2SessionManager, createGrpcTransport } from '@connectrpc/connect-node';

import { createClients, runOn } from './common.js';

export * from './common.js';

/** `{ baseUrl, socketPath }` for an address: host:port, http(s)://host:port or unix:/path. */
export function parseAddress(address) {
  const text = String(address).trim();
  if (text.startsWith('unix:')) {
    // unix:/abs/path, unix:///abs/path and unix:relative/path, as gRPC writes them.
    const socketPath = text.slice('unix:'.length).replace(/^\/\/(?=\/)/, '');
    return { baseUrl: 'http://localhost', socketPath };
  }
  if (/^https?:\/\//.test(text)) return { baseUrl: text.replace(/\/+$/, ''), socketPath: null };
  return { baseUrl: `http://${text}`, socketPath: null };
}

/**
 * A gRPC (HTTP/2) transport to `address` and its `close()`, which ends the connection.
 * `options` are connect-node's createGrpcTransport options (interceptors, pingIntervalMs, ...).
 */
export function openTransport(address, options = {}) {
  const { baseUrl, socketPath } = parseAddress(address);
  const { pingIntervalMs, pingTimeoutMs, pingIdleConnection, idleConnectionTimeoutMs, nodeOptions, ...rest } = options;
  const sessionOptions = { ...nodeOptions };
  if (socketPath) sessionOptions.createConnection = () => net.connect(socketPath);
  const sessionManager = new Http2SessionManager(
    baseUrl,
    { pingIntervalMs, pingTimeoutMs, pingIdleConnection, idleConnectionTimeoutMs },
    sessionOptions,
  );
  const transport = createGrpcTransport({ ...rest, baseUrl, httpVersion: '2', sessionManager });
  return { transport, close: () => sessionManager.abort() };
}

/** A gRPC (HTTP/2) transport to `address`, for `createClients` or `createClient` of connect. */
export function createTransport(address, options = {}) {
  return openTransport(address, options).transport;
}

/** `{ matches, play, ladder, transport, close }`: clients of the three services on one connection. */
export function connect(address, options = {}) {
  const { transport, close } = openTransport(address, options);
  return { ...createClients(transport), transport, close };
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
 * order either way. `watch: true` plays over Watch and SubmitAction as a browser does.
 *
 * A dropped stream is reopened with a resume from the last event seen, up to `maxReconnects`
 * times in a row without hearing from the server; refusals a new stream cannot fix reject the
 * promise with a MatchError, and so does an exception from the bot's own code (its message starts
 * "the bot failed:", the exception is its `cause`): calling it again would not help.
 * `transport` plays on a transport of yours (it is not closed).
 */
export async function run(bot, address, token, options = {}) {
  if (options.transport) return runOn(options.transport, bot, token, { where: address, ...options });
  const { transport, close } = openTransport(address, options.transportOptions);
  try {
    return await runOn(transport, bot, token, { where: address, ...options });
  } finally {
    close();
  }
}

export { ALL_PROFILES, LobbyError, describe, holdLobby, lobbyFromEnv, newLobbyStats, register } from './lobby.js';
