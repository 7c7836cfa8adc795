import type { ReactNode } from 'react';

/**
 * A table's sideways scroller (tables scroll at phone width). Focusable and named, so that a
 * keyboard can scroll it even when the table holds no link or button: axe's
 * scrollable-region-focusable, found by the end-to-end check on the members table at 390 px.
 */
export function TableScroll({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-scroll" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
