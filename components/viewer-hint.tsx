/** Shown where a viewer's controls would be: viewers watch and act on nothing (docs/SPEC.md §13). */
export function ViewerHint() {
  return (
    <p className="viewer-hint muted" role="note">
      Viewers watch; ask an owner for member access
    </p>
  );
}
