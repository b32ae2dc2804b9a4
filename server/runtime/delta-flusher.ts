import { DELTA_FIRST_FLUSH_MS } from "./config";

// Streamed text reaches the log in small batches, so a reload (or a crash) keeps what was
// shown without one append per token.

/**
 * Batches streamed text into at most one log append per interval, one append in flight at a
 * time; the first piece waits only `firstMs`, so a reply shows as soon as it starts. The final
 * assistant message carries the whole text, so unflushed pieces can be dropped.
 */
export class DeltaFlusher {
  private buffer = "";
  private inFlight: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private failed: unknown = null;
  private flushed = false;

  constructor(
    private readonly intervalMs: number,
    private readonly write: (text: string) => Promise<void>,
    private readonly firstMs = Math.min(intervalMs, DELTA_FIRST_FLUSH_MS),
  ) {}

  push(text: string): void {
    this.buffer += text;
    if (!this.timer && !this.inFlight) this.timer = setTimeout(() => this.flush(), this.flushed ? this.intervalMs : this.firstMs);
  }

  private flush(): void {
    this.timer = null;
    if (this.buffer === "" || this.failed) return;
    const text = this.buffer;
    this.buffer = "";
    this.flushed = true;
    this.inFlight = this.write(text)
      .catch((e: unknown) => {
        this.failed = e;
      })
      .finally(() => {
        this.inFlight = null;
        if (this.buffer !== "" && !this.timer) this.timer = setTimeout(() => this.flush(), this.intervalMs);
      });
  }

  /** Stops flushing and waits for the write in flight; rethrows a failed write (lease lost). */
  async settle(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.buffer = "";
    while (this.inFlight) await this.inFlight;
    if (this.failed) throw this.failed;
  }
}
