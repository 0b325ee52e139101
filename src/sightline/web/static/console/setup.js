// First-run setup: posts the one-time token with the new owner's e-mail and password.
"use strict";
(function () {
  var form = document.getElementById("setup");
  var message = document.getElementById("message");
  var token = new URLSearchParams(window.location.search).get("token") || "";
  // Keep the token out of the address bar, the history and any Referer from here on.
  window.history.replaceState(null, "", "/setup");
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var email = form.email.value.trim();
    var password = form.password.value;
    if (!email || !password) { message.textContent = "Enter an e-mail address and a password."; return; }
    if (password.length < 10) { message.textContent = "The password needs at least 10 characters."; return; }
    if (password !== form.confirm.value) { message.textContent = "The two passwords differ."; return; }
    var button = form.querySelector("button");
    button.disabled = true;
    message.textContent = "";
    fetch("/setup", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      credentials: "same-origin",
      body: JSON.stringify({ token: token, email: email, password: password })
    }).then(function (response) {
      return response.json().then(function (body) { return { ok: response.ok, body: body }; });
    }).then(function (result) {
      if (result.ok) {
        form.hidden = true;
        document.getElementById("done").hidden = false;
        return;
      }
      message.textContent = (result.body.error && result.body.error.message) || "Setup failed.";
      button.disabled = false;
    }).catch(function () {
      message.textContent = "The server could not be reached. Try again.";
      button.disabled = false;
    });
  });
})();
