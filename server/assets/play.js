// The /play page's script (server/src/play_page.rs): a person plays one seat against the
// server's built-in bots. Bundled with the TypeScript client's browser entry into
// play.bundle.js (`npm run build:play` in clients/typescript); edit this file, then rebuild.
//
// - Setup: CreatePublicMatch with the chosen rules, bots and clock; the match id goes in the
//   URL fragment (/play#ID), the seat token in localStorage (never in a URL).
// - Play: Watch with the token (a Snapshot after every step), SubmitAction with the prompt's
//   state id. A reload (or the same link later) watches again: the seat is the person's again.
//   Resign (PlayService.Resign, after a confirmation) gives the seat up: placed last, the bots
//   play on to the end.
// - Events: the seat's frames from /matches/ID/frames (token in the authorization header), in
//   the viewer's notation, written once in Rust: this script never spells an event itself.
// - Its server: the page's own origin, or `?server=http://HOST:PORT` for a copy of the page
//   hosted elsewhere (that server must list the page's origin with --allow-origin).
import {
  BotKind, Call, CallsMode, ConnectError, ErrorReason, MatchStatus, Profile, Rank, Suit,
  bearer, connect,
} from '../../clients/typescript/src/browser.js';

const $ = (id) => document.getElementById(id);
const el = (tag, attrs = {}, ...children) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') e.className = v;
    else if (k.startsWith('on')) e.addEventListener(k.slice(2), v);
    else if (v !== false && v !== undefined) e.setAttribute(k, v === true ? '' : v);
  }
  e.append(...children);
  return e;
};
const SERVER = new URLSearchParams(location.search).get('server') ?? location.origin;
const { matches, play } = connect(SERVER);
const storageKey = (id) => `maumau-play:${id}`;

// ----- cards -------------------------------------------------------------------------------

const SUITS = { [Suit.CLUBS]: ['♣', 'clubs', 'black'], [Suit.DIAMONDS]: ['♦', 'diamonds', 'red'], [Suit.HEARTS]: ['♥', 'hearts', 'red'], [Suit.SPADES]: ['♠', 'spades', 'black'] };
const RANKS = { [Rank.JACK]: 'J', [Rank.QUEEN]: 'Q', [Rank.KING]: 'K', [Rank.ACE]: 'A' };
const rankText = (r) => RANKS[r] ?? String(r);
const cardText = (c) => `${rankText(c.rank)}${SUITS[c.suit]?.[0] ?? '?'}`;
const sameCard = (a, b) => a && b && a.rank === b.rank && a.suit === b.suit;

/** A face-up card: a button when `onclick` is given. */
function cardFace(c, { onclick, legal = false, label } = {}) {
  const [symbol, name, colour] = SUITS[c.suit] ?? ['?', '?', 'black'];
  const attrs = { class: `card face ${colour}${legal ? ' legal' : ''}`, 'aria-label': label ?? `${rankText(c.rank)} of ${name}`, 'data-card': cardText(c) };
  const inner = [el('span', { class: 'corner' }, rankText(c.rank), el('br'), symbol), el('span', { class: 'pip' }, symbol)];
  if (!onclick) return el('span', attrs, ...inner);
  return el('button', { ...attrs, type: 'button', disabled: !legal, onclick }, ...inner);
}

// ----- setup -------------------------------------------------------------------------------

const SEATS = { CLASSIC: [2, 6], PENALTY_POINTS: [2, 6], BRAZILIAN: [4, 8], ROMANIAN_32: [2, 4] };
const BOT_KINDS = [['HEURISTIC', 'heuristic'], ['SEARCH', 'search'], ['RANDOM', 'random']];

function setupBots() {
  const [min, max] = SEATS[$('profile').value];
  const seats = $('seats');
  for (const o of seats.options) o.disabled = Number(o.value) < min || Number(o.value) > max;
  if (seats.selectedOptions[0]?.disabled) seats.value = String(Math.max(min, Math.min(max, Number(seats.value))));
  const box = $('bots');
  const kept = [...box.querySelectorAll('select')].map((s) => s.value);
  box.replaceChildren(el('legend', {}, 'Bots (you sit at seat 0)'));
  for (let seat = 1; seat < Number(seats.value); seat++) {
    const select = el('select', { 'data-seat': seat, 'aria-label': `bot at seat ${seat}` },
      ...BOT_KINDS.map(([v, name]) => el('option', { value: v }, name)));
    select.value = kept[seat - 1] ?? 'HEURISTIC';
    box.append(el('label', {}, `Seat ${seat} `, select));
  }
}

