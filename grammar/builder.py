"""The AST builder: one method per rule of gradexpr.lark, each turning the rule's kept
children into a grammar/ast.py node while parsing, with the depth limit and Python's
checks on targets, parameters and arguments.
"""
from __future__ import annotations

from . import ast
from .literals import _decode_escapes, _number, _split_string_token
from .tokens import Tok, _at, _too_deep


_MAX_DEPTH = [200]      # set by parse() from limits.current().max_depth (0: unlimited)
# The values of the number literals seen so far in this parse, by text (None: not parsing).
# A program repeats the same few literals, and _number (the limits, the forms of numbers)
# costs more than the Constant; a value only depends on the text and the limits, which are
# fixed for the duration of a parse.
_NUMBERS = [None]
_SAW_YIELD = [False]    # a yield was built in this parse (else _check_module need not look)

_AUG_OPS = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "//=": "//", "%=": "%", "@=": "@",
            "**=": "**", "<<=": "<<", ">>=": ">>", "&=": "&", "|=": "|", "^=": "^"}

_TARGET_WORDS = {
    "Call": "function call", "Constant": "literal", "BinOp": "expression", "UnaryOp": "expression",
    "BoolOp": "expression", "Compare": "comparison", "IfExp": "conditional expression",
    "Lambda": "lambda", "JoinedStr": "f-string expression", "Dict": "dict literal",
    "Slice": "slice", "Starred": "starred expression",
}


_Name, _Keyword, _Starred = ast.Name, ast.Keyword, ast.Starred     # (one global lookup)


def _check_target(node, aug=False):
    t = type(node)
    if t is ast.Name or t is ast.Attribute or t is ast.Subscript:
        return
    if (t is ast.Tuple or t is ast.List) and not aug:
        starred = False
        for e in node.elts:
            if type(e) is _Starred:
                if starred:
                    raise _at(e, "multiple starred expressions in assignment")
                starred = True
                e = e.value
            _check_target(e)
        return
    if t is _Starred and not aug:
        raise _at(node, "starred assignment target must be in a list or tuple")
    if aug and (t is ast.Tuple or t is ast.List):
        word = "tuple" if t is ast.Tuple else "list"
        raise _at(node, f"invalid assignment target: '{word}' is an illegal expression for augmented assignment")
    if t is ast.Constant and (node.value is None or node.value is True or node.value is False):
        raise _at(node, f"invalid assignment target: cannot assign to {node.value!r}")
    if t is ast.Constant and node.value is Ellipsis:
        raise _at(node, "invalid assignment target: cannot assign to ellipsis")
    raise _at(node, f"invalid assignment target: cannot assign to {_TARGET_WORDS.get(t.__name__, 'expression')}")


def _depth(d, node):
    """Check the depth ``d`` of a new node against the limit."""
    lim = _MAX_DEPTH[0]
    if lim and d > lim:
        raise _too_deep("expression nesting depth", node.line, node.col, node.end_line, node.end_col)
    return d


def _deepest(nodes):
    """The greatest depth of ``nodes`` (0 if none)."""
    d = 0
    for n in nodes:
        if n.depth > d:
            d = n.depth
    return d


def _flatten(items):
    out = []
    for x in items:
        if x is None:
            continue
        if type(x) is list:
            out.extend(x)
        elif not isinstance(x, Tok):
            out.append(x)
    return out


