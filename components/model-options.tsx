import type { ModelOption } from "./api-types";
import { modelKey, optionText } from "./models";

/** The offered models as a select's options, valued "provider:model" and labelled with their price. */
export function ModelOptions({ options }: { options: readonly ModelOption[] }) {
  return options.map((m) => (
    <option key={modelKey(m)} value={modelKey(m)}>
      {optionText(m)}
    </option>
  ));
}
