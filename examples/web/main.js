// Plays seat 0 of a classic match against three built-in bots from a browser page, with the
// browser entry of @maumau/client: grpc-web, CreatePublicMatch to get the match (the server's
// public mode: no operator token in the page), Watch for the seat's feed, SubmitAction to act.
// The server is ?server=URL (default http://127.0.0.1:50051); it must allow this page's origin
// and run with --public-play.
import { BotKind, MatchStatus, Profile, Rank, Suit, connect, run } from '@maumau/client';

const server = new URLSearchParams(location.search).get('server') ?? 'http://127.0.0.1:50051';
const $ = (id) => document.getElementById(id);
const log = (line) => { $('log').textContent += `${line}\n`; };
const card = (c) => `${Rank[c.rank].toLowerCase()} of ${Suit[c.suit].toLowerCase()}`;
const { matches } = connect(server);

async function play() {
  $('play').disabled = true;
  // The seat token is a secret: kept in sessionStorage (this tab only, so a reload rejoins the
  // seat) and sent in the authorization header by the client, never in a URL.
  let token = sessionStorage.getItem('maumau-seat-token');
  if (!token) {
    const bots = [1, 2, 3].map((seat) => ({ seat, kind: BotKind.HEURISTIC }));
    const created = await matches.createPublicMatch({ config: { profile: Profile.CLASSIC, seats: 4 }, bots });
    token = created.seatTokens[0].token;
    sessionStorage.setItem('maumau-seat-token', token);
    log(`match ${created.matchId} created`);
  }
  const report = await run({
    name: 'web-example',
    decide(prompt) {
      $('hand').textContent = prompt.observation.hand.map(card).join(', ');
      const legal = prompt.legalActions;
      const choice = legal.find((a) => a.action.kind.case === 'play') ?? legal[0];
      log(`${choice.action.kind.case}${choice.action.kind.case === 'play' ? ` ${card(choice.action.kind.value.card)}` : ''}`);
      return choice.index;
    },
  }, server, token);
  sessionStorage.removeItem('maumau-seat-token');
  const mine = report.result.standings.find((s) => s.seat === 0);
  $('result').textContent = `${MatchStatus[report.status].toLowerCase()}: placing ${mine.placing} of 4`;
}

$('play').addEventListener('click', () => play().catch((e) => {
  $('result').textContent = `error: ${e.message}`;
  $('play').disabled = false;
}));
