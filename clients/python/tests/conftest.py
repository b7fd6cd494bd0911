"""Fixtures: the real `maumau serve` binary on a free loopback port with a temporary data dir.

The binary is $MAUMAU_BIN; without it, `cargo build --release -p maumau-cli` builds it (in
$CARGO_TARGET_DIR, or the workspace's target directory).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
from pathlib import Path

import pytest

from maumau_client.serve import LocalServer

REPO = Path(__file__).resolve().parents[3]


def _build_binary() -> Path:
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "-p", "maumau-cli"], cwd=REPO, check=True
    )
    target = os.environ.get("CARGO_TARGET_DIR")
    if not target:
        meta = subprocess.run(
            ["cargo", "metadata", "--format-version", "1", "--no-deps"],
            cwd=REPO, check=True, capture_output=True, text=True,
        )
        target = json.loads(meta.stdout)["target_directory"]
    return Path(target) / "release" / "maumau"


@pytest.fixture(scope="session")
def maumau_bin() -> Path:
    path = Path(os.environ["MAUMAU_BIN"]) if os.environ.get("MAUMAU_BIN") else _build_binary()
    assert path.is_file(), f"no server binary at {path}"
    return path


@pytest.fixture
def server(maumau_bin: Path, tmp_path: Path):
    data = tmp_path / "data"
    data.mkdir()
    s = LocalServer(maumau_bin, data)
    try:
        yield s
    finally:
        s.stop()


@pytest.fixture
def ladder_server(maumau_bin: Path, tmp_path: Path):
    """A server running the ladder (`maumau serve --ladder`) with its default formats; versions
    are rated from their first match (validation matches are tested in the Rust suite)."""
    data = tmp_path / "data"
    data.mkdir()
    config = tmp_path / "ladder.toml"
    config.write_text("ladder_validation = false\n")
    s = LocalServer(maumau_bin, data, ("--ladder", "--config", str(config)))
    try:
        yield s
    finally:
        s.stop()


class Proxy:
    """A TCP proxy on loopback that can cut every connection through it, to drop a client.

    `cut(after)` first swallows what the server sends (so the client misses it), then after
    `after` seconds closes both sides of every open connection. New connections pass again.
    With `upstream=True` it swallows what the client sends too (so the server misses it).
    """

    def __init__(self, target: str):
        host, port = target.rsplit(":", 1)
        self.target = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = "127.0.0.1:%d" % self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.conns: list[tuple[socket.socket, socket.socket]] = []
        self.blackhole = False
        self.blackhole_up = False
        self.swallowed = 0
        self.swallowed_up = 0
        self.cuts = 0
        self.closed = False
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.closed:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            upstream = socket.create_connection(self.target)
            for s in (client, upstream):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            with self.lock:
                self.conns.append((client, upstream))
            threading.Thread(target=self._pump, args=(client, upstream, False), daemon=True).start()
            threading.Thread(target=self._pump, args=(upstream, client, True), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket, downstream: bool) -> None:
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                if downstream and self.blackhole:
                    self.swallowed += len(data)
                    continue
                if not downstream and self.blackhole_up:
                    self.swallowed_up += len(data)
                    continue
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self, after: float, upstream: bool = False) -> None:
        with self.lock:
            self.blackhole = True
            self.blackhole_up = upstream

        def later() -> None:
            time.sleep(after)
            with self.lock:
                conns, self.conns = self.conns, []
                for pair in conns:
                    for s in pair:
                        try:
                            s.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass
                        s.close()
                self.blackhole = False
                self.blackhole_up = False
                self.cuts += 1

        threading.Thread(target=later, daemon=True).start()

    def close(self) -> None:
        self.closed = True
        self.listener.close()
        with self.lock:
            for pair in self.conns:
                for s in pair:
                    s.close()


@pytest.fixture
def proxy_to():
    proxies: list[Proxy] = []

    def make(target: str) -> Proxy:
        p = Proxy(target)
        proxies.append(p)
        return p

    yield make
    for p in proxies:
        p.close()
