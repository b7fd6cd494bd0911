"""A faulty lobby bot for check-bot's tests: it is launched with its lobby in MAUMAU_LOBBY_ADDR and
MAUMAU_LOBBY_KEY but looks for its key elsewhere and waits forever, never opening the lobby
(check-bot must fail it after its join timeout, quote what it said, and stop it)."""

import time

print("never_opens_lobby: looking for MAUMAU_LOBBY_KEY in ./bot.toml", flush=True)
while True:
    time.sleep(60)
