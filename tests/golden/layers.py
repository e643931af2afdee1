from vllm.v1.kv_cache_interface import (
    FullAttentionSpec,
    MLAAttentionSpec,
    SlidingWindowMLASpec,
)
use_mla = isinstance(spec, MLAAttentionSpec)


def is_latent(spec) -> bool:
    if isinstance(spec, SlidingWindowMLASpec):
        return True
    return isinstance(
        spec,
        (FullAttentionSpec, MLAAttentionSpec),
    )


def kind(spec) -> str:
    if type(spec) == MLAAttentionSpec:
        return "latent"
    return "mla" if type(spec) is MLAAttentionSpec else "other"
