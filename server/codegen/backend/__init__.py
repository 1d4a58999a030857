"""Out-of-tree backends: gen_backend_stubs' files (<Key>NativeFunctions.h, Register<Key>.cpp) and the
missing-kernel check of a backend's C++ implementation files."""
