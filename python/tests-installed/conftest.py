"""Fixtures for the tests that run where the wheels are installed (scripts/test-wheels.sh): the
`maumau` binary on PATH, a `maumau serve` of it on a free loopback port, and the repository root
(for the examples)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from pathlib import Path

import grpc
import pytest

from maumau_client.pb.maumau.v1 import match_pb2_grpc

ROOT = Path(os.environ.get("MAUMAU_ROOT", Path(__file__).resolve().parents[2]))


@pytest.fixture(scope="session")
def maumau_bin() -> str:
    """The installed command line (the wheel's binary), never a cargo build."""
    path = shutil.which("maumau")
    assert path, "no maumau on PATH: install the maumau wheel (scripts/test-wheels.sh)"
    return path


@pytest.fixture(scope="session")
def root() -> Path:
    return ROOT


class Server:
    """A running `maumau serve` on 127.0.0.1; `address` is host:port, `matches` a MatchService stub."""

    def __init__(self, binary: str, data_dir: Path):
        self.log_path = data_dir.parent / "server.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir)],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
        )
        self.address = self._wait_for_address()
        self.channel = grpc.insecure_channel(self.address)
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.matches = match_pb2_grpc.MatchServiceStub(self.channel)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def _wait_for_address(self) -> str:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            m = re.search(r"serving on (\S+)", self.log())
            if m:
                return m.group(1)
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.log()}")
            time.sleep(0.05)
        raise RuntimeError(f"the server did not say where it listens:\n{self.log()}")

    def stop(self) -> None:
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._log.close()


@pytest.fixture(scope="module")
def server(maumau_bin: str, tmp_path_factory):
    data = tmp_path_factory.mktemp("serve") / "data"
    data.mkdir()
    s = Server(maumau_bin, data)
    try:
        yield s
    finally:
        s.stop()
