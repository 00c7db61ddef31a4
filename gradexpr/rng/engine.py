"""The mt19937 engine of a PyTorch CPU generator: seeding, raw words, uniform draws and the
5056-byte state ``torch.get_rng_state()`` holds (see the package docstring for PyTorch's rules)."""
from __future__ import annotations

import os
import struct

import numpy as np

# The seed a fresh ``torch.Generator()`` has (c10's default_rng_seed_val).
DEFAULT_RNG_SEED = 67280421310721

_N = 624
_MASK24 = (1 << 24) - 1
_MASK53 = (1 << 53) - 1
_U64 = (1 << 64) - 1
_STATE_SIZE = 5056          # sizeof(CPUGeneratorImplState), what torch.get_rng_state() holds


def _as_uint64(seed) -> int:
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        try:
            seed = int(seed)
        except (TypeError, ValueError):
            raise TypeError(f"seed must be an integer, not {type(seed).__name__}") from None
    seed = int(seed)
    if seed < -(1 << 63) or seed > _U64:
        raise ValueError("Overflow when unpacking long long")
    return seed & _U64


_KEYS: dict = {}            # low 32 bits of a seed -> (key as a read-only uint32 array, as a tuple of ints)
_KEYS_KEPT = 64
_seeder = None              # a legacy RandomState, for its C init_genrand


def _seeded_key(s: int) -> tuple:
    """The mt19937 key ``init_genrand`` makes of the low 32 bits of ``s``: (array, tuple), shared.

    ``key[0] = s; key[j] = 1812433253 * (key[j-1] ^ (key[j-1] >> 30)) + j`` (mod 2**32) is
    the seeding of NumPy's legacy ``RandomState(seed)`` too, so its C loop computes it. A
    key is made once per seed (``eval --batch`` may ask for the state of the same unseeded
    generator on every line; programs reseed with the same few numbers). The tuple is what
    the engine is loaded from: NumPy's state setter copies a key word by word, 20 times
    faster from Python ints than from an array.
    """
    global _seeder
    s &= 0xFFFFFFFF
    entry = _KEYS.get(s)
    if entry is None:
        if _seeder is None:
            _seeder = np.random.RandomState()
        _seeder.seed(s)
        key = _seeder.get_state()[1]
        key.flags.writeable = False
        entry = (key, tuple(key.tolist()))
        if len(_KEYS) >= _KEYS_KEPT:
            _KEYS.clear()
        _KEYS[s] = entry
    return entry


def _init_genrand(s: int) -> np.ndarray:
    """init_genrand's key for ``s`` (a read-only uint32 array)."""
    return _seeded_key(s)[0]


def _nondeterministic_seed() -> int:
    return int.from_bytes(os.urandom(8), "little")


