// Sample template: every operator's C++ declaration with its schema, for out-of-tree backends.

${registration_declarations}
