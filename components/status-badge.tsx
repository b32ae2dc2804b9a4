export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge badge-${status}`} aria-label={`status: ${status}`}>
      {status}
    </span>
  );
}
