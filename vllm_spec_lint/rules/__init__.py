"""The rules, one module each. ``ALL_RULES`` is in code order."""

from vllm_spec_lint.rules.base import Rule
from vllm_spec_lint.rules.vsl001_isinstance import IsinstanceLeavesOutCompanion
from vllm_spec_lint.rules.vsl002_type_compare import ExactTypeLeavesOutCompanion
from vllm_spec_lint.rules.vsl003_match_class import MatchClassLeavesOutCompanion
from vllm_spec_lint.rules.vsl004_constant import ConstantLeavesOutCompanion

ALL_RULES: tuple[type[Rule], ...] = (
    IsinstanceLeavesOutCompanion,
    ExactTypeLeavesOutCompanion,
    MatchClassLeavesOutCompanion,
    ConstantLeavesOutCompanion,
)
