// Small behaviours for the htmx pages. No inline scripts, so a strict CSP holds.
document.addEventListener("htmx:afterRequest", (event) => {
  const form = event.detail.elt;
  if (form.id === "composer" && event.detail.successful && event.detail.xhr.status === 200) {
    form.reset();
    const errors = document.getElementById("composer-errors");
    if (errors) errors.replaceChildren();
  }
});

document.addEventListener("htmx:afterSwap", (event) => {
  if (event.detail.target.id === "turns" || event.detail.elt.classList.contains("pending")) {
    const composer = document.getElementById("composer");
    if (composer) composer.scrollIntoView({ block: "end" });
  }
});

// A request that fails outright (network down, server error) gets a visible message.
document.addEventListener("htmx:responseError", (event) => {
  const box = document.getElementById("htmx-error");
  if (!box) return;
  const xhr = event.detail.xhr;
  box.textContent = xhr.status === 429
    ? xhr.responseText
    : `The server could not complete that request (${xhr.status}). Your message, if sent, is saved: reload the page to see it.`;
  box.hidden = false;
});
document.addEventListener("htmx:beforeRequest", () => {
  const box = document.getElementById("htmx-error");
  if (box) box.hidden = true;
});
document.addEventListener("htmx:sendError", () => {
  const box = document.getElementById("htmx-error");
  if (!box) return;
  box.textContent = "The server could not be reached. Check your connection and try again.";
  box.hidden = false;
});

// Enter sends, Shift+Enter makes a new line.
document.addEventListener("keydown", (event) => {
  const target = event.target;
  if (target.matches && target.matches("#composer textarea") && event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    target.form.requestSubmit();
  }
});
