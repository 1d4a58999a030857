"""The workspace the editor tests open: its mistakes are the samples' (fast, no editor needed)."""

import subprocess

from .conftest import editor_env, expected_codes, readme_mistakes, which_opgen


def test_expected_codes_are_the_samples_twelve():
    codes = expected_codes()
    assert len(codes["native_functions.yaml"]) == 11
    assert codes["tags.yaml"] == ["OPG401"]


def test_clean_copy_checks_clean(workspace):
    proc = subprocess.run([which_opgen(), "check", str(workspace / "clean")], capture_output=True, text=True, env=editor_env())
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_readme_table_has_the_same_mistakes():
    rows = readme_mistakes()
    codes = expected_codes()
    assert [code for name, _, code in rows if name == "native_functions.yaml"] == codes["native_functions.yaml"]
    assert [code for name, _, code in rows if name == "tags.yaml"] == codes["tags.yaml"]
