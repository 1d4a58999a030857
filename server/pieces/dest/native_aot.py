"""The C++ of native-AOT declarations (gen.py from torch 2.15): each declared op's DispatchStub (NativeAotStubs.h
/ .cpp) and its structured wrapper's consultation of the stub before op.impl."""

from __future__ import annotations

from ...model.native_aot import NativeAotDeclaration
from ...model.native_function import NativeFunctionsGroup
from ...releases.profile import CppSpelling
from ..api import structured


def stub_declaration(d: NativeAotDeclaration, g: NativeFunctionsGroup, spelling: CppSpelling) -> str:
    params = ", ".join(b.decl() for b in structured.impl_arguments(g, spelling))
    return f"using {d.fn_type_name} = bool (*)({params});\nDECLARE_DISPATCH({d.fn_type_name}, {d.stub_name})\n"


def stub_definition(d: NativeAotDeclaration) -> str:
    return f"DEFINE_DISPATCH({d.stub_name});\nREGISTER_NO_CPU_DISPATCH({d.stub_name})\n"


def stub_consultation(d: NativeAotDeclaration, impl_exprs: str) -> str:
    """The structured wrapper's call of op.impl, behind the stub: a true return means the AOT kernel filled the
    outputs. An UNCONDITIONAL declaration's kernels are the implementation: a private mask gates them."""
    device = f"c10::DeviceType::{d.dispatch_key}"
    stub = f"at::native::{d.stub_name}"
    if d.unconditional:
        gate = "!at::globalContext().maskUnconditionalNativeAot()"
        gate_comment = ("// declared UNCONDITIONAL: these kernels are the implementation, so\n"
                        "// torch._native.set_aot_enabled(False) does NOT mask them -- only the\n"
                        "// private reference-computation hatch does. op.impl runs when that hatch\n"
                        "// is set, when the device is unsupported, or when the kernels decline\n"
                        "// this shape.\n")
        cases = ("// the stub is never called when the device is unsupported. op.impl\n"
                 "// below is the ordinary aten kernel.\n")
    else:
        gate = "at::globalContext().allowNativeAot()"
        gate_comment = ""
        cases = ("// the stub is never called when AOT is switched off or the device is\n"
                 "// unsupported. op.impl below is the ordinary aten kernel, and it runs in\n"
                 "// exactly those three cases: switched off, unsupported device, or declined.\n")
    return ("// native-AOT: the last conjunct is the LAUNCH, not a query -- it runs the\n"
            "// AOT kernel into the meta()-allocated outputs and returns true if it\n"
            "// handled the call, false if it declined this shape. && short-circuits, so\n"
            f"{cases}{gate_comment}"
            f"if (!({gate} && {stub}.is_device_supported({device}) && {stub}({device}, {impl_exprs}))) "
            f"{{ op.impl({impl_exprs}); }}")
