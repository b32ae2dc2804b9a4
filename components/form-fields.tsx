import { LIMITS } from "~/shared/limits";

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
    <label>
      <span className="label">{label}</span>
      <input
        type="password"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        autoComplete={fresh ? "new-password" : "current-password"}
        required
        {...bounds}
      />
    </label>
  );
}

export function EmailField({ value, onChange }: { value: string; onChange: (value: string) => void }) {
  return (
    <label>
      <span className="label">Email</span>
      <input type="email" value={value} onChange={(e) => onChange(e.target.value)} autoComplete="email" required />
    </label>
  );
}
