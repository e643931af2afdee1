import sys

from vllm_spec_lint.cli import main

sys.exit(main())
