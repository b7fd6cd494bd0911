"""End to end against the real server: a ladder match through the lobby's server-stream form.

Two versions open their lobbies with ``LobbyFeed`` (a server stream, for clients that cannot
stream both ways), play the invitation they get with the Python helper, drain with the unary
``DrainLobby``, and see their feeds end with ``LobbyDrained``.
"""

from __future__ import annotations

import threading

import grpc
import pytest

from maumau_client import Bot, run
from maumau_client.pb.maumau.v1 import ladder_pb2, ladder_pb2_grpc


class FirstLegalBot(Bot):
    """Plays the first legal action."""

    def decide(self, prompt):
        return prompt.legal_actions[0].index


def ladder_reason(error: grpc.RpcError) -> str:
    for key, value in error.trailing_metadata() or ():
        if key == "maumau-ladder-reason":
            return value
    return ""


def hello(key: str) -> ladder_pb2.LobbyHello:
    return ladder_pb2.LobbyHello(version_key=key, max_matches=1, profiles=["classic"], seats=[2])


def test_a_ladder_match_through_the_lobby_feed(ladder_server):
    ladder = ladder_pb2_grpc.LadderServiceStub(ladder_server.channel)
    keys = []
    for name in ("py-feed-a", "py-feed-b"):
        owner = ladder.RegisterOwner(ladder_pb2.RegisterOwnerRequest(name=name))
        auth = (("authorization", f"Bearer {owner.owner_key}"),)
        bot = ladder.RegisterBot(ladder_pb2.RegisterBotRequest(name=f"{name}-bot"), metadata=auth)
        version = ladder.AddVersion(
            ladder_pb2.AddVersionRequest(bot_id=bot.bot_id, label="1.0"), metadata=auth
        )
        keys.append(version.version_key)

    # A feed without its hello is refused like a Lobby stream without LobbyHello.
    with pytest.raises(grpc.RpcError) as refused:
        list(ladder.LobbyFeed(ladder_pb2.LobbyFeedRequest(), timeout=10))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert ladder_reason(refused.value) == "LADDER_ERROR_REASON_NO_HELLO"

    seen: dict[str, list] = {key: [] for key in keys}
    ended: dict[str, ladder_pb2.LadderMatchEnded] = {}
    errors: list[BaseException] = []
    players: list[threading.Thread] = []

    def lobby(key: str) -> None:
        try:
            feed = ladder.LobbyFeed(ladder_pb2.LobbyFeedRequest(hello=hello(key)), timeout=120)
            for message in feed:
                kind = message.WhichOneof("kind")
                seen[key].append(kind)
                if kind == "invitation":
                    assert message.invitation.rated
                    player = threading.Thread(
                        target=run,
                        args=(FirstLegalBot(), ladder_server.address,
                              message.invitation.seat_token),
                        daemon=True,
                    )
                    player.start()
                    players.append(player)
                elif kind == "match_ended" and key not in ended:
                    ended[key] = message.match_ended
                    drained = ladder.DrainLobby(ladder_pb2.DrainLobbyRequest(version_key=key))
                    assert drained.was_open
        except BaseException as e:  # noqa: BLE001 - reported by the test below
            errors.append(e)

    lobbies = [threading.Thread(target=lobby, args=(key,), daemon=True) for key in keys]
    for t in lobbies:
        t.start()
    for t in lobbies:
        t.join(timeout=120)
    assert not errors, errors
    assert all(not t.is_alive() for t in lobbies), "the feeds end after draining"
    for t in players:
        t.join(timeout=30)
    for key in keys:
        kinds = seen[key]
        assert kinds[0] == "welcome", kinds
        assert "invitation" in kinds, kinds
        assert kinds[-1] == "drained", kinds
    a, b = (ended[key] for key in keys)
    assert a.ladder_match_id == b.ladder_match_id
    assert a.finished and a.rated
    assert sorted([a.placing, b.placing]) == [1, 2]

    # The rated result is on the leaderboard.
    board = ladder.GetLeaderboard(ladder_pb2.GetLeaderboardRequest(profile="classic"))
    assert {s.bot_name for s in board.standings} == {"py-feed-a-bot", "py-feed-b-bot"}
