"""Program files are read as CPython reads source files (PEP 263), and refused in its words.

Each file is also run by this very CPython (``sys.executable FILE``): gradexpr's message must be
the last line of CPython's report, located at the offending byte, with exit status 2."""
from __future__ import annotations

import subprocess
import sys

import pytest

from gradexpr.grammar import source

BAD = {
    "invalid_byte": b'x = 1\nprint("\xff")\n',
    "nul": b"x = 1\x00\n",
    "utf16_bom": "x = 1\n".encode("utf-16"),
    "elf_header": b"\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00\xd0a",
    "nul_before_bad_byte": b'x = "\x00\xff"\n',
    "bad_byte_before_nul": b'x = "\xff\x00"\n',
    "coding_on_line_3_is_ignored": b'x = 1\n# coding: latin-1\nprint("\xe9")\n',
    "unknown_encoding": b"# coding: foobar\nprint(1)\n",
    "bom_with_latin1": b"\xef\xbb\xbf# coding: latin-1\nprint(1)\n",
    "huge_integer_literal": b"x = " + b"7" * 100_000 + b"\n",
    "integer_literal_past_4300_digits": b"y = 2\nx = " + b"1" * 4301 + b"\n",
}
GOOD = {
    "latin1_declared": (b'# -*- coding: latin-1 -*-\nprint("caf\xe9")\n', "café\n"),
    "declared_on_line_2": (b'\n# vim: set fileencoding=latin-1 :\nprint("\xe9")\n', "é\n"),
    "utf8_bom": (b"\xef\xbb\xbfprint(1)\n", "1\n"),
    "utf8": ('print("∂x")\n'.encode(), "∂x\n"),
    "long_hex_literal": (b"print(0x" + b"f" * 4400 + b" % 7)\n", f"{int('f' * 4400, 16) % 7}\n"),
}


def _gradexpr(path):
    return subprocess.run([sys.executable, "-m", "gradexpr.cli.main", "run", str(path)], capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("name", sorted(BAD))
def test_unreadable_source_is_cpythons_located_syntax_error(tmp_path, name):
    path = tmp_path / f"{name}.gx"
    path.write_bytes(BAD[name])
    cpython = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    expected = cpython.stderr.strip().splitlines()[-1]
    assert expected.startswith("SyntaxError: ")
    got = _gradexpr(path)
    assert got.returncode == 2, got.stderr
    headline = got.stderr.splitlines()[0]
    assert headline.startswith(f"{path}:")
    assert headline.split(": ", 1)[1] == expected


def test_the_location_is_the_offending_byte(tmp_path):
    text = source.decode(b'x = 1\nprint("\xff")\n', "p.gx")
    assert (text.error.line, text.error.column) == (2, 8)
    text = source.decode(b"ab\ncd\x00", "p.gx")
    assert (text.error.line, text.error.column) == (2, 3)


@pytest.mark.parametrize("name", sorted(GOOD))
def test_readable_source_runs_as_in_cpython(tmp_path, name):
    data, printed = GOOD[name]
    path = tmp_path / f"{name}.gx"
    path.write_bytes(data)
    cpython = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=120)
    assert cpython.stdout == printed
    got = _gradexpr(path)
    assert (got.returncode, got.stdout) == (0, printed), got.stderr
