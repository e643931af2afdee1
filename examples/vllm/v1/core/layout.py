"""Every kind of finding, next to checks that are already right."""

from vllm.v1 import kv_cache_interface as kci
from vllm.v1.kv_cache_interface import (
    FullAttentionSpec,
    KVCacheSpec,
    MLAAttentionSpec,
    SlidingWindowMLASpec,
)

# VSL004: the checks that use this constant miss the compressed layers.
_LATENT_SPECS = (MLAAttentionSpec,)


def uses_latent_layout(spec: KVCacheSpec) -> bool:
    return isinstance(spec, _LATENT_SPECS)


def page_size_bytes(spec: KVCacheSpec) -> int:
    # VSL002: an exact comparison never matches a SlidingWindowMLASpec.
    if type(spec) is MLAAttentionSpec:
        return spec.block_size * spec.head_size
    return 2 * spec.block_size * spec.num_kv_heads * spec.head_size


def describe(spec: KVCacheSpec) -> str:
    match spec:
        case MLAAttentionSpec():  # VSL003
            return "mla"
        case FullAttentionSpec():
            return "full"
    return "other"


def is_latent(spec: KVCacheSpec) -> bool:
    # Already right: both family members are named.
    return isinstance(spec, (MLAAttentionSpec, SlidingWindowMLASpec))


def is_latent_by_module(spec: KVCacheSpec) -> bool:
    # VSL001 through a module attribute.
    return isinstance(spec, (kci.FullAttentionSpec, kci.MLAAttentionSpec))
