"""A ladder bot: registers a version (or reads its key), holds its lobby and plays every invitation
with the random bot of random_bot.py, until Ctrl-C or SIGTERM drains it.

    python examples/ladder_bot.py --ladder 127.0.0.1:50051 --register OWNER BOT VERSION
    python examples/ladder_bot.py --ladder 127.0.0.1:50051 --key-file ~/.maumau-key

The same program is a tournament entrant that stays up between matches:

    maumau tournament --entrant 'py=lobby:python3 examples/ladder_bot.py'

The tournament launches it once with its lobby in $MAUMAU_LOBBY_ADDR and $MAUMAU_LOBBY_KEY
(used when no --ladder, --key or --register is given), invites it to each of its matches and
closes the lobby at the end, which ends it. With $BOT_PID_FILE set it appends its process id
there once per start (the tests count launches with it; not a MAUMAU_ name, since a tournament
passes its programs none of its own MAUMAU_ settings).

The key comes from --key, $MAUMAU_LADDER_KEY or --key-file; --register prints a new one (shown
once: keep it). Each event is printed as a line ("invitation: ...", "match ... finished: placing 1,
rating ...", "waiting: ... (N bots online)").
"""

import argparse
import os
import signal
import sys
import threading
from pathlib import Path

from maumau_client import LobbyError, describe, hold_lobby, lobby_from_env, register

sys.path.insert(0, str(Path(__file__).resolve().parent))
from random_bot import RandomBot  # noqa: E402  (the example next to this one)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--ladder", help="host:port [default: $MAUMAU_LOBBY_ADDR, $MAUMAU_ADDR, 127.0.0.1:50051]")
    p.add_argument("--key", default=os.environ.get("MAUMAU_LADDER_KEY"))
    p.add_argument("--key-file", type=Path)
    p.add_argument("--register", nargs=3, metavar=("OWNER", "BOT", "VERSION"))
    p.add_argument("--max-matches", type=int, default=1)
    p.add_argument("--profiles", default="classic,penalty-points,brazilian,romanian-32")
    p.add_argument("--seats", default="2,3,4")
    args = p.parse_args()

    if os.environ.get("BOT_PID_FILE"):
        with open(os.environ["BOT_PID_FILE"], "a") as f:
            f.write(f"{os.getpid()}\n")
    key = args.key
    tournament = lobby_from_env()
    if tournament and not (args.ladder or args.key or args.key_file or args.register):
        args.ladder, key = tournament
    args.ladder = args.ladder or os.environ.get("MAUMAU_ADDR", "127.0.0.1:50051")
    if args.register:
        owner, bot, version = args.register
        keys = register(args.ladder, owner=owner, bot=bot, version=version)
        print(f"owner key (shown once, keep it): {keys.owner_key}")
        print(f"version key (shown once, keep it): {keys.version_key}", flush=True)
        key = keys.version_key
    elif args.key_file:
        key = args.key_file.read_text().strip()
    if not key:
        p.error("give --key, --key-file, $MAUMAU_LADDER_KEY or --register OWNER BOT VERSION")

    drain = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: drain.set())

    def show(kind, message):
        print(describe(kind, message), flush=True)

    # The lobby runs on a thread so that this one stays free to take the signals.
    outcome = {}

    def hold():
        try:
            outcome["stats"] = hold_lobby(
                RandomBot, args.ladder, key, max_matches=args.max_matches,
                profiles=args.profiles.split(","), seats=[int(s) for s in args.seats.split(",")],
                drain=drain, on_event=show,
            )
        except LobbyError as e:
            outcome["error"] = e

    lobby = threading.Thread(target=hold, name="lobby")
    lobby.start()
    while lobby.is_alive():
        lobby.join(0.5)
    if "error" in outcome:
        print(f"ladder_bot: {outcome['error']}", file=sys.stderr)
        return 1
    print(f"{len(outcome['stats'].ended)} matches ended", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
