import { LIMITS } from "~/shared/limits";
import { Field } from "./ui/field";

// Labelled inputs the account forms share (sign-up, sign-in, password change).

/** A password input: `fresh` for a new password (hinting the server's bounds), else the current one. */
export function PasswordField({
  label,
  value,
  onChange,
  fresh = false,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  fresh?: boolean;
}) {
  const bounds = fresh
    ? { minLength: LIMITS.passwordMinChars, maxLength: LIMITS.passwordMaxChars, placeholder: `At least ${LIMITS.passwordMinChars} characters` }
    : {};
  return (
    <Field label={`${label}`}>
      <input
        type="password"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        autoComplete={fresh ? "new-password" : "current-password"}
        required
        {...bounds}
      />
    </Field>
  );
}

export function EmailField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <Field label="Email">
      <input type="email" value={value} onChange={(e) => onChange(e.target.value)} autoComplete="email" required />
    </Field>
  );
}
