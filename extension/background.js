// handoff: tells the native host (handoff-browser-host) which tab has the focus. The host
// decides what is offered (never private windows, never non-web pages, never listed domains);
// this side skips private windows and non-http(s) pages before they leave the browser.
const api = typeof browser !== "undefined" ? browser : chrome;
let port = null;

function connect() {
  port = api.runtime.connectNative("org.handoff.browser");
  port.onDisconnect.addListener(() => {
    // Why, for whoever reads the extension's console: a host not installed (run
    // `handoff-browser-host --install`), or one that exited (handoffd not running).
    console.warn("handoff: the native host disconnected:", api.runtime.lastError?.message ?? "it exited");
    port = null;
    setTimeout(() => { connect(); reportActive(); }, 5000);
  });
}

function report(tab) {
  if (!tab || !port) return;
  const shown = /^https?:\/\//.test(tab.url || "") && !tab.incognito;
  port.postMessage({type: "tab", url: shown ? tab.url : "about:blank",
                    title: shown ? (tab.title || "") : "", incognito: !!tab.incognito});
}

async function reportActive() {
  let [tab] = await api.tabs.query({active: true, lastFocusedWindow: true});
  // No window has had the focus yet (a browser just started, or headless): a page that
  // loaded before this worker listened is still the one to report.
  if (!tab) [tab] = await api.tabs.query({active: true});
  report(tab);
}

connect();
reportActive();  // the tab open when the browser (or the extension) starts
api.tabs.onActivated.addListener(reportActive);
api.tabs.onUpdated.addListener((id, change, tab) => { if (tab.active && (change.url || change.title)) report(tab); });
api.windows.onFocusChanged.addListener(reportActive);
