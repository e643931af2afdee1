"""The rules, one module each. ``ALL_RULES`` is in code order."""

from vllm_spec_lint.rules.base import Rule
from vllm_spec_lint.rules.vsl001_isinstance import IsinstanceLeavesOutCompanion
from vllm_spec_lint.rules.vsl002_type_compare import ExactTypeLeavesOutCompanion
from vllm_spec_lint.rules.vsl003_match_class import MatchClassLeavesOutCompanion
from vllm_spec_lint.rules.vsl004_constant import ConstantLeavesOutCompanion
from vllm_spec_lint.rules.vsl005_class_name import ClassNameLeavesOutCompanion
from vllm_spec_lint.rules.vsl006_class_dispatch import DispatchLeavesOutCompanion
from vllm_spec_lint.rules.vsl007_parent_sweeps_companion import ParentSweepsInCompanion
from vllm_spec_lint.rules.vsl008_layout_property import ClassTestInsteadOfLayoutProperty

ALL_RULES: tuple[type[Rule], ...] = (
    IsinstanceLeavesOutCompanion,
    ExactTypeLeavesOutCompanion,
    MatchClassLeavesOutCompanion,
    ConstantLeavesOutCompanion,
    ClassNameLeavesOutCompanion,
    DispatchLeavesOutCompanion,
    ParentSweepsInCompanion,
    ClassTestInsteadOfLayoutProperty,
)
