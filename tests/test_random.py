"""gradexpr.rng against PyTorch's recorded CPU random numbers, bit for bit.

The cases come from tests/data/make_random_cases.py (run under real PyTorch 2.13).
"""
from __future__ import annotations

import hashlib
import json
import os

import numpy as np
import pytest

from gradexpr import rng as R
from gradexpr.rng import engine as E

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "random_cases.json")

with open(DATA) as _f:
    DOC = json.load(_f)
CASES = DOC["cases"]


# Same recipe as tests/data/make_random_cases.py (checked against the recorded hashes).
def recipe(name: str, shape, dtype: str) -> np.ndarray:
    n = int(np.prod(shape, dtype=np.int64))
    i = np.arange(n, dtype=np.float64)
    if name == "mean":
        v = (np.mod(i, 13.0) - 6.0) * 0.37
    elif name == "std":
        v = (np.mod(i, 7.0) + 1.0) * 0.29
    elif name == "prob":
        v = np.mod(i, 11.0) / 10.0
    else:
        raise ValueError(name)
    return v.astype(dtype).reshape(shape)


def sha(a: np.ndarray) -> str:
    a = np.ascontiguousarray(a)
    if a.dtype.byteorder == ">":
        a = a.byteswap().view(a.dtype.newbyteorder("<"))
    return hashlib.sha256(a.tobytes()).hexdigest()


def enc_values(a: np.ndarray) -> list:
    if a.dtype.kind == "f":
        return [float(x).hex() for x in a.astype(np.float64).ravel().tolist()]
    if a.dtype.kind == "b":
        return [bool(x) for x in a.ravel().tolist()]
    return [int(x) for x in a.ravel().tolist()]


def arg(spec):
    if isinstance(spec, dict):
        return recipe(spec["recipe"], tuple(spec["shape"]), spec["dtype"])
    return spec


def run(call: dict, g):
    fn, a = call["fn"], call["args"]
    if fn == "rand":
        return R.rand(tuple(a["shape"]), a["dtype"], generator=g)
    if fn == "randn":
        return R.randn(tuple(a["shape"]), a["dtype"], generator=g)
    if fn == "randint":
        return R.randint(a["low"], a["high"], tuple(a["shape"]), a["dtype"], generator=g)
    if fn == "randperm":
        return R.randperm(a["n"], a["dtype"], generator=g)
    if fn == "uniform":
        return R.uniform(a["low"], a["high"], tuple(a["shape"]), a["dtype"], generator=g)
    if fn == "normal":
        return R.normal(arg(a["mean"]), arg(a["std"]), tuple(a["shape"]), a["dtype"], generator=g)
    if fn == "bernoulli":
        return R.bernoulli(arg(a["p"]), tuple(a["shape"]), a["dtype"], generator=g)
    if fn == "dropout":
        return R.dropout_mask(tuple(a["shape"]), a["p"], a["dtype"], generator=g)
    raise ValueError(fn)


def check_result(got: np.ndarray, want: dict, where: str):
    assert got.dtype.name == want["dtype"], f"{where}: dtype {got.dtype.name} != {want['dtype']}"
    assert list(got.shape) == want["shape"], f"{where}: shape {got.shape} != {want['shape']}"
    if "values" in want:
        vals = enc_values(got)
        if vals != want["values"]:
            bad = next(i for i, (x, y) in enumerate(zip(vals, want["values"])) if x != y)
            n_bad = sum(x != y for x, y in zip(vals, want["values"]))
            pytest.fail(f"{where}: {n_bad} of {len(vals)} values differ; first at {bad}: "
                        f"got {vals[bad]}, torch {want['values'][bad]}")
        return
    flat = got.ravel()
    edge = DOC["edge"]
    assert enc_values(flat[:edge]) == want["head"], f"{where}: first {edge} values differ"
    assert enc_values(flat[-edge:]) == want["tail"], f"{where}: last {edge} values differ"
    assert sha(got) == want["sha256"], f"{where}: SHA-256 of the values differs"


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_recorded_case(case):
    for key, h in case["inputs"].items():
        name, dtype, shape = key.split("/")
        shp = tuple(int(s) for s in shape.split("x")) if shape else ()
        assert sha(recipe(name, shp, dtype)) == h, f"input recipe {key} differs from the recorder's"
    if case["generator"]:
        g = R.Generator(R.DEFAULT_RNG_SEED if case["seed"] is None else case["seed"])
        state_of = g
    else:
        g = None
        R.manual_seed(case["seed"])
        state_of = R.default_generator
    for i, (call, want) in enumerate(zip(case["calls"], case["results"])):
        got = run(call, g)
        check_result(got, want, f"{case['id']} call {i} ({call['fn']} {call['args']})")
    # the generator consumed exactly as many words as torch's (and caches the same sample)
    assert sha(state_of.get_state()) == case["state_sha256"], "generator state differs after the calls"


def test_case_counts():
    assert len(CASES) > 800
    assert DOC["torch_version"].startswith("2.13")


def test_unseeded_generators_differ():
    g1, g2 = R.Generator(), R.Generator()
    assert g1.initial_seed() != g2.initial_seed()
    assert not np.array_equal(R.rand((8,), generator=g1), R.rand((8,), generator=g2))
    assert not np.array_equal(R.randn((20,), generator=g1), R.randn((20,), generator=g2))


