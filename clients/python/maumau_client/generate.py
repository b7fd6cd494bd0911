"""Regenerates the Python protobuf and gRPC code from the proto files of the repository.

    python -m maumau_client.generate [--proto DIR] [--out DIR]

Runs the protoc bundled in grpcio-tools (no protoc binary needed) on every ``*.proto`` under
``DIR/maumau/v1`` (default: ``proto/`` at the root of the repository) and writes
``maumau/v1/*_pb2.py``, ``*_pb2.pyi`` and ``*_pb2_grpc.py`` under ``--out`` (default: the
``maumau_client/pb`` package). The generated imports (``from maumau.v1 import x_pb2``) are
rewritten to relative ones (``from . import x_pb2``) so that the code lives inside this package
and does not need a top-level ``maumau`` module on ``sys.path``.

The output depends only on the proto files and the pinned grpcio-tools version, so
regenerating into a temporary directory and diffing against the checked-in files is a drift
check (see scripts/test-clients.sh).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
DEFAULT_PROTO = PACKAGE_DIR.parents[2] / "proto"
DEFAULT_OUT = PACKAGE_DIR / "pb"
PROTO_PACKAGE = ("maumau", "v1")

INIT_TEXT = {
    (): '"""Generated protobuf and gRPC code for Mau Mau Arena (see maumau_client.generate)."""\n',
    ("maumau",): "",
    ("maumau", "v1"): "",
}

# `from maumau.v1 import cards_pb2 as ...` -> `from . import cards_pb2 as ...`
IMPORT_RE = re.compile(r"^from maumau\.v1 import ", re.MULTILINE)


def generate(proto_dir: Path, out_dir: Path) -> list[Path]:
    """Generates the code for every proto file under proto_dir/maumau/v1 into out_dir."""
    from grpc_tools import protoc  # imported here so `--help` works without grpcio-tools

    proto_dir = proto_dir.resolve()
    src = proto_dir.joinpath(*PROTO_PACKAGE)
    protos = sorted(p.relative_to(proto_dir).as_posix() for p in src.glob("*.proto"))
    if not protos:
        raise SystemExit(f"no .proto files under {src}")
    well_known = str(resources.files("grpc_tools") / "_proto")
    with tempfile.TemporaryDirectory() as tmp:
        args = [
            "grpc_tools.protoc",
            f"-I{proto_dir}",
            f"-I{well_known}",
            f"--python_out={tmp}",
            f"--pyi_out={tmp}",
            f"--grpc_python_out={tmp}",
            *protos,
        ]
        # protoc resolves the files relative to the include path; run it from the proto root
        # so that the command line (and so the output) does not depend on the caller's cwd.
        code = protoc.main(args)
        if code != 0:
            raise SystemExit(f"protoc failed with exit code {code}")
        gen_dir = Path(tmp).joinpath(*PROTO_PACKAGE)
        target = out_dir.joinpath(*PROTO_PACKAGE)
        target.mkdir(parents=True, exist_ok=True)
        for stale in target.glob("*_pb2*.py*"):
            stale.unlink()
        written = []
        for f in sorted(gen_dir.iterdir()):
            text = IMPORT_RE.sub("from . import ", f.read_text(encoding="utf-8"))
            dest = target / f.name
            dest.write_text(text, encoding="utf-8", newline="\n")
            written.append(dest)
    for parts, text in INIT_TEXT.items():
        init = out_dir.joinpath(*parts, "__init__.py")
        init.write_text(text, encoding="utf-8", newline="\n")
        written.append(init)
    return written


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m maumau_client.generate", description=__doc__.split("\n\n")[0])
    parser.add_argument("--proto", type=Path, default=DEFAULT_PROTO, help=f"proto root (default: {DEFAULT_PROTO})")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output package directory (default: {DEFAULT_OUT})")
    args = parser.parse_args(argv)
    written = generate(args.proto, args.out)
    print(f"generated {len(written)} files under {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
