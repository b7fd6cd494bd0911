"""OpenSpiel's crazy_eights played by its own C++ loop, for engine/benches/instructions.sh.

`pyspiel.evaluate_bots` plays a whole game in C++ (`open_spiel::EvaluateBots`): chance nodes
(the deal, the draws) sampled from the chance outcomes, every decision by a uniform random bot
that lists the legal actions and picks one. Python only starts each game and counts its
decisions afterwards, outside the loop that callgrind counts (`--toggle-collect` on
`open_spiel::EvaluateBots*`). Usage: `python openspiel_loop.py GAMES` (needs `pip install
open_spiel`); prints `GAMES games DECISIONS decisions`.
"""

import sys

import pyspiel


def main():
    games = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    game = pyspiel.load_game("crazy_eights", {"players": 4})
    bots = [pyspiel.make_uniform_random_bot(p, 1000 + p) for p in range(4)]
    decisions = 0
    for seed in range(games):
        state = game.new_initial_state()
        pyspiel.evaluate_bots(state, bots, seed)
        decisions += sum(1 for a in state.full_history() if a.player >= 0)
    print(games, "games", decisions, "decisions")


if __name__ == "__main__":
    main()
