"""A connector worker with the bug vLLM PR #45831 fixed (VSL001)."""

import torch

from vllm.v1.kv_cache_interface import (
    AttentionSpec,
    MLAAttentionSpec,
)


class NixlWorker:
    def __init__(self, layer_specs: dict[str, AttentionSpec]):
        self.layer_specs = layer_specs
        self.region_is_mla: list[bool] = []

    def register_kv_caches(self, kv_caches: dict[str, torch.Tensor]):
        for layer_name in kv_caches:
            layer_spec = self.layer_specs[layer_name]
            is_mla_region = isinstance(layer_spec, MLAAttentionSpec)
            self.region_is_mla.append(is_mla_region)