async function create(event) {
  event.preventDefault();
  $('create').disabled = true;
  $('setup-error').textContent = '';
  const long = document.querySelector('input[name=clock]:checked').value === 'long';
  try {
    const created = await matches.createPublicMatch({
      config: {
        profile: Profile[$('profile').value],
        seats: Number($('seats').value),
        calls: CallsMode[$('calls').value],
        // One round for any profile (the profiles' own single_round option is not everyone's).
        maxRounds: $('single').checked ? 1 : 0,
      },
      bots: [...$('bots').querySelectorAll('select')].map((s) => ({ seat: Number(s.dataset.seat), kind: BotKind[s.value] })),
      timeControl: long ? { decisionMs: 30_000, bankMs: 300_000 } : { untimed: true },
    });
    localStorage.setItem(storageKey(created.matchId), created.seatTokens[0].token);
    history.pushState(null, '', `#${encodeURIComponent(created.matchId)}`);
    start();
  } catch (e) {
    $('setup-error').textContent = e instanceof ConnectError ? e.rawMessage : String(e);
    $('create').disabled = $('app').dataset.public !== 'true';
  }
}

// ----- the match ---------------------------------------------------------------------------

const game = {
  id: '', token: '', seat: 0, players: [], names: [], obs: null, prompt: null, report: null,
  stateId: 0n, busy: false, clickAt: 0, deadline: 0, bank: 0, timed: false, feed: null,
  resigned: false,
};

function nameOf(seat) {
  // S1, S2…: the seat numbers of the events' notation.
  if (seat === game.seat) return 'you';
  const p = game.players.find((x) => x.seat === seat);
  const bot = p && p.bot ? BotKind[p.bot].toLowerCase() : '';
  return `S${seat} ${p?.name || bot}`.trim();
}

function start() {
  game.id = decodeURIComponent(location.hash.slice(1));
  game.token = localStorage.getItem(storageKey(game.id)) ?? '';
  if (!game.id) return showSetup();
  $('setup').hidden = true;
  $('table').hidden = false;
  $('events-box').hidden = false;
  $('viewer').href = `${SERVER}/matches/${encodeURIComponent(game.id)}/view`;
  if (!game.token) {
    $('status').textContent = 'This match\'s seat belongs to another browser: watch it in the viewer.';
    return;
  }
  follow();
}

function showSetup() {
  $('create').disabled = $('app').dataset.public !== 'true';
  $('setup').hidden = false;
  $('table').hidden = true;
  $('events-box').hidden = true;
}

/** Watches the seat until the match ends, opening the feed again after a dropped connection. */
async function follow() {
  game.feed?.abort();
  const feed = new AbortController();
  game.feed = feed;
  for (let attempt = 0; !feed.signal.aborted; attempt++) {
    try {
      const stream = play.watch({ clientName: 'guest', snapshotEveryStep: true }, bearer(game.token, { signal: feed.signal }));
      for await (const res of stream) {
        attempt = 0;
        handle(res.message);
      }
      if (game.report) return;
    } catch (e) {
      if (feed.signal.aborted) return;
      const reason = e instanceof ConnectError ? e.metadata.get('maumau-reason') : '';
      if (reason === 'ERROR_REASON_BAD_TOKEN') {
        $('status').textContent = 'This seat\'s token is not known here any more.';
        return;
      }
      $('status').textContent = 'Connection lost; reconnecting…';
    }
    await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** attempt)));
  }
}

function handle(message) {
  const k = message?.kind;
  switch (k?.case) {
    case 'welcome':
      game.seat = k.value.seat ?? 0;
      game.players = k.value.players;
      game.timed = !k.value.timeControl?.untimed;
      $('rules').textContent = rulesLine(k.value);
      break;
    case 'snapshot':
      game.obs = k.value.observation;
      game.stateId = k.value.stateId;
      if (game.prompt && game.prompt.stateId !== game.stateId) game.prompt = null;
      render();
      loadEvents();
      break;
    case 'prompt':
      game.prompt = k.value;
      game.obs = k.value.observation ?? game.obs;
      game.stateId = k.value.stateId;
      game.busy = false;
      game.deadline = k.value.timeLeftMs ? performance.now() + k.value.timeLeftMs : 0;
      game.bank = k.value.timeBankMs;
      render();
      break;
    case 'event':
      loadEvents();
      break;
    case 'rejected':
      game.busy = false;
      $('status').textContent = `Not accepted: ${k.value.message}`;
      break;
    case 'finished':
      game.report = k.value.report;
      game.prompt = null;
      render();
      loadEvents();
      break;
    default:
      break; // accepted (on SubmitAction's answer), heartbeats
  }
}