class _Builder:
    """One method per rule (or alias) of gradexpr.lark; each receives the rule's kept
    children and returns an AST node (or a helper value for inner rules)."""

    # ------------------------------------------------------------ module
    def file_input(self, c):
        body = _flatten(c)
        if body:
            return ast.Module(body, 1, 1, body[-1].end_line, body[-1].end_col)
        return ast.Module([], 1, 1, 1, 1)

    def eval_input(self, c):
        for x in c:
            if isinstance(x, ast.Node):
                return x
        raise AssertionError("no expression")  # pragma: no cover

    # ------------------------------------------------------------ simple statements
    def simple_stmt(self, c):
        if len(c) == 1:         # the usual one statement a line
            x = c[0]
            return [] if x is None or isinstance(x, Tok) else [x]
        return [x for x in c if x is not None and not isinstance(x, Tok)]

    def expr_stmt(self, c):
        v = c[0]
        if v.__class__ is _Starred:
            raise _at(v, "can't use starred expression here")
        return ast.ExprStmt(v, v.line, v.col, v.end_line, v.end_col)

    def assign_stmt(self, c):
        *targets, value = c
        for t in targets:
            if t.__class__ is not _Name:        # (a name is fine: the usual target)
                _check_target(t)
        f = targets[0]
        if value.__class__ is _Starred:
            raise _at(value, "can't use starred expression here")
        return ast.Assign(targets, value, f.line, f.col, value.end_line, value.end_col)

    def annassign_stmt(self, c):
        target, _colon, annotation, value = c
        if type(target) not in (ast.Name, ast.Attribute, ast.Subscript):
            word = {ast.Tuple: "tuple", ast.List: "list"}.get(type(target))
            raise _at(target, f"only single target (not {word}) can be annotated" if word
                      else "illegal target for annotation")
        e = value if value is not None else annotation
        return ast.AnnAssign(target, annotation, value, target.line, target.col, e.end_line, e.end_col)

    def raise_stmt(self, c):
        k, exc, cause = c
        e = cause or exc or k
        return ast.Raise(exc, cause, k.line, k.col, e.end_line, e.end_col)

    def global_stmt(self, c, node=ast.Global):
        k, names = c[0], c[1:]
        return node([n.value for n in names], k.line, k.col, names[-1].end_line, names[-1].end_col)

    def nonlocal_stmt(self, c):
        return self.global_stmt(c, ast.Nonlocal)

    def del_stmt(self, c):
        k, target = c
        targets = target.elts if type(target) is ast.Tuple else [target]
        for t in targets:
            if type(t) is _Starred:
                raise _at(t, "cannot delete starred")
            _check_target(t)
        return ast.Delete(targets, k.line, k.col, target.end_line, target.end_col)

    def augassign_stmt(self, c):
        target, op, value = c
        _check_target(target, aug=True)
        return ast.AugAssign(target, _AUG_OPS[op.value], value, target.line, target.col,
                             value.end_line, value.end_col)

    def pass_stmt(self, c):
        k = c[0]
        return ast.Pass(k.line, k.col, k.end_line, k.end_col)

    def break_stmt(self, c):
        k = c[0]
        return ast.Break(k.line, k.col, k.end_line, k.end_col)

    def continue_stmt(self, c):
        k = c[0]
        return ast.Continue(k.line, k.col, k.end_line, k.end_col)

    def return_stmt(self, c):
        k, v = c
        e = v if v is not None else k
        return ast.Return(v, k.line, k.col, e.end_line, e.end_col)

    def assert_stmt(self, c):
        k, test, msg = c
        e = msg if msg is not None else test
        return ast.Assert(test, msg, k.line, k.col, e.end_line, e.end_col)

    # ------------------------------------------------------------ imports
    def dotted_name(self, c):
        return (".".join(t.value for t in c), c[0], c[-1])

    def dotted_as_name(self, c):
        (name, first, last), asname = c
        e = asname if asname is not None else last
        return ast.Alias(name, asname.value if asname is not None else None,
                         first.line, first.col, e.end_line, e.end_col)

    def import_as_name(self, c):
        name, asname = c
        e = asname if asname is not None else name
        return ast.Alias(name.value, asname.value if asname is not None else None,
                         name.line, name.col, e.end_line, e.end_col)

    def import_as_names(self, c):
        return [x for x in c if x is not None]

    def import_name(self, c):
        k = c[0]
        names = c[1:]
        e = names[-1]     # which modules exist is the interpreter's to say (grammar/modules)
        return ast.Import(names, k.line, k.col, e.end_line, e.end_col)

    def import_from(self, c):
        k, (module, first, last), _imp, what = c
        if isinstance(what, Tok):       # '*'
            names = [ast.Alias("*", None, what.line, what.col, what.end_line, what.end_col)]
        else:
            names = what
        root = module.split(".")[0]
        if root == "builtins" and module == "builtins":
            from .builtins import BUILTINS
            for a in names:
                if a.name not in BUILTINS:
                    raise _at(a, f"import of 'builtins.{a.name}' is not supported in gradexpr")
        e = names[-1]
        return ast.ImportFrom(module, names, k.line, k.col, e.end_line, e.end_col)

    # ------------------------------------------------------------ compound statements
    def suite(self, c):
        return _flatten(c)

    def elif_clause(self, c):
        return c

    def else_clause(self, c):
        return ("else", c[0])

    def if_stmt(self, c):
        k, test, body = c[0], c[1], c[2]
        rest = c[3:]
        orelse = []
        if rest and isinstance(rest[-1], tuple):
            orelse = rest[-1][1]
            rest = rest[:-1]
        elif rest and rest[-1] is None:
            rest = rest[:-1]
        for ek, etest, ebody in reversed(rest):
            end = (orelse or ebody)[-1]
            orelse = [ast.If(etest, ebody, orelse, ek.line, ek.col, end.end_line, end.end_col)]
        end = (orelse or body)[-1]
        return ast.If(test, body, orelse, k.line, k.col, end.end_line, end.end_col)

    def while_stmt(self, c):
        k, test, body, els = c
        orelse = els[1] if els is not None else []
        end = (orelse or body)[-1]
        return ast.While(test, body, orelse, k.line, k.col, end.end_line, end.end_col)

    def for_stmt(self, c):
        k, target, it, body, els = c
        _check_target(target)
        orelse = els[1] if els is not None else []
        end = (orelse or body)[-1]
        return ast.For(target, it, body, orelse, k.line, k.col, end.end_line, end.end_col)

    def funcdef(self, c):
        k, name, params, _returns, body = c
        args = params if params is not None else ast.Arguments([], None, [], None, name.line, name.col,
                                                               name.end_line, name.end_col)
        end = body[-1]
        return ast.FunctionDef(name.value, args, body, k.line, k.col, end.end_line, end.end_col)

    def classdef(self, c):
        k, name = c[0], c[1]
        body = c[-1]
        arglist = next((x for x in c[2:-1] if type(x) is list), None) or []
        bases = [a for a in arglist if type(a) is not _Keyword]
        keywords = [a for a in arglist if type(a) is _Keyword]
        for a in bases:
            if type(a) is ast.GeneratorExp:
                raise _at(a, "invalid syntax: a class's bases cannot be a generator expression")
        end = body[-1]
        return ast.ClassDef(name.value, bases, keywords, body, k.line, k.col, end.end_line, end.end_col)

    def decorator(self, c):
        return c[1]

    def decorated(self, c):
        *decorators, definition = c
        f = decorators[0]
        return ast.Decorated(decorators, definition, f.line, f.col - 1, definition.end_line, definition.end_col)

    def except_clause(self, c):
        k, typ, name, body = c
        end = body[-1]
        return ast.ExceptHandler(typ, name.value if name is not None else None, body,
                                 k.line, k.col, end.end_line, end.end_col)

    def finally_clause(self, c):
        return ("finally", c[1])

    def try_stmt(self, c):
        k, body = c[0], c[1]
        handlers, orelse, finalbody = [], [], []
        for x in c[2:]:
            if type(x) is ast.ExceptHandler:
                if handlers and handlers[-1].type is None:
                    raise _at(handlers[-1], "default 'except:' must be last")
                handlers.append(x)
            elif type(x) is tuple:
                if x[0] == "else":
                    orelse = x[1]
                else:
                    finalbody = x[1]
        end = (finalbody or orelse or handlers or body)[-1]
        return ast.Try(body, handlers, orelse, finalbody, k.line, k.col, end.end_line, end.end_col)

    def with_item(self, c):
        ctx, target = c
        if target is not None:
            _check_target(target)
        e = target if target is not None else ctx
        return ast.WithItem(ctx, target, ctx.line, ctx.col, e.end_line, e.end_col)

    def with_stmt(self, c):
        k = c[0]
        items = c[1:-1]
        body = c[-1]
        end = body[-1]
        return ast.With(items, body, k.line, k.col, end.end_line, end.end_col)

    # ------------------------------------------------------------ parameters
    def lparam(self, c):
        name, default = c
        e = default if default is not None else name
        return ast.Param(name.value, default, name.line, name.col, e.end_line, e.end_col)

    def lstar_param(self, c):
        star, name = c
        return ("*", name, star)

    def lkw_param(self, c):
        star, name = c
        return ("**", name, star)

    def param(self, c):         # annotations are read and ignored, as CPython's run time does
        return self.lparam((c[0], c[2]))

    def star_param(self, c):
        return self.lstar_param(c[:2])

    def kw_param(self, c):
        return self.lkw_param(c[:2])

    def parameters(self, c):
        items = [x for x in c if x is not None]
        params, kwonly = [], []
        vararg = kwarg = None
        seen_star = False
        seen_default = False
        names = set()
        for it in items:
            if kwarg is not None:
                raise _at(it if isinstance(it, ast.Node) else it[2], "parameter after '**' parameter")
            if isinstance(it, tuple):
                kind, name, star = it
                if kind == "*":
                    if seen_star:
                        raise _at(star, "'*' may appear only once in a parameter list")
                    seen_star = True
                    vararg = name.value if name is not None else None
                    n = name
                else:
                    kwarg = name.value
                    n = name
                if n is not None:
                    if n.value in names:
                        raise _at(n, f"duplicate argument '{n.value}' in function definition")
                    names.add(n.value)
                continue
            if it.name in names:
                raise _at(it, f"duplicate argument '{it.name}' in function definition")
            names.add(it.name)
            if seen_star:
                kwonly.append(it)
            else:
                if it.default is not None:
                    seen_default = True
                elif seen_default:
                    raise _at(it, "non-default argument follows default argument")
                params.append(it)
        if seen_star and vararg is None and not kwonly:
            raise _at(items[-1][2] if isinstance(items[-1], tuple) else items[-1],
                      "named arguments must follow bare *")
        first, last = items[0], items[-1]
        f = first[2] if isinstance(first, tuple) else first
        l = last[1] if isinstance(last, tuple) else last
        return ast.Arguments(params, vararg, kwonly, kwarg, f.line, f.col, l.end_line, l.end_col)

    lambda_parameters = parameters

    # ------------------------------------------------------------ expressions
    def tuple_list(self, c):
        elts = [x for x in c if x is not None]
        f, l = elts[0], elts[-1]
        d = _depth(_deepest(elts) + 1, f)
        return ast.Tuple(elts, f.line, f.col, l.end_line, l.end_col, d)

    expr_tuple = tuple_list

    def star_expr(self, c):
        k, v = c
        return ast.Starred(v, k.line, k.col, v.end_line, v.end_col, _depth(v.depth + 1, v))

    def namedexpr(self, c):
        name, _op, value = c
        target = ast.Name(name.value, name.line, name.col, name.end_line, name.end_col)
        d = _depth(value.depth + 1, value)
        return ast.NamedExpr(target, value, name.line, name.col, value.end_line, value.end_col, d)

    def yield_expr(self, c, node=ast.Yield):
        k, v = c
        _SAW_YIELD[0] = True
        e = v if v is not None else k
        if v is not None and v.__class__ is _Starred:
            raise _at(v, "can't use starred expression here")
        return node(v, k.line, k.col, e.end_line, e.end_col, (v.depth if v is not None else 0) + 1)

    def yield_from(self, c):
        return self.yield_expr(c, ast.YieldFrom)

    # ------------------------------------------------------------ comprehensions
    def comp_for(self, c):
        k, target, it = c
        _check_target(target)
        return ast.Comprehension(target, it, [], k.line, k.col, it.end_line, it.end_col)

    def comp_if(self, c):
        return c[0]

    def comprehension(self, c):
        clauses = []
        for x in c:
            if type(x) is ast.Comprehension:
                clauses.append(x)
            else:
                clauses[-1].ifs.append(x)
        return clauses

    @staticmethod
    def _comp_depth(nodes, clauses):
        d = _deepest(nodes)
        for g in clauses:
            d = max(d, g.target.depth, g.iter.depth, _deepest(g.ifs))
        return d + 1

    def _comp(self, node, c):
        lb, elt, gens, rb = c
        d = self._comp_depth([elt], gens)
        n = node(elt, gens, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def listcomp(self, c):
        return self._comp(ast.ListComp, c)

    def setcomp(self, c):
        return self._comp(ast.SetComp, c)

    def genexp(self, c):
        return self._comp(ast.GeneratorExp, c)

    def genexp_arg(self, c):
        elt, gens = c
        last = gens[-1]
        e = last.ifs[-1] if last.ifs else last.iter
        d = self._comp_depth([elt], gens)
        return ast.GeneratorExp(elt, gens, elt.line, elt.col, e.end_line, e.end_col, d)

    def dictcomp(self, c):
        lb, key, value, gens, rb = c
        d = self._comp_depth([key, value], gens)
        n = ast.DictComp(key, value, gens, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def ifexp(self, c):
        body, test, orelse = c
        d = max(body.depth, test.depth, orelse.depth) + 1
        n = ast.IfExp(test, body, orelse, body.line, body.col, orelse.end_line, orelse.end_col, d)
        _depth(d, n)
        return n

    def lambdef(self, c):
        k, params, body = c
        args = params if params is not None else ast.Arguments([], None, [], None, k.line, k.col,
                                                               k.end_line, k.end_col)
        d = body.depth + 1
        for p in args.params + args.kwonly:
            if p.default is not None:
                d = max(d, p.default.depth + 1)
        n = ast.Lambda(args, body, k.line, k.col, body.end_line, body.end_col, d)
        _depth(d, n)
        return n

    def _boolop(self, op, c):
        f, l = c[0], c[-1]
        d = _deepest(c) + 1
        n = ast.BoolOp(op, c, f.line, f.col, l.end_line, l.end_col, d)
        _depth(d, n)
        return n

    def or_test(self, c):
        return self._boolop("or", c)

    def and_test(self, c):
        return self._boolop("and", c)

    def not_op(self, c):        # a chain of unary operators is not nesting (SPEC 3)
        k, v = c
        return ast.UnaryOp("not", v, k.line, k.col, v.end_line, v.end_col, v.depth)

    def comp_op(self, c):
        if len(c) == 1:
            return c[0].value
        return c[0].value + " " + c[1].value

    def comparison(self, c):
        left = c[0]
        ops = c[1::2]
        comps = c[2::2]
        l = comps[-1]
        d = left.depth
        for x in comps:
            if x.depth > d:
                d = x.depth
        d += 1
        n = ast.Compare(left, ops, comps, left.line, left.col, l.end_line, l.end_col, d)
        _depth(d, n)
        return n

    @staticmethod
    def _chain_same(op, c):
        left = c[0]
        d = left.depth
        for right in c[1:]:
            if right.depth > d:
                d = right.depth
            left = ast.BinOp(left, op, right, left.line, left.col, right.end_line, right.end_col, d + 1)
        _depth(d + 1, left)
        return left

    def expr(self, c):
        return self._chain_same("|", c)

    def xor_expr(self, c):
        return self._chain_same("^", c)

    def and_expr(self, c):
        return self._chain_same("&", c)

    def shift_expr(self, c):
        left = c[0]
        d = left.depth
        for i in range(1, len(c), 2):
            right = c[i + 1]
            if right.depth > d:
                d = right.depth
            left = ast.BinOp(left, c[i].value, right, left.line, left.col, right.end_line, right.end_col, d + 1)
        _depth(d + 1, left)
        return left

    arith_expr = shift_expr
    term = shift_expr

    def unary(self, c):
        k, v = c
        return ast.UnaryOp(k.value, v, k.line, k.col, v.end_line, v.end_col, v.depth)

    def power_op(self, c):
        base, _k, exp = c
        d = max(base.depth, exp.depth) + 1
        n = ast.BinOp(base, "**", exp, base.line, base.col, exp.end_line, exp.end_col, d)
        _depth(d, n)
        return n

    # ------------------------------------------------------------ postfix
    def call(self, c):
        func, _lp, arglist, rp = c
        args, keywords = [], []
        d = 0       # a method chain x.f().g() is not nesting (SPEC 3): only the arguments nest
        if arglist:
            seen_kw = seen_kwargs = False
            names = ()
            for a in arglist:
                t = type(a)
                if t is _Keyword:
                    if a.arg is None:
                        seen_kwargs = True
                    else:
                        if a.arg in names:
                            raise _at(a, f"keyword argument repeated: {a.arg}")
                        if not names:
                            names = set()
                        names.add(a.arg)
                        seen_kw = True
                    keywords.append(a)
                    vd = a.value.depth
                else:
                    if t is _Starred:
                        if seen_kwargs:
                            raise _at(a, "iterable argument unpacking follows keyword argument unpacking")
                    elif seen_kwargs:
                        raise _at(a, "positional argument follows keyword argument unpacking")
                    elif seen_kw:
                        raise _at(a, "positional argument follows keyword argument")
                    args.append(a)
                    vd = a.depth
                if vd > d:
                    d = vd
        d += 1
        if func.depth > d:
            d = func.depth
        n = ast.Call(func, args, keywords, func.line, func.col, rp.end_line, rp.end_col, d)
        if d > _MAX_DEPTH[0] and _MAX_DEPTH[0]:        # (_depth, inline: calls are many)
            _depth(d, n)
        return n

    def arguments(self, c):
        args = [x for x in c if x is not None]
        if len(args) > 1:
            for a in args:
                if type(a) is ast.GeneratorExp and a.line == a.elt.line and a.col == a.elt.col:
                    raise _at(a, "Generator expression must be parenthesized")
        return args

    def kwarg(self, c):
        name, value = c
        return ast.Keyword(name.value, value, name.line, name.col, value.end_line, value.end_col)

    def star_arg(self, c):
        k, v = c
        return ast.Starred(v, k.line, k.col, v.end_line, v.end_col, v.depth + 1)

    def kwargs_arg(self, c):
        k, v = c
        return ast.Keyword(None, v, k.line, k.col, v.end_line, v.end_col)

    def getattr(self, c):
        v, name = c
        return ast.Attribute(v, name.value, v.line, v.col, name.end_line, name.end_col, v.depth)

    def getitem(self, c):
        v, _lb, sl, rb = c
        d = max(v.depth, sl.depth + 1)
        n = ast.Subscript(v, sl, v.line, v.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def subscript_tuple(self, c):
        elts = [x for x in c if x is not None]
        f, l = elts[0], elts[-1]
        d = _deepest(elts) + 1
        return ast.Tuple(elts, f.line, f.col, l.end_line, l.end_col, d)

    def sliceop(self, c):
        return c        # [COLON, test | None]

    def slice(self, c):
        lower, colon, upper, sop = c
        step = None
        last = upper if upper is not None else colon
        if sop is not None:
            colon2, step = sop
            last = step if step is not None else colon2
        first = lower if lower is not None else colon
        d = 1 + max((x.depth for x in (lower, upper, step) if x is not None), default=0)
        return ast.Slice(lower, upper, step, first.line, first.col, last.end_line, last.end_col, d)

    # ------------------------------------------------------------ atoms
    def empty_tuple(self, c):
        lp, rp = c
        return ast.Tuple([], lp.line, lp.col, rp.end_line, rp.end_col)

    def paren(self, c):
        lp, inner, rp = c
        inner.line, inner.col, inner.end_line, inner.end_col = lp.line, lp.col, rp.end_line, rp.end_col
        return inner

    def list(self, c):
        lb, items, rb = c
        items = items or []
        d = _deepest(items) + 1
        n = ast.List(items, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def list_items(self, c):
        return [x for x in c if x is not None]

    def set(self, c):
        lb, items, rb = c
        d = _deepest(items) + 1
        n = ast.Set(items, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    set_items = list_items

    def dict_unpack(self, c):
        return (None, c[1])

    def dict(self, c):
        lb, items, rb = c
        keys = [k for k, _ in items or ()]
        values = [v for _, v in items or ()]
        d = max(_deepest([k for k in keys if k is not None]), _deepest(values)) + 1
        n = ast.Dict(keys, values, lb.line, lb.col, rb.end_line, rb.end_col, d)
        _depth(d, n)
        return n

    def dict_items(self, c):
        return [x for x in c if x is not None]

    def key_value(self, c):
        return (c[0], c[1])

    def name(self, c):
        t = c[0]
        return ast.Name(t.value, t.line, t.col, t.end_line, t.end_col)

    def number(self, c):
        t = c[0]
        known = _NUMBERS[0]
        if known is None:
            v = _number(t)
        else:
            v = known.get(t.value)
            if v is None:
                v = known[t.value] = _number(t)
        return ast.Constant(v, t.line, t.col, t.end_line, t.end_col)

    def ellipsis(self, c):
        t = c[0]
        return ast.Constant(Ellipsis, t.line, t.col, t.end_line, t.end_col)

    def const_none(self, c):
        t = c[0]
        return ast.Constant(None, t.line, t.col, t.end_line, t.end_col)

    def const_true(self, c):
        t = c[0]
        return ast.Constant(True, t.line, t.col, t.end_line, t.end_col)

    def const_false(self, c):
        t = c[0]
        return ast.Constant(False, t.line, t.col, t.end_line, t.end_col)

    def string(self, c):
        f, l = c[0], c[-1]
        pieces = []         # str, or FormattedValue nodes
        is_f = False
        for tok in c:
            prefix, body, ql, boff = _split_string_token(tok)
            if "b" in prefix:
                raise _at(tok, "bytes literals are not supported in gradexpr")
            raw = "r" in prefix
            if "f" in prefix:
                is_f = True
                from .fstrings import f_string_pieces     # (loaded by the first f-string)
                pieces += f_string_pieces(body, tok, boff, raw)
            else:
                pieces.append(body if raw else _decode_escapes(body, tok))
        if not is_f:
            return ast.Constant("".join(pieces), f.line, f.col, l.end_line, l.end_col)
        from .fstrings import joined_str
        return joined_str(pieces, f, l)
