"""vllm-spec-lint: finds vLLM KV-cache spec checks that leave out a sibling spec."""

__version__ = "0.1.0"
