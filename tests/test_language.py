"""The language's classes, exceptions, generators and comprehensions beyond what the recorded
programs (tests/programs/language/) show: what a program may NOT reach through them
(SPEC 3), how a library class must be written to be subclassed, and the limits."""
from __future__ import annotations

import io
import textwrap

import pytest

from gradexpr import errors
from gradexpr import limits as _limits
from gradexpr.grammar.builtins import BUILTINS
from gradexpr.grammar.interpreter import Interpreter
from gradexpr.grammar.parser import parse


def run(src, extra=None, lim=None):
    g = dict(BUILTINS)
    g.update(extra or {})
    out = io.StringIO()
    Interpreter(g, filename="prog.gx", out=out, limits=lim).run(parse(textwrap.dedent(src), "prog.gx"))
    return out.getvalue()


def refused(src, message, kind=errors.GxError, extra=None, lim=None):
    with pytest.raises(kind) as info:
        run(src, extra, lim)
    e = info.value
    assert isinstance(e, errors.GxError) and e.line is not None, e
    assert message in e.headline(), e.headline()
    return e


# ============================================================================ the sandbox holds

CLASS = """
class C:
    def __init__(self):
        self.v = 1
    def m(self):
        return super().__init__
c = C()
def f():
    yield 1
g = f()
"""


@pytest.mark.parametrize("expr", [
    "c.__class__", "c.__dict__", "C.__dict__", "C.__bases__", "C.__mro__", "type(c).__mro__", "C.mro",
    "C.__subclasses__", "f.__globals__", "f.__code__", "f.__closure__", "g.gi_frame", "g.gi_code",
    "c.m.__func__", "c.m.__self__", "super(C, c).__self__", "super(C, c).__thisclass__", "object.__subclasses__",
    "C.__init__.__globals__", "getattr(c, '__class__')", "getattr(C, '__dict__')", "print.__self__",
])
def test_no_dunder_walk_through_a_class_function_or_generator(expr):
    e = refused(CLASS + f"x = {expr}\n", "AttributeError")
    assert "not allowed" in e.message or "has no attribute" in e.message


@pytest.mark.parametrize("src, message", [
    ("try:\n    1/0\nexcept Exception as e:\n    e.__traceback__\n", "access to '__traceback__' is not allowed"),
    ("try:\n    1/0\nexcept Exception as e:\n    e.__cause__\n", "access to '__cause__' is not allowed"),
    ("class C:\n    def m(self):\n        return super().__self__\nC().m()\n", "access to '__self__' is not allowed"),
    ("class C:\n    def __setattr__(self, k, v):\n        super().__setattr__(k, v)\nC().__class__ = int\n",
     "access to '__class__' is not allowed"),
    ("class C:\n    def set(self):\n        super().__setattr__('__class__', int)\nC().set()\n",
     "access to '__class__' is not allowed"),
    ("setattr(object(), '__class__', int)\n", "access to '__class__' is not allowed"),
    ("class C:\n    def __del__(self):\n        pass\n", "defining '__del__' in a class is not allowed"),
    ("class C:\n    def __getattribute__(self, n):\n        pass\n", "defining '__getattribute__'"),
    ("class M(type):\n    pass\n", "subclassing 'type' is not supported"),
    ("class C(metaclass=type):\n    pass\n", "class keyword arguments (metaclass) are not supported"),
    ("class C(3):\n    pass\n", "class bases must be classes"),
    ("x = torch.ones(1)\nx._gx_exposed\n", "access to '_gx_exposed' is not allowed"),
    ("class C:\n    pass\nC._gx_x = 1\n", "access to '_gx_x' is not allowed"),
])
def test_class_machinery_refusals(src, message):
    from gradexpr import api
    refused(src, message, extra={"torch": api.build()["torch"]})


def test_underscore_names_are_the_programs_own():
    out = run("""
        class Lib:
            pass
        class C:
            _tag = "t"
            def __init__(self):
                self._cache = {}
        c = C()
        c._cache["k"] = 1
        print(c._cache, c._tag, C._tag)
        def make():
            c._late = 2
        make()
        print(c._late, getattr(c, "_late"))
    """)
    assert out == "{'k': 1} t t\n2 2\n"
    refused("class C:\n    pass\nC()._never_set\n", "access to '_never_set' is not allowed")


# ============================================================================ library classes as bases

class Recorder:
    """A stand-in for a library base (``nn.Module``, ``autograd.Function``): marked
    ``_gx_exposed``, with its own ``__setattr__``, private state and a classmethod that calls
    the subclass's static methods -- written exactly as PyTorch writes such classes."""

    _gx_exposed = True

    def __init__(self):
        object.__setattr__(self, "_registered", [])     # the library's private state
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if not name.startswith("_"):
            self._registered.append(name)
        object.__setattr__(self, name, value)

    def registered(self):
        return list(self._registered)

    def __call__(self, *args):
        return self.forward(*args)

    @classmethod
    def apply(cls, *args):
        ctx = {}
        out = cls.forward(ctx, *args)
        return out, cls.backward(ctx, 1.0)


