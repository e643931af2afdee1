"""A stand-in for vLLM's spec classes: names and bases only."""

from dataclasses import dataclass


@dataclass(frozen=True)
class KVCacheSpec:
    block_size: int


@dataclass(frozen=True)
class AttentionSpec(KVCacheSpec):
    num_kv_heads: int
    head_size: int


@dataclass(frozen=True)
class FullAttentionSpec(AttentionSpec):
    pass


@dataclass(frozen=True)
class MLAAttentionSpec(FullAttentionSpec):
    cache_dtype_str: str | None = None


@dataclass(frozen=True)
class SlidingWindowSpec(AttentionSpec):
    sliding_window: int = 0


@dataclass(frozen=True)
class SlidingWindowMLASpec(SlidingWindowSpec):
    """Compressed layers: MLA layout, sliding-window lifetime."""