class Generator:
    """One mt19937 stream plus PyTorch's cached normal samples (torch.Generator on CPU)."""

    __module__, __qualname__ = "torch._C", "Generator"     # type(torch.manual_seed(0)), as PyTorch names it

    __slots__ = ("_seed", "_bitgen", "_pending", "_untouched",
                 "_next_double_normal", "_next_float_normal", "__weakref__")

    def __init__(self, seed: int | None = None):
        self._bitgen = None
        if seed is None:
            self.seed()
        else:
            self.manual_seed(seed)

    # -- seeding -------------------------------------------------------------------
    def manual_seed(self, seed: int) -> "Generator":
        self._seed = _as_uint64(seed)
        self._pending = True        # engine key not built yet (done lazily on first draw)
        self._untouched = True      # no word drawn since seeding (torch: left=1, next=0)
        self._next_double_normal = None
        self._next_float_normal = None
        return self

    def initial_seed(self) -> int:
        return self._seed

    def seed(self) -> int:
        s = _nondeterministic_seed()
        self.manual_seed(s)
        return s

    # -- state ---------------------------------------------------------------------
    def _engine(self):
        bg = self._bitgen
        if bg is None:
            bg = self._bitgen = np.random.MT19937(0)
        if self._pending:
            bg.state = {"bit_generator": "MT19937", "state": {"key": _seeded_key(self._seed)[1], "pos": _N}}
            self._pending = False
        return bg

    def get_state(self) -> np.ndarray:
        """The state as the 5056 bytes ``torch.Generator.get_state()`` returns (uint8)."""
        if self._pending or self._untouched:
            key = _init_genrand(self._seed) if self._pending else \
                self._bitgen.state["state"]["key"]
            left, nxt = 1, 0
        else:
            st = self._bitgen.state["state"]
            key, pos = st["key"], int(st["pos"])
            left, nxt = _N + 1 - pos, pos
        buf = bytearray(_STATE_SIZE)
        struct.pack_into("<QiiQ", buf, 0, self._seed, left, 1, nxt)
        buf[24:24 + 8 * _N] = np.asarray(key, dtype=np.uint32).astype("<u8").tobytes()
        off = 24 + 8 * _N
        if self._next_double_normal is not None:
            struct.pack_into("<ddd i", buf, off, 0.0, self._next_double_normal, 0.0, 1)
        if self._next_float_normal is not None:
            struct.pack_into("<f?", buf, off + 32, self._next_float_normal, True)
        return np.frombuffer(bytes(buf), dtype=np.uint8).copy()

    def _snapshot(self):
        """A copy of the state to restore after a rerun (``eval``'s promotion and ``--check``).

        A generator seeded but never drawn from is copied as its seed: building its engine key
        would load ``numpy.random`` for a one-liner that draws nothing (start-up).
        """
        if self._pending:
            return self._seed
        return self.get_state()

    def _restore(self, snapshot) -> None:
        if isinstance(snapshot, int):
            self.manual_seed(snapshot)
        else:
            self.set_state(snapshot)

    def set_state(self, state) -> "Generator":
        raw = np.asarray(state, dtype=np.uint8).tobytes() if not isinstance(state, (bytes, bytearray)) \
            else bytes(state)
        if len(raw) != _STATE_SIZE:
            raise ValueError(f"Expected a CPUGeneratorImplState of size {_STATE_SIZE} "
                             f"but found the input RNG state size to be {len(raw)}")
        seed, left, seeded, nxt = struct.unpack_from("<QiiQ", raw, 0)
        if not (seeded and 0 < left <= _N and nxt <= _N):
            raise ValueError("Invalid mt19937 state")
        key = np.frombuffer(raw, dtype="<u8", count=_N, offset=24).astype(np.uint32)
        off = 24 + 8 * _N
        _, normal_y, _, normal_valid = struct.unpack_from("<dddi", raw, off)
        fnext, fvalid = struct.unpack_from("<f?", raw, off + 32)
        bg = self._bitgen
        if bg is None:
            bg = self._bitgen = np.random.MT19937(0)
        bg.state = {"bit_generator": "MT19937",
                    "state": {"key": key.tolist(), "pos": _N if left == 1 else int(nxt)}}
        self._seed = seed
        self._pending = False
        self._untouched = left == 1 and nxt == 0
        self._next_double_normal = float(normal_y) if normal_valid else None
        self._next_float_normal = float(fnext) if fvalid else None
        return self

    # -- raw draws -------------------------------------------------------------------
    def _words(self, n: int) -> np.ndarray:
        """n successive 32-bit outputs (``random()``), as uint64."""
        if n <= 0:
            return np.zeros(0, dtype=np.uint64)
        bg = self._engine()
        self._untouched = False
        return bg.random_raw(n)

    def _random64(self, n: int) -> np.ndarray:
        w = self._words(2 * n)
        return (w[0::2] << np.uint64(32)) | w[1::2]

    def _uniform24(self, n: int) -> np.ndarray:
        """at::uniform_real_distribution<float>(0, 1): float32 in [0, 1)."""
        w = self._words(n).astype(np.uint32)
        w &= np.uint32(_MASK24)
        x = w.view(np.int32).astype(np.float32)
        x *= np.float32(2.0 ** -24)
        return x

    def _uniform53(self, n: int) -> np.ndarray:
        """at::uniform_real_distribution<double>(0, 1): float64 in [0, 1)."""
        w = self._words(2 * n)
        v = ((w[0::2] & np.uint64(0x1FFFFF)) << np.uint64(32)) | w[1::2]
        return v.astype(np.float64) * (2.0 ** -53)

    def __repr__(self):
        # PyTorch's repr (torch.manual_seed returns the default generator, which programs print)
        return f"<torch._C.Generator object at {id(self):#x}>"


default_generator = Generator()


def manual_seed(seed: int) -> Generator:
    """Reseed the default generator (torch.manual_seed); returns it."""
    return default_generator.manual_seed(seed)


def seed() -> int:
    return default_generator.seed()


def initial_seed() -> int:
    return default_generator.initial_seed()


def get_rng_state() -> np.ndarray:
    return default_generator.get_state()


def set_rng_state(state) -> None:
    default_generator.set_state(state)


def snapshot_rng_state():
    """The default generator's state, cheaply, for ``restore_rng_state`` (not torch's bytes)."""
    return default_generator._snapshot()


def restore_rng_state(snapshot) -> None:
    default_generator._restore(snapshot)


# ====================================================================== helpers

def _gen(generator) -> Generator:
    if generator is None:
        return default_generator
    if not isinstance(generator, Generator):
        raise TypeError(f"generator must be a gradexpr.rng.Generator, not {type(generator).__name__}")
    return generator
