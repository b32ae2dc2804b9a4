import type { ReactNode } from "react";

// A data table: dense rows under a line each, scrolling sideways on a phone rather than
// squeezing its columns. The caption names it for screen readers.

export function Table({ caption, className, children }: { caption: string; className?: string; children: ReactNode }) {
  return (
    <div className="table-scroll">
      <table className={className ? `table ${className}` : "table"}>
        <caption className="sr-only">{caption}</caption>
        {children}
      </table>
    </div>
  );
}
