// The page an invitation link opens (/invite#token=...): who invited whom, and a new password.
import { useEffect, useState } from "preact/hooks";

import { ApiError, messageOf } from "../api";
import { Field } from "../components/Field";
import { Logo } from "../components/Logo";
import { Notice } from "../components/Notice";
import { ThemeToggle } from "../components/ThemeToggle";
import { dateTime } from "../format";
import { usePageTitle } from "../hooks";
import { team, type InvitationInfo } from "./api";

function takeToken(): string {
  const token = new URLSearchParams(window.location.hash.slice(1)).get("token") ?? "";
  // Keep the token out of the address bar and the history from here on.
  if (window.location.hash) window.history.replaceState(null, "", "/invite");
  return token;
}

export function InvitePage() {
  usePageTitle("Join the team");
  const [token] = useState(takeToken);
  const [info, setInfo] = useState<InvitationInfo | null>(null);
  const [problem, setProblem] = useState<string | null>(null);
  const [errors, setErrors] = useState<{ password?: string; confirm?: string; form?: string }>({});
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    if (!token) {
      setProblem("This invitation link is incomplete. Open the whole link you were sent.");
      return;
    }
    team.lookup(token).then(setInfo, (failure) => setProblem(messageOf(failure)));
  }, [token]);

  const submit = async (event: SubmitEvent) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const password = (form.elements.namedItem("password") as HTMLInputElement).value;
    const confirm = (form.elements.namedItem("confirm") as HTMLInputElement).value;
    if (password.length < 10) return setErrors({ password: "The password needs at least 10 characters." });
    if (password !== confirm) return setErrors({ confirm: "The two passwords differ." });
    setBusy(true);
    setErrors({});
    try {
      await team.accept(token, password);
      window.location.assign("/sites");
    } catch (failure) {
      setBusy(false);
      if (failure instanceof ApiError && failure.field === "password") setErrors({ password: failure.message });
      else setErrors({ form: messageOf(failure) });
    }
  };

  return (
    <div class="auth">
      <div class="auth-theme">
        <ThemeToggle />
      </div>
      <main id="main" class="auth-card" aria-labelledby="invite-title">
        <div class="auth-brand">
          <Logo />
          <span>Sightline</span>
        </div>
        <h1 id="invite-title">Join the team</h1>
        {problem && (
          <Notice kind="error">
            {problem} <a href="/login">Sign in</a> if you already have an account.
          </Notice>
        )}
        {!problem && !info && <p class="loading">Checking the invitation…</p>}
        {info && (
          <>
            <p class="lead">
              {info.team} invited <strong>{info.email}</strong> as {info.role === "admin" ? "an admin" : "a viewer"}.
              Choose a password to accept; the link works until {dateTime(info.expires_at)}.
            </p>
            <form onSubmit={submit} noValidate>
              <input type="email" name="email" value={info.email} autocomplete="username" readOnly hidden />
              <Field id="password" name="password" label="Password" type="password" hint="At least 10 characters." autocomplete="new-password" required maxLength={1024} autoFocus error={errors.password} />
              <Field id="confirm" name="confirm" label="Repeat the password" type="password" autocomplete="new-password" required maxLength={1024} error={errors.confirm} />
              {errors.form && <Notice kind="error">{errors.form}</Notice>}
              <button type="submit" class="button button-primary button-block" disabled={busy}>
                {busy ? "Joining…" : "Accept and sign in"}
              </button>
            </form>
          </>
        )}
      </main>
    </div>
  );
}
