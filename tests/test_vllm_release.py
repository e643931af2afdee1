"""The checker over a real vLLM release tree (fetched, never copied here)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import fetch_vllm, run_cli

# Sites read by hand in vLLM 0.33.0 (path, line, code): SlidingWindowMLASpec
# reaches each of these checks and the check does not name it.
KNOWN_SITES_0_33_0 = [
    # After `isinstance(spec, AttentionSpec)`: a compressed layer falls through
    # to the non-MLA mapping.
    (
        "vllm/distributed/kv_transfer/kv_connector/v1/offloading/canonical_mapping.py",
        282,
        "VSL001",
    ),
    # `isinstance(.., FullAttentionSpec) and not isinstance(.., MLAAttentionSpec)`.
    (
        "vllm/distributed/kv_transfer/kv_connector/v1/offloading/config.py",
        221,
        "VSL001",
    ),
    # `type(spec) is MLAAttentionSpec` in the certifier.
    (
        "vllm/distributed/kv_transfer/kv_connector/v1/offloading/config.py",
        241,
        "VSL002",
    ),
    # `has_mla = any(isinstance(spec, MLAAttentionSpec) for spec in ...)`.
    ("vllm/v1/core/kv_cache_planning.py", 831, "VSL001"),
]


@pytest.fixture(scope="module")
def vllm_0_33_0():
    return fetch_vllm("0.33.0")


@pytest.fixture(scope="module")
def findings_0_33_0(vllm_0_33_0):
    out = run_cli("check", "--format", "json", ".", cwd=vllm_0_33_0)
    assert out.returncode in (0, 1), out.stderr
    return json.loads(out.stdout)


def test_no_vsl900_on_a_real_tree(findings_0_33_0):
    errors = [f for f in findings_0_33_0 if f["code"] == "VSL900"]
    assert errors == []


def test_known_sites_are_found(findings_0_33_0, vllm_0_33_0):
    found = {
        (
            str(__import__("pathlib").Path(f["filename"]).relative_to(vllm_0_33_0)),
            f["location"]["row"],
            f["code"],
        )
        for f in findings_0_33_0
    }
    for site in KNOWN_SITES_0_33_0:
        assert site in found


def test_fixed_checks_are_not_reported(findings_0_33_0):
    # The NIXL worker carries the PR #45831 fix in this release.
    assert not [
        f for f in findings_0_33_0 if f["filename"].endswith("nixl/base_worker.py")
    ]


def test_hierarchy_comes_from_the_tree(vllm_0_33_0):
    out = run_cli("families", ".", cwd=vllm_0_33_0)
    assert "vllm/v1/kv_cache_interface.py" in out.stdout
    assert "SlidingWindowMLASpec <- SlidingWindowSpec" in out.stdout
