"""Test corpus: spec checks in the shapes vLLM writes them (written for these tests)."""

from vllm.v1 import kv_cache_interface as kci
from vllm.v1.kv_cache_interface import AttentionSpec, FullAttentionSpec
from vllm.v1.kv_cache_interface import MLAAttentionSpec as MLASpec
from vllm.v1.kv_cache_interface import SlidingWindowMLASpec

_PAGED_SPECS = (
    FullAttentionSpec,
    MLASpec,
)


def num_latent_layers(specs: dict[str, AttentionSpec]) -> int:
    return sum(1 for spec in specs.values() if isinstance(spec, MLASpec))


def is_latent(spec: AttentionSpec) -> bool:
    return isinstance(spec, MLASpec) or isinstance(spec, SlidingWindowMLASpec)


def kv_heads(spec: AttentionSpec) -> int:
    if isinstance(spec, SlidingWindowMLASpec):
        return 1
    elif isinstance(spec, MLASpec):
        return 1
    return spec.num_kv_heads


def page_bytes(spec: AttentionSpec) -> int:
    if type(spec) is kci.MLAAttentionSpec:  # noqa: VSL002
        return spec.page_size_bytes
    if isinstance(spec, kci.MLAAttentionSpec):  # noqa: VSL002 - not this code
        return spec.page_size_bytes
    return 2 * spec.page_size_bytes


def describe(spec: AttentionSpec) -> str:
    match spec:
        case MLASpec(block_size=block_size):
            return f"mla/{block_size}"
        case FullAttentionSpec():
            return "full"
    return "other"
