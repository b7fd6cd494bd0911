// The examples' policy, shared by random-bot.js and ladder-bot.js: a random legal action, but a
// jack names the suit held most (jacks aside), so that the next turn can follow.

import { Rank, Suit } from '@maumau/client';

/** The play of a legal action, or undefined when it is not a play. */
const playOf = (legal) => (legal.action.kind.case === 'play' ? legal.action.kind.value : undefined);

/** The dense index of the action to play for a prompt (its legal actions, its observation). */
export function decide(prompt) {
  const legal = prompt.legalActions;
  let choice = legal[Math.floor(Math.random() * legal.length)];
  const play = playOf(choice);
  if (play && play.suit !== Suit.UNSPECIFIED) {
    const held = (suit) => prompt.observation.hand.filter((c) => c.suit === suit && c.rank !== Rank.JACK).length;
    const same = legal.filter((a) => playOf(a)?.card?.rank === play.card.rank
      && playOf(a).card.suit === play.card.suit && playOf(a).call === play.call);
    choice = same.reduce((best, a) => (held(playOf(a).suit) > held(playOf(best).suit) ? a : best));
  }
  return choice.index;
}
