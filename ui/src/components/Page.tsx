import type { ComponentChildren } from "preact";
import { useLayoutEffect, useRef } from "preact/hooks";

import { takeHeadingFocus } from "../focus";
import { usePageTitle } from "../hooks";

interface PageProps {
  title: string;
  /** Shown above the heading, e.g. a link back to the list. */
  back?: { href: string; label: string };
  subtitle?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
}

/** A page's heading (focused after navigation), its actions and its content. */
export function Page({ title, back, subtitle, actions, children }: PageProps) {
  usePageTitle(title);
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    if (takeHeadingFocus()) heading.current?.focus();
  }, []);
  return (
    <div class="page">
      {back && (
        <a class="back-link" href={back.href}>
          <span aria-hidden="true">←</span> {back.label}
        </a>
      )}
      <div class="page-head">
        <div class="page-title">
          <h1 ref={heading} tabIndex={-1}>{title}</h1>
          {subtitle && <div class="page-subtitle">{subtitle}</div>}
        </div>
        {actions && <div class="page-actions">{actions}</div>}
      </div>
      {children}
    </div>
  );
}
