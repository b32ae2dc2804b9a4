import type { ReactNode } from "react";

// A data table: a header row of column names, dense rows under a line each, scrolling sideways
// on a phone rather than squeezing its columns. The caption names it for screen readers.

export function Table({ caption, columns, children }: { caption: string; columns: readonly string[]; children: ReactNode }) {
  return (
    <div className="table-scroll">
      <table className="table">
        <caption className="sr-only">{caption}</caption>
        <thead>
          <tr>
            {columns.map((c) => (
              <th key={c} scope="col">
                {c}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
