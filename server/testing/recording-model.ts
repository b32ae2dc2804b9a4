import type { LanguageModel, ModelRequest } from "../models/types";

/** A model that records a copy of every request it is sent, then answers as `model` does. */
export function recordingModel(model: LanguageModel): { model: LanguageModel; requests: ModelRequest[] } {
  const requests: ModelRequest[] = [];
  return {
    requests,
    model: {
      id: model.id,
      stream(request, signal) {
        requests.push(structuredClone(request));
        return model.stream(request, signal);
      },
    },
  };
}
