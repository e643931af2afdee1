"""The fact walker on its own (model/facts.py): for the last class test in a
function, every fact it yields, written out as (test, holds, key, about the
elements, decision)."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import findings, last_check
from vllm_spec_lint.model.syntax import code_of

HEADER = (
    "from vllm.v1.kv_cache_interface import (\n"
    "    AttentionSpec,\n"
    "    FullAttentionSpec,\n"
    "    MLAAttentionSpec,\n"
    "    SlidingWindowSpec,\n"
    ")\n\n\n"
)


def facts(body: str, *, decision_only: bool = False) -> list[tuple]:
    model, check = last_check(HEADER + textwrap.dedent(body))
    found = model.facts.about(check.node, check.target, check.positive)
    return [
        (code_of(f.test.node), f.holds, f.key, f.elements, f.decision)
        for f in found
        if f.decision or not decision_only
    ]


FULL = "isinstance(s, FullAttentionSpec)"
WINDOW = "isinstance(s, SlidingWindowSpec)"

CASES = {
    # -- the check's own decision --------------------------------------------
    "or, before": (
        "def f(s):\n    return isinstance(s, SlidingWindowSpec) or "
        "isinstance(s, MLAAttentionSpec)\n",
        [(WINDOW, False, "s", False, True)],
    ),
    "or, after": (
        "def f(s):\n    return isinstance(s, MLAAttentionSpec) or "
        "isinstance(s, SlidingWindowSpec)\n",
        [(WINDOW, False, "s", False, True)],
    ),
    "negated check, and after": (
        "def f(s):\n    return not isinstance(s, MLAAttentionSpec) and "
        "not isinstance(s, SlidingWindowSpec)\n",
        [(WINDOW, False, "s", False, True)],
    ),
    "double not: the chain goes on": (
        "def f(s):\n    return not not isinstance(s, MLAAttentionSpec) or "
        "isinstance(s, SlidingWindowSpec)\n",
        [(WINDOW, False, "s", False, True)],
    ),
    "or, before, negated operand: a guard": (
        "def f(s):\n    return not isinstance(s, FullAttentionSpec) or "
        "isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "s", False, False)],
    ),
    "and, before: a guard": (
        "def f(s):\n    return isinstance(s, FullAttentionSpec) and "
        "isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "s", False, False)],
    ),
    "and, after: nothing": (
        "def f(s):\n    return isinstance(s, MLAAttentionSpec) and "
        "isinstance(s, FullAttentionSpec)\n",
        [],
    ),
    "not after an operator ends the chain": (
        "def f(s):\n    return not (isinstance(s, MLAAttentionSpec) or x) or "
        "isinstance(s, SlidingWindowSpec)\n",
        [],
    ),
    "not after an operator ends the chain, also before an and": (
        "def f(s):\n    return not (isinstance(s, MLAAttentionSpec) or x) and "
        "not isinstance(s, SlidingWindowSpec)\n",
        [],
    ),
    "earlier elif branch": (
        "def f(s):\n"
        "    if isinstance(s, SlidingWindowSpec):\n        return 1\n"
        "    elif isinstance(s, MLAAttentionSpec):\n        return 2\n",
        [(WINDOW, False, "s", False, True)],
    ),
    "inside an elif body: a guard": (
        "def f(s):\n"
        "    if isinstance(s, SlidingWindowSpec):\n        return 1\n"
        "    elif x:\n        return isinstance(s, MLAAttentionSpec)\n",
        [(WINDOW, False, "s", False, False)],
    ),
    # -- guards --------------------------------------------------------------
    "if body": (
        "def f(s):\n    if isinstance(s, FullAttentionSpec):\n"
        "        return isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "s", False, False)],
    ),
    "else body": (
        "def f(s):\n    if isinstance(s, FullAttentionSpec):\n        return 0\n"
        "    else:\n        return isinstance(s, MLAAttentionSpec)\n",
        [(FULL, False, "s", False, False)],
    ),
    "conditional expression": (
        "def f(s):\n    return isinstance(s, MLAAttentionSpec) if "
        "isinstance(s, FullAttentionSpec) else 0\n",
        [(FULL, True, "s", False, False)],
    ),
    "assert and early exit before": (
        "def f(s):\n    assert isinstance(s, AttentionSpec)\n"
        "    if isinstance(s, SlidingWindowSpec):\n        return 0\n"
        "    return isinstance(s, MLAAttentionSpec)\n",
        [
            (WINDOW, False, "s", False, False),
            ("isinstance(s, AttentionSpec)", True, "s", False, False),
        ],
    ),
    "an assignment ends what is known": (
        "def f(s, t):\n    assert isinstance(s, FullAttentionSpec)\n"
        "    s, n = t, 1\n    return isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "guards in another function never count": (
        "def f(s):\n    if isinstance(s, FullAttentionSpec):\n"
        "        def g(s):\n            return isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    # -- collections ---------------------------------------------------------
    "all() before a loop": (
        "def f(xs):\n    assert all(isinstance(v, FullAttentionSpec) for v in xs)\n"
        "    for s in xs:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "xs", True, False)],
    ),
    "comprehension condition": (
        "def f(xs):\n    return [isinstance(s, MLAAttentionSpec) for s in xs "
        "if isinstance(s, FullAttentionSpec)]\n",
        [(FULL, True, "s", False, False)],
    ),
    "list comprehension build": (
        "def f(xs):\n    full = [s for s in xs if isinstance(s, FullAttentionSpec)]\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "full", True, False)],
    ),
    "dict comprehension, values": (
        "def f(d):\n    full = {k: v for k, v in d.items() "
        "if isinstance(v, FullAttentionSpec)}\n"
        "    for s in full.values():\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "full.values()", True, False)],
    ),
    "dict comprehension, keys": (
        "def f(d):\n    full = {k: v for k, v in d.items() "
        "if isinstance(v, FullAttentionSpec)}\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "a list comprehension has no values()": (
        "def f(xs):\n    full = [s for s in xs if isinstance(s, FullAttentionSpec)]\n"
        "    for s in full.values():\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "subscript of a build": (
        "def f(xs):\n    full = [s for s in xs if isinstance(s, FullAttentionSpec)]\n"
        "    return isinstance(full[0], MLAAttentionSpec)\n",
        [(FULL, True, "full[]", True, False)],
    ),
    "next(iter()) of a build": (
        "def f(xs):\n    full = {s for s in xs if isinstance(s, FullAttentionSpec)}\n"
        "    return isinstance(next(iter(full)), MLAAttentionSpec)\n",
        [(FULL, True, "full", True, False)],
    ),
    "filter": (
        "def f(xs):\n    full = filter(lambda s: isinstance(s, FullAttentionSpec), xs)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "full", True, False)],
    ),
    "filter with two parameters: nothing": (
        "def f(xs):\n    full = list(filter(lambda s, t: isinstance(s, "
        "FullAttentionSpec), xs))\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "filter testing another name: nothing": (
        "def f(xs, t):\n    full = filter(lambda s: isinstance(t, FullAttentionSpec), xs)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "filter without a lambda: nothing": (
        "def f(xs, keep):\n    full = list(filter(keep, xs))\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "appends under a test": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "full", True, False)],
    ),
    "two appends keep what both know": (
        "def f(xs):\n    full = list()\n    for v in xs:\n"
        "        assert isinstance(v, AttentionSpec)\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(v)\n"
        "        else:\n            full.append(v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, AttentionSpec)", True, "full", True, False)],
    ),
    "appends in two loops keep what both know": (
        "def f(xs, ys):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(v)\n"
        "    for w in ys:\n"
        "        if isinstance(w, FullAttentionSpec):\n            full.append(w)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        # the walk goes backwards: the fact is the later loop's test
        [("isinstance(w, FullAttentionSpec)", True, "full", True, False)],
    ),
    "appends in two loops under different tests: nothing in common": (
        "def f(xs, ys):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(v)\n"
        "    for w in ys:\n"
        "        if isinstance(w, AttentionSpec):\n            full.append(w)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "adds to a set": (
        "def f(xs):\n    full = set()\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.add(v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "full", True, False)],
    ),
    "an append of a call's result: nothing known": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(g(v))\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "extend: nothing known": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(v)\n"
        "    full.extend(xs)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "a read before the append in one statement": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec) and v not in full:\n"
        "            full.append(v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "full", True, False)],
    ),
    "a count before the append in one statement": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec) and full.count(v) == 0:\n"
        "            full.append(v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "full", True, False)],
    ),
    "extend of one value: nothing known": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.extend(v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "a starred append: nothing known": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(*v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "append with a keyword: nothing known": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(item=v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "reading the collection changes nothing": (
        "def f(xs):\n    full = [s for s in xs if isinstance(s, FullAttentionSpec)]\n"
        "    print(full.count(None), len(full))\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "full", True, False)],
    ),
    "appends to a collection not started empty: nothing": (
        "def f(xs, ys):\n    full = ys\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "an append in a nested function does not count": (
        "def f(xs):\n    full = [s for s in xs if isinstance(s, FullAttentionSpec)]\n"
        "    def g(v):\n        full.append(v)\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "full", True, False)],
    ),
    "appends in a lambda or nested function do not count": (
        "def f(xs):\n    full = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            full.append(v)\n"
        "    def g(w):\n        full.append(w)\n"
        "    on_add(len(full), lambda w: full.append(w))\n"
        "    for s in full:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "full", True, False)],
    ),
    # -- chains of collections: three followed, a fourth not ------------------
    "appends through three collections": (
        "def f(xs):\n    a = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            a.append(v)\n"
        "    b = []\n    for w in a:\n        b.append(w)\n"
        "    c = []\n    for u in b:\n        c.append(u)\n"
        "    for s in c:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "c", True, False)],
    ),
    "appends through four collections: the first not followed": (
        "def f(xs):\n    a = []\n    for v in xs:\n"
        "        if isinstance(v, FullAttentionSpec):\n            a.append(v)\n"
        "    b = []\n    for w in a:\n        b.append(w)\n"
        "    c = []\n    for u in b:\n        c.append(u)\n"
        "    d = []\n    for t in c:\n        d.append(t)\n"
        "    for s in d:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "builds through three collections": (
        "def f(xs):\n    a = [v for v in xs if isinstance(v, FullAttentionSpec)]\n"
        "    b = [w for w in a]\n    c = {u for u in b}\n"
        "    for s in c:\n        isinstance(s, MLAAttentionSpec)\n",
        [("isinstance(v, FullAttentionSpec)", True, "c", True, False)],
    ),
    "builds through four collections: the first not followed": (
        "def f(xs):\n    a = [v for v in xs if isinstance(v, FullAttentionSpec)]\n"
        "    b = [w for w in a]\n    c = {u for u in b}\n    d = [t for t in c]\n"
        "    for s in d:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    # -- aliases -------------------------------------------------------------
    "alias of the value": (
        "def f(s):\n    assert isinstance(s, FullAttentionSpec)\n    t = s\n"
        "    return isinstance(t, MLAAttentionSpec)\n",
        [(FULL, True, "s", False, False)],
    ),
    "annotated alias of the value": (
        "def f(s):\n    assert isinstance(s, FullAttentionSpec)\n"
        "    t: AttentionSpec = s\n    return isinstance(t, MLAAttentionSpec)\n",
        [(FULL, True, "s", False, False)],
    ),
    "alias of an element": (
        "def f(xs):\n    full = [s for s in xs if isinstance(s, FullAttentionSpec)]\n"
        "    t = full[0]\n    return isinstance(t, MLAAttentionSpec)\n",
        [(FULL, True, "full[]", True, False)],
    ),
    "alias of the collection": (
        "def f(xs):\n    full = [s for s in xs if isinstance(s, FullAttentionSpec)]\n"
        "    chosen = full\n"
        "    for s in chosen:\n        isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "full", True, False)],
    ),
    "alias of a call: nothing": (
        "def f(s):\n    assert isinstance(s, FullAttentionSpec)\n    t = g(s)\n"
        "    return isinstance(t, MLAAttentionSpec)\n",
        [],
    ),
    "alias of next(iter()) of a build": (
        "def f(xs):\n    full = {s for s in xs if isinstance(s, FullAttentionSpec)}\n"
        "    t = next(iter(full))\n    return isinstance(t, MLAAttentionSpec)\n",
        [(FULL, True, "full", True, False)],
    ),
    "an element of a call's result: nothing": (
        "def f(xs):\n    assert all(isinstance(v, FullAttentionSpec) for v in xs)\n"
        "    return isinstance(g(xs)[0], MLAAttentionSpec)\n",
        [],
    ),
    "next() of another call: nothing": (
        "def f(xs):\n    full = [s for s in xs if isinstance(s, FullAttentionSpec)]\n"
        "    return isinstance(next(chunks(full)), MLAAttentionSpec)\n",
        [],
    ),
    "a loop over a call's result: nothing": (
        "def f():\n    assert all(isinstance(v, FullAttentionSpec) for v in g())\n"
        "    for s in g():\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "all() over a call's result: nothing": (
        "def f(s):\n    assert all(isinstance(v, FullAttentionSpec) for v in g())\n"
        "    return isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "assigning what the value hangs off: nothing followed": (
        "def f(cfg, other):\n    assert isinstance(other, FullAttentionSpec)\n"
        "    cfg = other\n    return isinstance(cfg.spec, MLAAttentionSpec)\n",
        [],
    ),
    "assigning what the collection hangs off: nothing followed": (
        "def f(cfg, other):\n"
        "    assert all(isinstance(v, FullAttentionSpec) for v in other)\n"
        "    cfg = other\n"
        "    for s in cfg.specs:\n        isinstance(s, MLAAttentionSpec)\n",
        [],
    ),
    "an unknown change keeps what is known of the element itself": (
        "def f(full, ys):\n    assert isinstance(full[0], FullAttentionSpec)\n"
        "    full.extend(ys)\n    return isinstance(full[0], MLAAttentionSpec)\n",
        [("isinstance(full[0], FullAttentionSpec)", True, "full[0]", False, False)],
    ),
    "a bare annotation binds nothing": (
        "def f(s):\n    assert isinstance(s, FullAttentionSpec)\n    s: AttentionSpec\n"
        "    return isinstance(s, MLAAttentionSpec)\n",
        [(FULL, True, "s", False, False)],
    ),
    "two targets: no alias": (
        "def f(s):\n    assert isinstance(s, FullAttentionSpec)\n    t = u = s\n"
        "    return isinstance(t, MLAAttentionSpec)\n",
        [],
    ),
    # -- each of these pins one condition of the walker (issue #46) ----------
    "an append after an all() guard: the guard no longer covers every element": (
        (
            "def f(kinds, other):\n"
            "    assert all(isinstance(k, FullAttentionSpec) for k in kinds)\n"
            "    kinds.append(other)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "an append after an all() guard, next(iter())": (
        (
            "def f(kinds, other):\n"
            "    assert all(isinstance(k, FullAttentionSpec) for k in kinds)\n"
            "    kinds.append(other)\n"
            "    return isinstance(next(iter(kinds)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a conditional expression's own test": (
        ("def f(s):\n    return 1 if isinstance(s, MLAAttentionSpec) else 0\n"),
        [],
    ),
    "a comprehension's own condition": (
        ("def f(s):\n    return [x for x in s if isinstance(x, MLAAttentionSpec)]\n"),
        [],
    ),
    "a class body stops the walk": (
        (
            "assert isinstance(s, SlidingWindowSpec)\n"
            "\n"
            "\n"
            "class C:\n"
            "    flag = isinstance(s, MLAAttentionSpec)\n"
            "    s = None\n"
        ),
        [],
    ),
    "list() with no argument builds nothing known": (
        (
            "def f():\n"
            "    kinds = list()\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "filter() without its iterable": (
        (
            "def f(xs):\n"
            "    kinds = list(filter(lambda s: isinstance(s, FullAttentionSpec)))\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "filter()'s lambda with a fact about its argument's elements": (
        (
            "def f(xs):\n"
            "    kinds = list(filter(lambda v: all(isinstance(x, FullAttentionSpec) for x in v), xs))\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "filter()'s lambda": (
        (
            "def f(xs):\n"
            "    kinds = list(filter(lambda v: isinstance(v, FullAttentionSpec), xs))\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [("isinstance(v, FullAttentionSpec)", True, "kinds[]", True, False)],
    ),
    "another collection's append": (
        (
            "def f(specs, others):\n"
            "    kinds = [s for s in specs if isinstance(s, FullAttentionSpec)]\n"
            "    others.append(specs[0])\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "kinds[]", True, False)],
    ),
    "a collection's method read, not called": (
        (
            "def f(specs, other):\n"
            "    kinds = [s for s in specs if isinstance(s, FullAttentionSpec)]\n"
            "    add = kinds.append\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "kinds[]", True, False)],
    ),
    "an attribute of another value named like the collection, called": (
        (
            "def f(specs, other):\n"
            "    kinds = [s for s in specs if isinstance(s, FullAttentionSpec)]\n"
            "    other.kinds(1)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "kinds[]", True, False)],
    ),
    "an element of the collection, called": (
        (
            "def f(specs, other):\n"
            "    kinds = [s for s in specs if isinstance(s, FullAttentionSpec)]\n"
            "    kinds[0](1)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "kinds[]", True, False)],
    ),
    "append() with two arguments": (
        (
            "def f(specs, a, b):\n"
            "    kinds = []\n"
            "    kinds.append(a, b)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a call that is no quantifier": (
        (
            "def f(s, xs, foo):\n"
            "    assert not foo(isinstance(x, FullAttentionSpec) for x in xs)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "an MRO scan is a test of its own": (
        (
            "def f(s):\n"
            "    assert any(c is FullAttentionSpec for c in type(s).__mro__)\n"
            "    return isinstance(s, MLAAttentionSpec)\n"
        ),
        [
            (
                "any(c is FullAttentionSpec for c in type(s).__mro__)",
                True,
                "s",
                False,
                False,
            )
        ],
    ),
    "all() with a second argument": (
        (
            "def f(xs):\n"
            "    assert all((isinstance(x, FullAttentionSpec) for x in xs), 1)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "all() of a name": (
        (
            "def f(xs, flags):\n"
            "    assert all(flags)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "all() of a list comprehension": (
        (
            "def f(xs):\n"
            "    assert all([isinstance(x, FullAttentionSpec) for x in xs])\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [("isinstance(x, FullAttentionSpec)", True, "xs", True, False)],
    ),
    "any() of a set comprehension, false": (
        (
            "def f(xs):\n"
            "    assert not any({isinstance(x, SlidingWindowSpec) for x in xs})\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [("isinstance(x, SlidingWindowSpec)", False, "xs", True, False)],
    ),
    "a filtered generator": (
        (
            "def f(xs, cond):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in xs if cond)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "all() nested in all()": (
        (
            "def f(xs):\n"
            "    assert all(all(isinstance(y, FullAttentionSpec) for y in x) for x in xs)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "an early exit with an else": (
        (
            "def f(s):\n"
            "    if not isinstance(s, FullAttentionSpec):\n"
            "        return 0\n"
            "    else:\n"
            "        pass\n"
            "    return isinstance(s, MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "a bitwise inversion is no not": (
        (
            "def f(s):\n"
            "    assert ~isinstance(s, FullAttentionSpec)\n"
            "    return isinstance(s, MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a later any() operand, false: no decision": (
        (
            "def f(xs):\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec) or any(isinstance(x, SlidingWindowSpec) for x in xs)\n"
        ),
        [],
    ),
    "an empty tuple": (
        (
            "def f():\n"
            "    kinds = ()\n"
            "    kinds.append(make())\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a collection built from another, then appended": (
        (
            "def f(s, other):\n"
            "    kinds = list(other)\n"
            "    kinds.append(s)\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "two statements on one line": (
        (
            "def f(s):\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    kinds = []; pass\n"
            "    kinds.append(s)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "an empty list, then appended": (
        (
            "def f(s):\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    kinds = []\n"
            "    kinds.append(s)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "kinds[]", True, False)],
    ),
    "an early exit on one line": (
        (
            "def f(s):\n"
            "    if not isinstance(s, FullAttentionSpec): return 0\n"
            "    return isinstance(s, MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "two names unpacked from items()": (
        (
            "def f(d):\n"
            "    assert all(isinstance(v, FullAttentionSpec) for k, v in d.items())\n"
            "    return isinstance(next(iter(d.values())), MLAAttentionSpec)\n"
        ),
        [("isinstance(v, FullAttentionSpec)", True, "d.values()", True, False)],
    ),
    "a check in a comprehension over items()": (
        (
            "def f(d):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in d.values())\n"
            "    return [isinstance(v, MLAAttentionSpec) for k, v in d.items()]\n"
        ),
        [("isinstance(x, FullAttentionSpec)", True, "d.values()", True, False)],
    ),
    "three names unpacked from items()": (
        (
            "def f(d):\n"
            "    assert all(isinstance(b, FullAttentionSpec) for a, b, c in d.items())\n"
            "    return isinstance(next(iter(d.values())), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "values() with an argument": (
        (
            "def f(d):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in d.values(1))\n"
            "    return isinstance(next(iter(d.values())), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "keys() is no values()": (
        (
            "def f(d):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in d.keys())\n"
            "    return isinstance(next(iter(d.values())), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "values() of a call": (
        (
            "def f(make):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in make().values())\n"
            "    return isinstance(next(iter(make().values())), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "pairs unpacked from a sequence": (
        (
            "def f(xs):\n"
            "    assert all(isinstance(b, FullAttentionSpec) for a, b in xs)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a loop's else is no element": (
        (
            "def f(xs):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in xs)\n"
            "    for s in xs:\n"
            "        pass\n"
            "    else:\n"
            "        return isinstance(s, MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a lambda's walrus binds in the lambda": (
        (
            "def f(s):\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    g = lambda: (s := None)\n"
            "    return isinstance(s, MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "import ... as binds its alias only": (
        (
            "def f(t):\n"
            "    assert isinstance(t, FullAttentionSpec)\n"
            "    import t.sub as other\n"
            "    return isinstance(t, MLAAttentionSpec)\n"
        ),
        [("isinstance(t, FullAttentionSpec)", True, "t", False, False)],
    ),
    "a subscript assigned by a computed key": (
        (
            "def f(s, table, make):\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    table[make()] = 1\n"
            "    return isinstance(s, MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "an element of a collection another statement fills by filtering, appended to": (
        (
            "def f(specs):\n"
            "    kinds = [s for s in specs if isinstance(s, FullAttentionSpec)]\n"
            "    kinds.append(specs[0])\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a call's result is no subject": (
        ("def f():\n    return isinstance(undefined(), MLAAttentionSpec)\n"),
        [],
    ),
    "next() of a collection is no element of it": (
        (
            "def f(xs):\n"
            "    assert isinstance(next(xs), FullAttentionSpec)\n"
            "    return isinstance(next(xs), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "next(iter(xs)) is an element of xs": (
        (
            "def f(xs):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in xs)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [("isinstance(x, FullAttentionSpec)", True, "xs", True, False)],
    ),
    "iter() without an argument": (
        (
            "def f(xs):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in xs)\n"
            "    return isinstance(next(iter()), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "next() without an argument": (
        (
            "def f(xs):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in xs)\n"
            "    return isinstance(next(), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a negated and inside not": (
        (
            "def f(s):\n"
            "    return not (isinstance(s, FullAttentionSpec) and not isinstance(s, MLAAttentionSpec))\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "another value's test in the or-chain": (
        (
            "def f(s):\n"
            "    return isinstance(s, MLAAttentionSpec) or isinstance(t, SlidingWindowSpec)\n"
        ),
        [],
    ),
    "a later operand that admits values is no decision": (
        (
            "def f(s):\n"
            "    return isinstance(s, MLAAttentionSpec) or not isinstance(s, FullAttentionSpec)\n"
        ),
        [],
    ),
    "a global in an elif: the chain's own decision": (
        (
            "s = None\n"
            "\n"
            "\n"
            "def f():\n"
            "    if isinstance(s, FullAttentionSpec):\n"
            "        return 0\n"
            "    elif isinstance(s, MLAAttentionSpec):\n"
            "        return 1\n"
        ),
        [("isinstance(s, FullAttentionSpec)", False, "s", False, True)],
    ),
    "a global in a nested if: no guard": (
        (
            "s = None\n"
            "\n"
            "\n"
            "def f():\n"
            "    if isinstance(s, FullAttentionSpec):\n"
            "        if isinstance(s, MLAAttentionSpec):\n"
            "            return 1\n"
        ),
        [],
    ),
    "a conditional expression testing another value": (
        (
            "def f(s, t):\n"
            "    return 1 if isinstance(t, FullAttentionSpec) else isinstance(s, MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a conditional expression's test guards its body": (
        (
            "def f(s):\n"
            "    return isinstance(s, MLAAttentionSpec) if isinstance(s, FullAttentionSpec) else 0\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "a comprehension's condition guards its element": (
        (
            "def f(s):\n"
            "    return [isinstance(x, MLAAttentionSpec) for x in s if isinstance(x, FullAttentionSpec)]\n"
        ),
        [("isinstance(x, FullAttentionSpec)", True, "x", False, False)],
    ),
    "a comprehension's iterable built by another comprehension": (
        (
            "def f(specs):\n"
            "    return [isinstance(x, MLAAttentionSpec) for x in [s for s in specs if isinstance(s, FullAttentionSpec)]]\n"
        ),
        [],
    ),
    "another value's test in a comprehension's own condition": (
        (
            "def f(xs, s):\n"
            "    return [x for x in xs if isinstance(s, MLAAttentionSpec)]\n"
        ),
        [],
    ),
    "append() with two arguments: an unknown change": (
        (
            "def f(specs, a, b):\n"
            "    assert isinstance(a, FullAttentionSpec)\n"
            "    kinds = []\n"
            "    kinds.append(a, b)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "any() true says nothing of every element": (
        (
            "def f(xs):\n"
            "    assert any(isinstance(x, FullAttentionSpec) for x in xs)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "all() over a nested loop: an empty inner loop tests nothing": (
        (
            "def f(xs):\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in xs for y in x)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "all() of another value's test": (
        (
            "def f(xs, s):\n"
            "    assert all(isinstance(s, FullAttentionSpec) for x in xs)\n"
            "    return isinstance(next(iter(xs)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "an empty tuple, then appended": (
        (
            "def f(s):\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    kinds = ()\n"
            "    kinds.append(s)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "kinds[]", True, False)],
    ),
    "a called lambda builds nothing known": (
        (
            "def f(s):\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    kinds = (lambda: [])()\n"
            "    kinds.append(s)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a collection built from another is not empty": (
        (
            "def f(s, other):\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    kinds = list(other)\n"
            "    kinds.append(s)\n"
            "    return isinstance(kinds[0], MLAAttentionSpec)\n"
        ),
        [],
    ),
    "values() of a call is no collection": (
        (
            "def f(make):\n"
            "    return all(isinstance(x, FullAttentionSpec) for x in make().values()) and isinstance(next(iter(make().values())), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "an attribute of a call assigned": (
        (
            "def f(s, make):\n"
            "    assert isinstance(s, FullAttentionSpec)\n"
            "    make().attr = 1\n"
            "    return isinstance(s, MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "an early exit by raise": (
        (
            "def f(s):\n"
            "    if not isinstance(s, FullAttentionSpec):\n"
            "        raise TypeError(s)\n"
            "    return isinstance(s, MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "an early exit by continue": (
        (
            "def f(specs):\n"
            "    for s in specs:\n"
            "        if not isinstance(s, FullAttentionSpec):\n"
            "            continue\n"
            "        return isinstance(s, MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "an early exit by break": (
        (
            "def f(specs):\n"
            "    for s in specs:\n"
            "        if not isinstance(s, FullAttentionSpec):\n"
            "            break\n"
            "        return isinstance(s, MLAAttentionSpec)\n"
        ),
        [("isinstance(s, FullAttentionSpec)", True, "s", False, False)],
    ),
    "a generator's condition guards its element": (
        (
            "def f(xs):\n"
            "    return any(isinstance(x, MLAAttentionSpec) for x in xs if isinstance(x, FullAttentionSpec))\n"
        ),
        [("isinstance(x, FullAttentionSpec)", True, "x", False, False)],
    ),
    "a global collection: any call may refill it": (
        (
            "SPECS = []\n"
            "\n"
            "\n"
            "def f():\n"
            "    assert all(isinstance(x, FullAttentionSpec) for x in SPECS)\n"
            "    return isinstance(next(iter(SPECS)), MLAAttentionSpec)\n"
        ),
        [],
    ),
    "a global in a one-line if: no guard": (
        (
            "s = None\n"
            "\n"
            "\n"
            "def f():\n"
            "    if isinstance(s, FullAttentionSpec): return isinstance(s, MLAAttentionSpec)\n"
        ),
        [],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_facts_at_the_check(name):
    body, expected = CASES[name]
    assert facts(body) == expected


EXCLUDES_HEADER = (
    "from vllm.v1.kv_cache_interface import (\n"
    "    FullAttentionSpec, MLAAttentionSpec, SlidingWindowMLASpec\n)\n"
    "from elsewhere import Unknown\n\n\n"
)


@pytest.mark.parametrize(
    "body, expected",
    [
        # A test of FullAttentionSpec alone rules the companion out.
        (
            "def f(s):\n    if isinstance(s, FullAttentionSpec):\n"
            "        return isinstance(s, MLAAttentionSpec)\n",
            [],
        ),
        # Beside a class of unknown bases it may not: any unknown class counts.
        (
            "def f(s):\n    if isinstance(s, (FullAttentionSpec, Unknown)):\n"
            "        return isinstance(s, MLAAttentionSpec)\n",
            [("VSL001", 9, 30)],
        ),
    ],
    ids=["known-class", "beside-unknown"],
)
def test_a_positive_fact_excludes_the_companion_only_when_every_class_rules_it_out(
    body, expected
):
    assert findings(EXCLUDES_HEADER + body, module="vllm.other") == expected


def test_beside_a_known_subclass_of_the_companion_the_companion_is_not_ruled_out():
    from vllm_spec_lint.core.analysis import analyze_source
    from vllm_spec_lint.core.settings import Config
    from vllm_spec_lint.model.hierarchy import KV_CACHE_INTERFACE, ClassHierarchy

    hierarchy = ClassHierarchy.default().with_classes(
        {"p.MySWMLA": (f"{KV_CACHE_INTERFACE}.SlidingWindowMLASpec",)},
        "1 class",
        "test",
    )
    source = EXCLUDES_HEADER + (
        "from p import MySWMLA\n\n\n"
        "def f(s):\n    if isinstance(s, (MySWMLA, FullAttentionSpec)):\n"
        "        return isinstance(s, MLAAttentionSpec)\n"
    )
    analysis = analyze_source(source, "x.py", Config(), hierarchy, module_name="q")
    assert [(f.code, *f.location) for f in analysis.findings] == [("VSL001", 12, 30)]


@pytest.mark.parametrize(
    "call",
    ["pop()", "remove(s)", "discard(s)", "clear()", "copy()", "count(s)",
     "index(s)", "get(0)", "keys()", "values()", "items()", "sort()",
     "reverse()", "popitem()"],
)  # fmt: skip
def test_a_method_that_adds_nothing_keeps_what_is_known_of_the_elements(call):
    body = (
        "def f(specs, s):\n"
        "    kinds = [v for v in specs if isinstance(v, FullAttentionSpec)]\n"
        f"    kinds.{call}\n"
        "    return isinstance(kinds[0], MLAAttentionSpec)\n"
    )
    assert facts(body) == [
        ("isinstance(v, FullAttentionSpec)", True, "kinds[]", True, False)
    ]


@pytest.mark.parametrize("build", ["list", "set", "tuple", "sorted", "frozenset"])
def test_a_filter_built_into_each_collection_keeps_its_test(build):
    body = (
        "def f(specs):\n"
        f"    kinds = {build}(filter(lambda v: isinstance(v, FullAttentionSpec), specs))\n"
        "    return isinstance(kinds[0], MLAAttentionSpec)\n"
    )
    assert facts(body) == [
        ("isinstance(v, FullAttentionSpec)", True, "kinds[]", True, False)
    ]