function rulesLine(w) {
  const c = w.config;
  const profile = Profile[c.profile].toLowerCase().replace('_32', '-32').replace('_', '-');
  const calls = c.calls ? CallsMode[c.calls].toLowerCase() : 'challenge';
  const clock = w.timeControl?.untimed ? 'untimed' : `${w.timeControl.decisionMs / 1000} s a move`;
  return `${profile} · ${c.seats} seats · calls ${calls} · ${clock}`;
}

// ----- drawing the table -------------------------------------------------------------------

function render() {
  const obs = game.obs;
  renderResign();
  if (!obs) {
    // A match that ended before this page opened: its result, without a table.
    if (game.report) $('status').textContent = 'The match is over.';
    renderResult();
    return;
  }
  const mine = game.seat;
  const toAct = obs.toAct;
  // The other seats, in playing order after mine, their hands face down.
  const opponents = $('opponents');
  opponents.replaceChildren();
  for (let i = 1; i < obs.handSizes.length; i++) {
    const seat = (mine + i) % obs.handSizes.length;
    const n = obs.handSizes[seat];
    const backs = el('div', { class: 'backs', 'aria-label': `${n} cards` });
    for (let j = 0; j < Math.min(n, 10); j++) backs.append(el('span', { class: 'card back' }));
    if (n > 10) backs.append(el('span', { class: 'more' }, `+${n - 10}`));
    const call = obs.lastCalls?.[seat] ? ` · said ${Call[obs.lastCalls[seat]].toLowerCase().replace('_', '-')}` : '';
    opponents.append(el('div', { class: `seat${toAct === seat ? ' to-act' : ''}`, 'data-seat': seat },
      el('div', { class: 'who' }, el('b', {}, nameOf(seat)), ` · ${n} card${n === 1 ? '' : 's'} · total ${obs.totals[seat] ?? 0}${call}`),
      backs));
  }
  $('stock').textContent = `${obs.stockSize} left`;
  $('top').replaceChildren(obs.top ? cardFace(obs.top, { label: `top card ${cardText(obs.top)}` }) : '');
  $('round').textContent = String(obs.round);
  $('turn').textContent = toAct === undefined ? '–' : nameOf(toAct);
  $('named').textContent = obs.namedSuit ? `${SUITS[obs.namedSuit][0]} ${SUITS[obs.namedSuit][1]}` : '–';
  $('debt').textContent = String(obs.debt);
  $('direction').textContent = obs.clockwise ? 'clockwise ↻' : 'anticlockwise ↺';
  renderMe();
  renderResult();
}

/** Shows Resign while the person's seat is in a match that is not over. */
function renderResign() {
  $('resign').hidden = !game.token || !game.obs || !!game.report;
}

/** The legal actions of the standing prompt, or none. */
function legal() {
  return !game.report && game.prompt && !game.busy ? game.prompt.legalActions : [];
}

