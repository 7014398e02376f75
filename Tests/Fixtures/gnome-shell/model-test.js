// gjs -m Tests/Fixtures/gnome-shell/model-test.js: the GNOME Shell extension's menu model
// (packaging/gnome-shell/handoff@handoff.org/model.js) against what another machine may
// send, without a shell. Prints "ok N" per check and exits 1 at the first failure
// (GnomeShellTests runs it).
import {menuModel, oneLine, OFFERS_PER_DEVICE, OFFERS_SHOWN} from '../../../packaging/gnome-shell/handoff@handoff.org/model.js';
import System from 'system';

let count = 0;
function check(condition, what) {
    count += 1;
    if (!condition) {
        printerr(`not ok ${count} ${what}`);
        System.exit(1);
    }
    print(`ok ${count} ${what}`);
}

// An attacker's scale: 10,000 offers from 3 workstations.
const offers = [];
for (let i = 0; i < 10000; i++)
    offers.push({id: `id${i}`, deviceID: `d${i % 3}`, device: `desk ${i % 3}`, title: `Offer ${i}`, kept: false});
const many = menuModel({offers});
const items = many.groups.reduce((n, g) => n + g.items.length, 0);
const more = many.groups.reduce((n, g) => n + g.more, 0);
check(many.groups.length === 3, 'one group per workstation');
check(items <= OFFERS_SHOWN, `at most ${OFFERS_SHOWN} offers drawn (${items})`);
check(many.groups.every(g => g.items.length <= OFFERS_PER_DEVICE), `at most ${OFFERS_PER_DEVICE} per workstation`);
check(items + more === 10000, 'every offer is drawn or counted');
check(many.groups[0].items[0].id === 'id0' && many.available, 'the newest first, and the icon says available');

// A hostile title and name: one shortened line of plain text.
const hostile = `<b>x</b>&amp;_\n${'\u202e'}evil\r\u0000${'A'.repeat(10240)}`;
const drawn = menuModel({offers: [{id: 'h', deviceID: 'x', device: `${'\u2066'}name\n${'B'.repeat(500)}`, title: hostile}]});
const label = drawn.groups[0].items[0].label;
check(!/[\u0000-\u001f\u202e\u2066]/.test(label), 'no control character or direction override');
check(Array.from(label).length <= 48 && label.endsWith('…'), `the title shortened (${Array.from(label).length})`);
check(Array.from(drawn.groups[0].device).length <= 32, 'the name shortened');
check(label.startsWith('<b>x</b>&amp;_'), 'markup shown as text, not interpreted or lost');
check(oneLine('a\u2028b\u2029c', 10) === 'a b c', 'line separators become spaces');
check(oneLine('e\u0301'.repeat(3), 10) === 'e\u0301'.repeat(3), 'combining marks kept');
check(oneLine(`Z${'\u0301'.repeat(5000)}ok`, 48) === 'Zok', 'a letter under 5,000 combining marks is the letter alone');

// Kept offers, the clipboard, pairing, sources, problems.
check(menuModel({offers: [{id: 'k', deviceID: 'a', device: 'laptop', title: 'Notes', kept: true}]}).groups[0].items[0].label === 'Notes (asleep, kept here)', 'a kept offer says so');
check(menuModel({clipboard: {id: 'c', device: 'laptop', local: false}}).paste === 'Paste here what laptop copied', 'paste another workstation’s copy');
check(menuModel({clipboard: {id: 'c', device: 'here', local: true}}).paste === null, 'no paste of this workstation’s own copy');
check(menuModel({clipboard: {}}).paste === null, 'no paste without a copy');
const code = menuModel({pairing: {state: 'code', code: '123 456', peer: 'laptop', expiresAt: 1}});
check(code.pairing.line === 'Pairing with laptop: code 123 456' && code.pairing.action === 'stop', 'pairing shows its code and stops');
check(menuModel({pairing: {state: 'closed'}}).pairing.action === 'pair', 'closed: pair');
check(menuModel({pairing: {state: 'closed'}, removed: true}).pairing.label === 'Pair again as a new workstation…', 'removed: a new identity');
check(menuModel({pairing: {state: 'failed'}}).pairing.action === 'pair', 'a failure without expiresAt is closed');
const sources = menuModel({sources: [['media', true], ['tray', false]]}).sources;
check(sources.length === 2 && sources[0].on && !sources[1].on, 'sources with their switches');
check(menuModel({problems: [['tray', 'no panel shows tray icons', 'install one']]}).problems[0].fix === 'install one', 'a problem keeps its fix');

// Nothing there, or the wrong types (an older agent, a bad reply): an empty menu, no throw.
const empty = menuModel({});
check(empty.groups.length === 0 && !empty.available && empty.pairing.action === 'pair', 'an empty presence');
const odd = menuModel({offers: {length: 5}, clipboard: null, pairing: null, sources: null, problems: null});
check(odd.groups.length === 0, 'offers that are not a list are nothing');
const typed = menuModel({offers: [{id: 7, deviceID: null, title: 42}, null, 'x']});
check(typed.groups.length === 1 && typed.groups[0].items[0].label === '42', 'odd values drawn as text, null entries skipped');
print(`${count} checks passed`);
