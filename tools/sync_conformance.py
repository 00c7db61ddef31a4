#!/usr/bin/env python3
"""Copy the shared conformance programs into tests/conformance/ and say what changed.

The project must stand alone (a clone has no ../shared), so the suite runs the copy in
tests/conformance/ through the gradexpr pytest plugin; this script refreshes that copy.
Files that are no longer in the source are removed from the copy.

usage: tools/sync_conformance.py [--from DIR] [--check]
  --from DIR   the source folder (default: ../shared/conformance beside the repository)
  --check      change nothing; exit 1 if the copy differs from the source (for CI)
"""
from __future__ import annotations

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_SOURCE = REPO.parent / "shared" / "conformance"
DESTINATION = REPO / "tests" / "conformance"


def files_under(root: Path) -> dict[str, Path]:
    """Regular files below ``root`` keyed by their POSIX path relative to it (caches skipped)."""
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def differences(source: Path, destination: Path) -> list[tuple[str, str]]:
    """``(change, relative path)`` with change ``new``, ``changed`` or ``removed``."""
    src, dst = files_under(source), files_under(destination) if destination.exists() else {}
    changes = [("new" if rel not in dst else "changed", rel) for rel, p in src.items()
               if rel not in dst or dst[rel].read_bytes() != p.read_bytes()]
    changes += [("removed", rel) for rel in dst if rel not in src]
    return sorted(changes, key=lambda c: c[1])


def apply(changes, source: Path, destination: Path) -> None:
    for change, rel in changes:
        target = destination / rel
        if change == "removed":
            target.unlink()
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source / rel, target)
    for folder in sorted((d for d in destination.rglob("*") if d.is_dir()), reverse=True):
        if not any(folder.iterdir()):
            folder.rmdir()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--from", dest="source", type=Path, default=DEFAULT_SOURCE, metavar="DIR")
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if out of date")
    args = ap.parse_args(argv)
    if not args.source.is_dir():
        print(f"no such folder: {args.source}", file=sys.stderr)
        return 2
    changes = differences(args.source, DESTINATION)
    for change, rel in changes:
        print(f"{change:<8} tests/conformance/{rel}")
    if args.check:
        print("up to date" if not changes else f"{len(changes)} file(s) out of date")
        return 1 if changes else 0
    apply(changes, args.source, DESTINATION)
    print(f"{len(changes)} file(s) updated" if changes else "up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
