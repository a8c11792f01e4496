// Offline support for the calculator: network first (a rebuilt page is picked up at once), the cached
// copy when the network is gone. Only this origin's GET requests are touched; the page sends no others.
const CACHE = "gpuctl-web-v1";
// catalog.bin is the price catalog, a file of its own (issue 18): cached like the code, refreshed on
// its own when the catalog changes.
const FILES = ["./", "index.html", "style.css", "pkg/gpuctl_web.js", "pkg/gpuctl_web_bg.wasm", "catalog.bin"];

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((c) => c.addAll(FILES)).then(() => self.skipWaiting()));
});
self.addEventListener("activate", (event) => {
  event.waitUntil(self.clients.claim());
});
self.addEventListener("fetch", (event) => {
  const req = event.request;
  if (req.method !== "GET" || new URL(req.url).origin !== self.location.origin) return;
  event.respondWith(
    fetch(req)
      .then((res) => {
        if (res.ok) {
          const copy = res.clone();
          caches.open(CACHE).then((c) => c.put(req, copy));
        }
        return res;
      })
      // The URL query is the calculator's state; any query serves the same page.
      .catch(() => caches.match(req, { ignoreSearch: true }))
  );
});
