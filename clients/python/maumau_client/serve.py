"""A local `maumau serve` for tests and notebooks: starts the real binary on a free loopback port
with its own data directory, waits until it says where it listens, and stops it gracefully.

    from maumau_client.serve import LocalServer
    with LocalServer("maumau", data_dir) as server:
        stub = server.matches          # a MatchServiceStub on server.address
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import time
from pathlib import Path

import grpc

from maumau_client.pb.maumau.v1 import match_pb2_grpc


class LocalServer:
    """A running `maumau serve` on 127.0.0.1.

    `address` is host:port, `channel` a gRPC channel to it, `matches` a MatchServiceStub on that
    channel, `log_path` the file its output goes to (beside `data_dir`). `timeout` bounds the
    wait for start-up and for a graceful stop (SIGINT: the server records its matches), after
    which the process is killed.
    """

    def __init__(self, binary: str | os.PathLike, data_dir: Path,
                 extra_args: tuple[str, ...] = (), timeout: float = 60.0):
        self.timeout = timeout
        self.log_path = Path(data_dir).parent / "server.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            [str(binary), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(data_dir),
             *extra_args],
            stdin=subprocess.DEVNULL, stdout=self._log, stderr=subprocess.STDOUT,
            env={**os.environ, "RUST_LOG": os.environ.get("RUST_LOG", "info")},
        )
        try:
            self.address = self._wait_for_address()
            self.channel = grpc.insecure_channel(self.address)
            grpc.channel_ready_future(self.channel).result(timeout=timeout)
        except BaseException:
            self._kill()
            raise
        self.matches = match_pb2_grpc.MatchServiceStub(self.channel)

    def log(self) -> str:
        """Everything the server printed so far."""
        return self.log_path.read_text(errors="replace")

    def _wait_for_address(self) -> str:
        deadline = time.monotonic() + self.timeout
        while time.monotonic() < deadline:
            m = re.search(r"serving on (\S+)", self.log())
            if m:
                return m.group(1)
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}:\n{self.log()}")
            time.sleep(0.05)
        raise RuntimeError(f"the server did not say where it listens:\n{self.log()}")

    def _kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self._log.close()

    def stop(self) -> None:
        """Stops the server gracefully (SIGINT), or kills it after `timeout`."""
        self.channel.close()
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=self.timeout)
            except subprocess.TimeoutExpired:
                pass
        self._kill()

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()