function renderMe() {
  const obs = game.obs;
  const actions = legal();
  const plays = actions.filter((a) => a.action.kind.case === 'play');
  // The hand: a card is marked (and clickable) when some legal play discards it.
  const hand = $('hand');
  hand.replaceChildren(...obs.hand.map((c) => {
    const mine = plays.filter((a) => sameCard(a.action.kind.value.card, c));
    return cardFace(c, { legal: mine.length > 0, onclick: () => choosePlay(c, mine) });
  }));
  // The other actions as buttons.
  const buttons = [];
  for (const a of actions) {
    const { case: kind, value } = a.action.kind;
    if (kind === 'draw') buttons.push(actionButton(a, obs.debt ? `Draw ${obs.debt} (pay the 7s)` : 'Draw a card'));
    else if (kind === 'pass_turn' || kind === 'passTurn') buttons.push(actionButton(a, 'Pass'));
    else if (kind === 'declareSuit') buttons.push(actionButton(a, `Name ${SUITS[value.suit][0]} ${SUITS[value.suit][1]}`));
    else if (kind === 'announce') buttons.push(actionButton(a, `Say “${callWord(value.call)}”`));
    else if (kind === 'challenge') buttons.push(actionButton(a, obs.offence ? `Challenge ${nameOf(obs.offence.offender)}` : 'Challenge'));
  }
  $('actions').replaceChildren(...buttons);
  $('choices').replaceChildren();
  let status;
  if (game.report) status = `The match is over (you are S${game.seat}).`;
  else if (game.resigned) status = 'You resigned: the bots play the match to its end.';
  else if (game.busy) status = 'Sending…';
  else if (game.prompt?.required) {
    const draw = actions.some((a) => a.action.kind.case === 'draw');
    const hint = plays.length ? (draw ? ': play a marked card, or draw' : ': play a marked card') : '';
    status = `Your move (S${game.seat})${hint}.`;
  }
  else if (actions.length) status = 'You may act out of turn.';
  else status = obs.toAct === undefined ? 'Waiting…' : `${nameOf(obs.toAct)} to move.`;
  $('status').textContent = status;
  document.body.classList.toggle('my-turn', Boolean(game.prompt?.required && !game.busy && !game.report));
  if (game.clickAt && actions.length) {
    // From the click that answered the last prompt to this one, drawn (read by the tests).
    performance.measure('click-to-prompt', { start: game.clickAt, end: performance.now() });
    game.clickAt = 0;
  }
  tick();
}

function callWord(call) {
  return call === Call.MAU_MAU ? 'Mau-Mau!' : 'Mau!';
}

function actionButton(a, label) {
  return el('button', { type: 'button', class: 'act legal', onclick: () => submit(a.action) }, label);
}

/** A card was clicked: play it at once, or offer its suits and calls as buttons. */
function choosePlay(card, options) {
  if (options.length === 1 && !options[0].action.kind.value.call && !options[0].action.kind.value.suit) {
    submit(options[0].action);
    return;
  }
  const buttons = [];
  for (const a of options) {
    const p = a.action.kind.value;
    const suit = p.suit ? `name ${SUITS[p.suit][0]} ${SUITS[p.suit][1]}` : '';
    const call = p.call ? `say “${callWord(p.call)}”` : '';
    buttons.push(el('button', { type: 'button', class: 'act legal choice', onclick: () => submit(a.action) },
      `${cardText(card)}: ${[suit, call].filter(Boolean).join(', ')}`));
    if (p.call) {
      // Playing without the word is allowed too; it may be penalised or challenged.
      const silent = { kind: { case: 'play', value: { ...p, call: Call.UNSPECIFIED } } };
      buttons.push(el('button', { type: 'button', class: 'act choice quiet', onclick: () => submit(silent) },
        `${cardText(card)}${suit ? `: ${suit}` : ''}, say nothing`));
    }
  }
  buttons.push(el('button', { type: 'button', class: 'act quiet', onclick: () => $('choices').replaceChildren() }, 'Cancel'));
  $('choices').replaceChildren(...buttons);
}

async function submit(action) {
  if (game.busy || !game.prompt) return;
  game.busy = true;
  game.clickAt = performance.now();
  const stateId = game.prompt.stateId;
  renderMe();
  try {
    const res = await play.submitAction({ action: { stateId, choice: { case: 'action', value: action } } }, bearer(game.token));
    if (res.result.case === 'rejected') {
      game.busy = false;
      // A stale prompt: the next one is on its way; anything else is worth saying.
      if (res.result.value.reason !== ErrorReason.STALE_STATE) $('status').textContent = `Not accepted: ${res.result.value.message}`;
      else renderMe();
    } else {
      // Accepted: the next prompt (or the others' moves) comes on the feed.
      game.busy = false;
      if (game.prompt?.stateId === stateId) game.prompt = null;
      renderMe();
    }
  } catch (e) {
    game.busy = false;
    $('status').textContent = `Could not send: ${e instanceof ConnectError ? e.rawMessage : e}`;
  }
}

