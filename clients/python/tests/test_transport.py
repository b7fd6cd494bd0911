"""Choosing the transport (``maumau_client.native``) where only the pure-Python client is installed:
grpcio plays, the native transport is refused with the reason, and importing the client does not
import grpc, asyncio, logging or OpenSSL (a bot on the native transport never pays for them). The native transport itself is
tested where maumau_engine is installed too (python/tests-installed/test_native_transport.py)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from maumau_client import Bot, native, run


def test_importing_the_client_imports_neither_grpc_nor_asyncio_nor_openssl():
    # What a bot launched once per match pays at each start: not grpc, asyncio or logging, nor
    # OpenSSL (hashlib's) for checking the revealed seed, which CPython hashes by itself.
    code = ("import sys, maumau_client; maumau_client.seed_commitment(1, b'salt'); "
            "print(sorted({'grpc', 'asyncio', 'logging', '_hashlib'} & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stdout


def test_without_maumau_engine_the_native_transport_is_refused_and_auto_is_grpcio(monkeypatch):
    if native.available():
        pytest.skip("maumau_engine with its runner is installed here")
    with pytest.raises(RuntimeError, match="maumau_engine"):
        run(Bot(), "127.0.0.1:1", "token", transport="native")
    assert not native.use_native(None)
    monkeypatch.setenv(native.TRANSPORT_VAR, "native")
    with pytest.raises(RuntimeError, match="maumau_engine"):
        native.use_native(None)
    assert not native.use_native("grpcio")


def test_an_unknown_transport_is_refused(monkeypatch):
    with pytest.raises(ValueError, match="carrier-pigeon"):
        native.use_native("carrier-pigeon")
    monkeypatch.setenv(native.TRANSPORT_VAR, "smoke-signals")
    with pytest.raises(ValueError, match="smoke-signals"):
        native.use_native(None)
