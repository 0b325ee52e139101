import type { ComponentChildren } from "preact";
import { useLocation } from "preact-iso/router";
import { useState } from "preact/hooks";

import { ApiError, api, messageOf, type User } from "../api";
import { sectionOf, sections } from "../sections";
import { Logo } from "./Logo";
import { Notice } from "./Notice";
import { ThemeToggle } from "./ThemeToggle";

interface ShellProps {
  user: User | null;
  children: ComponentChildren;
}

/** The frame of every signed-in page: skip link, header with navigation and account, main. */
export function Shell({ user, children }: ShellProps) {
  const { path, route } = useLocation();
  const [error, setError] = useState<string | null>(null);
  const [leaving, setLeaving] = useState(false);
  const currentSection = sectionOf(path);

  const signOut = async () => {
    setLeaving(true);
    setError(null);
    try {
      await api.logout();
      route("/login?signed_out=1");
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 401) return; // already signed out
      setError(messageOf(failure));
      setLeaving(false);
    }
  };

  const skip = (event: MouseEvent) => {
    event.preventDefault();
    document.getElementById("main")?.focus();
  };

  return (
    <>
      <a class="skip-link" href="#main" onClick={skip}>
        Skip to content
      </a>
      <header class="topbar">
        <div class="topbar-inner">
          <a class="brand" href="/sites">
            <Logo />
            <span>Sightline</span>
          </a>
          <nav class="nav" aria-label="Main">
            <ul>
              {sections.filter((section) => !section.adminOnly || (user && user.role !== "viewer")).map((section) => {
                const current = section === currentSection;
                return (
                  <li key={section.href}>
                    <a href={section.href} aria-current={current ? "page" : undefined}>
                      {section.label}
                    </a>
                  </li>
                );
              })}
            </ul>
          </nav>
          <div class="account">
            <span class="account-email" title={user ? `Signed in as ${user.email}` : undefined}>
              {user && (
                <>
                  <span class="visually-hidden">Signed in as </span>
                  {user.email}
                </>
              )}
            </span>
            <ThemeToggle />
            <button type="button" class="button button-quiet" onClick={signOut} disabled={leaving}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" class="content" tabIndex={-1}>
        {error && (
          <div class="shell-error">
            <Notice kind="error">{error}</Notice>
          </div>
        )}
        {children}
      </main>
    </>
  );
}
