"""TLS from Python: `maumau serve --tls-cert --tls-key` serves a grpcio client that trusts the
certificate (a self-signed one made here with openssl), and refuses a plain-text one."""

from __future__ import annotations

import re
import subprocess
import time
from pathlib import Path

import grpc
import pytest

from maumau_client.pb.maumau.v1 import match_pb2, match_pb2_grpc, record_pb2, rules_pb2


def _certificate(tmp_path: Path) -> tuple[Path, Path]:
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )
    return cert, key


@pytest.fixture
def tls_server(maumau_bin: Path, tmp_path: Path):
    cert, key = _certificate(tmp_path)
    log_path = tmp_path / "server.log"
    with open(log_path, "wb") as log:
        proc = subprocess.Popen(
            [str(maumau_bin), "serve", "--listen", "127.0.0.1:0", "--data-dir",
             str(tmp_path / "data"), "--tls-cert", str(cert), "--tls-key", str(key)],
            stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
        )
        try:
            deadline = time.monotonic() + 30
            address = None
            while address is None and time.monotonic() < deadline:
                m = re.search(r"serving on (\S+?),? ", log_path.read_text(errors="replace"))
                if m:
                    address = m.group(1)
                elif proc.poll() is not None:
                    raise RuntimeError(f"the server exited:\n{log_path.read_text()}")
                else:
                    time.sleep(0.05)
            assert address, log_path.read_text()
            assert "TLS" in log_path.read_text()
            yield address, cert.read_bytes()
        finally:
            proc.kill()
            proc.wait()


def test_a_client_that_trusts_the_certificate_gets_through(tls_server):
    address, cert = tls_server
    credentials = grpc.ssl_channel_credentials(root_certificates=cert)
    with grpc.secure_channel(
        address, credentials, options=[("grpc.ssl_target_name_override", "localhost")]
    ) as channel:
        matches = match_pb2_grpc.MatchServiceStub(channel)
        created = matches.CreateMatch(
            match_pb2.CreateMatchRequest(
                config=rules_pb2.MatchConfig(profile=rules_pb2.PROFILE_CLASSIC, seats=2),
                bots=[
                    match_pb2.SeatBot(seat=s, kind=record_pb2.BOT_KIND_RANDOM) for s in (0, 1)
                ],
            ),
            timeout=10,
        )
        listed = matches.ListMatches(match_pb2.ListMatchesRequest(), timeout=10)
        assert created.match_id in [m.match_id for m in listed.matches]


def test_a_plain_text_client_does_not_get_through(tls_server):
    address, _ = tls_server
    with grpc.insecure_channel(address) as channel:
        matches = match_pb2_grpc.MatchServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            matches.ListMatches(match_pb2.ListMatchesRequest(), timeout=5)
        assert refused.value.code() in (
            grpc.StatusCode.UNAVAILABLE,
            grpc.StatusCode.DEADLINE_EXCEEDED,
        )
