"""A TCP proxy on loopback that can cut the connections through it, the tests' way to drop a
client's stream, and its fixture ``proxy_to``: shared by this directory's tests and the
installed-wheel tests in python/tests-installed (each conftest.py imports the fixture; the latter
puts this directory on ``sys.path``)."""

from __future__ import annotations

import socket
import threading
import time

import pytest


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
