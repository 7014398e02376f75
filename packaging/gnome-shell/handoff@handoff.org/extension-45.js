// handoff's GNOME Shell extension for GNOME 45 and later, where an extension is an ES module
// (GNOME 43-44 load extension-43.js instead: extension.js links to the one this shell loads,
// see link-entry). The body is presence.js, shared by both.
import {Extension} from 'resource:///org/gnome/shell/extensions/extension.js';
import * as Main from 'resource:///org/gnome/shell/ui/main.js';
import * as PanelMenu from 'resource:///org/gnome/shell/ui/panelMenu.js';
import * as PopupMenu from 'resource:///org/gnome/shell/ui/popupMenu.js';

import {createIndicator} from './presence.js';

export default class HandoffExtension extends Extension {
    enable() {
        this._indicator = createIndicator({Main, PanelMenu, PopupMenu});
    }

    disable() {
        this._indicator?.destroy();
        this._indicator = null;
    }
}
