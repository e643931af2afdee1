"""Rewriting a class test into a read of the family's layout property
(model/layout.py says why each form is equivalent)."""

from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.hierarchy import Family
from vllm_spec_lint.model.layout import LayoutTest, is_pure, known_spec
from vllm_spec_lint.model.semantic_model import SemanticModel
from vllm_spec_lint.repair.plans import FixPlan, companion_expressions, flat_tuple

# Where a ``a and b`` / ``a or b`` stands as it would alone: no parentheses.
_OPEN_FIELDS = {
    cst.If: "test",
    cst.While: "test",
    cst.Assert: "test",
    cst.Assign: "value",
    cst.AnnAssign: "value",
    cst.Return: "value",
    cst.Expr: "value",
    cst.Arg: "value",
    cst.Element: "value",
    cst.DictElement: "value",
    cst.CompIf: "test",
    cst.IfExp: "test",
    cst.Lambda: "body",
    cst.GeneratorExp: "elt",
    cst.ListComp: "elt",
    cst.SetComp: "elt",
    cst.DictComp: "value",
}


def layout_plan(
    model: SemanticModel,
    layout: LayoutTest,
    family: Family,
    applicability: str,
) -> FixPlan | str:
    """The test as a read of the layout property, or why it cannot be one."""
    test = layout.test
    prop = family.property_name
    root = model.hierarchy.root(family.anchor)
    target = test.target
    spec = known_spec(model, test, root)
    if layout.exact and layout.others:
        return "other classes are compared exactly too: rewrite it by hand"
    if layout.others or not spec:
        if not is_pure(target):
            return (
                "the tested value is computed, and the rewrite would read it "
                "twice: rewrite it by hand"
            )
    if not spec and layout.exact and model.scopes.binder(test.node, "isinstance"):
        return "isinstance is rebound here"
    imports: tuple[str, ...] = ()
    if spec:
        form: cst.BaseExpression = _read(target, prop)
    else:
        named = companion_expressions(model, layout.members[0], [root])
        if named is None:
            return f"{root.rpartition('.')[2]} cannot be named here"
        (root_expr,), imports = named
        form = cst.BooleanOperation(
            _isinstance(test, root_expr), cst.And(), _read(target, prop)
        )
    if layout.others:
        others = layout.others
        classinfo = others[0] if len(others) == 1 else flat_tuple(list(others))
        if isinstance(form, cst.BooleanOperation):  # ``and`` inside ``or``: said
            form = form.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        form = cst.BooleanOperation(_isinstance(test, classinfo), cst.Or(), form)
    if not test.positive:  # type(x) is not C
        if isinstance(form, cst.BooleanOperation):
            form = form.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
        form = cst.UnaryOperation(cst.Not(), form)
    node = test.node
    if node.lpar:
        form = form.with_changes(lpar=node.lpar, rpar=node.rpar)
    elif isinstance(
        form, (cst.BooleanOperation, cst.UnaryOperation)
    ) and _needs_parentheses(model, node, form):
        form = form.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    return FixPlan(
        node,
        form,
        f"Ask `{prop}` (their subclasses pass too)"
        if layout.exact
        else f"Ask `{prop}`",
        layout.members[0],
        imports,
        applicability=applicability,
    )


def _read(target: cst.BaseExpression, prop: str) -> cst.Attribute:
    if not isinstance(target, (cst.Name, cst.Attribute, cst.Subscript, cst.Call)):
        if not target.lpar:
            target = target.with_changes(
                lpar=[cst.LeftParen()], rpar=[cst.RightParen()]
            )
    return cst.Attribute(target, cst.Name(prop))


def _isinstance(test, classinfo: cst.BaseExpression) -> cst.Call:
    # As the test spells it; an exact comparison has none: the builtin.
    func = test.node.func if test.kind == "isinstance" else cst.Name("isinstance")
    return cst.Call(
        func,
        [
            cst.Arg(
                test.target, comma=cst.Comma(whitespace_after=cst.SimpleWhitespace(" "))
            ),
            cst.Arg(classinfo),
        ],
    )


def _needs_parentheses(
    model: SemanticModel,
    node: cst.CSTNode,
    form: cst.BooleanOperation | cst.UnaryOperation,
) -> bool:
    """Whether ``form`` in ``node``'s place would bind differently: an
    ``and``/``or`` under ``not``, either or a ``not`` in a comparison or an
    arithmetic operand, or an ``or`` form in an ``and``."""
    parent = model.parent(node)
    if isinstance(form, cst.UnaryOperation) and (
        isinstance(parent, cst.BooleanOperation)
        or isinstance(parent, cst.UnaryOperation)
        and isinstance(parent.operator, cst.Not)
    ):
        return False  # ``not`` binds tighter than ``and``/``or``
    if isinstance(parent, cst.BooleanOperation):
        # ``and`` binds tighter than ``or``; each is associative.
        return isinstance(form.operator, cst.Or) and isinstance(
            parent.operator, cst.And
        )
    if isinstance(parent, cst.Arg) and parent.star:
        return True
    field = _OPEN_FIELDS.get(type(parent))
    return field is None or getattr(parent, field, None) is not node
