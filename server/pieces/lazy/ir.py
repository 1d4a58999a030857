"""LazyIr.h / LazyNonNativeIr.h: one IR node class per op (gen_lazy_tensor's GenLazyIR / GenTSLazyIR).

A node class stores its scalar arguments, hashes them, prints them, and
(with TorchScript lowerings) knows whether it can be reused for the same
inputs and how to lower itself to a TorchScript builtin call.
"""

from __future__ import annotations

from ...frozen import record
from ...releases import Release
from ...releases.profile import CppSpelling
from ..api.types import ListCType, OptionalCType
from .schema import LazyArgument, LazyIrSchema


@record
class IrOptions:
    release: Release  # the torch release whose gen_lazy_tensor is matched
    node_base: str = "Node"
    use_lazy_shape: bool = True
    # --gen-ts-lowerings: Create/CanBeReused/Lower for the TorchScript backend.
    ts_lowerings: bool = False


_MISSING_INTERNED = frozenset({"sigmoid_backward"})


def aten_symbol(schema: LazyIrSchema) -> str:
    name = schema.aten_name
    if name in _MISSING_INTERNED:
        return f'c10::Symbol::fromQualString("aten::{name}")'
    return name if name.startswith("at::") else f"at::aten::{name}"


def _base_ctor_value(arg: LazyArgument, spelling: CppSpelling) -> str:
    if isinstance(arg.lazy_type, OptionalCType):
        return f"{arg.name}.value_or(kNullValue)"
    if isinstance(arg.lazy_type, ListCType):
        raise ValueError(f"Unsupported type ({arg.cpp_type(spelling)}) - add support if necessary")
    return arg.name


def node_base_ctor_call(schema: LazyIrSchema, options: IrOptions) -> str:
    values = schema.filtered_args(scalars=False)
    scalars = schema.filtered_args(values=False)
    value_args = ", ".join(_base_ctor_value(a, options.release.cpp_spelling) for a in values)
    props = schema.properties
    if props.has("ShapePrecompute"):
        shape = "std::move(shapes),"
    elif props.has("ShapeCompute"):
        shape = f"compute_shape_{schema.name}({', '.join([a.name for a in values] + [a.name for a in scalars])}),"
    elif props.has("ShapeCache"):
        args = [f"operand({i})" for i in range(len(values))] + [a.name for a in scalars]
        shape = f"[&](){{ return compute_shape_{schema.name}({', '.join(args)})[0]; }},"
    else:
        shape = ""
    hashes = ", ".join(a.name for a in scalars)
    return f"""{options.node_base}(
              {schema.node_name}::ClassOpKind(),
              OpList{{{value_args}}},
              {shape}
              /* num_outputs */ {len(schema.returns)},
              torch::lazy::MHash({hashes}))"""


def _scalar_initializer(a: LazyArgument, spelling: CppSpelling) -> str:
    if a.cpp_type(spelling) == spelling.optional("c10::string_view"):
        return (f"{a.name}({a.name}.has_value() ? {spelling.make_optional()}(std::string(*{a.name})) : "
                f"{spelling.nullopt()})")
    return f"{a.name}({a.name})"


def _scalar_decl(a: LazyArgument, spelling: CppSpelling) -> str:
    t = a.cpp_type(spelling)
    if t == "c10::string_view":
        return f"std::string {a.name};"
    if t == spelling.optional("c10::string_view"):
        return f"{spelling.optional('std::string')} {a.name};"
    return f"{t} {a.name};"


def _member_to_string(a: LazyArgument) -> str:
    if isinstance(a.lazy_type, OptionalCType):
        value = '"torch.Generator()"' if a.is_generator else f"{a.name}.value()"
        return f"""if ({a.name}.has_value()) {{
      ss << ", {a.name}=" << {value};
    }} else {{
      ss << ", {a.name}=null";
    }}"""
    return f'ss << ", {a.name}=" << {a.name};'


def ts_lowering_body(schema: LazyIrSchema, release: Release) -> str:
    def get_value(a: LazyArgument, optional_kept: bool = True) -> str:
        if optional_kept and isinstance(a.lazy_type, OptionalCType):
            return f"has_{a.name} ? loctx->GetOutputOp(operand(i++)) : nullptr"
        return "loctx->GetOutputOp(operand(i++))"

    positional = [get_value(a) if a.is_lazy_value else f'"{a.name}", {a.name}' for a in schema.positional_args]
    kw = [f'"{a.name}", {get_value(a, release.lazy_ts_optional_keyword_values)}' for a in schema.keyword_values]
    kw += [f'"{a.name}", {a.name}' for a in schema.keyword_scalars]
    args = "\n    ".join(f"arguments.emplace_back({a});" for a in positional)
    kwargs = "\n    ".join(f"kwarguments.emplace_back({a});" for a in kw)
    name = schema.aten_name
    return f"""\
    std::vector<torch::jit::NamedValue> arguments;
    std::vector<torch::jit::NamedValue> kwarguments;
    arguments.reserve({len(positional)});
    kwarguments.reserve({len(kw)});
    size_t i = 0;
    {args}
    {kwargs}
    torch::lazy::TSOpVector {name}_out = torch::lazy::LowerTSBuiltin(function, op().op, arguments, kwarguments);
    TORCH_CHECK_EQ({name}_out.size(), {len(schema.returns)});

    return {name}_out;
"""


