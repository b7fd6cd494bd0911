"""Creates a match and prints one seat token per line (seat, then token). Usage:

    python examples/create_match.py --address 127.0.0.1:50051 --profile classic --seats 4 --remote 2

Seats from --remote on are played by the server's built-in random bot. With --operator-token
(or $MAUMAU_OPERATOR_TOKEN) the call carries `authorization: Bearer TOKEN`.
"""

import argparse
import os

import grpc

from maumau_client.pb.maumau.v1 import match_pb2, match_pb2_grpc, record_pb2, rules_pb2

p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
p.add_argument("--address", default="127.0.0.1:50051")
p.add_argument("--profile", default="classic", choices=["classic", "penalty-points", "brazilian", "romanian-32"])
p.add_argument("--seats", type=int, default=4)
p.add_argument("--remote", type=int, default=1, help="seats played by remote clients (0..remote-1)")
p.add_argument("--seed", type=int, default=None)
p.add_argument("--operator-token", default=os.environ.get("MAUMAU_OPERATOR_TOKEN"))
args = p.parse_args()

request = match_pb2.CreateMatchRequest(
    config=rules_pb2.MatchConfig(
        profile=rules_pb2.Profile.Value("PROFILE_" + args.profile.upper().replace("-", "_")), seats=args.seats
    ),
    bots=[match_pb2.SeatBot(seat=s, kind=record_pb2.BOT_KIND_RANDOM) for s in range(args.remote, args.seats)],
)
if args.seed is not None:
    request.seed = args.seed
metadata = [("authorization", f"Bearer {args.operator_token}")] if args.operator_token else []
with grpc.insecure_channel(args.address) as channel:
    created = match_pb2_grpc.MatchServiceStub(channel).CreateMatch(request, metadata=metadata, timeout=10)
print("# match", created.match_id, "seed commitment", created.seed_commitment.hex())
for t in created.seat_tokens:
    print(t.seat, t.token)
