import type http from "node:http";

/**
 * A request listener for a server that listens before its handler exists (the app's handler
 * needs the port PORT=0 picked): requests that come first are held, then handled once `serve`
 * gives the handler. A 503 instead would end a reconnecting browser's event stream for good.
 */
export function heldRequests(): { listener: http.RequestListener; serve(handler: http.RequestListener): void } {
  let handler: http.RequestListener | null = null;
  const held: [http.IncomingMessage, http.ServerResponse][] = [];
  return {
    listener: (req, res) => {
      if (handler) return handler(req, res);
      held.push([req, res]);
    },
    serve(h) {
      handler = h;
      // One whose client left meanwhile is dropped: its close event has passed, so a handler
      // (a live feed) would never hear of it and would wait on the dead socket for good.
      for (const [req, res] of held.splice(0)) if (!req.socket.destroyed) void h(req, res);
    },
  };
}