def test_seed_reseeds_nondeterministically():
    g = R.Generator(5)
    s1 = g.seed()
    x1 = R.rand((4,), generator=g)
    s2 = g.seed()
    x2 = R.rand((4,), generator=g)
    assert s1 != s2 and g.initial_seed() == s2
    assert not np.array_equal(x1, x2)
    assert 0 <= s1 < 2**64


def test_manual_seed_semantics():
    g = R.Generator()
    assert g.manual_seed(3) is g
    assert R.manual_seed(3) is R.default_generator
    assert R.default_generator.initial_seed() == 3
    # torch: seeds are uint64, negative ones wrap; only the low 32 bits seed mt19937
    assert R.Generator(-1).initial_seed() == 2**64 - 1
    assert np.array_equal(R.rand((3,), generator=R.Generator(5 + 2**32)),
                          R.rand((3,), generator=R.Generator(5)))
    with pytest.raises(ValueError):
        R.Generator(2**64)
    with pytest.raises(ValueError):
        R.Generator(-2**63 - 1)


def test_generator_independent_of_default():
    R.manual_seed(0)
    a = R.randn((5,))
    R.manual_seed(0)
    g = R.Generator(0)
    R.randn((5,), generator=g)
    assert np.array_equal(R.randn((5,)), a)


def test_state_roundtrip():
    g = R.Generator(11)
    R.randn((3,), "float64", generator=g)            # leaves a cached normal sample
    st = g.get_state()
    assert st.dtype == np.uint8 and st.shape == (5056,)
    x = R.randn((5,), "float64", generator=g)
    y = R.rand((700,), generator=g)
    h = R.Generator().set_state(st)
    assert np.array_equal(R.randn((5,), "float64", generator=h), x)
    assert np.array_equal(R.rand((700,), generator=h), y)


def test_dropout_mask_edges():
    R.manual_seed(0)
    before = R.get_rng_state()
    assert np.array_equal(R.dropout_mask((4,), 0.0), np.ones(4, np.float32))
    assert np.array_equal(R.dropout_mask((4,), 1.0), np.zeros(4, np.float32))
    assert np.array_equal(R.get_rng_state(), before)     # p == 0 and p == 1 draw nothing
    with pytest.raises(ValueError):
        R.dropout_mask((4,), 1.5)


def test_large_float32_randn_is_fast():
    import time
    R.manual_seed(0)
    R.randn((10**6,))                                    # warm-up (imports, caches)
    t = time.perf_counter()
    R.randn((10**6,))
    assert time.perf_counter() - t < 1.0                 # generous bound for slow CI machines


# ------------------------------------------------------------------ the per-seed cache of mt19937 keys
def _reference_init_genrand(seed: int) -> np.ndarray:
    """init_genrand as in the mt19937 reference code (and PyTorch's mt19937_engine::init_with_uint32)."""
    key = [seed & 0xFFFFFFFF]
    for j in range(1, 624):
        x = key[-1]
        key.append((1812433253 * (x ^ (x >> 30)) + j) & 0xFFFFFFFF)
    return np.array(key, dtype=np.uint32)


@pytest.mark.parametrize("seed", [0, 1, 5, 42, 2**31 - 1, 2**31, 2**32 - 1, 2**32 + 7, 2**64 - 1,
                                  R.DEFAULT_RNG_SEED])
def test_seeded_key_is_init_genrand(seed):
    E._KEYS.clear()
    fresh = E._init_genrand(seed)
    np.testing.assert_array_equal(fresh, _reference_init_genrand(seed))
    assert fresh.dtype == np.uint32
    cached = E._init_genrand(seed)                       # from the cache now
    assert cached is fresh and E._seeded_key(seed)[1] == tuple(_reference_init_genrand(seed).tolist())
    with pytest.raises(ValueError):                      # shared, so nobody may write to it
        cached[0] = 1


def test_cached_key_gives_the_numbers_of_a_fresh_one():
    def draws(g):
        return (R.rand((7,), generator=g), R.randn((20,), "float64", generator=g), R.randint(0, 10, (5,), generator=g),
                g.get_state())

    E._KEYS.clear()
    first = draws(R.Generator(1234))                     # the key is made here
    assert 1234 in E._KEYS
    again = draws(R.Generator(1234))                     # and reused here
    E._KEYS.clear()
    fresh = draws(R.Generator(1234))                     # made again from scratch
    for a, b, c in zip(first, again, fresh):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_array_equal(a, c)
    # the state of a generator that has not drawn yet is the seeded key, as torch.get_rng_state() shows it
    st = R.Generator(99).get_state()
    words = np.frombuffer(st.tobytes(), dtype="<u8", count=624, offset=24)
    np.testing.assert_array_equal(words, _reference_init_genrand(99).astype(np.uint64))


def test_the_cache_stays_small():
    E._KEYS.clear()
    for s in range(3 * E._KEYS_KEPT):
        R.Generator(s).get_state()
    assert 0 < len(E._KEYS) <= E._KEYS_KEPT
    np.testing.assert_array_equal(E._init_genrand(3), _reference_init_genrand(3))
