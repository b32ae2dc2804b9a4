// Tool arguments, tool results and runtime context are folded to one line in the transcript
// (the whole value is one click away). Pure, so the transcript and its tests agree.

const VALUE_CHARS = 40;
export const SUMMARY_CHARS = 100;

function cut(text: string, max: number): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

function valueText(v: unknown): string {
  if (typeof v === "string") return `"${cut(v, VALUE_CHARS)}"`;
  if (typeof v === "number" || typeof v === "boolean" || v === null) return String(v);
  if (Array.isArray(v)) return v.length === 0 ? "[]" : `[${v.length}]`;
  if (typeof v === "object") return "{…}";
  return "";
}

/** `subject: "Write the plan", blocked_by: [2]`: an object's fields; anything else as its value. */
export function summaryLine(value: unknown): string {
  if (value === undefined) return "";
  if (typeof value === "string") return cut(value, SUMMARY_CHARS);
  if (value === null || typeof value !== "object" || Array.isArray(value)) return cut(valueText(value), SUMMARY_CHARS);
  const parts = Object.entries(value).map(([k, v]) => `${k}: ${valueText(v)}`);
  return cut(parts.join(", "), SUMMARY_CHARS);
}
