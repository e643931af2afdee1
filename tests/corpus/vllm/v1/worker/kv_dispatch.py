"""Test corpus: class tests by name, through the MRO and by dispatch, in the
shapes vLLM and its plugins write them (written for these tests)."""

import functools
from collections.abc import Callable

from vllm.v1.kv_cache_interface import (
    AttentionSpec,
    FullAttentionSpec,
    KVCacheSpec,
    MLAAttentionSpec,
    SlidingWindowMLASpec,
    SlidingWindowSpec,
)

_PAGE_SIZE_FNS: dict[type[KVCacheSpec], Callable[[KVCacheSpec], int]] = {
    FullAttentionSpec: lambda spec: spec.page_size_bytes,
    MLAAttentionSpec: lambda spec: spec.page_size_bytes // 2,
}

_LAYOUT_NAMES = {
    MLAAttentionSpec: "mla",
    SlidingWindowSpec: "sliding",
}


def page_size(spec: KVCacheSpec) -> int:
    return _PAGE_SIZE_FNS[type(spec)](spec)


def layout_name(spec: KVCacheSpec) -> str:
    # Along the MRO: SlidingWindowSpec's entry serves SlidingWindowMLASpec.
    for cls in type(spec).__mro__:
        if cls in _LAYOUT_NAMES:
            return _LAYOUT_NAMES[cls]
    return "full"


def uses_latent_cache(spec: KVCacheSpec) -> bool:
    # Imports without vLLM: compare names, as LMCache does.
    return any(cls.__name__ == "MLAAttentionSpec" for cls in type(spec).__mro__)


def is_attention(spec: KVCacheSpec) -> bool:
    return any(cls.__name__ == "AttentionSpec" for cls in type(spec).__mro__)


def is_exactly_latent(spec: KVCacheSpec) -> bool:
    if type(spec).__name__ == "SlidingWindowMLASpec":
        return True
    return type(spec).__name__ == "MLAAttentionSpec"


def kv_heads(spec: KVCacheSpec) -> int:
    if type(spec).__name__ in ("MLAAttentionSpec", "FullAttentionSpec"):  # noqa: VSL005
        return 1
    return getattr(spec, "num_kv_heads", 0)


@functools.singledispatch
def block_bytes(spec: KVCacheSpec) -> int:
    raise NotImplementedError(type(spec).__name__)


@block_bytes.register
def _(spec: MLAAttentionSpec) -> int:
    return spec.page_size_bytes


@block_bytes.register
def _(spec: FullAttentionSpec) -> int:
    return 2 * spec.page_size_bytes


@functools.singledispatch
def head_dim(spec: KVCacheSpec) -> int:
    raise NotImplementedError


@head_dim.register(MLAAttentionSpec)
def _(spec) -> int:
    return spec.head_size


def _register_window_head_dim() -> None:
    head_dim.register(AttentionSpec, lambda spec: spec.head_size)


class LayoutRegistry:
    _layouts: dict[type, str] = {}

    @classmethod
    def register(cls, spec_type: type, layout: str) -> None:
        cls._layouts[spec_type] = layout


def register_layouts() -> None:
    LayoutRegistry.register(FullAttentionSpec, "paged")
    LayoutRegistry.register(MLAAttentionSpec, "latent")


def register_window_layouts() -> None:
    LayoutRegistry.register(SlidingWindowMLASpec, "latent")
