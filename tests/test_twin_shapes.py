"""What a class's shape holds and how two shapes are compared
(model/twins.py), each signal on a small module written here."""

from __future__ import annotations

import textwrap

from vllm_spec_lint.model.twins import (
    ClassShape,
    _body_shape,
    _compare,
    class_shapes,
    discover_twins,
)


def _shapes(source: str) -> dict[str, ClassShape]:
    return {s.name: s for s in class_shapes(textwrap.dedent(source), "m")}


def _shape(qualname: str, order: int = 0, **parts) -> ClassShape:
    return ClassShape(qualname, (), order, **parts)


def _method(source: str):
    import ast

    function = ast.parse(textwrap.dedent(source)).body[0]
    return _body_shape(function, "C")


def test_a_stem_is_the_name_without_its_suffix_unless_that_is_all_of_it():
    assert _shape("m.ChunkedMLASpec").stem == "ChunkedMLA"
    assert _shape("m.TreeAttentionSpec").stem == "Tree"
    assert _shape("m.Spec").stem == "Spec"
    assert _shape("m.AttentionSpec").stem == "Attention"
    assert _shape("m.Layout").stem == "Layout"


def test_async_helpers_and_methods_and_attribute_annotations():
    shapes = _shapes(
        """\
        async def fetch(spec):
            return spec


        class ASpec:
            rows: int
            other.attr: int = 1

            async def load(self):
                await fetch(self)
                return self.rows + 1
        """
    )
    a = shapes["ASpec"]
    # Only a plain name is a field; an async function called with self is a
    # helper, an async method has its body's shape.
    assert a.fields == {"rows": "int"}
    assert a.helpers == {"fetch": frozenset({"load"})}
    assert a.methods["load"] is not None


def test_a_helper_is_called_with_self_among_its_arguments():
    shapes = _shapes(
        """\
        def pad(spec, n=1):
            return n


        class ASpec:
            def with_self_second(self, other):
                return pad(other, self)

            def without_self(self, other):
                return pad(other)
        """
    )
    assert shapes["ASpec"].helpers == {"pad": frozenset({"with_self_second"})}


def test_a_body_shape_leaves_out_a_docstring_but_not_another_expression():
    with_docstring = _method('def m(self):\n    """Doc."""\n    return self.x + 1\n')
    plain = _method("def m(self):\n    return self.x + 1\n")
    with_call = _method("def m(self):\n    log(self)\n    return self.x + 1\n")
    assert with_docstring == plain
    assert with_call != plain


def test_only_a_lone_return_of_a_constant_or_nothing_has_no_shape():
    assert _method("def m(self):\n    return\n") is None
    assert _method("def m(self):\n    return 1\n") is None
    assert _method("def m(self):\n    return 1\n    x = 2\n") is not None
    assert _method("def m(self):\n    return self.x\n") is not None


def test_same_annotations_under_other_names_need_distinct_unshared_names():
    a = _shape(
        "m.ASpec",
        fields={"rows": "torch.dtype", "cols": "torch.dtype", "kind": "Layout"},
    )
    b = _shape(
        "m.BSpec",
        fields={"rows": "torch.dtype", "depth": "torch.dtype", "shape": "Shape"},
    )
    score, evidence, shared = _compare(a, b)
    # rows is shared (1), so rows/depth is not alike; cols/depth is (0.5);
    # kind/shape annotate different types.
    assert (score, shared) == (1.5, 1)
    assert evidence == [
        "shares fields rows",
        "same annotations under other names: cols/depth",
    ]


def test_a_docstring_names_the_others_stem_only_when_it_has_a_suffix():
    named = _shape("m.ChunkedSpec", docstring="Like Layout, but Tree's.")
    tree = _shape("m.TreeSpec")
    layout = _shape("m.Layout")
    assert _compare(named, tree)[1] == ["ChunkedSpec's docstring names Tree"]
    # Layout has no suffix: its stem is its whole name, no evidence.
    assert _compare(named, layout)[1] == []


def _ancestors(bases):
    def ancestors(qualname):
        found = [qualname]
        for current in found:
            found += [b for b in bases.get(current, ()) if b not in found]
        return frozenset(found)

    return ancestors


FIELDS = {"rows": "int", "cols": "int", "depth": "int", "kind": "Layout", "head": "int"}


def test_without_a_root_every_class_takes_part():
    a = _shape("m.ASpec", order=0, fields=FIELDS)
    b = _shape("n.BSpec", order=1, fields=FIELDS)
    [twin] = discover_twins([a, b], _ancestors({}))
    assert (twin.anchor, twin.companion, twin.score) == ("m.ASpec", "n.BSpec", 5.0)


def test_a_class_and_its_subclass_are_no_twins_in_either_order():
    child = _shape("m.ChildSpec", order=0, fields=FIELDS)
    parent = _shape("m.ParentSpec", order=1, fields=FIELDS)
    ancestors = _ancestors({"m.ChildSpec": ("m.ParentSpec",)})
    assert discover_twins([child, parent], ancestors) == []
    assert discover_twins([parent, child], ancestors) == []


def test_one_class_read_under_two_module_names_is_no_twin_of_itself():
    a = _shape("pkg.kv.ASpec", order=0, fields=FIELDS)
    again = _shape("kv.ASpec", order=1, fields=FIELDS)
    assert discover_twins([a, again], _ancestors({})) == []


def test_a_shared_helper_stands_in_for_a_second_shared_field():
    helped = {"pad": frozenset({"check"})}
    bodies = {"m1": "x", "m2": "y"}
    # One shared field and the helper (1 + 2), two same bodies (2) and a
    # docstring naming the other each way (1 + 1): 7 for A and B.
    shared = {"fields": {"rows": "int"}, "methods": bodies}
    a = _shape("m.ASpec", 0, helpers=helped, docstring="B", **shared)
    b = _shape("m.BSpec", 1, helpers=helped, docstring="A", **shared)
    c = _shape("m.CSpec", 2, docstring="A", **shared)
    twins = discover_twins([a, b, c], _ancestors({}))
    # A and B: 1 + 2 + 2 + 1 + 1 = 7 with one shared field and a helper;
    # A and C (and B and C): 1 + 2 + 1 = 4 or less, one field, no helper.
    assert [(t.anchor, t.companion, t.score) for t in twins] == [
        ("m.ASpec", "m.BSpec", 7.0)
    ]
