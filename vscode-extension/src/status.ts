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

export function statusView(state: ServerState, torchgen?: string, detail?: string): StatusView {
  const version = torchgen ? ` torchgen ${torchgen}` : "";
  const text = state === "running" ? `${ICONS[state]} opgen${version}` : `${ICONS[state]} opgen: ${state}`;
  const lines = [`opgen-lsp: ${state}`];
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