function tick() {
  const box = $('clock-left');
  if (!game.timed || !game.prompt?.required || game.report || !game.deadline) {
    box.textContent = game.timed || game.report ? '' : 'untimed';
    return;
  }
  // The move's own allowance runs first, then the bank.
  const left = Math.max(0, game.deadline - performance.now());
  const mmss = (ms) => {
    const s = Math.ceil(ms / 1000);
    return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, '0')}`;
  };
  box.textContent = `${mmss(Math.max(0, left - game.bank))} for this move · bank ${mmss(Math.min(game.bank, left))}`;
  box.classList.toggle('low', left < 10_000);
}
setInterval(tick, 500);

function renderResult() {
  const r = game.report;
  const box = $('result');
  if (!r) {
    box.replaceChildren();
    return;
  }
  const standings = [...(r.result?.standings ?? [])].sort((a, b) => a.placing - b.placing);
  const winners = standings.filter((s) => s.placing === 1).map((s) => nameOf(s.seat));
  const title = winners.includes('you')
    ? (winners.length > 1 ? `You share first place with ${winners.filter((w) => w !== 'you').join(', ')}!` : 'You won!')
    : `${winners.join(' and ')} won.`;
  box.replaceChildren(
    el('h2', {}, MatchStatus[r.status] === 'ABORTED' ? `Aborted. ${title}` : title),
    el('p', { class: 'winner' }, `Winner: ${winners.join(', ')}`),
    el('table', {}, el('thead', {}, el('tr', {}, el('th', {}, 'place'), el('th', {}, 'player'), el('th', {}, 'total'))),
      el('tbody', {}, ...standings.map((s) => el('tr', { class: s.seat === game.seat ? 'you' : '' },
        el('td', {}, String(s.placing)), el('td', {}, nameOf(s.seat), gaveUp(s.seat)), el('td', {}, String(s.total)))))));
}

/** Why a seat is placed last whatever its total: it resigned or forfeited. */
function gaveUp(seat) {
  const stats = game.report.seats.find((x) => x.seat === seat);
  if (!stats?.forfeited) return '';
  return el('small', { class: 'gave-up' }, stats.resigned ? ' (resigned)' : ' (forfeited)');
}

/**
 * Gives the seat up (PlayService.Resign) once the person confirms: placed last, the bots play
 * the match to its end and the result comes as usual.
 */
async function resign() {
  if (!window.confirm('Resign this match? You will be placed last; the bots play it to the end.')) return;
  $('resign').disabled = true;
  try {
    await play.resign({}, bearer(game.token));
    game.resigned = true;
    game.prompt = null;
    renderMe();
  } catch (e) {
    $('status').textContent = `Could not resign: ${e instanceof ConnectError ? e.rawMessage : e}`;
  } finally {
    $('resign').disabled = false;
  }
}

// ----- the events, in the viewer's notation ------------------------------------------------

let loading = null;
let again = false;
/** Reads the seat's frames (one request at a time; a call meanwhile asks for one more). */
function loadEvents() {
  if (loading) {
    again = true;
    return;
  }
  loading = (async () => {
    try {
      const res = await fetch(`${SERVER}/matches/${encodeURIComponent(game.id)}/frames`, { headers: { authorization: `Bearer ${game.token}` }, cache: 'no-store' });
      if (!res.ok) return;
      const viewing = await res.json();
      const frames = viewing.frames.filter((f) => f.line).slice(-60);
      const list = $('events');
      list.replaceChildren(...frames.map((f) => el('li', {}, f.line, ...f.notes.map((n) => el('small', {}, n)))));
      list.parentElement.scrollTop = list.parentElement.scrollHeight;
    } catch {
      // The next step asks again.
    } finally {
      loading = null;
      if (again) {
        again = false;
        loadEvents();
      }
    }
  })();
}

// ----- start -------------------------------------------------------------------------------

$('profile').addEventListener('change', setupBots);
$('seats').addEventListener('change', setupBots);
$('setup').addEventListener('submit', create);
$('resign').addEventListener('click', resign);
/** Another match in the address (the back button, an edited link): follow that one. */
function reopen() {
  if (decodeURIComponent(location.hash.slice(1)) === game.id) return;
  game.feed?.abort();
  Object.assign(game, { prompt: null, report: null, obs: null, busy: false, resigned: false });
  $('events').replaceChildren();
  $('result').replaceChildren();
  $('resign').hidden = true;
  start();
}
window.addEventListener('hashchange', reopen);
window.addEventListener('popstate', reopen);
setupBots();
start();
// The page can be used from here on (read by the tests).
performance.mark('maumau-ready');
