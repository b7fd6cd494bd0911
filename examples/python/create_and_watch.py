"""Creates a match of built-in bots from Python, watches it as a spectator and checks its replay.

Needs the Python client (clients/python) and a running server (`maumau serve`):

    python examples/python/create_and_watch.py --address 127.0.0.1:50051

With --operator-token (or $MAUMAU_OPERATOR_TOKEN) CreateMatch carries `authorization: Bearer TOKEN`.
"""

import argparse
import os

import grpc

from maumau_client import verify_seed
from maumau_client.pb.maumau.v1 import match_pb2, match_pb2_grpc, play_pb2, play_pb2_grpc, record_pb2, rules_pb2


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--address", default=os.environ.get("MAUMAU_ADDR", "127.0.0.1:50051"))
    p.add_argument("--rounds", type=int, default=2, help="rounds to play (classic, 3 seats)")
    p.add_argument("--operator-token", default=os.environ.get("MAUMAU_OPERATOR_TOKEN"))
    args = p.parse_args()
    auth = [("authorization", f"Bearer {args.operator_token}")] if args.operator_token else []

    with grpc.insecure_channel(args.address) as channel:
        matches = match_pb2_grpc.MatchServiceStub(channel)
        kinds = [record_pb2.BOT_KIND_HEURISTIC, record_pb2.BOT_KIND_RANDOM, record_pb2.BOT_KIND_RANDOM]
        created = matches.CreateMatch(
            match_pb2.CreateMatchRequest(
                config=rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_CLASSIC, seats=len(kinds), max_rounds=args.rounds),
                bots=[match_pb2.SeatBot(seat=s, kind=k) for s, k in enumerate(kinds)],
                label="examples/python/create_and_watch.py",
            ),
            metadata=auth,
            timeout=10,
        )
        print("match", created.match_id)

        # The spectator's feed: public events only, and MatchFinished with the report last. Built-in
        # bots play at once, so the match may be over before we connect: the feed is then just
        # Welcome and MatchFinished.
        watch = play_pb2_grpc.PlayServiceStub(channel).Watch(
            play_pb2.WatchRequest(token=created.spectator_token, client_name="create_and_watch.py"), timeout=60
        )
        report, seen = None, 0
        for response in watch:
            message = response.message
            seen += 1
            if message.WhichOneof("kind") == "event" and message.event.event.WhichOneof("kind") == "round_ended":
                r = message.event.event.round_ended
                print(f"  live: round {r.round} ended, totals {list(r.totals)}")
            elif message.WhichOneof("kind") == "finished":
                report = message.finished.report
        assert report is not None, "the feed ended without MatchFinished"
        print(f"watched {seen} messages, the last one MatchFinished")

        status = record_pb2.MatchStatus.Name(report.status)
        print(f"status {status} after {report.actions} actions, {report.result.rounds} rounds")
        for s in report.result.standings:
            print(f"  seat {s.seat}: placing {s.placing}, total {s.total}")
        # The revealed seed matches the commitment made before play, and the replay re-simulates.
        replay = matches.GetReplay(match_pb2.GetReplayRequest(match_id=created.match_id), timeout=10).replay
        verdict = matches.VerifyReplay(match_pb2.VerifyReplayRequest(replay=replay), timeout=10)
        print("seed matches its commitment:", verify_seed(report, created.seed_commitment))
        print("replay verified:", verdict.valid)


if __name__ == "__main__":
    main()
