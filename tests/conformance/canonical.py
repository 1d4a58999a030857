"""One canonical, comparable form for torchgen's and opgen's models.

opgen keeps torchgen's attribute names, so the same function reads both.
"""

from __future__ import annotations


def _names(values) -> list[str]:
    return sorted(v.name for v in values)


def _precomputed(p) -> object:
    if p is None:
        return None
    return {"replace": p.to_list(), "add": [str(a) for a in p.add]}


def _ufunc(loops) -> dict:
    items = loops.items() if isinstance(loops, dict) else loops
    return {k.name: [v.name, [d.name for d in v.supported_dtypes], v.ufunc_key.name] for k, v in items}


def native_function(f, line: int) -> dict:
    return {
        "name": str(f.func.name),
        "schema": str(f.func),
        "line": line,
        "namespace": f.namespace,
        "kind": f.func.kind().name,
        "signature": str(f.func.signature()),
        "variants": _names(f.variants),
        "use_const_ref_for_mutable_tensors": f.use_const_ref_for_mutable_tensors,
        "device_guard": f.device_guard,
        "device_check": f.device_check.name,
        "python_module": f.python_module,
        "category_override": f.category_override,
        "manual_kernel_registration": f.manual_kernel_registration,
        "manual_cpp_binding": f.manual_cpp_binding,
        "autogen": [str(a) for a in f.autogen],
        "ufunc_inner_loop": _ufunc(f.ufunc_inner_loop),
        "structured": f.structured,
        "structured_delegate": None if f.structured_delegate is None else str(f.structured_delegate),
        "structured_inherits": f.structured_inherits,
        "precomputed": _precomputed(f.precomputed),
        "cpp_no_default_args": sorted(f.cpp_no_default_args),
        "is_abstract": f.is_abstract,
        "has_composite_implicit_autograd_kernel": f.has_composite_implicit_autograd_kernel,
        "has_composite_implicit_autograd_nested_tensor_kernel": f.has_composite_implicit_autograd_nested_tensor_kernel,
        "has_composite_explicit_autograd_kernel": f.has_composite_explicit_autograd_kernel,
        "has_composite_explicit_autograd_non_functional_kernel": f.has_composite_explicit_autograd_non_functional_kernel,
        "tags": sorted(f.tags),
        "is_view_op": f.is_view_op,
    }


def backend_index(index) -> dict:
    return {
        "dispatch_key": str(index.dispatch_key),
        "use_out_as_primary": index.use_out_as_primary,
        "device_guard": index.device_guard,
        "external": index.external,
        "index": [[str(op), m.kernel, m.structured, m.cpp_namespace] for op, m in index.index.items()],
    }


def _fname(f) -> str | None:
    return None if f is None else str(f.func.name)


def group(g) -> list:
    if hasattr(g, "functional"):
        return ["group", _fname(g.functional), _fname(g.out), _fname(g.inplace), _fname(g.mutable)]
    if hasattr(g, "view"):
        return ["view", _fname(g.view), _fname(g.view_copy), _fname(g.view_inplace)]
    return ["function", _fname(g)]
