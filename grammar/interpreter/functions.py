"""Compiling ``def`` and ``lambda`` into Python callables (a mixin of the compiler): argument
binding with Python's messages, the recursion limit, generators, and the hidden
``__class__`` cell of methods that use ``super()``.
"""
from __future__ import annotations

from gradexpr import errors

from . import scopes as _scopes
from .runtime import _name_list
from .runtime import _NO_DEFAULT, RETURN, UNBOUND
from .scopes import Scope as _Scope


class FunctionCompiler:
    """``function``: a def or lambda as ``make(frame) -> callable``."""

    # ------------------------------------------------------------------ functions
    def function(self, node, name, args, body, scope, is_lambda):
        """Compile a def/lambda; returns ``make(frame) -> function`` (run at definition)."""
        params = [p.name for p in args.params]
        kwonly = [p.name for p in args.kwonly]
        names = list(params)
        if args.vararg:
            names.append(args.vararg)
        names += kwonly
        if args.kwarg:
            names.append(args.kwarg)
        in_class = scope is not None and scope.kind == _scopes.CLASS
        qual = name if scope is None else f"{scope.qualname}.{name}" if in_class else \
            f"{scope.qualname}.<locals>.{name}"
        if is_lambda:
            walrus = []
            _scopes._walrus_names(body, walrus)
            bound, glob, nonloc = walrus, (), ()
        else:
            bound, glob, nonloc = _scopes.bound_names(body)
        uses_super = in_class and not is_lambda and _mentions_super(body)
        fscope = _Scope(scope.parent if in_class else scope, names + bound + (["__class__"] if uses_super else []),
                        names, qual, globals=glob, nonlocals=nonloc)
        class_slot = fscope.slots["__class__"] if uses_super else None
        if scope is not None:
            fscope.class_name = scope.class_name
        generator = not is_lambda and _scopes.has_yield(body)
        if is_lambda:
            body_fn = self.expr(body, fscope)
        elif generator:
            fscope.generator = True
            body_fn = self.generator_body(body, fscope)
        else:
            body_fn = self.block(body, fscope)
        nslots = len(fscope.slots)
        npos = len(params)
        vararg_slot = fscope.slots[args.vararg] if args.vararg else None
        kwarg_slot = fscope.slots[args.kwarg] if args.kwarg else None
        kw_index = {n: fscope.slots[n] for n in params + kwonly}
        kwonly_slots = [(n, fscope.slots[n]) for n in kwonly]
        default_fns = [self.expr(p.default, scope) if p.default is not None else None for p in args.params]
        kwdefault_fns = [self.expr(p.default, scope) if p.default is not None else None for p in args.kwonly]
        simple = not args.vararg and not args.kwarg and not kwonly and all(d is None for d in default_fns) \
            and class_slot is None
        n_required = sum(1 for d in default_fns if d is None)
        tail = (UNBOUND,) * (nslots - npos)
        rt = self.rt
        calls = rt.calls
        display = "<lambda>" if is_lambda else name

        def recursion_error():
            lim = rt.max_depth
            return errors.RecursionError(
                "maximum recursion depth exceeded",
                hint=f"gradexpr allows {lim} nested calls (raise it with --max-recursion or "
                     f"GRADEXPR_MAX_RECURSION)")

        def make(fr):
            defaults = []
            for i, df in enumerate(default_fns):
                defaults.append(df(fr) if df is not None else _NO_DEFAULT)
            kwdefaults = [df(fr) if df is not None else _NO_DEFAULT for df in kwdefault_fns]
            parent = fr[0] if in_class else fr
            cell = fr[1] if in_class else None

            def bind(args, kw):
                frame = [parent, None]
                frame.extend((UNBOUND,) * nslots)
                if class_slot is not None:
                    frame[class_slot] = cell
                n = len(args)
                if n > npos:
                    if vararg_slot is None:
                        if n_required == npos:
                            takes = f"{npos} positional argument{'s' if npos != 1 else ''}"
                        else:
                            takes = f"from {n_required} to {npos} positional arguments"
                        raise errors.TypeError(f"{qual}() takes {takes} but {n} "
                                               f"{'was' if n == 1 else 'were'} given")
                    frame[vararg_slot] = tuple(args[npos:])
                    n = npos
                elif vararg_slot is not None:
                    frame[vararg_slot] = ()
                frame[2:2 + n] = args[:n]
                if kwarg_slot is not None:
                    extra = {}
                    frame[kwarg_slot] = extra
                for k, v in kw.items():
                    i = kw_index.get(k)
                    if i is None:
                        if kwarg_slot is None:
                            raise errors.TypeError(f"{qual}() got an unexpected keyword argument '{k}'")
                        extra[k] = v
                    elif frame[i] is not UNBOUND:
                        raise errors.TypeError(f"{qual}() got multiple values for argument '{k}'")
                    else:
                        frame[i] = v
                missing = []
                for j in range(npos):
                    if frame[2 + j] is UNBOUND:
                        d = defaults[j]
                        if d is _NO_DEFAULT:
                            missing.append(params[j])
                        else:
                            frame[2 + j] = d
                if missing:
                    raise errors.TypeError(f"{qual}() missing {len(missing)} required positional "
                                           f"argument{'s' if len(missing) != 1 else ''}: {_name_list(missing)}")
                for j, (kname, slot) in enumerate(kwonly_slots):
                    if frame[slot] is UNBOUND:
                        d = kwdefaults[j]
                        if d is _NO_DEFAULT:
                            missing.append(kname)
                        else:
                            frame[slot] = d
                if missing:
                    raise errors.TypeError(f"{qual}() missing {len(missing)} required keyword-only "
                                           f"argument{'s' if len(missing) != 1 else ''}: {_name_list(missing)}")
                return frame

            if generator:
                def run(frame):
                    r = yield from body_fn(frame)
                    return frame[1] if r is RETURN else None

                def fn(*args, **kw):
                    if kw or len(args) != npos or not simple:
                        frame = bind(args, kw)
                    else:
                        frame = [parent, None, *args, *tail]
                    gen = run(frame)
                    gen.__name__, gen.__qualname__ = display, qual
                    return gen
            elif is_lambda:
                def fn(*args, **kw):
                    if kw or len(args) != npos or not simple:
                        frame = bind(args, kw)
                    else:
                        frame = [parent, None, *args, *tail]
                    depth = rt.depth
                    if depth >= rt.max_depth and rt.max_depth:
                        raise recursion_error()
                    rt.depth = depth + 1
                    calls[0] -= 1
                    if calls[0] < 0:
                        rt.call_checkpoint()
                    try:
                        return body_fn(frame)
                    finally:
                        rt.depth = depth
            else:
                def fn(*args, **kw):
                    if kw or len(args) != npos or not simple:
                        frame = bind(args, kw)
                    else:
                        frame = [parent, None, *args, *tail]
                    depth = rt.depth
                    if depth >= rt.max_depth and rt.max_depth:
                        raise recursion_error()
                    rt.depth = depth + 1
                    calls[0] -= 1
                    if calls[0] < 0:
                        rt.call_checkpoint()
                    try:
                        r = body_fn(frame)
                    finally:
                        rt.depth = depth
                    if r is RETURN:
                        return frame[1]
                    return None
            fn.__name__ = display
            fn.__qualname__ = qual if not is_lambda else (
                "<lambda>" if scope is None else f"{scope.qualname}.<locals>.<lambda>")
            return fn
        return make


def _mentions_super(body):
    from .compile_defs import mentions_super     # (the class compiler: loaded by a class body)
    return mentions_super(body)
