import sys

from vllm_spec_lint.faces.cli import main

sys.exit(main())
