// First-run setup (/setup?token=...): creates the owner with the one-time token, then opens the
// console. Independent of the application bundle so that this page stays tiny.

const form = document.getElementById("setup") as HTMLFormElement | null;
const message = document.getElementById("message") as HTMLElement | null;
const messageText = document.getElementById("message-text") as HTMLElement | null;
const token = new URLSearchParams(window.location.search).get("token") ?? "";
// Keep the token out of the address bar, the history and any Referer from here on.
window.history.replaceState(null, "", "/setup");

function input(name: string): HTMLInputElement {
  return form?.elements.namedItem(name) as HTMLInputElement;
}

function fail(text: string, field?: string): void {
  if (message && messageText) {
    messageText.textContent = text;
    message.hidden = false;
  }
  for (const name of ["email", "password", "confirm"]) input(name).removeAttribute("aria-invalid");
  if (field) {
    input(field).setAttribute("aria-invalid", "true");
    input(field).focus();
  }
}

form?.addEventListener("submit", async (event) => {
  event.preventDefault();
  const email = input("email").value.trim();
  const password = input("password").value;
  if (!email) return fail("Enter an e-mail address.", "email");
  if (password.length < 10) return fail("The password needs at least 10 characters.", "password");
  if (password !== input("confirm").value) return fail("The two passwords differ.", "confirm");
  const button = form.querySelector("button") as HTMLButtonElement;
  button.disabled = true;
  if (message) message.hidden = true;
  try {
    const response = await fetch("/setup", {
      method: "POST",
      headers: { "Content-Type": "application/json", Accept: "application/json" },
      credentials: "same-origin",
      body: JSON.stringify({ token, email, password }),
    });
    if (response.ok) {
      window.location.assign("/sites");
      return;
    }
    const body = (await response.json().catch(() => null)) as {
      error?: { message?: string; field?: string };
    } | null;
    const field = body?.error?.field;
    fail(body?.error?.message ?? "Setup failed.", field === "email" || field === "password" ? field : undefined);
  } catch {
    fail("The server could not be reached. Try again.");
  }
  button.disabled = false;
});
