import type { ComponentProps } from "react";

// The app's button: its looks are variants named here, over the styles in components/ui/ui.css
// (`button`, `.secondary`, `.danger`…). A button is `type="button"` unless it says otherwise,
// so none submits a form by accident.

const VARIANTS = {
  /** The one main action of a place: filled with the accent. */
  primary: "",
  secondary: "secondary",
  /** Outlined in the danger colour: removes or stops something, usually behind a confirm. */
  danger: "secondary danger",
  /** Filled in the danger colour: the confirm of a destructive dialog. */
  "danger-solid": "danger-solid",
  /** Reads as a link (inline, underlined) but acts in place. */
  link: "link-button",
  /** A bare icon with an accessible name (aria-label). */
  icon: "icon-button",
} as const;

const SIZES = { default: "", small: "small" } as const;

export type ButtonVariant = keyof typeof VARIANTS;

export type ButtonProps = ComponentProps<"button"> & { variant?: ButtonVariant; size?: keyof typeof SIZES };

export function Button({ variant = "primary", size = "default", className, type = "button", ...props }: ButtonProps) {
  const classes = [VARIANTS[variant], SIZES[size], className].filter(Boolean).join(" ");
  return <button type={type} className={classes || undefined} {...props} />;
}
