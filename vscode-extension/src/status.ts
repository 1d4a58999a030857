// The status bar item's text, tooltip and the torchgen version the server matches (pure logic).

export type ServerState = "starting" | "running" | "stopped" | "failed" | "missing";

/** `torchgen 2.13.0` out of a server's serverInfo version, `--version` or `--help` text. */
export function parseTorchgenVersion(text: string | undefined | null): string | undefined {
  if (!text) {
    return undefined;
  }
  const m = /torchgen[\s:=v]*([0-9]+\.[0-9]+(?:\.[0-9]+)?(?:[a-z0-9.+-]*)?)/i.exec(text);
  return m ? m[1].replace(/[.,;)]+$/, "") : undefined;
}

/** The server's opgen/release notification: the torch release a native_functions.yaml is checked as. */
export interface ReleaseInfo {
  uri: string;
  version: string; // as found or given: "2.16.0a0", "2.15.0+cu132"
  profile: string; // the release whose rules apply: "2.15.0"
  source: string; // "version.txt of /src/pytorch", ".../torch/version.py", "opgen.torchVersion", "default"
  fit: string; // "known", "newer", "older"
  label: string;
  note: string;
}

/** Where a release came from, short enough for the status bar. */
export function shortSource(source: string): string {
  if (source.startsWith("version.txt")) {
    return "version.txt";
  }
  if (/[\\/]torch[\\/]version\.py$/.test(source)) {
    return "torch/version.py";
  }
  return source;
}

export interface StatusView {
  text: string;
  tooltip: string;
  error: boolean;
}

const ICONS: Record<ServerState, string> = {
  starting: "$(sync~spin)",
  running: "$(check)",
  stopped: "$(circle-slash)",
  failed: "$(error)",
  missing: "$(warning)",
};

export function statusView(state: ServerState, torchgen?: string, detail?: string, release?: ReleaseInfo): StatusView {
  // Running: the release of the native_functions.yaml in view (and where it came from), else the server's torchgen.
  const version = release
    ? ` torch ${release.version} (${shortSource(release.source)})`
    : torchgen ? ` torchgen ${torchgen}` : "";
  const text = state === "running" ? `${ICONS[state]} opgen${version}` : `${ICONS[state]} opgen: ${state}`;
  const lines = [`opgen-lsp: ${state}`];
  if (release) {
    lines.push(`native_functions.yaml checked as ${release.label}`);
    if (release.note) {
      lines.push(release.note);
    }
  }
  if (torchgen) {
    lines.push(`matches torchgen ${torchgen}`);
  }
  if (detail) {
    lines.push(detail);
  }
  lines.push("Click for the server's commands");
  return { text, tooltip: lines.join("\n"), error: state === "failed" || state === "missing" };
}

/** One line for a finished opgen.generate: its own summary, else counted from the result. */
export function generateSummary(result: unknown): string {
  if (!result || typeof result !== "object") {
    return "opgen: Generate finished";
  }
  const r = result as Record<string, unknown>;
  if (typeof r.summary === "string" && r.summary) {
    return `opgen: ${r.summary}`;
  }
  const count = (v: unknown) => (Array.isArray(v) ? v.length : typeof v === "number" ? v : 0);
  const parts = [`${count(r.written)} written`, `${count(r.unchanged)} unchanged`];
  if (count(r.errors)) {
    parts.push(`${count(r.errors)} errors`);
  }
  return `opgen: ${parts.join(", ")} in ${String(r.outputDir ?? "the output folder")}${r.cancelled ? " (cancelled)" : ""}`;
}

/** How a finished opgen.generate is shown: an error (with the full text in the output) when it failed. */
export interface GenerateOutcome {
  failed: boolean;
  /** The notification's line. */
  message: string;
  /** Every error in full, for the output channel (a notification cuts long text). */
  details: string[];
}

/** saved: the file name Generate saved first (it reads the files on disk), said in the message. */
export function generateOutcome(result: unknown, saved?: string): GenerateOutcome {
  const r = result && typeof result === "object" ? (result as Record<string, unknown>) : {};
  const details = Array.isArray(r.errors) ? r.errors.map(String) : [];
  const failed = details.length > 0 || r.summary === "failed";
  const summary = generateSummary(result);
  const savedFirst = saved ? `opgen: saved ${saved} first (Generate reads the files on disk); ` : "";
  const message = savedFirst ? savedFirst + summary.replace(/^opgen: /, "") : summary;
  return { failed, message: failed ? message.replace(/^opgen: /, "opgen: Generate failed: ") : message, details };
}
