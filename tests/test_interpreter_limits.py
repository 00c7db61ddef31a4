"""The interpreter's limits (SPEC 3): loop iterations, wall time, recursion, expression depth,
integer digits, string and list sizes, the nesting of printed values; each refused with a
located LimitError naming its option, and zero meaning unlimited."""
from __future__ import annotations

import time

import pytest

from gradexpr import errors, limits
from gradexpr.grammar.parser import parse
from test_interpreter import fails, output, run      # (the interpreter's test harness)


def lim(**kw):
    return limits.Limits(**kw)


def test_loop_iteration_limit_counts_all_loops_together():
    src = "n = 0\nfor i in range(60):\n    for j in range(60):\n        n += 1\nprint(n)"
    assert output(src, lim=lim(max_loop_iterations=3660)) == "3600\n"
    e = fails(src, lim=lim(max_loop_iterations=3000), kind=errors.LimitError)
    assert "the number of loop iterations exceeds the limit of 3,000" in e.message
    assert "--max-loop-iterations" in e.message and e.line == 3
    e = fails("while True:\n    pass\n", kind=errors.LimitError)
    assert "1,000,000" in e.message and (e.line, e.column) == (1, 1)
    assert output("i = 0\nwhile True:\n    i += 1\n    if i == 5:\n        break\nprint(i)",
                  lim=lim(max_loop_iterations=5)) == "5\n"


def test_builtins_consuming_ranges_count_as_loop_iterations():
    e = fails("print(sum(range(10**12)))", kind=errors.LimitError)
    assert "loop iterations" in e.message
    e = fails("print(max(zip(range(10**12), range(10**12))))", lim=lim(max_loop_iterations=10_000),
              kind=errors.LimitError)
    assert "loop iterations" in e.message
    assert output("print(any(range(10**12)), sum(range(100)))") == "True 4950\n"


def test_wall_time_limit():
    e = fails("while True:\n    pass", lim=lim(max_seconds=0.2, max_loop_iterations=0), kind=errors.LimitError)
    assert "running time" in e.message and "--max-seconds" in e.message
    t = time.perf_counter()
    e = fails("def f(n):\n    return f(n - 1) + f(n - 1) if n else 0\nf(60)",
              lim=lim(max_seconds=0.2, max_loop_iterations=0), kind=errors.LimitError)
    assert "running time" in e.message and time.perf_counter() - t < 5


def test_recursion_depth_limit():
    e = fails("def f(n):\n    return f(n + 1)\nf(0)", kind=errors.RecursionError)
    assert e.headline() == "RecursionError: maximum recursion depth exceeded"
    assert (e.line, e.column) == (2, 12) and "1000" in e.hint
    assert output("def f(n):\n    return n if n == 0 else f(n - 1)\nprint(f(950))") == "0\n"
    e = fails("def f(n):\n    return f(n + 1)\nf(0)", lim=lim(max_recursion=0), kind=errors.RecursionError)
    assert "maximum recursion depth exceeded" in e.message


def test_expression_depth_is_checked_at_parse_time():
    with pytest.raises(errors.LimitError):
        parse("x = " + "(" * 300 + "1" + ")" * 300)
    assert output("print(" + "(" * 100 + "1" + ")" * 100 + ")") == "1\n"


@pytest.mark.parametrize("src, fragment", [
    ("x = 10 ** 10 ** 10", "an integer of about 10,000,000,000 digits"),
    ("x = 2 ** 100000", "digits exceeds the limit of 10,000"),
    ("x = pow(7, 10 ** 8)", "digits exceeds the limit of 10,000"),
    ("x = 1 << 10 ** 6", "digits exceeds the limit of 10,000"),
    ("x = 10 ** 6000\ny = x * x", "digits exceeds the limit of 10,000"),
    ("x = 3\nx **= 10 ** 7", "digits exceeds the limit of 10,000"),
    ("x = 0x" + "f" * 9_000, "an integer literal of 10,838 digits"),
])
def test_integer_size_limits(src, fragment):
    if src.startswith("x = 0x"):
        with pytest.raises(errors.LimitError) as info:
            parse(src)
        e = info.value
    else:
        e = fails(src, kind=errors.LimitError)
    assert fragment in e.message and "--max-int-digits" in e.message


def test_integer_arithmetic_below_the_limit_is_untouched():
    assert output("print(len(str(2 ** 10000)), 7 ** 2, 3 * 4, 1 << 3, pow(2, 5), 10 ** 4 * 10 ** 4)") == \
        "3011 49 12 8 32 100000000\n"


@pytest.mark.parametrize("src, fragment", [
    ("x = 'a' * 10 ** 8", "a string of 100,000,000 characters"),
    ("x = [0] * 10 ** 8", "a list of 100,000,000 items"),
    ("x = 10 ** 8 * (0,)", "a tuple of 100,000,000 items"),
    ("s = 'ab'\nfor i in range(40):\n    s = s + s", "a string of"),
    ("s = 'ab'\nfor i in range(40):\n    s += s", "a string of"),
    ("l = [1]\nfor i in range(40):\n    l.extend(l)", "a list of"),
    ("x = list(range(10 ** 9))", "a list of 1,000,000,000 items"),
    ("x = tuple(range(10 ** 9))", "items"),
    ("x = sorted(range(10 ** 9))", "items"),
    ("x = ''.join(['a' * 1000] * 100000)", "a string of 100,000,000 characters"),
    ("x = 'a'.center(10 ** 9)", "a string of 1,000,000,000 characters"),
    ("x = 'a'.zfill(10 ** 9)", "a string of"),
    ("x = ('a' * 1000).replace('a', 'b' * 100000)", "a string of"),
    ("x = f'{1:>1000000000}'", "a format width of 1,000,000,000"),
    ("x = f'{1.5:.1000000000f}'", "a format width of"),
    ("x = '%1000000000d' % 1", "a format width of"),
    ("x = '%*d' % (10 ** 9, 1)", "a format width of"),
    ("l = [[0] * 1000] * 100000\nprint(l)", "characters"),
    ("l = [[0] * 1000] * 100000\nx = '%s' % (l,)", "characters"),
    ("l = [[0] * 1000] * 100000\nx = f'{l}'", "characters"),
    ("l = [[0] * 1000] * 100000\nx = repr(l)", "characters"),
    ("l = [[0] * 1000] * 100000\nassert False, l", "characters"),
    ("print(*range(10 ** 9))", "items"),
])
def test_string_and_list_size_limits(src, fragment):
    e = fails(src, kind=errors.LimitError)
    assert fragment in e.message and "--max-str-len" in e.message


def test_deeply_nested_values_refuse_to_print_rather_than_crash():
    src = "l = []\nfor i in range(5000):\n    l = [l]\nprint(l)"
    e = fails(src, kind=errors.LimitError)
    assert "nested" in e.message
    assert output(src, lim=lim(max_depth=0)).startswith("[[[[")       # deep, but Python copes
    e = fails(src.replace("5000", "100000"), lim=lim(max_depth=0))
    assert e.kind == "RecursionError"


def test_zero_means_unlimited():
    assert output("print(len('a' * 20))", lim=lim(max_str_len=0, max_int_digits=0)) == "20\n"
    assert output("print((10 ** 20000) % 7)", lim=lim(max_int_digits=0)) == f"{(10 ** 20000) % 7}\n"


def test_limits_are_active_while_the_program_runs():
    seen = []
    probe = lambda: seen.append(limits.current().max_elements)  # noqa: E731
    run("probe()", extra={"probe": probe}, lim=lim(max_elements=123))
    assert seen == [123] and limits.current().max_elements == limits.Limits().max_elements
