"""The yaml inputs of PyTorch's own codegen tests, captured by running them (nothing of them is kept here).

A real tree (tests/real_trees.py) holds PyTorch's tests of its codegen: tools/test/test_codegen_model.py (native
yaml the model must refuse, ufunc loops) and tools/test/test_gen_backend_stubs.py (backend yamls, good and bad).
Their inputs are inline strings built inside the test methods, so rather than reading the source they are
captured: each test module is imported and its tests run with the installed torchgen, with `yaml.load` (the
native yaml it is given) and `gen_backend_stubs.run` (the backend yaml file) recording what they are handed. Their
own assertions are not what counts (expecttest is stubbed when absent); the inputs are then given to opgen and to
torchgen by the conformance test.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import sys
import types
import unittest
from dataclasses import dataclass
from pathlib import Path

NATIVE, BACKEND = "native", "backend"
FILES = {"test_codegen_model.py": NATIVE, "test_gen_backend_stubs.py": BACKEND}


@dataclass(frozen=True)
class Captured:
    test: str  # the test method that built it
    kind: str  # NATIVE or BACKEND
    text: str
    impl: str | None = None  # a backend's kernel definitions file (gen_backend_stubs' impl_path), if given


def _expecttest_stub() -> types.ModuleType:
    stub = types.ModuleType("expecttest")

    class TestCase(unittest.TestCase):
        def assertExpectedInline(self, actual, expect, skip=0):  # noqa: N802  (their API)
            pass

    stub.TestCase = TestCase  # type: ignore[attr-defined]
    return stub


def capture(test_file: Path) -> list[Captured]:
    """Every input the tests of test_file hand to torchgen, in the order they run."""
    import yaml

    kind = FILES[test_file.name]
    found: list[Captured] = []
    current = ["?"]
    if "expecttest" not in sys.modules:
        try:
            import expecttest  # noqa: F401
        except ImportError:
            sys.modules["expecttest"] = _expecttest_stub()
    spec = importlib.util.spec_from_file_location(f"pytorch_{test_file.stem}", test_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    original_load = yaml.load

    def load(stream, Loader):  # noqa: N803  (yaml's name)
        if kind == NATIVE and isinstance(stream, str):
            found.append(Captured(current[0], NATIVE, stream))
        return original_load(stream, Loader=Loader)

    def run(source_yaml: str, *_args, impl_path: str | None = None, **_kwargs) -> None:
        impl = Path(impl_path).read_text(encoding="utf-8") if impl_path else None
        found.append(Captured(current[0], BACKEND, Path(source_yaml).read_text(encoding="utf-8"), impl))
        raise AssertionError("captured")  # what their error tests expect; their success tests just fail

    class Recording(unittest.TestResult):
        def startTest(self, test):  # noqa: N802
            current[0] = test.id().rsplit(".", 1)[-1]
            super().startTest(test)

    suite = unittest.TestLoader().loadTestsFromModule(module)
    saved_run = getattr(module, "run", None)
    yaml.load = load
    if kind == BACKEND:
        module.run = run
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            suite.run(Recording())
    finally:
        yaml.load = original_load
        if saved_run is not None:
            module.run = saved_run
    return found
