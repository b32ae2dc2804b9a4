import type { LanguageModel } from "../models/types";

// Holds model streams mid-reply, to drive a window deterministically: armed, every stream
// pauses before its next text chunk after its first (so a step in flight stays in flight, its
// provider's answer begun and seen by the runtime) until the gate opens.

export class StreamGate {
  private opened: Promise<void> = Promise.resolve();
  private open_: () => void = () => undefined;
  private armed = false;
  /** Streams paused at the gate now. */
  held = 0;

  arm(): void {
    this.armed = true;
    this.opened = new Promise((resolve) => (this.open_ = resolve));
  }

  open(): void {
    this.armed = false;
    this.open_();
  }

  /** `model`, its streams paused while the gate is armed. */
  wrap(model: LanguageModel): LanguageModel {
    const pause = () => this.pause();
    return {
      id: model.id,
      maxOutputTokens: model.maxOutputTokens,
      async *stream(request, signal) {
        let answering = false;
        for await (const chunk of model.stream(request, signal)) {
          if (answering && chunk.type === "text-delta") await pause();
          yield chunk;
          answering = true;
        }
      },
    };
  }

  private async pause(): Promise<void> {
    if (!this.armed) return;
    this.held += 1;
    await this.opened;
    this.held -= 1;
  }
}
