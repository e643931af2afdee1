"""Whether a tested value is a metadata builder's own spec: the question
backend pairing (pairing.py) answers across the tree.

A builder is built with the spec of the layers whose backend returns it, and
keeps it as ``self.kv_cache_spec``. A test on that value (in any method of a
module-level class) or on the ``kv_cache_spec`` its ``__init__`` is given
can only see what those layers build. Here only the site is recognised: the
class it belongs to, by qualified name; whether the class is a builder at
all, and what its layers build, is the tree pass's business.
"""

from __future__ import annotations

import libcst as cst

from vllm_spec_lint.model.class_bodies import OWN_SPEC


def own_spec_class(model, target: cst.CSTNode) -> str | None:
    """``module.Class`` when ``target`` is ``self.kv_cache_spec`` in a method
    of a module-level class, or the ``kv_cache_spec`` parameter of its
    ``__init__`` (bound nowhere else there); else None."""
    if model.module_name is None:
        return None
    if (
        isinstance(target, cst.Attribute)
        and target.attr.value == OWN_SPEC
        and isinstance(target.value, cst.Name)
    ):
        receiver, method_only = target.value, None
    elif isinstance(target, cst.Name) and target.value == OWN_SPEC:
        receiver, method_only = target, "__init__"
    else:
        return None
    binder = model.scopes.binder(receiver, receiver.value)
    function = None if binder is None else binder.node
    if not isinstance(function, cst.FunctionDef):
        return None
    if method_only is not None and function.name.value != method_only:
        return None
    if function.decorators or not _is_parameter(function, receiver.value, method_only):
        return None
    if len(binder.bindings[receiver.value]) != 1:  # rebound in the method
        return None
    body = model.parent(function)
    owner = model.parent(body) if isinstance(body, cst.IndentedBlock) else None
    if not isinstance(owner, cst.ClassDef):
        return None
    if not isinstance(model.parent(owner), cst.Module):
        return None
    return f"{_module(model.module_name)}.{owner.name.value}"


def _is_parameter(function: cst.FunctionDef, name: str, method_only) -> bool:
    params = list(function.params.posonly_params) + list(function.params.params)
    if not params:
        return False
    if method_only is None:  # ``self``: the method's first parameter
        return params[0].name.value == name
    rest = params[1:] + list(function.params.kwonly_params)
    return any(p.name.value == name for p in rest)


def _module(module_name: str) -> str:
    return module_name.removesuffix(".__init__")
