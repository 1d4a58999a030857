"""The exit statuses every `opgen` command shares (argparse's own usage errors already exit 2)."""

CLEAN = 0  # nothing wrong (warnings may have been printed)
INPUT_ERRORS = 1  # the inputs were read and have errors (or a generated file could not be written)
USAGE = 2  # bad usage: an unknown option or value, an input file that is missing or cannot be read
PARTIAL = 3  # partly generated: some files were written, others opgen cannot generate (yet)
