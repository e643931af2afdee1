from vllm_spec_lint.faces.cli import run

run()
