// Server-sent events from a fetch body: the text/event-stream framing, and nothing else.

// Feed it text as it arrives; it returns the events completed so far ({event, data, id}).
export class SSEParser {
  constructor() {
    this.buffer = "";
    this.reset();
  }

  reset() {
    this.event = "";
    this.data = [];
    this.id = null;
  }

  push(text) {
    this.buffer += text;
    const lines = this.buffer.split(/\r\n|\r|\n/);
    this.buffer = lines.pop();
    const events = [];
    for (const line of lines) {
      const event = this.line(line);
      if (event) events.push(event);
    }
    return events;
  }

  line(line) {
    if (line === "") {
      const done = this.data.length ? { event: this.event || "message", data: this.data.join("\n"), id: this.id } : null;
      this.reset();
      return done;
    }
    if (line.startsWith(":")) return null;
    const colon = line.indexOf(":");
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? "" : line.slice(colon + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (name === "event") this.event = value;
    else if (name === "data") this.data.push(value);
    else if (name === "id") this.id = value;
    return null;
  }
}

// The events of a fetch ReadableStream ({event, data, id}, data as text) until [DONE] or the end.
export async function* sseEvents(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  const parser = new SSEParser();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      for (const event of parser.push(value)) {
        if (event.data === "[DONE]") return;
        yield event;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

// The JSON events of a Responses stream (its frames' data, parsed).
export async function* jsonEvents(body) {
  for await (const { data } of sseEvents(body)) yield JSON.parse(data);
}
