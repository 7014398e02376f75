// handoff: tells the native host (handoff-browser-host) which tab has the focus. The host
// decides what is offered (never private windows, never non-web pages, never listed domains);
// this side skips private windows and non-http(s) pages before they leave the browser.
const api = typeof browser !== "undefined" ? browser : chrome;
let port = null;

function connect() {
  port = api.runtime.connectNative("org.handoff.browser");
  port.onDisconnect.addListener(() => { port = null; setTimeout(connect, 5000); });
}

function report(tab) {
  if (!tab || !port) return;
  const web = /^https?:\/\//.test(tab.url || "");
  port.postMessage({type: "tab", url: web && !tab.incognito ? tab.url : "about:blank",
                    title: tab.incognito ? "" : (tab.title || ""), incognito: !!tab.incognito});
}

async function reportActive() {
  const [tab] = await api.tabs.query({active: true, lastFocusedWindow: true});
  report(tab);
}

connect();
api.tabs.onActivated.addListener(reportActive);
api.tabs.onUpdated.addListener((id, change, tab) => { if (tab.active && (change.url || change.title)) report(tab); });
api.windows.onFocusChanged.addListener(reportActive);
