// The examples' policy, shared by random-bot.js and ladder-bot.js: a random legal action, but a
// jack names the suit held most (jacks aside), so that the next turn can follow.

/** The dense index of the action to play for a prompt (its legal actions, its observation). */
export function decide(prompt) {
  const legal = prompt.legal_actions;
  let choice = legal[Math.floor(Math.random() * legal.length)];
  const play = choice.action.play;
  if (play?.suit && play.suit !== 'SUIT_UNSPECIFIED') {
    const held = (suit) => prompt.observation.hand.filter((c) => c.suit === suit && c.rank !== 'RANK_JACK').length;
    const same = legal.filter((a) => a.action.play?.card?.rank === play.card.rank
      && a.action.play.card.suit === play.card.suit && a.action.play.call === play.call);
    choice = same.reduce((best, a) => (held(a.action.play.suit) > held(best.action.play.suit) ? a : best));
  }
  return choice.index;
}
