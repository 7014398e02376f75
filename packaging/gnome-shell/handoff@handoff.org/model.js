// What handoff's GNOME Shell extension shows, as plain data made from the presence's
// properties (org.handoff.Presence1): no shell, no bus, so that gjs alone tests it
// (Tests/Fixtures/gnome-shell/model-test.js). presence.js draws it.

// What the menu shows at most: the offers of one workstation, and all of them. The rest is
// one line that says how many (handoffctl list shows them all).
export const OFFERS_PER_DEVICE = 5;
export const OFFERS_SHOWN = 15;
const TITLE_LENGTH = 48;
const NAME_LENGTH = 32;

// Titles and names come from other machines: one line of plain text, shortened. Control
// characters, line and paragraph separators and direction overrides become spaces (an
// override could reorder what follows it in the panel); a letter under more than 16
// combining marks shows as the letter alone, as in the tray (MenuText.swift).
export function oneLine(text, limit) {
    const flat = String(text ?? '')
        .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, ' ')
        .replace(/(\P{M})\p{M}{17,}/gu, '$1')
        .replace(/ {2,}/g, ' ')
        .trim();
    const scalars = Array.from(flat);
    return scalars.length > limit ? `${scalars.slice(0, limit - 1).join('')}…` : flat;
}

function list(value) {
    return Array.isArray(value) ? value : [];
}

// The menu as plain data, from the presence's properties: what the indicator draws, and
// what a test can read without a shell.
export function menuModel(presence) {
    const offers = list(presence.offers);
    const groups = [];
    const byDevice = new Map();
    let shown = 0;
    for (const offer of offers) {
        if (offer === null || typeof offer !== 'object')
            continue;
        const key = offer.deviceID || offer.device || '';
        let group = byDevice.get(key);
        if (!group) {
            group = {device: oneLine(offer.device || 'another workstation', NAME_LENGTH), items: [], more: 0};
            byDevice.set(key, group);
            groups.push(group);
        }
        if (group.items.length >= OFFERS_PER_DEVICE || shown >= OFFERS_SHOWN) {
            group.more += 1;
            continue;
        }
        shown += 1;
        const title = oneLine(offer.title || offer.activityType || 'Untitled', TITLE_LENGTH);
        group.items.push({
            label: offer.kept ? `${title} (asleep, kept here)` : title,
            icon: typeof offer.icon === 'string' ? offer.icon : '',
            deviceID: String(offer.deviceID ?? ''),
            id: String(offer.id ?? ''),
        });
    }
    const clipboard = presence.clipboard ?? {};
    const paste = clipboard.id && !clipboard.local
        ? `Paste here what ${oneLine(clipboard.device || 'another workstation', NAME_LENGTH)} copied`
        : null;
    const pairing = presence.pairing ?? {};
    const state = pairing.state || 'closed';
    let pairingLine = null;
    if (state === 'code')
        pairingLine = `Pairing with ${oneLine(pairing.peer || 'a workstation', NAME_LENGTH)}: code ${oneLine(pairing.code, 16)}`;
    else if (state === 'waiting' || state === 'exchanging')
        pairingLine = 'Pairing: waiting for the other workstation';
    else if (state === 'failed' && pairing.expiresAt)
        pairingLine = `Pairing failed: ${oneLine(pairing.message || 'try again', TITLE_LENGTH)}`;
    const open = pairingLine !== null;
    return {
        available: shown > 0,
        groups,
        paste,
        pairing: {
            line: pairingLine,
            action: open ? 'stop' : (presence.removed ? 'renew' : 'pair'),
            label: open ? 'Stop pairing' : (presence.removed ? 'Pair again as a new workstation…' : 'Pair a workstation…'),
        },
        sources: list(presence.sources).filter(Array.isArray).map(([name, on]) => ({name: oneLine(name, NAME_LENGTH), on: Boolean(on)})),
        problems: list(presence.problems).filter(Array.isArray).map(([check, what, fix]) => ({
            check: String(check), label: oneLine(what, TITLE_LENGTH + 16), fix: String(fix ?? ''),
        })),
    };
}
