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
  if (event.detail.target && event.detail.target.id === "turns") {
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

// A reply being written: read it from its server-sent events as the model writes it, show how
// long it has taken, and offer Stop. The finished turn (or the error with Retry) replaces it.
function csrfToken() {
  try {
    return JSON.parse(document.body.getAttribute("hx-headers") || "{}")["X-CSRFToken"] || "";
  } catch {
    return "";
  }
}

function streamFailed(box, message) {
  box.classList.remove("pending");
  box.classList.add("error");
  box.setAttribute("role", "alert");
  box.removeAttribute("aria-busy");
  box.querySelector(".progress").textContent = "";
  const note = document.createElement("p");
  note.textContent = `${message} Your message is saved: reload the page to retry.`;
  box.append(note);
  box.querySelector("button.stop").hidden = true;
}

async function streamReply(box) {
  const progress = box.querySelector(".progress");
  const content = box.querySelector(".content");
  const stop = box.querySelector("button.stop");
  const started = Date.now();
  let status = "Thinking";
  const tick = () => {
    progress.textContent = `${status}… ${Math.round((Date.now() - started) / 1000)} s`;
  };
  tick();
  const timer = setInterval(tick, 1000);
  stop.hidden = false;
  stop.addEventListener("click", () => {
    stop.disabled = true;
    stop.textContent = "Stopping…";
    fetch(box.dataset.stop, { method: "POST", headers: { "X-CSRFToken": csrfToken(), "HX-Request": "true" } });
  });
  let finished = false;
  const handle = (block) => {
    let name = "message";
    let data = "";
    for (const line of block.split("\n")) {
      if (line.startsWith("event: ")) name = line.slice(7);
      else if (line.startsWith("data: ")) data += line.slice(6);
    }
    if (!data) return;
    const value = JSON.parse(data);
    if (name === "status") {
      status = value;
      tick();
    } else if (name === "text") {
      status = "Writing";
      content.append(value);
    } else if (name === "done") {
      finished = true;
      htmx.swap(box, value, { swapStyle: "outerHTML" }, {});
      const composer = document.getElementById("composer");
      if (composer) composer.scrollIntoView({ block: "end" });
    }
  };
  try {
    const response = await fetch(box.dataset.stream, {
      method: "POST",
      headers: { "X-CSRFToken": csrfToken(), "HX-Request": "true", Accept: "text/event-stream" },
    });
    if (!response.ok) {
      streamFailed(box, `The server could not complete that request (${response.status}).`);
      return;
    }
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        handle(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
      }
    }
    if (!finished) streamFailed(box, "The reply stopped arriving.");
  } catch {
    if (!finished) streamFailed(box, "The server could not be reached.");
  } finally {
    clearInterval(timer);
  }
}

htmx.onLoad((element) => {
  const boxes = element.matches && element.matches("[data-stream]") ? [element] : [];
  boxes.push(...element.querySelectorAll("[data-stream]"));
  for (const box of boxes) {
    if (box.dataset.streaming) continue;
    box.dataset.streaming = "1";
    streamReply(box);
  }
});