def test_a_program_subclasses_a_library_class():
    out = run("""
        class Net(Recorder):
            def __init__(self, k):
                super().__init__()
                self.k = k
                self.bias = 1
                self._note = "private to the program"
            def forward(self, x):
                return x * self.k + self.bias
        class Square(Recorder):
            @staticmethod
            def forward(ctx, x):
                ctx["x"] = x
                return x * x
            @staticmethod
            def backward(ctx, g):
                return 2 * ctx["x"] * g
        n = Net(3)
        print(n(2), n.registered(), n.training, n._note, isinstance(n, Recorder))
        print(Square.apply(4))
    """, extra={"Recorder": Recorder})
    assert out == "7 ['k', 'bias'] True private to the program True\n(16, 8.0)\n"
    refused("class Net(Recorder):\n    pass\nNet()._registered\n", "access to '_registered' is not allowed",
            extra={"Recorder": Recorder})


# ============================================================================ exceptions

def test_limits_are_never_caught():
    lim = _limits.Limits(max_loop_iterations=1000)
    refused("while True:\n    try:\n        while True:\n            pass\n    except:\n        pass\n",
            "loop iterations", lim=lim)
    refused("while True:\n    try:\n        while True:\n            pass\n    except RuntimeError:\n        pass\n",
            "loop iterations", lim=lim)


def test_a_with_statement_cannot_swallow_a_limit():
    src = ("class C:\n    def __enter__(self):\n        return self\n    def __exit__(self, *a):\n"
           "        print('cleanup')\n        return True\nwith C():\n    while True:\n        pass\nprint('escaped')\n")
    out = io.StringIO()
    with pytest.raises(errors.LimitError):
        g = dict(BUILTINS)
        Interpreter(g, filename="prog.gx", out=out, limits=_limits.Limits(max_loop_iterations=1000)).run(
            parse(src, "prog.gx"))
    assert out.getvalue() == "cleanup\n"


def test_exit_sees_the_exception_the_program_raised():
    src = ("class C:\n    def __enter__(self):\n        return self\n    def __exit__(self, t, e, tb):\n"
           "        print(t is KeyError, e.args)\n        return True\nwith C():\n    raise KeyError('k')\n")
    assert run(src) == "True ('k',)\n"


def test_slots_declare_the_instances_attributes():
    src = ("class P:\n    __slots__ = ('x', '__z')\n    def __init__(self):\n        self.x, self.__z = 1, 3\n"
           "    def z(self):\n        return self.__z\np = P()\nprint(p.x, p.z())\ntry:\n    p.w = 4\n"
           "except AttributeError as e:\n    print(e)\n")
    assert run(src) == "1 3\n'P' object has no attribute 'w'\n"


def test_uncaught_program_exceptions_are_located():
    e = refused("x = 1\nraise ValueError('x')\n", "ValueError: x")
    assert (e.line, e.column) == (2, 1)
    e = refused("class Oops(Exception):\n    pass\nraise Oops('bad')\n", "__main__.Oops: bad")
    assert e.line == 3
    refused("raise\n", "RuntimeError: No active exception to reraise")
    refused("raise 3\n", "TypeError: exceptions must derive from BaseException")
    refused("try:\n    pass\nexcept 3:\n    pass\n1/0\n", "ZeroDivisionError")
    refused("try:\n    1/0\nexcept 3:\n    pass\n",
            "TypeError: catching classes that do not inherit from BaseException is not allowed")


def test_bad_super():
    refused("def f():\n    return super()\nf()\n", "RuntimeError: super(): __class__ cell not found")
    refused("class C:\n    def m():\n        return super()\nC.m()\n", "RuntimeError: super(): no arguments")


@pytest.mark.parametrize("display, wording", [("[(yield) for x in y]", "list comprehension"),
                                               ("{(yield) for x in y}", "set comprehension"),
                                               ("{x: (yield) for x in y}", "dict comprehension"),
                                               ("((yield) for x in y)", "generator expression")])
def test_a_yield_in_a_comprehension_is_pythons_syntax_error(display, wording):
    refused(f"def f(y):\n    return {display}\nf([1])\n", f"SyntaxError: 'yield' inside {wording}")


def test_yields_gradexpr_does_not_reach_say_where_they_may_stand():
    refused("def g():\n    assert (yield 1)\nprint(list(g()))\n", "'yield' is supported in gradexpr in the value")
    refused("def g():\n    f = lambda: (yield)\n    yield f\nlist(g())\n", "'yield' inside a lambda")


def test_super_with_one_argument_is_unbound_and_its_init_changes_nothing():
    src = ("class D:\n    def __init__(self, n):\n        super(D).__init__()\n        self.n = n\n"
           "print(D(3).n)\n")
    assert run(src) == "3\n"


# ============================================================================ limits

def test_comprehensions_and_generators_count_against_the_loop_budget():
    lim = _limits.Limits(max_loop_iterations=1000)
    refused("x = [i for i in range(5000)]\n", "loop iterations", lim=lim)
    refused("x = sum(i for i in range(5000))\n", "loop iterations", lim=lim)
    refused("def g():\n    while True:\n        yield 1\nfor v in g():\n    pass\n", "loop iterations", lim=lim)
    refused("x = {i: i for i in range(50) for j in range(50)}\n", "loop iterations", lim=lim)
    assert run("print(len([i for i in range(900)]))\n", lim=lim) == "900\n"


def test_recursion_of_methods_counts_against_max_depth():
    lim = _limits.Limits(max_recursion=50)
    refused("class C:\n    def f(self, n):\n        return self.f(n + 1)\nC().f(0)\n", "RecursionError", lim=lim)
    assert run("class C:\n    def f(self, n):\n        return n if n == 0 else self.f(n - 1)\n"
               "print(C().f(40))\n", lim=lim) == "0\n"
