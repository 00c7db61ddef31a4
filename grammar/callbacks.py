"""The parser's reduction callbacks, made from the recipes of the tables the way Lark's
``ParseTreeBuilder`` makes them (child filters, ``_rule`` inlining, ``?rule`` expansion).
"""
from __future__ import annotations

import operator




class _Tree:
    """What Lark's ``Transformer.__default__`` makes for a rule that has no ``_Builder``
    method (except for the rules whose values are bare lists, see ``_bare_origins``)."""

    __slots__ = ("data", "children")

    def __init__(self, data, children):
        self.data = data
        self.children = children

    def __repr__(self):
        return f"_Tree({self.data!r}, {self.children!r})"


def _bare_origins(builder, recipes):
    """The ``_rule``s none of whose callbacks is a ``builder`` method or ``?``-expanded: the
    helpers Lark makes for ``x*``/``x+``. Their trees are only ever inlined into the parent
    rule (Lark's filter takes their children), so their value is the list of children
    itself, without the tree around it -- the same lists, one object less per reduction."""
    out = set()
    notbare = set()
    for origin, name, _length, expand1, _filter in recipes:
        if origin.startswith("_") and not expand1 and getattr(builder, name, None) is None:
            out.add(origin)
        else:
            notbare.add(origin)
    return frozenset(out - notbare)


def _same(x):
    return x


def _make_callback(builder, recipe, bare=frozenset()):
    """The callback of a rule (see ``rule_recipe`` in tools/gen_parser_tables.py): what Lark
    builds for it with ``transformer=builder`` -- except that the rules in ``bare`` (see
    ``_bare_origins``) make the list of their children, not a tree of it."""
    origin, name, length, expand1, child_filter = recipe
    user = getattr(builder, name, None)
    if user is None and origin not in bare:
        def user(children, _name=name):
            return _Tree(_name, children)
    f = user
    if expand1:
        def f(children, _user=user):
            return children[0] if len(children) == 1 else _user(children)
    if child_filter is not None:
        return _child_filter(child_filter, f, bare, length)
    return f if f is not None else _same


def _child_filter(spec, inner, bare, length):
    """``inner`` (None: nothing, the list is the value) behind the child filter
    ``spec = (keep, trailing)`` of ``rule_recipe`` for a rule of ``length`` symbols, where
    the values of the rules in ``bare`` are lists of children already. The callbacks receive
    a fresh list, which the filter may reuse."""
    keep, trailing = spec
    fin = inner if inner is not None else _same
    if not any(inlined for _, inlined, _ in keep):
        # Only dropping children and adding placeholders: pick by index
        picks = []
        for i, _inlined, nones in keep:
            picks += [-1] * nones + [i]
        picks += [-1] * trailing
        if not picks:
            def f(children):
                return fin([])
            return f
        if len(picks) == 1 and picks[0] >= 0:
            (a,) = picks
            if inner is None:
                def f(children):
                    return [children[a]]
            else:
                def f(children):
                    return inner([children[a]])
            return f
        if len(picks) == 2 and -1 not in picks:
            a, b = picks
            if inner is None:
                def f(children):
                    return [children[a], children[b]]
            else:
                def f(children):
                    return inner([children[a], children[b]])
            return f
        if -1 not in picks:
            get = operator.itemgetter(*picks)

            def f(children):
                return fin(list(get(children)))
            return f
        # placeholders: index len(children) (the rule's length) is a None appended to them
        get = operator.itemgetter(*[length if i < 0 else i for i in picks])
        if len(picks) == 1:
            def f(children):
                children.append(None)
                return fin([get(children)])
        else:
            def f(children):
                children.append(None)
                return fin(list(get(children)))
        return f
    # the usual shapes of rules with a repetition, e.g. ``x ("," x)*``, first
    shape = tuple((inlined is not None, nones) for _, inlined, nones in keep) + (trailing,)
    if shape == ((True, 0), (False, 0), 0):      # Lark's helper ``_x: _x "," x``
        (a, sa, _), (b, _, _) = keep
        if sa in bare and inner is None:
            def f(children):
                out = children[a]
                out.append(children[b])
                return out
        elif sa in bare:
            def f(children):
                out = children[a]
                out.append(children[b])
                return inner(out)
        else:
            def f(children):
                out = children[a].children
                out.append(children[b])
                return fin(out)
        return f
    if shape == ((True, 0), (False, 0), (False, 0), 0) and keep[0][1] in bare and inner is None:
        (a, _, _), (b, _, _), (c, _, _) = keep      # Lark's helper ``_x: _x OP x``

        def f(children):
            out = children[a]
            out.append(children[b])
            out.append(children[c])
            return out
        return f
    if shape == ((False, 0), (True, 0), 0):      # ``x _x``
        (a, _, _), (b, sb, _) = keep
        if sb in bare and inner is not None:
            def f(children):
                out = [children[a]]
                out += children[b]
                return inner(out)
        elif sb in bare:
            def f(children):
                out = [children[a]]
                out += children[b]
                return fin(out)
        else:
            def f(children):
                out = [children[a]]
                out += children[b].children
                return fin(out)
        return f
    if shape == ((True, 0), 0):                  # ``_x``, ``_x ","``
        (a, sa, _), = keep
        if sa in bare:
            def f(children):
                return fin(children[a])
        else:
            def f(children):
                return fin(children[a].children)
        return f

    entries = tuple((i, inlined is not None, inlined in bare, nones) for i, inlined, nones in keep)

    def f(children):
        out = []
        for i, inline, direct, nones in entries:
            if nones:
                out += [None] * nones
            if inline:
                kids = children[i] if direct else children[i].children
                if out:
                    out += kids
                else:       # as Lark does: take over the inlined child's list
                    out = kids
            else:
                out.append(children[i])
        if trailing:
            out += [None] * trailing
        return fin(out)
    return f
