from vllm.v1.kv_cache_interface import (
    FullAttentionSpec,
    MLAAttentionSpec,
)

use_mla = isinstance(spec, MLAAttentionSpec)


def region(spec) -> str:
    return "full" if isinstance(spec, FullAttentionSpec) else "other"


def register(layer_spec) -> bool:
    is_mla_region = isinstance(layer_spec, MLAAttentionSpec)
    return is_mla_region
