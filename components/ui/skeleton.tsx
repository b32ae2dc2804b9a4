// Never blank: the shape of what is coming, at once. Screen readers hear the words; the grey
// blocks are hidden from them. Failures show inline with a Retry (alert.tsx InlineError).

export function Skeleton({ label, rows = 2, tall = false }: { label: string; rows?: number; tall?: boolean }) {
  return (
    <div className="skeleton-area">
      <p role="status" className="sr-only">
        {label}
      </p>
      {Array.from({ length: rows }, (_, i) => (
        <div key={i} aria-hidden="true" className={`skeleton ${tall ? "skeleton-block" : "skeleton-row"}`} />
      ))}
    </div>
  );
}
