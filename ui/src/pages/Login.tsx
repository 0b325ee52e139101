import { useLocation } from "preact-iso/router";
import { useState } from "preact/hooks";

import { ApiError, api, messageOf } from "../api";
import { Field } from "../components/Field";
import { Logo } from "../components/Logo";
import { Notice } from "../components/Notice";
import { ThemeToggle } from "../components/ThemeToggle";
import { focusNextHeading } from "../focus";
import { usePageTitle } from "../hooks";
import { wait } from "../format";

/** Where to go after signing in: a path of this console, never another site. */
export function safeNext(raw: string | undefined): string {
  if (!raw || !raw.startsWith("/") || raw.startsWith("//") || raw.startsWith("/\\")) return "/sites";
  if (raw === "/login" || raw.startsWith("/login?")) return "/sites";
  return raw;
}

export function LoginPage() {
  usePageTitle("Sign in");
  const { query, route } = useLocation();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const next = safeNext(query.next);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const email = (form.elements.namedItem("email") as HTMLInputElement).value.trim();
    const password = (form.elements.namedItem("password") as HTMLInputElement).value;
    if (!email || !password) {
      setError("Enter your e-mail address and your password.");
      return;
    }
    setBusy(true);
    setError(null);
    try {
      await api.login(email, password);
      focusNextHeading();
      route(next, true);
    } catch (failure) {
      if (failure instanceof ApiError && failure.status === 429 && failure.retryAfter) {
        setError(`${failure.message} You can try again in ${wait(failure.retryAfter)}.`);
      } else {
        setError(messageOf(failure));
      }
      setBusy(false);
    }
  };

  return (
    <div class="auth">
      <div class="auth-theme">
        <ThemeToggle />
      </div>
      <main id="main" class="auth-card" aria-labelledby="login-title">
        <div class="auth-brand">
          <Logo />
          <span>Sightline</span>
        </div>
        <h1 id="login-title">Sign in</h1>
        {query.signed_out && !error && <Notice kind="success">You are signed out.</Notice>}
        {query.next && !query.signed_out && !error && (
          <Notice kind="info">Your session has ended. Sign in to continue.</Notice>
        )}
        <form onSubmit={submit} noValidate>
          <Field
            id="email"
            name="email"
            label="E-mail address"
            type="email"
            autocomplete="username"
            autoFocus
            required
            maxLength={320}
            spellcheck={false}
            autocapitalize="none"
          />
          <Field
            id="password"
            name="password"
            label="Password"
            type="password"
            autocomplete="current-password"
            required
            maxLength={1024}
          />
          {error && <Notice kind="error">{error}</Notice>}
          <button type="submit" class="button button-primary button-block" disabled={busy}>
            {busy ? "Signing in…" : "Sign in"}
          </button>
        </form>
      </main>
    </div>
  );
}
