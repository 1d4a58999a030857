// The level of each line the server writes on stderr, for the output channel (pure logic).
//
// opgen-lsp logs "<date> <time> LEVEL logger: message"; a line without a level (a traceback's
// continuation) belongs to the record above it.

export type LogLevel = "debug" | "info" | "warn" | "error";

const LEVELS: Record<string, LogLevel> = {
  DEBUG: "debug",
  INFO: "info",
  WARNING: "warn",
  ERROR: "error",
  CRITICAL: "error",
};

const RECORD = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ (DEBUG|INFO|WARNING|ERROR|CRITICAL) /;

/** A reader of stderr lines: each call gives the level of the next line. Unknown text before any record is an error. */
export function stderrLevels(): (line: string) => LogLevel {
  let current: LogLevel = "error";
  return (line) => {
    const match = RECORD.exec(line);
    if (match) {
      current = LEVELS[match[1]];
    }
    return current;
  };
}
