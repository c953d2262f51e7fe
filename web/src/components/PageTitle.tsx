import { useEffect, type ReactNode } from 'react';

/** The page heading (also the document title when a string), with optional actions beside it. */
export function PageTitle({ children, actions }: { children: ReactNode; actions?: ReactNode }) {
  useEffect(() => {
    if (typeof children === 'string') document.title = `${children} · CRM`;
  }, [children]);
  return (
    <div className="page-title">
      <h1>{children}</h1>
      {actions && <div className="actions">{actions}</div>}
    </div>
  );
}