def _lowering(schema: LazyIrSchema, options: IrOptions) -> str:
    if not options.ts_lowerings:
        return ""
    signature = """
  torch::lazy::TSOpVector Lower(
      std::shared_ptr<torch::jit::GraphFunction> function,
      torch::lazy::TSLoweringContext* loctx) const override"""
    if schema.properties.has("LowerDeclOnly"):
        return f"{signature};"
    if schema.properties.has("Lower"):
        return f"""{signature} {{
    {ts_lowering_body(schema, options.release)}
  }}
            """
    return ""


def _create(schema: LazyIrSchema, ctor_args: str, options: IrOptions) -> str:
    if not options.ts_lowerings:
        return ""
    signature = f"static NodePtr Create({ctor_args})"
    if schema.properties.has("CreateFnDeclOnly"):
        return f"{signature};"
    if not schema.properties.has("CreateFn"):
        return ""
    return f"""{signature} {{
    return ReuseOrMakeNode<{schema.node_name}>(data);
  }}"""


def _reuse_comparison(schema: LazyIrSchema) -> str:
    parts = []
    for a in schema.positional_values + schema.keyword_values:
        parts.append(f"nullable_operand(i++) == {a.name}.value_or(kNullValue)"
                     if isinstance(a.lazy_type, OptionalCType) else f"operand(i++) == {a.name}")
    for a in schema.positional_scalars + schema.keyword_scalars:
        n = a.name
        parts.append(f"((!this->{n}&&!{n}) || (this->{n}&&{n} && *(this->{n}) == *{n}))"
                     if isinstance(a.lazy_type, OptionalCType) else f"this->{n} == {n}")
    return " &&\n        ".join(parts)


def _can_be_reused(schema: LazyIrSchema, ctor_args: str, options: IrOptions) -> str:
    if not options.ts_lowerings:
        return f"""bool CanBeReused({ctor_args}) const {{
    return false;
    }}"""
    signature = f"bool CanBeReused({ctor_args}) const"
    if schema.properties.has("CanBeReusedDeclOnly"):
        return f"{signature};"
    if not schema.properties.has("CanBeReused"):
        return ""
    return f"""{signature} {{
    size_t i = 0;
    return ({_reuse_comparison(schema)});
  }}"""


def node_class(schema: LazyIrSchema, options: IrOptions) -> str:
    """The IR node class of one schema."""
    opkind = schema.opkind or aten_symbol(schema)
    all_args = schema.filtered_args()
    scalars = schema.filtered_args(values=False)
    spelling = options.release.cpp_spelling
    ctor_args = [f"const {a.cpp_type(spelling)}& {a.name}" for a in all_args]
    reuse_args = ", ".join(ctor_args)
    if options.use_lazy_shape and schema.properties.has("ShapePrecompute"):
        ctor_args.append("std::vector<torch::lazy::Shape>&& shapes")
    initializers = ",\n        ".join(_scalar_initializer(a, spelling) for a in scalars)
    if initializers:
        initializers = f",\n        {initializers}"
    scalar_decls = "\n  ".join(_scalar_decl(a, spelling) for a in scalars)
    optional = [a.name for a in schema.filtered_args(scalars=False) if isinstance(a.lazy_type, OptionalCType)]
    has_decls = "\n  ".join(f"bool has_{v}: 1;" for v in optional)
    has_defs = "\n    ".join(f"has_{v} = !!{v};" for v in optional)
    to_string = "\n    ".join(_member_to_string(a) for a in scalars)
    stream = "std::move(ss)" if options.release.lazy_to_string_moves_stream else "ss"
    node, base = schema.node_name, options.node_base
    return f"""\
class {node} : public {base} {{
 public:
  static torch::lazy::OpKind ClassOpKind() {{
    return torch::lazy::OpKind({opkind});
  }}

  {node}({", ".join(ctor_args)})
      : {node_base_ctor_call(schema, options)}{initializers}
  {{
    {has_defs}
  }}

  std::string ToString() const override {{
    std::stringstream ss;
    ss << {base}::ToString();
    {to_string}
    return {stream}.str();
  }}

  {_create(schema, reuse_args, options)}

  {_can_be_reused(schema, reuse_args, options)}

  {_lowering(schema, options)}

  {scalar_decls}
  {has_decls}

}};

"""

