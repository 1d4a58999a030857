"""The pure per-op pieces: torchgen's C++ API types and signatures (`api/`) and the code it writes for one op or
group (`dest/`, `explain`), functions of the model and the release only. The analyses show them (hover, explain,
lenses, stubs); the generators in `codegen/` assemble them into whole files."""
